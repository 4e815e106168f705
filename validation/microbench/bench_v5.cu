// Follow-up section for issue 14 (README.md beside this file):
//   pageable_threads   small pageable copies issued by several host threads at once: are they
//                      served one at a time (validation 64, 76, 107)?
#include "common.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

// ---- pageable_threads ---------------------------------------------------------------------------------
// Validation 107 (four threads, each: 64 KiB pageable H2D, 40 us kernel, 64 KiB pageable D2H,
// stream sync) runs 2x longer than the threads side by side would: its copies' DMAs never overlap
// and a D2H's DMA starts 5-490 us after its kernel ends. This section times the same loop with 1,
// 2, 4 and 8 threads, with and without the kernel, and H2D-only / D2H-only loops, every call
// stamped on one steady_clock (relative to the release of the threads), so that the overlap of
// the threads' copies can be read from the stamps.
void bench_pageable_threads(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int iters = q ? 20 : 50, reps = q ? 1 : 2;
    const int tmax = 8;
    const size_t xfer = 64 * KiB, slot = 1 * MiB;
    // Pageable: one slot per thread for the upload source and one for the download destination,
    // written once (warm after the first copies, as the runner's reused scratch buffers are).
    char* hu = static_cast<char*>(aligned_alloc(4096, size_t(tmax) * slot));
    char* hd = static_cast<char*>(aligned_alloc(4096, size_t(tmax) * slot));
    if (!hu || !hd) mb_die("pageable_threads: cannot allocate %zu bytes of host memory", 2 * size_t(tmax) * slot);
    memset(hu, 0x5a, size_t(tmax) * slot);
    memset(hd, 0x00, size_t(tmax) * slot);
    char* d = static_cast<char*>(c.dev(size_t(tmax) * slot));
    std::vector<cudaStream_t> st(tmax);
    for (auto& x : st) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    const char* const modes[] = {"h2d_kernel_d2h", "h2d_d2h", "h2d", "d2h", "kernel_d2h"};
    out["config"] = {
        {"threads", {1, 2, 4, 8}},
        {"iters", iters},
        {"reps", reps},
        {"bytes", xfer},
        {"kernel", "40 us spin kernel of 32 x 256 threads (validation 107's)"},
        {"modes",
         {{"h2d_kernel_d2h", "iters x [64 KiB pageable cudaMemcpyAsync H2D; 40 us kernel; 64 KiB pageable cudaMemcpyAsync D2H; "
                             "cudaStreamSynchronize] (validation 107)"},
          {"h2d_d2h", "iters x [H2D; D2H; sync], no kernel"},
          {"h2d", "iters x [H2D; sync]"},
          {"d2h", "iters x [D2H; sync]"},
          {"kernel_d2h", "iters x [40 us kernel; D2H; sync]"}}},
        {"method",
         "T host threads released together (spinning barrier), each with its own non-blocking stream and its own pageable "
         "source and destination; steady_clock stamps around every call, relative to the release: h2d/kernel/d2h/sync "
         "[start, end] pairs per iteration (absent calls omitted); total_us = the thread's loop"}};
    json pts = json::array();
    std::map<std::string, double> pv;
    CK(cudaMemcpy(d, hu, xfer, cudaMemcpyHostToDevice));  // warm-up of the pageable path
    for (const char* mode : modes)
        for (int T : {1, 2, 4, 8})
            for (int r = 0; r < reps; ++r) {
                const std::string m = mode;
                const bool up = m.find("h2d") != std::string::npos, kern = m.find("kernel") != std::string::npos,
                           down = m.find("d2h") != std::string::npos;
                struct Rec {
                    std::vector<double> h2d, kernel, d2h, sync;  // start, end pairs (us from the release)
                    std::vector<double> iter;
                    double total = 0;
                    cudaError_t err = cudaSuccess;
                    const char* call = "";
                };
                std::vector<Rec> rec(static_cast<size_t>(T));
                std::atomic<int> ready{0};
                std::atomic<bool> go{false};
                std::atomic<int64_t> origin{0};
                auto body = [&](int t) {
                    Rec& R = rec[size_t(t)];
                    cudaError_t e = cudaSetDevice(c.opt.device);
                    ready.fetch_add(1);
                    while (!go.load(std::memory_order_acquire)) {
                    }
                    if (e != cudaSuccess) {
                        R.err = e, R.call = "cudaSetDevice";
                        return;
                    }
                    const int64_t o = origin.load();
                    auto rel = [&](int64_t x) { return ns_to_us(x - o); };
                    cudaStream_t s = st[size_t(t)];
                    char* src = hu + size_t(t) * slot;
                    char* dst = hd + size_t(t) * slot;
                    char* dev = d + size_t(t) * slot;
                    const int64_t t0 = now_ns();
                    for (int i = 0; i < iters; ++i) {
                        const int64_t a = now_ns();
                        if (up) {
                            e = cudaMemcpyAsync(dev, src, xfer, cudaMemcpyHostToDevice, s);
                            const int64_t b = now_ns();
                            if (e != cudaSuccess) {
                                R.err = e, R.call = "cudaMemcpyAsync H2D";
                                return;
                            }
                            R.h2d.push_back(rel(a)), R.h2d.push_back(rel(b));
                        }
                        if (kern) {
                            const int64_t k0 = now_ns();
                            e = k_spin_stamp(s, 32, 256, 40000, 0, nullptr, nullptr);
                            const int64_t k1 = now_ns();
                            if (e != cudaSuccess) {
                                R.err = e, R.call = "launch";
                                return;
                            }
                            R.kernel.push_back(rel(k0)), R.kernel.push_back(rel(k1));
                        }
                        if (down) {
                            const int64_t d0 = now_ns();
                            e = cudaMemcpyAsync(dst, dev, xfer, cudaMemcpyDeviceToHost, s);
                            const int64_t d1 = now_ns();
                            if (e != cudaSuccess) {
                                R.err = e, R.call = "cudaMemcpyAsync D2H";
                                return;
                            }
                            R.d2h.push_back(rel(d0)), R.d2h.push_back(rel(d1));
                        }
                        const int64_t s0 = now_ns();
                        e = cudaStreamSynchronize(s);
                        const int64_t s1 = now_ns();
                        if (e != cudaSuccess) {
                            R.err = e, R.call = "cudaStreamSynchronize";
                            return;
                        }
                        R.sync.push_back(rel(s0)), R.sync.push_back(rel(s1));
                        R.iter.push_back(ns_to_us(s1 - a));
                    }
                    R.total = ns_to_us(now_ns() - t0);
                };
                CK(cudaDeviceSynchronize());
                std::vector<std::thread> th;
                for (int t = 0; t < T; ++t) th.emplace_back(body, t);
                while (ready.load() < T) {
                }
                origin.store(now_ns());
                go.store(true, std::memory_order_release);
                for (auto& x : th) x.join();
                json tj = json::array();
                std::vector<double> all_iter;
                double span = 0;
                for (int t = 0; t < T; ++t) {
                    const Rec& R = rec[size_t(t)];
                    if (R.err != cudaSuccess) mb_fail(cudaGetErrorName(R.err), cudaGetErrorString(R.err), R.call, __FILE__, __LINE__);
                    json one = {{"iter_us", r3v(R.iter)}, {"sync", r3v(R.sync)}, {"total_us", r3(R.total)}};
                    if (up) one["h2d"] = r3v(R.h2d);
                    if (kern) one["kernel"] = r3v(R.kernel);
                    if (down) one["d2h"] = r3v(R.d2h);
                    tj.push_back(one);
                    all_iter.insert(all_iter.end(), R.iter.begin(), R.iter.end());
                    span = std::max(span, R.total);
                }
                pts.push_back({{"mode", mode}, {"threads", T}, {"rep", r}, {"per_thread", tj}});
                pv[m + std::to_string(T)] = median(all_iter);
                if (r == 0)
                    progress(c, "pageable_threads: %-15s %d threads: median iteration %.1f us, longest loop %.0f us", mode, T,
                             median(all_iter), span);
            }
    for (auto& x : st) CK(cudaStreamDestroy(x));
    free(hu);
    free(hd);
    out["points"] = pts;
    for (int T : {1, 4, 8})
        preview(out, "check.pageable_threads_iter_t" + std::to_string(T), pv["h2d_kernel_d2h" + std::to_string(T)], "us",
                "median iteration of 64 KiB pageable H2D + 40 us kernel + 64 KiB pageable D2H + sync");
}
