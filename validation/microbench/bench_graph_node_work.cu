// hetsim-microbench section graph_node_work: the spacing of CUDA graph kernel nodes against how
// long (and whether) the kernel runs (issue 14, docs/model.md rule 7).
// graph_nodes and graph_node_grids measured 0.86 us from one node's last block end to the next
// node's first block start between spin kernels of 2 and 10 us at every grid (1..1056 blocks),
// but 0.68 us per node, kernel included, for graphs of empty one-block kernels behind a 1 ms
// blocker, and 0.50 us per node for the same graphs behind a 20 ms blocker (graphs section).
// This section measures, in one place: chains of spin-stamp kernels of 1 block (1 or 256
// threads) and of sm_count blocks spinning 0..2000 ns, with and without the stamp stores,
// and empty kernels, as graphs of 20 and 200 nodes, behind a 1 ms blocker and (some) behind a
// 20 ms one; GPU time by events and, for stamped chains, per-node first block start / last
// block end.
#include "common.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace {

double ktime_gw(cudaStream_t s, const EventPool& ev, const std::function<void()>& f) {
    CK(cudaEventRecord(ev[0], s));
    f();
    CK(cudaEventRecord(ev[1], s));
    CK(cudaStreamSynchronize(s));
    return event_us(ev[0], ev[1]);
}

struct Chain {
    std::string name;
    bool empty;         // k_empty (1 block of 1 thread, no parameters, no stores)
    int grid, block;    // spin-stamp kernels
    uint64_t spin_ns;   // each block spins this long from its own start
    bool stamps;        // spin-stamp kernels write their block start/end stamps
    uint64_t blocker_ns;
};

}  // namespace

void bench_graph_node_work(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    cudaStream_t s = c.s[0], cap = c.s[1];
    const int reps = q ? 2 : 5;
    const int sms = c.sm_count;
    const std::vector<int> sizes = q ? std::vector<int>{20, 100} : std::vector<int>{20, 200};
    const int nmax = *std::max_element(sizes.begin(), sizes.end());
    EventPool ev(2);
    const uint64_t ms1 = 1000000, ms20 = 20000000;
    std::vector<Chain> chains;
    chains.push_back({"empty", true, 1, 1, 0, false, ms1});
    chains.push_back({"empty_warm", true, 1, 1, 0, false, ms20});
    const std::vector<uint64_t> spins = q ? std::vector<uint64_t>{0, 500, 2000} : std::vector<uint64_t>{0, 250, 500, 1000, 2000};
    for (int block : {1, 256})
        for (uint64_t sp : spins)
            chains.push_back({"b" + std::to_string(block) + "_spin" + std::to_string(sp), false, 1, block, sp, true, ms1});
    for (uint64_t sp : {uint64_t(0), uint64_t(500), uint64_t(2000)}) {
        chains.push_back({"b256_spin" + std::to_string(sp) + "_nostamp", false, 1, 256, sp, false, ms1});
        chains.push_back({"g" + std::to_string(sms) + "_spin" + std::to_string(sp), false, sms, 256, sp, true, ms1});
    }
    chains.push_back({"b256_spin0_warm", false, 1, 256, 0, true, ms20});
    chains.push_back({"b256_spin2000_warm", false, 1, 256, 2000, true, ms20});
    chains.push_back({"g" + std::to_string(sms) + "_spin2000_warm", false, sms, 256, 2000, true, ms20});

    unsigned long long* st = nullptr;
    const size_t words = size_t(sms) * size_t(nmax) * 2;
    CK(cudaMalloc(&st, words * sizeof(unsigned long long)));
    std::vector<unsigned long long> hs(words);
    json pts = json::array();
    for (const Chain& ch : chains) {
        json sz = json::array();
        std::vector<double> xs, ys, gaps;
        for (int n : sizes) {
            auto issue = [&](cudaStream_t cs) {
                for (int i = 0; i < n; ++i) {
                    if (ch.empty) CK(k_empty(cs));
                    else CK(k_spin_stamp(cs, ch.grid, ch.block, ch.spin_ns, 0, ch.stamps ? st + size_t(i) * size_t(ch.grid) * 2 : nullptr, nullptr));
                }
            };
            cudaGraph_t g = capture_graph(cap, issue);
            cudaGraphExec_t x = nullptr;
            CK(cudaGraphInstantiate(&x, g, 0));
            CK(cudaGraphLaunch(x, s));  // upload
            CK(cudaStreamSynchronize(s));
            std::vector<double> gpu;
            json starts = json::array(), ends = json::array();
            for (int r = 0; r < reps; ++r) {
                CK(k_spin(s, ch.blocker_ns));
                gpu.push_back(ktime_gw(s, ev, [&] { CK(cudaGraphLaunch(x, s)); }));
                xs.push_back(n), ys.push_back(gpu.back());
                if (ch.stamps && n == nmax) {
                    CK(cudaMemcpy(hs.data(), st, size_t(n) * size_t(ch.grid) * 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                    std::vector<unsigned long long> s0(size_t(n), ~0ull), e0(size_t(n), 0);
                    for (int i = 0; i < n; ++i)
                        for (int b = 0; b < ch.grid; ++b) {
                            const size_t o = (size_t(i) * size_t(ch.grid) + size_t(b)) * 2;
                            s0[size_t(i)] = std::min(s0[size_t(i)], hs[o]);
                            e0[size_t(i)] = std::max(e0[size_t(i)], hs[o + 1]);
                        }
                    std::vector<long long> rs, re;
                    for (int i = 0; i < n; ++i) rs.push_back((long long)(s0[size_t(i)] - s0[0])), re.push_back((long long)(e0[size_t(i)] - s0[0]));
                    for (int i = 0; i + 1 < n; ++i) gaps.push_back(double(rs[size_t(i) + 1] - re[size_t(i)]) * 1e-3);
                    starts.push_back(rs);
                    ends.push_back(re);
                }
            }
            CK(cudaGraphExecDestroy(x));
            CK(cudaGraphDestroy(g));
            json p = {{"nodes", n}, {"gpu_graph_us", r3v(gpu)}};
            if (!starts.empty()) p["node_start_ns"] = starts, p["node_end_ns"] = ends;
            sz.push_back(p);
        }
        const LineFit f = fit_line(xs, ys);
        pts.push_back({{"chain", ch.name}, {"kernel", ch.empty ? "empty" : "spin_stamp"}, {"grid", ch.grid}, {"block", ch.block},
                       {"spin_ns", ch.spin_ns}, {"stamps", ch.stamps}, {"blocker_ns", ch.blocker_ns}, {"sizes", sz},
                       {"period_us", r3(f.slope)}});
        progress(c, "graph_node_work: %-22s %.3f us per node%s", ch.name.c_str(), f.slope,
                 gaps.empty() ? "" : (", median stamp gap " + std::to_string(median(gaps)).substr(0, 5) + " us").c_str());
        preview(out, "check.graph_node_period_" + ch.name, f.slope, "us", "slope of graph GPU time vs nodes, chain " + ch.name);
    }
    // Boundaries: a stream kernel, a graph of 3 nodes, a stream kernel, in one stream behind a
    // blocker (all 1 x 256 threads spinning 2 us, stamped): the gap into the graph's first node
    // and out of its last node, against the node gaps inside it (validation 43/44/61: a graph
    // followed by a copy in its stream).
    {
        auto k = [&](cudaStream_t cs, int slot) { CK(k_spin_stamp(cs, 1, 256, 2000, 0, st + size_t(slot) * 2, nullptr)); };
        cudaGraph_t g = nullptr;
        CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < 3; ++i) k(cap, 1 + i);
        CK(cudaStreamEndCapture(cap, &g));
        cudaGraphExec_t x = nullptr;
        CK(cudaGraphInstantiate(&x, g, 0));
        CK(cudaGraphLaunch(x, s));  // upload
        CK(cudaStreamSynchronize(s));
        json rj = json::array();
        std::vector<double> entry, exit_, inner;
        for (int r = 0; r < reps; ++r) {
            CK(k_spin(s, ms1));
            k(s, 0);
            CK(cudaGraphLaunch(x, s));
            k(s, 4);
            CK(cudaStreamSynchronize(s));
            CK(cudaMemcpy(hs.data(), st, 10 * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
            std::vector<long long> a, b;
            for (int i = 0; i < 5; ++i) a.push_back((long long)(hs[size_t(i) * 2] - hs[0])), b.push_back((long long)(hs[size_t(i) * 2 + 1] - hs[0]));
            entry.push_back(double(a[1] - b[0]) * 1e-3);
            inner.push_back(double(a[2] - b[1]) * 1e-3), inner.push_back(double(a[3] - b[2]) * 1e-3);
            exit_.push_back(double(a[4] - b[3]) * 1e-3);
            rj.push_back({{"start_ns", a}, {"end_ns", b}});
        }
        CK(cudaGraphExecDestroy(x));
        CK(cudaGraphDestroy(g));
        out["boundaries"] = {{"method", "in one stream behind a 1 ms blocker: a stream kernel, a launch of a 3-node chain graph, a "
                                        "stream kernel (all 1 x 256 threads spinning 2000 ns, stamped); start_ns/end_ns = the 5 "
                                        "kernels' block start/end in issue order, relative to the first's start"},
                             {"reps", rj}};
        progress(c, "graph_node_work: into the graph %.3f us, inside %.3f us, out of it %.3f us", median(entry), median(inner), median(exit_));
        preview(out, "check.graph_entry_gap", median(entry), "us", "stream kernel end -> the graph's first node start, same stream");
        preview(out, "check.graph_exit_gap", median(exit_), "us", "the graph's last node end -> the next stream kernel's start");
    }
    CK(cudaFree(st));
    out["config"] = {{"reps", reps}, {"sizes", sizes}, {"sm_count", sms}};
    out["points"] = pts;
    out["method"] = "a chain graph of n kernels captured from a stream, n in sizes: empty = k_empty (1 x 1 thread, no "
                    "parameters); spin_stamp = grid x block threads, every block spins spin_ns from its own start and, when "
                    "stamps, writes its start/end %globaltimer; each launch behind a k_spin blocker of blocker_ns; gpu_graph_us "
                    "= events around the launch; period_us = slope of gpu_graph_us vs n; node_start_ns/node_end_ns (largest "
                    "n, stamped chains) = first block start / last block end per node, relative to node 0's start";
}
