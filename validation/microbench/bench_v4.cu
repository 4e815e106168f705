// Follow-up sections for the calibration of issues 10 and 14 (README.md beside this file):
//   graph_node_grids   CUDA graph node gap against the grid of the nodes (1..264 blocks, mixed chains)
//   memcpy2d_pitches   pitched copies whose two pitches differ: which side's pitch sets the row cost
#include "common.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

double ktime4(cudaStream_t s, const EventPool& ev, const std::function<void()>& f) {
    CK(cudaEventRecord(ev[0], s));
    f();
    CK(cudaEventRecord(ev[1], s));
    CK(cudaStreamSynchronize(s));
    return event_us(ev[0], ev[1]);
}

}  // namespace

// ---- graph_node_grids --------------------------------------------------------------------------------
// graph_nodes measured the node gap at 1 block (empty kernels: 0.68 us per node) and at 132-1056
// blocks (spin kernels: 0.86-0.90 us from one node's last block end to the next one's first block
// start). This section fills the grids in between and tells whether the gap follows the previous
// node's grid or the next one's: chains of spin-stamp kernels (each block spins spin_ns from its
// own start) of one grid, and chains alternating two grids, as graphs and as stream launches.
void bench_graph_node_grids(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    cudaStream_t s = c.s[0], cap = c.s[1];
    const int reps = q ? 2 : 5;
    const int n = q ? 40 : 100;
    const uint64_t spin = 2000;
    const int sms = c.sm_count;
    EventPool ev(2);
    auto capture = [&](const std::function<void(cudaStream_t)>& issue) { return capture_graph(cap, issue); };
    // Chains: {name, grid pattern repeated over the n nodes}.
    std::vector<std::pair<std::string, std::vector<int>>> chains;
    const std::vector<int> grids = q ? std::vector<int>{1, 16, 128, sms}
                                     : std::vector<int>{1, 2, 4, 8, 16, 32, 64, sms / 2, 100, 128, sms, 2 * sms};
    for (int g : grids) chains.push_back({"grid_" + std::to_string(g), {g}});
    chains.push_back({"alternate_1_" + std::to_string(sms), {1, sms}});
    chains.push_back({"alternate_16_" + std::to_string(sms), {16, sms}});
    chains.push_back({"alternate_128_4", {128, 4}});  // the PyTorch MLP graph's two kernels
    int gmax = 0;
    for (auto& ch : chains)
        for (int g : ch.second) gmax = std::max(gmax, g);
    unsigned long long* st = nullptr;
    CK(cudaMalloc(&st, size_t(gmax) * size_t(n) * 2 * sizeof(unsigned long long)));
    std::vector<unsigned long long> hs(size_t(gmax) * size_t(n) * 2);
    json pts = json::array();
    std::map<std::string, double> med_gap;
    for (auto& [name, pattern] : chains) {
        const size_t nn = static_cast<size_t>(n);
        std::vector<int> grid_of(nn);
        std::vector<size_t> off(nn + 1, 0);
        for (int i = 0; i < n; ++i) {
            grid_of[size_t(i)] = pattern[size_t(i) % pattern.size()];
            off[size_t(i) + 1] = off[size_t(i)] + size_t(grid_of[size_t(i)]) * 2;
        }
        auto issue = [&](cudaStream_t cs) {
            for (int i = 0; i < n; ++i) CK(k_spin_stamp(cs, grid_of[size_t(i)], 256, spin, 0, st + off[size_t(i)], nullptr));
        };
        cudaGraph_t g = capture(issue);
        cudaGraphExec_t x = nullptr;
        CK(cudaGraphInstantiate(&x, g, 0));
        CK(cudaGraphLaunch(x, s));  // upload
        CK(cudaStreamSynchronize(s));
        json modes = json::array();
        for (const char* mode : {"graph", "stream"}) {
            const bool gr = mode[0] == 'g';
            json rj = json::array();
            std::vector<double> gaps;
            for (int r = 0; r < reps; ++r) {
                CK(k_spin(s, gr ? 1000000 : uint64_t(n) * 6000 + 1000000));
                const double gpu = ktime4(s, ev, [&] {
                    if (gr) CK(cudaGraphLaunch(x, s));
                    else issue(s);
                });
                CK(cudaMemcpy(hs.data(), st, off[size_t(n)] * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                std::vector<unsigned long long> s0(nn, ~0ull), e0(nn, 0);
                for (int i = 0; i < n; ++i)
                    for (int b = 0; b < grid_of[size_t(i)]; ++b) {
                        const size_t o = off[size_t(i)] + size_t(b) * 2;
                        s0[size_t(i)] = std::min(s0[size_t(i)], hs[o]);
                        e0[size_t(i)] = std::max(e0[size_t(i)], hs[o + 1]);
                    }
                const unsigned long long base = s0[0];
                std::vector<long long> rs, re;
                for (int i = 0; i < n; ++i) rs.push_back((long long)(s0[size_t(i)] - base)), re.push_back((long long)(e0[size_t(i)] - base));
                for (int i = 0; i + 1 < n; ++i) gaps.push_back(double(rs[size_t(i) + 1] - re[size_t(i)]) * 1e-3);
                rj.push_back({{"gpu_us", r3(gpu)}, {"node_start_ns", rs}, {"node_end_ns", re}});
            }
            if (gr) med_gap[name] = median(gaps);
            modes.push_back({{"mode", mode}, {"reps", rj}});
        }
        CK(cudaGraphExecDestroy(x));
        CK(cudaGraphDestroy(g));
        pts.push_back({{"chain", name}, {"grids", grid_of}, {"block", 256}, {"spin_ns", spin}, {"nodes", n}, {"modes", modes}});
        progress(c, "graph_node_grids: %-20s median graph node gap %.3f us", name.c_str(), med_gap[name]);
    }
    CK(cudaFree(st));
    out["config"] = {{"nodes", n}, {"reps", reps}, {"spin_ns", spin}, {"block", 256}, {"sm_count", sms}};
    out["points"] = pts;
    out["method"] = "graph of n spin-stamp kernels (each block spins spin_ns from its own start) captured from a stream, the "
                    "grid of node i = grids[i]; the same launches into a stream; behind a blocker; node start = first block "
                    "start, node end = last block end (%globaltimer, relative to node 0's start); gap = start[i+1] - end[i]";
    for (auto& [name, g] : med_gap) preview(out, "check.graph_node_gap_" + name, g, "us", "median gap between graph nodes, chain " + name);
}

// ---- memcpy2d_pitches ------------------------------------------------------------------------------------
// memcpy2d moved rows with both pitches equal (2 x width, or width). Here the two pitches differ,
// so that the side whose pitch sets the per-row cost shows: pinned H2D/D2H of 1 MiB in 4-byte and
// 16-byte rows with (spitch, dpitch) in {(w, 8w), (8w, w), (2w, 2w), (8w, 8w)}; pageable D2H of
// 16-byte rows into host rows 16..256 B apart (validation 93 has 16 B rows, host pitch 32 B,
// device pitch 256 B), and pageable H2D of 16-byte rows from host rows 16..256 B apart.
void bench_memcpy2d_pitches(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int reps = q ? 3 : 7;
    const size_t moved = 1 * MiB, span = 16 * MiB;  // at most 8 x width x rows = 8 MiB on either side
    char* pinned = nullptr;
    CK(cudaMallocHost(&pinned, span));
    memset(pinned, 0x5a, span);
    char* pageable = static_cast<char*>(aligned_alloc(4096, span));
    if (!pageable) mb_die("memcpy2d_pitches: cannot allocate %zu bytes of host memory", span);
    memset(pageable, 0x5a, span);
    char* dev = nullptr;
    CK(cudaMalloc(&dev, span));
    cudaStream_t s = c.s[0];
    EventPool ev(2);
    struct Case {
        const char* memory;
        const char* dir;
        size_t width, spitch, dpitch;
    };
    std::vector<Case> cases;
    for (const char* dir : {"h2d", "d2h"})
        for (size_t w : {size_t(4), size_t(16)})
            for (auto [sf, df] : {std::pair{1, 8}, {8, 1}, {2, 2}, {8, 8}}) cases.push_back({"pinned", dir, w, w * size_t(sf), w * size_t(df)});
    for (size_t hp : {size_t(16), size_t(32), size_t(64), size_t(128), size_t(256)}) {
        cases.push_back({"pageable", "d2h", 16, 256, hp});
        cases.push_back({"pageable", "h2d", 16, hp, 256});
    }
    CK(cudaMemcpy2DAsync(dev, 64, pinned, 64, 4, 16, cudaMemcpyHostToDevice, s));  // warm-up
    CK(cudaStreamSynchronize(s));
    json pts = json::array();
    for (const Case& k : cases) {
        const size_t rows = moved / k.width;
        char* host = k.memory[1] == 'i' ? pinned : pageable;
        const bool h2d = k.dir[0] == 'h';
        std::vector<double> call, total, gpu;
        for (int r = 0; r < reps; ++r) {
            timed_copy(s, ev, call, total, gpu, [&] {
                return h2d ? cudaMemcpy2DAsync(dev, k.dpitch, host, k.spitch, k.width, rows, cudaMemcpyHostToDevice, s)
                           : cudaMemcpy2DAsync(host, k.dpitch, dev, k.spitch, k.width, rows, cudaMemcpyDeviceToHost, s);
            });
        }
        pts.push_back({{"memory", k.memory}, {"dir", k.dir}, {"width", k.width}, {"height", rows}, {"spitch", k.spitch},
                       {"dpitch", k.dpitch}, {"bytes", k.width * rows}, {"call_us", r3v(call)}, {"total_us", r3v(total)},
                       {"gpu_us", r3v(gpu)}});
        progress(c, "memcpy2d_pitches: %s %s %zu B rows, spitch %zu, dpitch %zu: %.1f us GPU, %.1f us call", k.memory, k.dir,
                 k.width, k.spitch, k.dpitch, median(gpu), median(call));
    }
    CK(cudaFree(dev));
    CK(cudaFreeHost(pinned));
    free(pageable);
    out["config"] = {{"moved_bytes", moved}, {"reps", reps},
                     {"fields", "gpu_us = events around cudaMemcpy2DAsync in an idle stream; call_us = the call; total_us = call start "
                                "to cudaStreamSynchronize return; spitch/dpitch: source/destination pitch"}};
    out["points"] = pts;
}
