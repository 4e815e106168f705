// Copy benchmarks: copy_sweep, pageable_sweep, d2d_memset, duplex, same_direction.
#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>

namespace {

struct Batch {
    double gpu_us = 0;
    std::vector<double> call_us;
    bool blocker_expired = false;  // the GPU reached the ops before all were issued (host-bound)
};

// A blocker kernel first, so that all k ops are queued before the GPU reaches them; an event; the k ops
// (host time of each call); an event; wait. gpu_us = event to event.
Batch timed_batch(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, int k, double est_call_us,
                  const std::function<cudaError_t(int)>& issue) {
    const uint64_t block_ns = uint64_t((double(k) * (est_call_us + 2.0) + 60.0) * 1000.0);
    CK(k_spin(s, block_ns));
    CK(cudaEventRecord(e0, s));
    Batch b;
    b.call_us.reserve(size_t(k));
    for (int i = 0; i < k; ++i) {
        const int64_t t0 = now_ns();
        cudaError_t e = issue(i);
        const int64_t t1 = now_ns();
        CK(e);
        b.call_us.push_back(ns_to_us(t1 - t0));
    }
    cudaError_t q = cudaEventQuery(e0);
    if (q == cudaSuccess)
        b.blocker_expired = true;
    else if (q != cudaErrorNotReady)
        CK(q);
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    b.gpu_us = event_us(e0, e1);
    return b;
}

// One size point of a batch sweep, with R repetitions of batches of k ops.
json batch_point(const char* op, size_t bytes, int k, int reps, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                 double est_call_us, const std::function<cudaError_t(int)>& issue) {
    std::vector<double> gpu, call;
    int expired = 0;
    for (int r = 0; r < reps; ++r) {
        Batch b = timed_batch(s, e0, e1, k, est_call_us, issue);
        gpu.push_back(b.gpu_us);
        call.insert(call.end(), b.call_us.begin(), b.call_us.end());
        expired += b.blocker_expired;
    }
    json p;
    p["op"] = op;
    p["bytes"] = bytes;
    p["k"] = k;
    p["batch_gpu_us"] = r3v(gpu);
    p["call_us"] = r3v(call);
    p["blocker_expired"] = expired;
    return p;
}

// Preview fit of batch points: per-op time p(s) = median(batch)/k; bandwidth = 1/slope of p vs s for
// s >= bw_from; intercept f = median over s <= fixed_upto of p(s) - s/bw.
void preview_batch_fit(json& out, const json& points, const std::string& op, const std::string& prefix,
                       double bytes_factor, size_t bw_from, size_t fixed_upto) {
    std::vector<double> xs, ys, fx;
    std::vector<std::pair<size_t, double>> per;
    for (const auto& p : points) {
        if (p["op"] != op) continue;
        const int k = p["k"].get<int>();
        const size_t b = p["bytes"].get<size_t>();
        // use the largest k of each size
        bool larger_exists = false;
        for (const auto& q : points)
            if (q["op"] == op && q["bytes"].get<size_t>() == b && q["k"].get<int>() > k) larger_exists = true;
        if (larger_exists) continue;
        std::vector<double> g = p["batch_gpu_us"].get<std::vector<double>>();
        per.push_back({b, median(g) / k});
    }
    for (auto& [b, t] : per)
        if (b >= bw_from) xs.push_back(double(b) * bytes_factor), ys.push_back(t);
    LineFit f = fit_line(xs, ys);
    const double bw_gbs = f.slope > 0 ? 1.0 / f.slope / 1000.0 : NAN;
    for (auto& [b, t] : per)
        if (b <= fixed_upto && f.slope > 0) fx.push_back(t - double(b) * bytes_factor * f.slope);
    preview(out, prefix + ".bandwidth", bw_gbs, "GB/s",
            "1/slope of median per-op GPU time vs bytes" + std::string(bytes_factor == 2 ? " x2 (read+write)" : "") +
                ", sizes >= " + size_str(bw_from));
    preview(out, prefix + ".fixed", median(fx), "us",
            "per-op time - bytes/bw, sizes <= " + size_str(fixed_upto) +
                " (back to back: includes gpu.stream_gap in the model's terms)");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
void bench_copy_sweep(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const size_t max_b = q ? 256 * MiB : 1 * GiB;
    const auto sizes = q ? pow2_sizes(4 * KiB, max_b, 2) : pow2_sizes(4 * KiB, max_b, 1);
    const int reps = q ? 3 : 7;
    const size_t kbytes = q ? 64 * MiB : 256 * MiB;  // a batch moves about this much
    char* d = (char*)c.dev(max_b);
    char* h = (char*)c.pinned(max_b);
    cudaStream_t s = c.s[0];
    EventPool ev(2);
    out["config"] = {{"reps", reps},
                     {"sizes", sizes},
                     {"method",
                      "per (dir, size, k): reps x [blocker kernel; event; k back-to-back cudaMemcpyAsync; event]; "
                      "batch_gpu_us = event to event; call_us = steady_clock around each call (reps*k values)"}};
    json pts = json::array();
    for (const char* dir : {"h2d", "d2h"}) {
        const bool h2d = dir[0] == 'h';
        const cudaMemcpyKind kind = h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        // warm-up
        for (size_t b : {4 * KiB, 1 * MiB}) {
            CK(cudaMemcpyAsync(h2d ? (void*)d : (void*)h, h2d ? (void*)h : (void*)d, b, kind, s));
        }
        CK(cudaStreamSynchronize(s));
        for (size_t b : sizes) {
            const int kmax = int(std::clamp<size_t>(kbytes / b, 1, 32));
            const double est = 5.0 + 10.0 * double(b) / double(GiB);
            auto issue = [&](int) {
                return cudaMemcpyAsync(h2d ? (void*)d : (void*)h, h2d ? (void*)h : (void*)d, b, kind, s);
            };
            for (int k : kmax > 1 ? std::vector<int>{1, kmax} : std::vector<int>{1})
                pts.push_back(batch_point(dir, b, k, reps, s, ev[0], ev[1], est, issue));
            const json& last = pts.back();
            progress(c, "copy_sweep: %s %8s k=%2d  %.2f us/copy", dir, size_str(b).c_str(), last["k"].get<int>(),
                     median(last["batch_gpu_us"].get<std::vector<double>>()) / last["k"].get<int>());
        }
    }
    out["points"] = pts;
    for (const char* dir : {"h2d", "d2h"})
        preview_batch_fit(out, pts, dir, std::string("copy.") + dir, 1.0, 16 * MiB, 64 * KiB);
    std::vector<double> calls;
    for (const auto& p : pts)
        if (p["bytes"].get<size_t>() <= 1 * MiB)
            for (double x : p["call_us"]) calls.push_back(x);
    preview(out, "host.memcpy_call_cost", median(calls), "us", "median call time, pinned copies <= 1 MiB");
}

// ---------------------------------------------------------------------------------------------
void bench_pageable_sweep(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const size_t max_b = q ? 64 * MiB : 256 * MiB;
    const auto sizes = q ? pow2_sizes(64 * KiB, max_b, 2) : pow2_sizes(64 * KiB, max_b, 1);
    const int reps = q ? 2 : 5;
    const size_t hbytes = std::max<size_t>(2 * max_b, 512 * MiB);  // rotation keeps the source cache-cold
    char* d = (char*)c.dev(max_b);
    char* h = (char*)aligned_alloc(4096, hbytes);
    if (!h) mb_die("pageable_sweep: cannot allocate %zu bytes of host memory", hbytes);
    memset(h, 0x3c, hbytes);  // touch every page
    size_t cursor = 0;
    auto next_src = [&](size_t b) {
        if (cursor + b > hbytes) cursor = 0;
        char* p = h + cursor;
        cursor += b;
        return p;
    };
    cudaStream_t s = c.s[0];
    EventPool ev(2);
    out["config"] = {
        {"reps", reps},
        {"sizes", sizes},
        {"host_buffer_bytes", hbytes},
        {"modes",
         {{"h2d_idle", "idle stream; event; t0; cudaMemcpyAsync; t1; event; cudaStreamSynchronize; t2; source "
                       "rotates through the host buffer (cache-cold)"},
          {"d2h_idle", "same, device to pageable host"},
          {"h2d_warm", "h2d_idle from the same source each time (cache-warm), sizes <= 128 MiB and 24/48/96 MiB"},
          {"h2d_busy", "a blocker kernel of blocker_us queued first; call_us ~ staging if the call does not "
                       "wait, ~ blocker_us if it blocks behind the DMA"},
          {"d2h_busy", "same for D2H, a few sizes"},
          {"h2d_warm_gap", "h2d_warm with 2 ms of host spin (steady_clock) before each copy, 4-32 MiB: does the warm "
                           "source survive a pause (validation 37)?"},
          {"h2d_warm_busy", "h2d_warm behind a 2 ms blocker kernel in the same stream, 4-32 MiB (validation 51)"}}},
        {"fields", "call_us = t1-t0, total_us = t2-t0, gpu_us = event to event"}};
    // warm-up
    CK(cudaMemcpyAsync(d, h, 64 * KiB, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(h, d, 64 * KiB, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));

    json pts = json::array();
    auto run_mode = [&](const std::string& mode, size_t b) {
        const bool h2d = mode[0] == 'h';
        const bool busy = mode.find("busy") != std::string::npos;
        const bool warm = mode.find("warm") != std::string::npos;
        const bool gap = mode == "h2d_warm_gap", warm_busy = mode == "h2d_warm_busy";
        std::vector<double> call, total, gpu, blk;
        for (int r = 0; r < reps; ++r) {
            char* hp = warm ? h : next_src(b);
            double blocker_us = 0;
            if (busy) {
                blocker_us = 2.0 * double(b) / 5000.0 + 2000.0;  // twice the staging time at 5 GB/s + 2 ms
                CK(k_spin(s, uint64_t(blocker_us * 1000.0)));
            }
            if (gap) spin_host_us(2000.0);
            if (warm_busy) {
                blocker_us = 2000.0;
                CK(k_spin(s, 2000000));
            }
            timed_copy(s, ev, call, total, gpu, [&] {
                return h2d ? cudaMemcpyAsync(d, hp, b, cudaMemcpyHostToDevice, s) : cudaMemcpyAsync(hp, d, b, cudaMemcpyDeviceToHost, s);
            });
            blk.push_back(blocker_us);
        }
        json p;
        p["mode"] = mode;
        p["bytes"] = b;
        p["call_us"] = r3v(call);
        p["total_us"] = r3v(total);
        p["gpu_us"] = r3v(gpu);
        if (busy || warm_busy) p["blocker_us"] = r3v(blk);
        pts.push_back(p);
        progress(c, "pageable_sweep: %-8s %8s call %9.1f us total %9.1f us (%.2f GB/s)", mode.c_str(),
                 size_str(b).c_str(), median(call), median(total), double(b) / median(total) / 1000.0);
    };
    for (size_t b : sizes) run_mode("h2d_idle", b);
    for (size_t b : sizes) run_mode("d2h_idle", b);
    // Warm sources up to 128 MiB (and 24, 48, 96 MiB between the powers of two): where the
    // CPU caches stop holding the source (host.staging_cache).
    std::vector<size_t> warm_sizes;
    for (size_t b : sizes)
        if (b <= 128 * MiB) warm_sizes.push_back(b);
    for (size_t b : {24 * MiB, 48 * MiB, 96 * MiB})
        if (b <= max_b) warm_sizes.push_back(b);
    std::sort(warm_sizes.begin(), warm_sizes.end());
    for (size_t b : warm_sizes) run_mode("h2d_warm", b);
    for (size_t b : sizes) run_mode("h2d_busy", b);
    for (size_t b : {64 * KiB, 1 * MiB, 16 * MiB})
        if (b <= max_b) run_mode("d2h_busy", b);
    // Warm sources with a pause or a busy stream before each copy (issue 14: 37 and 51 re-upload
    // 16/24 MiB at the cold rate); each size first copied once so that rep 0 is warm too.
    for (size_t b : {4 * MiB, 16 * MiB, 24 * MiB, 32 * MiB})
        if (b <= max_b)
            for (const char* m : {"h2d_warm_gap", "h2d_warm_busy"}) {
                CK(cudaMemcpyAsync(d, h, b, cudaMemcpyHostToDevice, s));
                CK(cudaStreamSynchronize(s));
                run_mode(m, b);
            }
    out["points"] = pts;
    free(h);

    // previews
    auto slope_bw = [&](const char* mode, const char* field) {
        std::vector<double> x, y;
        for (const auto& p : pts)
            if (p["mode"] == mode && p["bytes"].get<size_t>() >= 1 * MiB) {
                x.push_back(double(p["bytes"].get<size_t>()));
                y.push_back(median(p[field].get<std::vector<double>>()));
            }
        LineFit f = fit_line(x, y);
        return f.slope > 0 ? 1.0 / f.slope / 1000.0 : NAN;
    };
    preview(out, "host.pageable_h2d_bandwidth", slope_bw("h2d_idle", "call_us"), "GB/s",
            "1/slope of median call time vs bytes, h2d_idle, sizes >= 1 MiB");
    preview(out, "host.pageable_d2h_bandwidth", slope_bw("d2h_idle", "call_us"), "GB/s",
            "1/slope of median call time vs bytes, d2h_idle, sizes >= 1 MiB");
    double first_block = NAN;
    for (const auto& p : pts)
        if (p["mode"] == "h2d_busy") {
            double cl = median(p["call_us"].get<std::vector<double>>());
            double bl = median(p["blocker_us"].get<std::vector<double>>());
            if (cl > 0.5 * bl) {
                first_block = double(p["bytes"].get<size_t>()) / double(MiB);
                break;
            }
        }
    preview(out, "check.pageable_h2d_blocks_from", first_block, "MiB",
            "smallest size whose call waited for a busy stream (staging pool bound); NaN: none blocked");
    std::vector<double> tails;
    for (const auto& p : pts)
        if (p["mode"] == "h2d_idle" && p["bytes"].get<size_t>() >= 16 * MiB) {
            auto cl = p["call_us"].get<std::vector<double>>();
            auto to = p["total_us"].get<std::vector<double>>();
            for (size_t i = 0; i < cl.size(); ++i) tails.push_back(to[i] - cl[i]);
        }
    preview(out, "check.pageable_h2d_tail", median(tails), "us",
            "total - call, h2d_idle >= 16 MiB; host.staging_chunk = (tail - copy.h2d.fixed - host.sync_wakeup) "
            "* copy.h2d.bandwidth");
}

// ---------------------------------------------------------------------------------------------
// pageable_steady (issue 14): the speed a pageable H2D settles at when a program copies its own
// buffer again and again. pageable_sweep's h2d_warm (a slice of one 512 MiB buffer, 5 copies a
// size) rises over its reps and its last reps are still 15-25% below what validation 87-89 (a
// buffer of the copy's size, malloc'd and touched once a page, 48 copies) measure from the first
// copy on. Modes, per size 256 KiB .. 32 MiB, each on a fresh malloc of exactly the size:
//   own_steady: touched once a page (as the runner does), then `reps` copies back to back;
//   own_filled: memset whole by the CPU first (the source in the CPU caches when it fits), then
//               the same copies;
//   own_first:  `firsts` fresh buffers, each touched once a page and copied once (the first copy
//               of a source never copied before, against h2d_idle's rotation through 512 MiB);
//   big_steady: the first `size` bytes of one 512 MiB buffer touched once a page (h2d_warm's
//               source), the same copies.
// Each copy: event; t0; cudaMemcpyAsync; t1; event; cudaStreamSynchronize; t2 (as pageable_sweep).
void bench_pageable_steady(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const std::vector<size_t> sizes = q ? std::vector<size_t>{256 * KiB, 4 * MiB}
                                        : std::vector<size_t>{256 * KiB, 512 * KiB, 1 * MiB, 2 * MiB, 4 * MiB,
                                                              8 * MiB, 16 * MiB, 32 * MiB};
    const int reps = q ? 4 : 12, firsts = q ? 2 : 6;
    const size_t big_bytes = 512 * MiB;
    char* d = (char*)c.dev(32 * MiB);
    cudaStream_t s = c.s[0];
    EventPool ev(2);
    auto touch_pages = [](char* p, size_t b) {
        volatile char* v = p;
        for (size_t off = 0; off < b; off += 4096) v[off] = 0;
    };
    auto get = [](size_t b) {
        char* p = (char*)std::malloc(b);
        if (!p) mb_die("pageable_steady: cannot allocate %zu bytes of host memory", b);
        return p;
    };
    char* big = get(big_bytes);
    touch_pages(big, big_bytes);
    out["config"] = {
        {"reps", reps},
        {"firsts", firsts},
        {"sizes", sizes},
        {"modes",
         {{"own_steady", "malloc(size), one byte written per 4 KiB page, then reps x (event; t0; cudaMemcpyAsync H2D; "
                         "t1; event; cudaStreamSynchronize; t2) from it"},
          {"own_filled", "as own_steady, the buffer memset whole first"},
          {"own_first", "firsts x (malloc(size), one byte per page, one timed copy, free): first copies"},
          {"big_steady", "as own_steady from the first size bytes of one 512 MiB malloc touched once a page "
                         "(pageable_sweep h2d_warm's source)"}}},
        {"fields", "call_us = t1-t0, total_us = t2-t0, gpu_us = event to event; rep r of own_steady/own_filled/"
                   "big_steady is the (r+1)th copy of that source"}};
    CK(cudaMemcpyAsync(d, big, 64 * KiB, cudaMemcpyHostToDevice, s));
    CK(cudaStreamSynchronize(s));
    json pts = json::array();
    auto one = [&](char* hp, size_t b, std::vector<double>& call, std::vector<double>& total, std::vector<double>& gpu) {
        timed_copy(s, ev, call, total, gpu, [&] { return cudaMemcpyAsync(d, hp, b, cudaMemcpyHostToDevice, s); });
    };
    for (const char* mode : {"own_steady", "own_filled", "own_first", "big_steady"}) {
        const std::string m = mode;
        for (size_t b : sizes) {
            std::vector<double> call, total, gpu;
            if (m == "own_first") {
                for (int r = 0; r < firsts; ++r) {
                    char* p = get(b);
                    touch_pages(p, b);
                    one(p, b, call, total, gpu);
                    std::free(p);
                }
            } else {
                char* p = m == "big_steady" ? big : get(b);
                if (m == "own_filled") std::memset(p, 0x5a, b);
                else if (m == "own_steady") touch_pages(p, b);
                for (int r = 0; r < reps; ++r) one(p, b, call, total, gpu);
                if (p != big) std::free(p);
            }
            json j;
            j["mode"] = m;
            j["bytes"] = b;
            j["call_us"] = r3v(call);
            j["total_us"] = r3v(total);
            j["gpu_us"] = r3v(gpu);
            pts.push_back(j);
            std::vector<double> late(call.size() > 2 ? call.begin() + 2 : call.begin(), call.end());
            progress(c, "pageable_steady: %-10s %8s first call %8.1f us, median from the 3rd %8.1f us (%.2f GB/s)",
                     mode, size_str(b).c_str(), call.front(), median(late), double(b) / median(late) / 1000.0);
        }
    }
    std::free(big);
    out["points"] = pts;
    std::vector<double> rates;  // bytes/us = MB/s
    for (const auto& p : pts)
        if (p["mode"] == "own_steady" && p["bytes"].get<size_t>() >= 1 * MiB && p["bytes"].get<size_t>() <= 8 * MiB) {
            auto cl = p["call_us"].get<std::vector<double>>();
            for (size_t i = 2; i < cl.size(); ++i) rates.push_back(double(p["bytes"].get<size_t>()) / cl[i]);
        }
    preview(out, "host.pageable_h2d_warm_bandwidth", rates.empty() ? NAN : median(rates) / 1000.0, "GB/s",
            "median per-call rate of own_steady 1-8 MiB from the 3rd copy on");
}

// ---------------------------------------------------------------------------------------------
void bench_d2d_memset(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const size_t max_b = q ? 256 * MiB : 1 * GiB;
    const auto sizes = q ? pow2_sizes(4 * KiB, max_b, 2) : pow2_sizes(4 * KiB, max_b, 1);
    const int reps = q ? 3 : 7;
    const size_t kbytes = 512 * MiB;
    char* src = (char*)c.dev(2 * max_b);
    char* dst = src + max_b;
    cudaStream_t s = c.s[0];
    EventPool ev(2);
    out["config"] = {{"reps", reps},
                     {"sizes", sizes},
                     {"l2_cache_bytes", c.prop.l2CacheSize},
                     {"method", "as copy_sweep: reps x [blocker; event; k back-to-back ops; event]; op d2d = "
                                "cudaMemcpyAsync device to device (bytes read = bytes written = size), memset = "
                                "cudaMemsetAsync; batches of small sizes stay in L2"}};
    CK(cudaMemcpyAsync(dst, src, 4 * KiB, cudaMemcpyDeviceToDevice, s));
    CK(cudaMemsetAsync(dst, 1, 4 * KiB, s));
    CK(cudaStreamSynchronize(s));
    json pts = json::array();
    for (const char* op : {"d2d", "memset"}) {
        const bool cp = op[0] == 'd';
        for (size_t b : sizes) {
            const int kmax = int(std::clamp<size_t>(kbytes / b, 1, 32));
            auto issue = [&](int i) {
                return cp ? cudaMemcpyAsync(dst, src, b, cudaMemcpyDeviceToDevice, s) : cudaMemsetAsync(dst, i & 0xff, b, s);
            };
            for (int k : kmax > 1 ? std::vector<int>{1, kmax} : std::vector<int>{1})
                pts.push_back(batch_point(op, b, k, reps, s, ev[0], ev[1], 5.0, issue));
            const json& last = pts.back();
            progress(c, "d2d_memset: %-6s %8s k=%2d  %.2f us/op", op, size_str(b).c_str(), last["k"].get<int>(),
                     median(last["batch_gpu_us"].get<std::vector<double>>()) / last["k"].get<int>());
        }
    }
    out["points"] = pts;
    // bandwidth from sizes well beyond the L2 (at least two of them)
    preview_batch_fit(out, pts, "d2d", "copy.d2d", 2.0, max_b / 4, 64 * KiB);
    preview_batch_fit(out, pts, "memset", "copy.memset", 1.0, max_b / 4, 64 * KiB);
    std::vector<double> calls;
    for (const auto& p : pts)
        if (p["op"] == "memset")
            for (double x : p["call_us"]) calls.push_back(x);
    preview(out, "host.memset_call_cost", median(calls), "us", "median cudaMemsetAsync call time");
}

// ---------------------------------------------------------------------------------------------
void bench_duplex(Ctx& c, json& out) {
    const size_t b = 256 * MiB;
    const int reps = c.opt.quick ? 3 : 5;
    char* d = (char*)c.dev(2 * b);
    char* h = (char*)c.pinned(2 * b);
    cudaStream_t sa = c.s[0], sb = c.s[1];
    EventPool ev(4);  // a0 a1 b0 b1
    out["config"] = {{"bytes", b},
                     {"reps", reps},
                     {"method", "blocker kernel in stream A; event a0; stream B waits a0, event b0; H2D in A then "
                                "event a1; D2H in B then event b1. Times from a0. Alone: one of the two."}};
    json pts = json::array();
    std::vector<double> alone_h, alone_d, both_h, both_d, both_t;
    for (int r = 0; r < reps; ++r) {
        for (const char* cs : {"h2d_alone", "d2h_alone", "both"}) {
            const bool do_h = cs[0] == 'h' || cs[0] == 'b';
            const bool do_d = cs[0] == 'd' || cs[0] == 'b';
            CK(k_spin(sa, 200000));
            CK(cudaEventRecord(ev[0], sa));
            CK(cudaStreamWaitEvent(sb, ev[0], 0));
            CK(cudaEventRecord(ev[2], sb));
            if (do_h) CK(cudaMemcpyAsync(d, h, b, cudaMemcpyHostToDevice, sa));
            CK(cudaEventRecord(ev[1], sa));
            if (do_d) CK(cudaMemcpyAsync(h + b, d + b, b, cudaMemcpyDeviceToHost, sb));
            CK(cudaEventRecord(ev[3], sb));
            CK(cudaStreamSynchronize(sa));
            CK(cudaStreamSynchronize(sb));
            const double th = event_us(ev[0], ev[1]), td = event_us(ev[0], ev[3]);
            json p;
            p["case"] = cs;
            p["rep"] = r;
            if (do_h) p["h2d_end_us"] = r3(th);
            if (do_d) p["d2h_end_us"] = r3(td);
            p["total_us"] = r3(std::max(do_h ? th : 0.0, do_d ? td : 0.0));
            pts.push_back(p);
            if (cs[0] == 'h') alone_h.push_back(th);
            if (cs[0] == 'd') alone_d.push_back(td);
            if (cs[0] == 'b') both_h.push_back(th), both_d.push_back(td), both_t.push_back(std::max(th, td));
        }
    }
    out["samples"] = pts;
    const double gb = double(b) / 1000.0;  // bytes -> GB/s when divided by us
    preview(out, "check.duplex_h2d_alone", gb / median(alone_h), "GB/s", "256 MiB H2D alone");
    preview(out, "check.duplex_d2h_alone", gb / median(alone_d), "GB/s", "256 MiB D2H alone");
    preview(out, "check.duplex_total", 2 * gb / median(both_t), "GB/s", "both directions at once, sum");
    preview(out, "check.duplex_slowdown", median(both_t) / std::max(median(alone_h), median(alone_d)), "x",
            "time both / slower alone (1 = no duplex penalty)");
}

// ---------------------------------------------------------------------------------------------
void bench_same_direction(Ctx& c, json& out) {
    const size_t b = 64 * MiB;
    const int reps = c.opt.quick ? 3 : 5;
    const int nmax = 8;
    char* d = (char*)c.dev(nmax * b);
    char* h = (char*)c.pinned(nmax * b);
    std::vector<cudaStream_t> st(nmax);
    for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    EventPool ev(1 + nmax);  // go, end[i]
    out["config"] = {{"bytes", b},
                     {"reps", reps},
                     {"method", "blocker kernel in stream 0; event go; streams 1..n-1 wait go; then, stream by "
                                "stream in index order, one copy and an end event each. end_us = go -> end[i]; "
                                "order = stream indices sorted by end time. A copy's start is not observable "
                                "(an event before it fires when the stream reaches it, not when the engine "
                                "starts it)."}};
    json pts = json::array();
    auto run = [&](const std::string& label, const std::vector<std::pair<cudaMemcpyKind, size_t>>& ops) {
        const int n = int(ops.size());
        std::vector<std::vector<double>> ends(static_cast<size_t>(n));
        json orders = json::array(), totals = json::array();
        for (int r = 0; r < reps; ++r) {
            CK(k_spin(st[0], 300000));
            CK(cudaEventRecord(ev[0], st[0]));
            for (int i = 1; i < n; ++i) CK(cudaStreamWaitEvent(st[i], ev[0], 0));
            for (int i = 0; i < n; ++i) {
                const auto [kind, sz] = ops[size_t(i)];
                if (kind == cudaMemcpyHostToDevice)
                    CK(cudaMemcpyAsync(d + size_t(i) * b, h + size_t(i) * b, sz, kind, st[i]));
                else
                    CK(cudaMemcpyAsync(h + size_t(i) * b, d + size_t(i) * b, sz, kind, st[i]));
                CK(cudaEventRecord(ev[1 + i], st[i]));
            }
            for (int i = 0; i < n; ++i) CK(cudaStreamSynchronize(st[i]));
            std::vector<double> e(static_cast<size_t>(n));
            for (int i = 0; i < n; ++i) e[size_t(i)] = event_us(ev[0], ev[1 + i]), ends[size_t(i)].push_back(e[size_t(i)]);
            std::vector<int> idx(static_cast<size_t>(n));
            std::iota(idx.begin(), idx.end(), 0);
            std::stable_sort(idx.begin(), idx.end(), [&](int a, int bb) { return e[size_t(a)] < e[size_t(bb)]; });
            orders.push_back(idx);
            totals.push_back(r3(*std::max_element(e.begin(), e.end())));
        }
        json p;
        p["case"] = label;
        json opsj = json::array();
        for (auto& [k, sz] : ops) opsj.push_back({{"dir", k == cudaMemcpyHostToDevice ? "h2d" : "d2h"}, {"bytes", sz}});
        p["ops"] = opsj;
        json ej = json::array();
        for (auto& v : ends) ej.push_back(r3v(v));
        p["end_us"] = ej;  // [stream][rep]
        p["order"] = orders;
        p["total_us"] = totals;
        std::string ord;
        for (auto& x : orders.back()) ord += std::to_string(x.get<int>()) + " ";
        progress(c, "same_direction: %-12s total %.0f us, order %s", label.c_str(), totals.back().get<double>(),
                 ord.c_str());
        pts.push_back(p);
    };
    for (int n : {1, 2, 4, 8}) run("h2d_x" + std::to_string(n), std::vector<std::pair<cudaMemcpyKind, size_t>>(size_t(n), {cudaMemcpyHostToDevice, b}));
    run("d2h_x4", std::vector<std::pair<cudaMemcpyKind, size_t>>(4, {cudaMemcpyDeviceToHost, b}));
    run("big_then_small", {{cudaMemcpyHostToDevice, b}, {cudaMemcpyHostToDevice, 4 * KiB}, {cudaMemcpyDeviceToHost, 4 * KiB}});
    out["cases"] = pts;
    for (auto& s : st) CK(cudaStreamDestroy(s));
    // preview: total for n copies / (n * one copy alone)
    auto total_med = [&](size_t i) { return median(pts[i]["total_us"].get<std::vector<double>>()); };
    const double one = total_med(0);
    preview(out, "check.same_direction_x8_ratio", total_med(3) / (8 * one), "x",
            "total of 8 concurrent 64 MiB H2D / (8 x one alone); 1 = one at a time at full speed");
}
