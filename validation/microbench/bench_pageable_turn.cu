// hetsim-microbench section pageable_turnaround: what a pageable copy's call costs after a pageable
// copy of the other direction. Probes of machine start 2026-12-03t: a 64 KiB pageable H2D after a
// pageable D2H took 15-18 us against 6-9 us after an upload, a pinned download, a kernel, a long
// sync wait or host work (validation 62, 76, 99, 104 and 107 run uploads after pageable downloads
// and were 5-15 % short). Per size (4 KiB .. 4 MiB, the same malloc'd and touched host buffers each
// time, so the source stays cache-warm) and per mode, n reps of: a first copy, a stream sync, 20 us
// of host spin, the timed copy, a stream sync, 20 us of host spin. Modes: the timed copy an H2D or
// a D2H, the first copy an H2D or a D2H of the same size; and an H2D after a 4 KiB D2H (does the
// download's size matter?), after a D2H followed by 500 us of host spin (does it wear off?), and
// an upload of the very bytes the download wrote (h2d_of_d2h_bytes: the runner's anonymous copies
// share one scratch buffer, so validation 107 does that).
// Result (machine start 2026-12-03u): with the upload source and the download target apart, an
// upload after a download costs what it costs after an upload (64 KiB: 7.4 us against 7-13 us);
// the probes' slow uploads came from re-reading the bytes a pageable download had just written
// (the runner then used one scratch buffer for both; validation/runner/README.md). The preview
// informs no parameter.
#include "common.hpp"

#include <string>
#include <vector>

void bench_pageable_turnaround(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    cudaStream_t s = c.s[0];
    const int n = q ? 5 : 20;
    const std::vector<size_t> sizes = q ? std::vector<size_t>{4 * KiB, 64 * KiB, 1 * MiB}
                                        : std::vector<size_t>{4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB, 4 * MiB};
    const size_t max_b = 4 * MiB;
    char* hu = static_cast<char*>(std::malloc(max_b));
    char* hd = static_cast<char*>(std::malloc(max_b));
    if (!hu || !hd) mb_die("pageable_turnaround: cannot allocate 2 x %zu bytes of host memory", max_b);
    for (size_t i = 0; i < max_b; i += 4096) hu[i] = char(i), hd[i] = char(i);
    char* d = nullptr;
    CK(cudaMalloc(&d, max_b));
    struct Mode {
        const char* name;
        bool first_h2d;     // the copy before the timed one
        size_t first_bytes;  // 0: the timed copy's size
        bool timed_h2d;
        double pause_us;  // host spin between the first copy's sync and the timed copy
        bool same = false;  // the timed upload reads the buffer the first copy (a download) wrote
    };
    const std::vector<Mode> modes = {{"h2d_after_h2d", true, 0, true, 20},      {"h2d_after_d2h", false, 0, true, 20},
                                     {"d2h_after_d2h", false, 0, false, 20},    {"d2h_after_h2d", true, 0, false, 20},
                                     {"h2d_after_small_d2h", false, 4 * KiB, true, 20},
                                     {"h2d_after_d2h_pause", false, 0, true, 500},
                                     {"h2d_of_d2h_bytes", false, 0, true, 20, true}};
    auto copy = [&](bool h2d, size_t b, bool same = false) {
        return h2d ? cudaMemcpyAsync(d, same ? hd : hu, b, cudaMemcpyHostToDevice, s)
                   : cudaMemcpyAsync(hd, d, b, cudaMemcpyDeviceToHost, s);
    };
    // warm-up: both directions, every size
    for (size_t b : sizes) {
        CK(copy(true, b));
        CK(copy(false, b));
    }
    CK(cudaStreamSynchronize(s));
    json pts = json::array();
    std::vector<double> turn, reread;
    for (size_t b : sizes) {
        double after_h2d = 0, after_d2h = 0;
        for (const Mode& m : modes) {
            std::vector<double> call, total;
            for (int r = 0; r < n; ++r) {
                CK(copy(m.first_h2d, m.first_bytes ? m.first_bytes : b));
                CK(cudaStreamSynchronize(s));
                spin_host_us(m.pause_us);
                const int64_t t0 = now_ns();
                const cudaError_t e = copy(m.timed_h2d, b, m.same);
                const int64_t t1 = now_ns();
                CK(e);
                CK(cudaStreamSynchronize(s));
                const int64_t t2 = now_ns();
                call.push_back(ns_to_us(t1 - t0));
                total.push_back(ns_to_us(t2 - t0));
                spin_host_us(20);
            }
            const std::string name = m.name;
            if (name == "h2d_after_h2d") after_h2d = median(call);
            if (name == "h2d_after_d2h") after_d2h = median(call);
            if (name == "h2d_after_d2h" && b <= 1 * MiB) turn.push_back(median(call) - after_h2d);
            if (name == "h2d_of_d2h_bytes" && b == 64 * KiB) reread.push_back(median(call) - after_d2h);
            pts.push_back({{"mode", name}, {"bytes", b}, {"call_us", r3v(call)}, {"total_us", r3v(total)}});
            progress(c, "pageable_turnaround: %-20s %8s call %8.1f us total %8.1f us", m.name, size_str(b).c_str(),
                     median(call), median(total));
        }
    }
    CK(cudaFree(d));
    std::free(hu);
    std::free(hd);
    out["method"] = "per size and mode, n x (first copy, stream sync, pause of host spin, timed cudaMemcpyAsync, "
                    "stream sync, 20 us host spin); the same malloc'd, touched host buffers every time (hu the "
                    "upload source, hd the download target); call_us = the timed call, total_us = call to sync return";
    out["points"] = pts;
    preview(out, "host.pageable_turnaround", median(turn), "us",
            "median over sizes <= 1 MiB of (median h2d_after_d2h call - median h2d_after_h2d call)");
    preview(out, "host.pageable_reread", reread.empty() ? NAN : reread[0], "us",
            "64 KiB: median h2d_of_d2h_bytes call - median h2d_after_d2h call (a lead, no parameter yet)");
}
