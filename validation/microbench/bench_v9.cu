// hetsim-microbench section alloc_sizes: how cudaMalloc and cudaFree grow with the size, on an idle
// device and inside a step loop like a program's (malloc, a kernel, free after the device drains).
// The alloc section measures 1 MiB .. 1 GiB on an idle device only, and alloc_streams 16 and 256 MiB;
// validation 75 (16 MiB) is predicted long and 49/57/99 (64/128 MiB) short with one fixed cost each
// (host.malloc_cost, host.free_cost), so the per-size costs are measured here at 4 .. 512 MiB.
#include "common.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace {

constexpr size_t kOffKernelEnd = 32 * KiB + 256;  // mapped area: the loop kernel's end stamp


}  // namespace

void bench_alloc_sizes(Ctx& c, json& out) {
    c.release();  // the shared buffers back: this section measures allocation itself
    const bool q = c.opt.quick;
    const int reps = q ? 2 : 5;
    const int iters = q ? 4 : 8;
    const uint64_t kernel_ns = 300000;  // 0.3 ms: the free waits for it
    cudaStream_t s = c.s[0];
    volatile unsigned long long* end_h = c.mapped_host<unsigned long long>(kOffKernelEnd);
    unsigned long long* end_d = c.mapped_dev<unsigned long long>(kOffKernelEnd);
    std::vector<ClockSync> syncs;
    syncs.push_back(clock_sync(c, "alloc_sizes/a"));
    struct Raw {
        size_t bytes;
        int iter;
        double malloc_us, free_us;
        int64_t free_call_ns;
        unsigned long long kernel_end;
        double copy_call_us, launch_us;
    };
    json idle = json::array();
    std::vector<Raw> loop;
    char* hsrc = nullptr;
    char* dsrc = nullptr;
    CK(cudaMallocHost(&hsrc, 4 * MiB));
    CK(cudaMalloc(&dsrc, 4 * MiB));
    for (size_t S : {4 * MiB, 16 * MiB, 32 * MiB, 64 * MiB, 128 * MiB, 256 * MiB, 512 * MiB}) {
        if (S + 64 * MiB > usable_device_bytes()) {
            idle.push_back({{"bytes", S}, {"skipped", "not enough free device memory"}});
            continue;
        }
        // Idle: malloc, device sync, free of an idle device.
        std::vector<double> m, f;
        for (int r = 0; r < reps; ++r) {
            void* p = nullptr;
            CK(cudaDeviceSynchronize());
            m.push_back(time_us([&] { return cudaMalloc(&p, S); }));
            CK(cudaDeviceSynchronize());
            spin_host_us(50);
            f.push_back(time_us([&] { return cudaFree(p); }));
        }
        idle.push_back({{"bytes", S}, {"malloc_us", r3v(m)}, {"free_us", r3v(f)}});
        // Loop (validation 49's shape): iters x [malloc; a full-device 0.3 ms spin kernel writing its end
        // stamp to mapped memory; free (waits for the kernel); 100 us host work].
        CK(cudaDeviceSynchronize());
        for (int i = 0; i < iters; ++i) {
            void* p = nullptr;
            *end_h = 0;
            const double mu = time_us([&] { return cudaMalloc(&p, S); });
            // The calls a program makes next (validation 49: an upload, a launch), timed: do calls
            // after an allocation cost more than the launch section's?
            const double cu = time_us([&] { return cudaMemcpyAsync(dsrc, hsrc, 4 * MiB, cudaMemcpyHostToDevice, s); });
            const double ku = time_us([&] { return k_spin_stamp(s, c.sm_count, 256, kernel_ns, 0, nullptr, end_d); });
            const int64_t tf = now_ns();
            const double fu = time_us([&] { return cudaFree(p); });
            loop.push_back({S, i, mu, fu, tf, static_cast<unsigned long long>(*end_h), cu, ku});
            spin_host_us(100);
        }
    }
    syncs.push_back(clock_sync(c, "alloc_sizes/b"));
    CK(cudaFree(dsrc));
    CK(cudaFreeHost(hsrc));
    // Each sample to the JSON, and to the preview's lines as hetsim calibrate takes them: every
    // free with its kernel's end stamp, the mallocs from the 2nd iteration on (the first follows
    // the idle phase, not a free of its size).
    json lp = json::array();
    std::vector<double> fx, fy, mx, my;
    for (const Raw& x : loop) {
        json p = {{"bytes", x.bytes}, {"iter", x.iter}, {"malloc_us", r3(x.malloc_us)}, {"copy_call_us", r3(x.copy_call_us)},
                  {"launch_us", r3(x.launch_us)}, {"free_us", r3(x.free_us)}};
        const double gib = double(x.bytes) / double(GiB);
        if (x.kernel_end) {
            const double end = gpu_to_host_ns(syncs, double(x.kernel_end));
            const double after = (double(x.free_call_ns) + x.free_us * 1000.0 - end) * 1e-3;
            p["free_return_after_kernel_end_us"] = r3(after);
            p["free_call_before_kernel_end_us"] = r3((end - double(x.free_call_ns)) * 1e-3);
            fx.push_back(gib), fy.push_back(after);
        }
        if (x.iter > 0) mx.push_back(gib), my.push_back(x.malloc_us);
        lp.push_back(p);
    }
    out["idle"] = {{"method", "per size: reps x (device sync; cudaMalloc; device sync; 50 us host spin; cudaFree)"}, {"points", idle}};
    out["loop"] = {{"method",
                    "per size: iters x (cudaMalloc; a 4 MiB pinned H2D cudaMemcpyAsync (call timed: copy_call_us); a 0.3 ms spin kernel of SMs x 256 threads in a non-blocking stream, block 0 "
                    "writing its end %globaltimer to mapped memory (launch call timed: launch_us); cudaFree, which waits for it; 100 us host spin); "
                    "free_return_after_kernel_end_us = cudaFree's return - the host time of the kernel's end (clock_syncs)"},
                   {"iters", iters},
                   {"samples", lp}};
    // Preview: the per-size lines of the loop's cudaFree after the kernel and of its cudaMalloc.
    if (fx.size() >= 4 && mx.size() >= 4) {
        const LineFit ff = fit_line(fx, fy), fm = fit_line(mx, my);
        preview(out, "host.free_cost", ff.intercept, "us", "loop: cudaFree return after the kernel's end, intercept of the line over size");
        preview(out, "host.free_cost_per_gib", ff.slope, "us", "loop: the same line's slope, per GiB");
        preview(out, "host.malloc_cost", fm.intercept, "us", "loop: cudaMalloc after a free of the same size, intercept");
        preview(out, "host.malloc_cost_per_gib", fm.slope, "us", "loop: the same line's slope, per GiB");
    }
}

// hetsim-microbench section copy_stream_switch: do back-to-back pinned copies on one engine cost
// more when consecutive copies come from different streams? Validation 03/04/109 (4 MiB copies
// round robin over 4/8/24 streams) are predicted 2-4 % short on every start, about 3 us a copy,
// while 01/02 (one or two streams) are not. Per direction and chunk size, `copies` copies are
// released at once (a blocker kernel, an event every stream waits for) and issued round robin over
// k = 1, 2, 4, 8, 16 streams (copy j in stream j % k), with no event between them; total_us = the
// blocker's event -> the last stream's end event. (total(k) - total(1)) / copies is the extra time
// a copy takes when the copy before it on the engine came from another stream.
void bench_copy_stream_switch(Ctx& c, json& out) {
    const int reps = c.opt.quick ? 2 : 5;
    const int copies = 32;
    const int kmax = 16;
    const size_t bmax = 4 * MiB;
    char* d = static_cast<char*>(c.dev(size_t(copies) * bmax));
    char* h = static_cast<char*>(c.pinned(size_t(copies) * bmax));
    std::vector<cudaStream_t> st(kmax);
    for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaStream_t blocker = c.s[0];
    EventPool ev(1 + kmax);  // go, end[k]
    json pts = json::array();
    for (const char* dir : {"h2d", "d2h"}) {
        const bool up = std::string(dir) == "h2d";
        for (size_t b : {1 * MiB, 4 * MiB}) {
            for (int k : {1, 2, 4, 8, 16}) {
                std::vector<double> tot;
                for (int r = 0; r < reps; ++r) {
                    CK(k_spin(blocker, 200000));
                    CK(cudaEventRecord(ev[0], blocker));
                    for (int s = 0; s < k; ++s) CK(cudaStreamWaitEvent(st[size_t(s)], ev[0], 0));
                    for (int j = 0; j < copies; ++j) {
                        cudaStream_t s = st[size_t(j % k)];
                        char* dp = d + size_t(j) * b;
                        char* hp = h + size_t(j) * b;
                        if (up) CK(cudaMemcpyAsync(dp, hp, b, cudaMemcpyHostToDevice, s));
                        else CK(cudaMemcpyAsync(hp, dp, b, cudaMemcpyDeviceToHost, s));
                    }
                    for (int s = 0; s < k; ++s) CK(cudaEventRecord(ev[1 + size_t(s)], st[size_t(s)]));
                    double last = 0;
                    for (int s = 0; s < k; ++s) {
                        CK(cudaEventSynchronize(ev[1 + size_t(s)]));
                        last = std::max(last, event_us(ev[0], ev[1 + size_t(s)]));
                    }
                    tot.push_back(last);
                }
                pts.push_back({{"dir", dir}, {"bytes", b}, {"streams", k}, {"copies", copies}, {"total_us", r3v(tot)}});
            }
        }
    }
    for (auto& s : st) CK(cudaStreamDestroy(s));
    out["method"] = "per direction and size: reps x (a 0.2 ms blocker kernel, event go, k non-blocking streams wait go, "
                    "32 pinned copies of the size issued round robin over the k streams (copy j in stream j % k, each "
                    "its own device and host range), an end event per stream); total_us = go -> the last end event";
    out["points"] = pts;
    // Preview: per-copy extra of round robin over 8 streams against one stream, 4 MiB H2D.
    double one = 0, eight = 0;
    for (const auto& p : pts)
        if (p["dir"] == "h2d" && p["bytes"] == 4 * MiB) {
            const double m = median(p["total_us"].get<std::vector<double>>());
            if (p["streams"] == 1) one = m;
            if (p["streams"] == 8) eight = m;
        }
    if (one > 0 && eight > 0)
        preview(out, "check.copy_stream_switch_4mib_h2d", (eight - one) / copies, "us", "(8 streams - 1 stream) / copies, 4 MiB H2D");
}

// hetsim-microbench section call_after_host_work: does an API call cost more when the thread did
// host work (or slept in a sync) just before it? In the validation programs' uninstrumented runs a
// kernel launch takes 4-5 us back to back (03, 26) but 9-10 us after 200 us of host work or an
// allocation call (09, 49, 75), against the launch section's host.launch_cost (back to back). Per
// gap g (0 .. 1000 us of host spin before the call): reps x (g us spin; a timed cudaLaunchKernel of
// an empty kernel; g us spin; a timed 4 KiB pinned H2D cudaMemcpyAsync call; g us spin; a timed
// cudaEventRecord), a stream sync every 8 reps (untimed, followed by 20 us of spin).
void bench_call_after_host_work(Ctx& c, json& out) {
    const int reps = c.opt.quick ? 8 : 32;
    cudaStream_t s = c.s[0];
    char* h = static_cast<char*>(c.pinned(4 * KiB));
    char* d = static_cast<char*>(c.dev(4 * KiB));
    EventPool ev(1);
    json pts = json::array();
    std::vector<double> back, after200;
    CK(k_empty(s));
    CK(cudaStreamSynchronize(s));
    for (double g : {0.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0}) {
        std::vector<double> kl, cp, er;
        for (int r = 0; r < reps; ++r) {
            if (r % 8 == 0) {
                CK(cudaStreamSynchronize(s));
                spin_host_us(20);
            }
            if (g > 0) spin_host_us(g);
            kl.push_back(time_us([&] { return k_empty(s); }));
            if (g > 0) spin_host_us(g);
            cp.push_back(time_us([&] { return cudaMemcpyAsync(d, h, 4 * KiB, cudaMemcpyHostToDevice, s); }));
            if (g > 0) spin_host_us(g);
            er.push_back(time_us([&] { return cudaEventRecord(ev[0], s); }));
        }
        CK(cudaStreamSynchronize(s));
        pts.push_back({{"gap_us", g}, {"launch_us", r3v(kl)}, {"memcpy_call_us", r3v(cp)}, {"event_record_us", r3v(er)}});
        if (g == 0) back = kl;
        if (g == 200) after200 = kl;
    }
    out["method"] = "per host gap g: reps x (g us host spin; timed cudaLaunchKernel of an empty kernel; g us spin; timed 4 KiB "
                    "pinned H2D cudaMemcpyAsync call; g us spin; timed cudaEventRecord), one stream, a stream sync every 8 "
                    "reps (untimed, then 20 us spin)";
    out["points"] = pts;
    if (!back.empty() && !after200.empty())
        preview(out, "check.launch_after_200us_host_work", median(after200) - median(back), "us",
                "median launch call after 200 us of host spin - back to back");
}
