// hetsim-microbench section host_func_wait: how long after its preceding kernel a host callback
// (cudaLaunchHostFunc) starts, against how long the driver's callback thread had nothing to do
// (issue 11: validation 45/82/83 run 5-8% longer than modelled; the device request of 2026-12-02
// found 37 us after 20 us kernels, 42 us after 150 us and 75 us after 400 us on one start,
// validation/measurements/h200/2026-12-02l/x). Per kernel length L (10 us .. 1 ms): n pairs
// (1 x 32 spin-stamp kernel of L, host callback that stamps its start and end on steady_clock)
// enqueued back to back on one stream, then one stream sync: callback i waits for kernel i, which
// starts after callback i-1 returns, so the callback thread was idle about L + the gap before
// each callback after the first. Then the same pairs one at a time (stream sync and a 30 us host
// spin after each), as the host_func section does at 100 us. Clocks aligned by ping-pong.
#include "common.hpp"

#include <string>
#include <vector>

void bench_host_func_wait(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    cudaStream_t s = c.s[0];
    const int n = q ? 5 : 12;
    const std::vector<int> lengths_us = q ? std::vector<int>{20, 400} : std::vector<int>{10, 50, 100, 150, 200, 250, 300, 400, 600, 1000};
    unsigned long long* st = nullptr;
    CK(cudaMalloc(&st, size_t(n) * 2 * sizeof(unsigned long long)));
    std::vector<unsigned long long> hs(size_t(n) * 2);
    std::vector<HostStamp> cb(static_cast<size_t>(n));
    json pts = json::array();
    std::vector<double> short_lat, long_lat;
    for (int chained : {1, 0})
        for (int L : lengths_us) {
            for (auto& x : cb) x.start.store(0), x.end.store(0);
            std::vector<ClockSync> syncs;
            syncs.push_back(clock_sync(c, "host_func_wait/a"));
            if (chained) {
                for (int i = 0; i < n; ++i) {
                    CK(k_spin_stamp(s, 1, 32, uint64_t(L) * 1000, 0, st + size_t(i) * 2, nullptr));
                    CK(cudaLaunchHostFunc(s, stamp_cb, &cb[size_t(i)]));
                }
                CK(cudaStreamSynchronize(s));
            } else {
                for (int i = 0; i < n; ++i) {
                    CK(k_spin_stamp(s, 1, 32, uint64_t(L) * 1000, 0, st + size_t(i) * 2, nullptr));
                    CK(cudaLaunchHostFunc(s, stamp_cb, &cb[size_t(i)]));
                    CK(cudaStreamSynchronize(s));
                    spin_host_us(30);
                }
            }
            CK(cudaMemcpy(hs.data(), st, hs.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
            syncs.push_back(clock_sync(c, "host_func_wait/b"));
            std::vector<double> lat, idle, gap;
            for (int i = 0; i < n; ++i) {
                const double kend = gpu_to_host_ns(syncs, double(hs[size_t(i) * 2 + 1]));
                lat.push_back((double(cb[size_t(i)].start.load()) - kend) * 1e-3);
                // the callback thread's idle time before callback i: from callback i-1's return
                idle.push_back(i == 0 ? -1.0 : (kend - double(cb[size_t(i) - 1].end.load())) * 1e-3);
                if (chained && i + 1 < n)
                    gap.push_back((gpu_to_host_ns(syncs, double(hs[size_t(i + 1) * 2])) - double(cb[size_t(i)].end.load())) * 1e-3);
            }
            std::vector<double>& pooled = L <= 150 ? short_lat : long_lat;
            pooled.insert(pooled.end(), lat.begin() + 1, lat.end());  // the first callback of a series has no idle time
            json p = {{"kernel_us", L}, {"chained", bool(chained)}, {"latency_us", r3v(lat)}, {"idle_us", r3v(idle)}};
            if (chained) p["gap_after_us"] = r3v(gap);
            pts.push_back(p);
        }
    CK(cudaFree(st));
    out["method"] = "per kernel length: n x (1 x 32 spin-stamp kernel, host callback stamping its start/end) on one stream, "
                    "chained (enqueued back to back, one sync) and one at a time (sync + 30 us host spin after each); "
                    "latency = callback start - the kernel's block end stamp, idle = that end - the previous callback's "
                    "return (-1 for the first), clocks aligned by ping-pong";
    out["points"] = pts;
    preview(out, "gpu.host_func_latency", median(short_lat), "us", "median callback start - kernel end, kernels <= 150 us");
    preview(out, "gpu.host_func_latency_idle", median(long_lat), "us", "median callback start - kernel end, kernels > 150 us");
}
