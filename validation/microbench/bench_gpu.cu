// GPU-side benchmarks: coresidency (block scheduling, concurrent kernels) and hbm (bandwidth, sharing).
#include "common.hpp"

#include <algorithm>
#include <cmath>

namespace {

struct Span {
    unsigned long long start = ~0ull, end = 0;
    int late = 0;  // blocks that started more than half a block's spin after the kernel's first block
};

// Kernel span from per-block stamps [2b] = start, [2b+1] = end.
Span span_of(const std::vector<unsigned long long>& st, int blocks, double late_ns) {
    Span s;
    for (int b = 0; b < blocks; ++b) {
        s.start = std::min(s.start, st[2 * size_t(b)]);
        s.end = std::max(s.end, st[2 * size_t(b) + 1]);
    }
    for (int b = 0; b < blocks; ++b)
        if (double(st[2 * size_t(b)] - s.start) > late_ns) ++s.late;
    return s;
}

std::vector<unsigned long long> fetch(const unsigned long long* d, size_t n) {
    std::vector<unsigned long long> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    return h;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
void bench_coresidency(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int reps = q ? 2 : 3;
    const uint64_t spin = 1000000;  // 1 ms per block
    cudaStream_t sa = c.s[0], sb = c.s[1];
    const int gmax = 2 * c.sm_count;  // 1024-thread blocks: 2 per SM fill the device
    unsigned long long *da = nullptr, *db = nullptr;
    CK(cudaMalloc(&da, size_t(gmax) * 2 * 8));
    CK(cudaMalloc(&db, size_t(gmax) * 2 * 8));
    json pairs = json::array();
    for (int g : {c.sm_count / 2, c.sm_count, c.sm_count * 3 / 2, c.sm_count * 2}) {
        json rj = json::array();
        std::vector<double> tot;
        for (int r = 0; r < reps; ++r) {
            CK(k_spin_stamp(sa, g, 1024, spin, 0, da, nullptr));
            CK(k_spin_stamp(sb, g, 1024, spin, 0, db, nullptr));
            CK(cudaStreamSynchronize(sa));
            CK(cudaStreamSynchronize(sb));
            Span a = span_of(fetch(da, size_t(g) * 2), g, 0.5 * double(spin));
            Span b = span_of(fetch(db, size_t(g) * 2), g, 0.5 * double(spin));
            const unsigned long long base = std::min(a.start, b.start);
            auto us = [&](unsigned long long t) { return r3(double(t - base) * 1e-3); };
            const double overlap = std::max(0.0, (double(std::min(a.end, b.end)) - double(std::max(a.start, b.start))) * 1e-3);
            const double total = double(std::max(a.end, b.end) - base) * 1e-3;
            tot.push_back(total);
            rj.push_back({{"a_start_us", us(a.start)},
                          {"a_end_us", us(a.end)},
                          {"b_start_us", us(b.start)},
                          {"b_end_us", us(b.end)},
                          {"a_late_blocks", a.late},
                          {"b_late_blocks", b.late},
                          {"overlap_us", r3(overlap)},
                          {"total_us", r3(total)}});
        }
        pairs.push_back({{"grid", g}, {"block", 1024}, {"reps", rj}});
        preview(out, "check.coresidency_g" + std::to_string(g), median(tot) / (double(spin) * 1e-3), "x spin",
                "two kernels of " + std::to_string(g) + " x 1024 threads: total / one kernel's spin (1 = side by side, 2 = one after the other)");
        progress(c, "coresidency: g=%d total %.0f us (spin %.0f us)", g, median(tot), double(spin) * 1e-3);
    }
    out["pairs"] = {{"method", "kernel A in stream A, then kernel B in stream B, launched back to back; each "
                               "block spins 1 ms on %globaltimer and stamps start/end; a kernel's span = first "
                               "block start .. last block end; late blocks = started > 0.5 ms after the first"},
                    {"spin_ns", spin},
                    {"cases", pairs}};
    CK(cudaFree(da));
    CK(cudaFree(db));

    // Max concurrent kernels: n one-block kernels in n streams, 2 ms each.
    const int nmax = 129;
    const uint64_t spin2 = 2000000;
    std::vector<cudaStream_t> st(nmax);
    for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned long long* dk = nullptr;
    CK(cudaMalloc(&dk, size_t(nmax) * 2 * 8));
    json conc = json::array();
    for (int n : {128, 129}) {
        for (int r = 0; r < reps; ++r) {
            for (int i = 0; i < n; ++i) CK(k_spin_stamp(st[size_t(i)], 1, 32, spin2, 0, dk + 2 * i, nullptr));
            CK(cudaDeviceSynchronize());
            auto h = fetch(dk, size_t(n) * 2);
            unsigned long long base = ~0ull;
            for (int i = 0; i < n; ++i) base = std::min(base, h[2 * size_t(i)]);
            std::vector<double> s0, s1;
            std::vector<std::pair<double, int>> evts;
            for (int i = 0; i < n; ++i) {
                s0.push_back(double(h[2 * size_t(i)] - base) * 1e-3);
                s1.push_back(double(h[2 * size_t(i) + 1] - base) * 1e-3);
                evts.push_back({s0.back(), +1});
                evts.push_back({s1.back(), -1});
            }
            std::sort(evts.begin(), evts.end(), [](auto& x, auto& y) { return x.first < y.first || (x.first == y.first && x.second < y.second); });
            int cur = 0, mx = 0;
            for (auto& e : evts) mx = std::max(mx, cur += e.second);
            const double total = *std::max_element(s1.begin(), s1.end());
            conc.push_back({{"n", n}, {"rep", r}, {"max_concurrent", mx}, {"total_us", r3(total)}, {"start_us", r3v(s0)}, {"end_us", r3v(s1)}});
            if (r == reps - 1) {
                preview(out, "check.max_concurrent_n" + std::to_string(n), mx, "",
                        "most kernels running at once, " + std::to_string(n) + " one-block 2 ms kernels in " +
                            std::to_string(n) + " streams");
                progress(c, "coresidency: %d kernels in %d streams: max %d at once, total %.0f us", n, n, mx, total);
            }
        }
    }
    out["concurrent_kernels"] = {{"method", "n one-block (32 threads) kernels, each 2 ms of %globaltimer spin, one per "
                                            "stream, launched back to back; per-kernel start/end from stamps"},
                                 {"spin_ns", spin2},
                                 {"samples", conc}};
    CK(cudaFree(dk));
    for (auto& s : st) CK(cudaStreamDestroy(s));
}

// ---------------------------------------------------------------------------------------------
void bench_hbm(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int reps = q ? 3 : 5;
    const size_t big = q ? 2 * GiB : 4 * GiB;
    char* d = (char*)c.dev(big);
    void* sink = nullptr;
    CK(cudaMalloc(&sink, 64));
    cudaStream_t sa = c.s[0], sb = c.s[1];
    EventPool ev(4);
    const int full = 2 * c.sm_count, half = c.sm_count, threads = 1024;
    unsigned long long *sta = nullptr, *stb = nullptr;
    CK(cudaMalloc(&sta, size_t(full) * 2 * 8));
    CK(cudaMalloc(&stb, size_t(full) * 2 * 8));
    CK(k_read(sa, full, threads, d, big, nullptr, sink));  // warm-up
    CK(cudaStreamSynchronize(sa));

    json cases = json::array();
    auto alone = [&](const std::string& label, int grid, size_t bytes) {
        std::vector<double> t;
        for (int r = 0; r < reps; ++r) {
            CK(cudaEventRecord(ev[0], sa));
            CK(k_read(sa, grid, threads, d, bytes, nullptr, sink));
            CK(cudaEventRecord(ev[1], sa));
            CK(cudaEventSynchronize(ev[1]));
            t.push_back(event_us(ev[0], ev[1]));
        }
        cases.push_back({{"case", label}, {"grid", grid}, {"block", threads}, {"bytes", bytes}, {"gpu_us", r3v(t)}});
        progress(c, "hbm: %-10s %8s grid %3d: %.1f us, %.3f TB/s", label.c_str(), size_str(bytes).c_str(), grid,
                 median(t), double(bytes) / median(t) * 1e-6);
        return median(t);
    };
    const double t1 = alone("full", full, 1 * GiB);
    const double tb = alone("full", full, big);
    const size_t hb = big / 2;
    const double th = alone("half_alone", half, hb);
    // two kernels at once, each on its own half of the buffer
    double tpair = 0, tfullpair = 0;
    for (int grid : {half, full}) {
        std::vector<double> tot, a_us, b_us, ov;
        for (int r = 0; r < reps; ++r) {
            CK(k_spin(sa, 200000));
            CK(cudaEventRecord(ev[0], sa));
            CK(cudaStreamWaitEvent(sb, ev[0], 0));
            CK(k_read(sa, grid, threads, d, hb, sta, sink));
            CK(cudaEventRecord(ev[1], sa));
            CK(k_read(sb, grid, threads, d + hb, hb, stb, sink));
            CK(cudaEventRecord(ev[2], sb));
            CK(cudaStreamSynchronize(sa));
            CK(cudaStreamSynchronize(sb));
            a_us.push_back(event_us(ev[0], ev[1]));
            b_us.push_back(event_us(ev[0], ev[2]));
            tot.push_back(std::max(a_us.back(), b_us.back()));
            Span a = span_of(fetch(sta, size_t(grid) * 2), grid, 1e18);
            Span b = span_of(fetch(stb, size_t(grid) * 2), grid, 1e18);
            ov.push_back(std::max(0.0, (double(std::min(a.end, b.end)) - double(std::max(a.start, b.start))) * 1e-3));
        }
        const std::string label = grid == half ? "half_pair" : "full_pair";
        cases.push_back({{"case", label},
                         {"grid", grid},
                         {"block", threads},
                         {"bytes_each", hb},
                         {"a_end_us", r3v(a_us)},
                         {"b_end_us", r3v(b_us)},
                         {"total_us", r3v(tot)},
                         {"overlap_us", r3v(ov)}});
        (grid == half ? tpair : tfullpair) = median(tot);
        progress(c, "hbm: %-10s 2 x %s: total %.1f us, overlap %.1f us", label.c_str(), size_str(hb).c_str(),
                 median(tot), median(ov));
    }
    out["config"] = {{"reps", reps},
                     {"method", "read-only streaming kernel (16-byte loads, 4 in flight per thread, grid-stride), "
                                "events around it; full grid = 2 x SMs blocks of 1024 threads (fills the device), "
                                "half = SMs blocks. Pairs: both released together behind a blocker, each reading "
                                "its own half of the buffer; overlap from per-block %globaltimer stamps"},
                     {"l2_cache_bytes", c.prop.l2CacheSize}};
    out["cases"] = cases;
    CK(cudaFree(sta));
    CK(cudaFree(stb));
    CK(cudaFree(sink));
    preview(out, "hbm.bandwidth", double(big) / tb * 1e-6, "TB/s", "bytes / median time, full grid, " + size_str(big));
    preview(out, "check.hbm_1GiB", double(GiB) / t1 * 1e-6, "TB/s", "full grid, 1 GiB");
    preview(out, "check.hbm_half_grid", double(hb) / th * 1e-6, "TB/s", "half grid alone");
    preview(out, "check.hbm_pair_ratio", tpair / th, "x",
            "two half-grid kernels at once / one alone (2 = they share HBM, 1 = no slowdown)");
    preview(out, "check.hbm_full_pair_ratio", tfullpair / (double(hb) / (double(big) / tb)), "x",
            "two full-grid kernels on halves / one alone on a half (about 2 either way)");
}
