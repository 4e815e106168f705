// hetsim-microbench section call_gap: what makes an API call slow after a gap. call_after_host_work
// (bench_v9.cu) found kernel launches, cudaMemcpyAsync calls and event records 1.7-2.5x as long after
// 500-1000 us of host spin as back to back, and no change up to 200 us. This section places the edge
// (a finer grid of spin gaps up to 5 ms) and tells the candidate causes apart by what happens during a
// 100 / 500 / 1000 us gap: the thread sleeps instead of spinning; the GPU runs a kernel (no PCIe
// traffic); a D2H copy runs (PCIe traffic); another thread launches a kernel every 50 us; the thread
// itself enters the driver every 50 us (cudaStreamQuery of an idle stream); or the gap is spent
// writing a host buffer (1 or 4 MiB, the caches), timed.
#include "common.hpp"

#include <atomic>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Triple {
    std::vector<double> launch, memcpy_call, event_record, gap;
};

// reps x (gap(); timed empty-kernel launch; gap(); timed 4 KiB pinned H2D cudaMemcpyAsync call; gap();
// timed cudaEventRecord), all on stream s. Every 8 reps: sync s, then group() (sets up what runs beside
// the next 8 reps), then 20 us of spin. gap() is timed too (its length as measured).
Triple call_triples(cudaStream_t s, cudaEvent_t ev, void* d, const void* h, int reps, const std::function<void()>& gap,
                    const std::function<void()>& group) {
    Triple t;
    auto timed_gap = [&] {
        const int64_t a = now_ns();
        gap();
        t.gap.push_back(ns_to_us(now_ns() - a));
    };
    for (int r = 0; r < reps; ++r) {
        if (r % 8 == 0) {
            CK(cudaStreamSynchronize(s));
            if (group) group();
            spin_host_us(20);
        }
        timed_gap();
        t.launch.push_back(time_us([&] { return k_empty(s); }));
        timed_gap();
        t.memcpy_call.push_back(time_us([&] { return cudaMemcpyAsync(d, h, 4 * KiB, cudaMemcpyHostToDevice, s); }));
        timed_gap();
        t.event_record.push_back(time_us([&] { return cudaEventRecord(ev, s); }));
    }
    CK(cudaStreamSynchronize(s));
    return t;
}

void sleep_us(double us) {
    timespec ts{};
    ts.tv_sec = 0;
    ts.tv_nsec = long(us * 1000.0);
    nanosleep(&ts, nullptr);
}

}  // namespace

void bench_call_gap(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int reps = q ? 8 : 32;
    cudaStream_t s = c.s[0], beside = c.s[1], other = c.s[2];
    char* h = static_cast<char*>(c.pinned(4 * KiB + 64 * MiB));
    char* d = static_cast<char*>(c.dev(4 * KiB + 64 * MiB));
    char* big_h = h + 4 * KiB;  // the D2H copies that run beside (64 MiB each)
    char* big_d = d + 4 * KiB;
    std::vector<char> host_buf(4 * MiB);
    EventPool ev(1);
    CK(k_empty(s));
    CK(cudaStreamSynchronize(s));
    json pts = json::array();
    double idle0 = 0, idle1000 = 0;
    auto record = [&](const char* cond, double g, const Triple& t) {
        pts.push_back({{"condition", cond}, {"gap_us", g}, {"gap_measured_us", r3(median(t.gap))},
                       {"launch_us", r3v(t.launch)}, {"memcpy_call_us", r3v(t.memcpy_call)},
                       {"event_record_us", r3v(t.event_record)}});
        progress(c, "call_gap %s %g us: launch %.2f us, memcpy call %.2f, event record %.2f", cond, g,
                 median(t.launch), median(t.memcpy_call), median(t.event_record));
    };
    // The length of 8 reps' gaps and calls, for what runs beside them.
    auto group_us = [](double g) { return 8.0 * 3.0 * (g + 15.0) + 500.0; };

    for (double g : {0.0, 100.0, 200.0, 250.0, 300.0, 350.0, 400.0, 450.0, 500.0, 700.0, 1000.0, 2000.0, 5000.0}) {
        if (q && g > 1000) continue;
        Triple t = call_triples(s, ev[0], d, h, reps, [g] { if (g > 0) spin_host_us(g); }, {});
        record("idle", g, t);
        if (g == 0) idle0 = median(t.launch);
        if (g == 1000) idle1000 = median(t.launch);
    }
    for (double g : {100.0, 500.0, 1000.0}) {
        record("sleep", g, call_triples(s, ev[0], d, h, reps, [g] { sleep_us(g); }, {}));
        record("kernel_beside", g, call_triples(s, ev[0], d, h, reps, [g] { spin_host_us(g); }, [&, g] {
                   CK(cudaStreamSynchronize(beside));
                   CK(k_spin(beside, uint64_t(group_us(g) * 1000.0)));
               }));
        record("d2h_beside", g, call_triples(s, ev[0], d, h, reps, [g] { spin_host_us(g); }, [&, g] {
                   CK(cudaStreamSynchronize(beside));
                   // 64 MiB D2H copies at ~50 GB/s (1.3 ms each) covering the group.
                   const int n = int(group_us(g) / 1300.0) + 1;
                   for (int i = 0; i < n; ++i) CK(cudaMemcpyAsync(big_h, big_d, 64 * MiB, cudaMemcpyDeviceToHost, beside));
               }));
        {
            std::atomic<bool> stop{false};
            std::thread th([&] {
                while (!stop.load(std::memory_order_relaxed)) {
                    CK(k_empty(other));
                    spin_host_us(50);
                }
            });
            Triple t = call_triples(s, ev[0], d, h, reps, [g] { spin_host_us(g); }, {});
            stop = true;
            th.join();
            CK(cudaStreamSynchronize(other));
            record("other_thread_launches", g, t);
        }
        record("self_query", g, call_triples(s, ev[0], d, h, reps, [&, g] {
                   for (double left = g; left > 0; left -= 50) {
                       spin_host_us(left < 50 ? left : 50);
                       cudaError_t e = cudaStreamQuery(beside);
                       if (e != cudaSuccess && e != cudaErrorNotReady) CK(e);
                   }
               }, {}));
    }
    // After a gap, calls back to back: how many of them are slow. Per gap: reps x (gap; 9 timed calls
    // in a row: launch, memcpy call, event record, three times), position by position.
    json bursts = json::array();
    for (double g : {0.0, 1000.0}) {
        std::vector<std::vector<double>> at(9);
        for (int r = 0; r < reps; ++r) {
            if (r % 8 == 0) {
                CK(cudaStreamSynchronize(s));
                spin_host_us(20);
            }
            spin_host_us(g > 0 ? g : 5);
            for (int k = 0; k < 9; k += 3) {
                at[k].push_back(time_us([&] { return k_empty(s); }));
                at[k + 1].push_back(time_us([&] { return cudaMemcpyAsync(d, h, 4 * KiB, cudaMemcpyHostToDevice, s); }));
                at[k + 2].push_back(time_us([&] { return cudaEventRecord(ev[0], s); }));
            }
        }
        CK(cudaStreamSynchronize(s));
        json calls = json::array();
        for (auto& v : at) calls.push_back(r3v(v));
        bursts.push_back({{"gap_us", g}, {"calls_us", calls}});
        progress(c, "call_gap burst after %g us: launches %.2f %.2f %.2f us", g, median(at[0]), median(at[3]), median(at[6]));
    }
    out["bursts"] = bursts;
    for (size_t bytes : {1 * MiB, 4 * MiB}) {
        unsigned char v = 1;
        record(bytes == MiB ? "write_1mib" : "write_4mib", 0, call_triples(s, ev[0], d, h, reps, [&, bytes] {
                   for (size_t i = 0; i < bytes; i += 64) host_buf[i] = char(v);
                   ++v;
               }, {}));
    }
    CK(cudaStreamSynchronize(beside));
    out["method"] = "per condition and gap g: reps x (gap; timed cudaLaunchKernel of an empty kernel; gap; timed 4 KiB "
                    "pinned H2D cudaMemcpyAsync call; gap; timed cudaEventRecord), one stream, a stream sync every 8 reps "
                    "(then what runs beside the next 8 reps is started, then 20 us of spin). Gaps: idle = host spin; "
                    "sleep = nanosleep; kernel_beside = spin while a spin kernel runs on another stream; d2h_beside = spin "
                    "while 64 MiB pinned D2H copies run on another stream; other_thread_launches = spin while another "
                    "thread launches an empty kernel every 50 us; self_query = cudaStreamQuery of an idle stream every 50 "
                    "us of spin; write_1mib / write_4mib = one byte written per 64 of a host buffer (gap_measured_us). "
                    "bursts: per gap (0 = 5 us) reps x (gap; launch, memcpy call, event record three times in a row), "
                    "calls_us[position][rep]";
    out["points"] = pts;
    if (idle1000 > 0) preview(out, "check.launch_after_1ms_idle_gap", idle1000 - idle0, "us", "median launch after 1 ms of spin - back to back");
}

// hetsim-microbench section um_tail_faults: GPU faults of the part of a managed buffer that a partial
// prefetch left on the host, touched the way the validation runner touches managed buffers (one byte
// per 4 KiB page, k_touch). Validation 52/56/97 fault their un-prefetched tails ~0.8x as fast as the
// same start's whole-buffer faults (um_sparse, um_beside_faults), and 56's faulting kernel is slower
// when a kernel launched after it on another stream waits for room. Per prefetched head P (0, 256,
// 512, 768, 1024 MiB) before a 128 MiB tail: events around a 4 x SMs x 512 touch kernel over the whole buffer
// (the head resident, the tail faulting), alone; beside a spin kernel of SMs x 1024 threads launched
// first on another stream (running throughout); and with that spin kernel launched right after it
// (queued: it waits for room, as 56's `update`).
void bench_um_tail_faults(Ctx& c, json& out) {
    if (!managed_ok(c, out)) return;
    const bool q = c.opt.quick;
    const size_t tail = 128 * MiB;
    const int reps = q ? 1 : 3;
    cudaStream_t s = c.s[0], s1 = c.s[1];
    const int dev = c.opt.device;
    void* sink = c.dev(4096);
    EventPool ev(2);
    json pts = json::array();
    std::vector<double> alone0, alone768;
    for (size_t head : {size_t(0), 256 * MiB, 512 * MiB, 768 * MiB, 1024 * MiB}) {
        const size_t B = head + tail;
        if (B + 1 * GiB > usable_device_bytes()) continue;
        char* m = nullptr;
        CK(cudaMallocManaged((void**)&m, B, cudaMemAttachGlobal));
        touch_host(m, B, true, 1);
        for (const char* mode : {"alone", "beside_spin", "spin_queued_after"}) {
            const std::string md = mode;
            std::vector<double> fault, resident;
            for (int r = 0; r < reps; ++r) {
                prefetch_sync(m, B, loc_host(), s);
                if (head > 0) prefetch_sync(m, head, loc_device(dev), s);
                const uint64_t spin_ns = 40ull * 1000 * 1000;  // 40 ms: longer than the faults
                if (md == "beside_spin") CK(k_spin_stamp(s1, c.sm_count, 1024, spin_ns, 0, nullptr, nullptr));
                CK(cudaEventRecord(ev[0], s));
                CK(k_touch(s, 4 * c.sm_count, 512, m, B, 4096, sink));
                CK(cudaEventRecord(ev[1], s));
                if (md == "spin_queued_after") CK(k_spin_stamp(s1, c.sm_count, 1024, 3ull * 1000 * 1000, 0, nullptr, nullptr));
                CK(cudaDeviceSynchronize());
                fault.push_back(event_us(ev[0], ev[1]));
                resident.push_back(ktime(s, ev, [&] { CK(k_touch(s, 4 * c.sm_count, 512, m, B, 4096, sink)); }));
            }
            pts.push_back({{"head_bytes", head}, {"tail_bytes", tail}, {"mode", mode}, {"fault_us", r3v(fault)},
                           {"resident_us", r3v(resident)}});
            progress(c, "um_tail_faults: head %s %-17s touch kernel %.2f ms (tail %.2f GB/s), resident %.3f ms",
                     std::to_string(head / MiB).c_str(), mode, median(fault) * 1e-3,
                     double(tail) / (median(fault) - median(resident)) * 1e-3, median(resident) * 1e-3);
            if (md == "alone" && head == 0) alone0 = fault;
            if (md == "alone" && head == 768 * MiB) alone768 = fault;
        }
        CK(cudaFree(m));
    }
    out["method"] = "per head P: a managed buffer of P + 128 MiB written by the host, prefetched to the host, then P to the "
                    "device (both synced); events around k_touch (4 x SMs blocks of 512, one byte per 4 KiB page over the "
                    "whole buffer): fault_us; the same kernel again: resident_us. Modes: alone; beside_spin (a 40 ms spin "
                    "kernel of SMs x 1024 threads on another stream launched first); spin_queued_after (a 3 ms one launched "
                    "right after the touch kernel)";
    out["points"] = pts;
    if (!alone0.empty() && !alone768.empty())
        preview(out, "check.um_tail_after_768mib_over_whole", median(alone768) / median(alone0), "x",
                "128 MiB tail fault kernel after a 768 MiB head prefetch / the same 128 MiB with no head");
}

// hetsim-microbench section call_context: what a call costs in the context real programs make it
// in. The validation programs' uninstrumented host stamps show calls 2-5x as long as the back-to-back
// microbenchmarks (validation 09 on 2026-12-04ai: a 24 MiB pinned upload call 10 us after 1.5 ms of
// host work, the kernel launch after it and an event record 10 us, a D2H call 4.5-5 us, a
// cudaEventSynchronize of done work 4 us; the model's 1.96 / 3.72 / 1.96 / 0.38 us). Each case: reps x
// (device sync, 20 us spin, the untimed set-up, the timed call), with the previous op of the call's
// stream on another engine and still running or done, big and small copies, and 09's sequence.
void bench_call_context(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int reps = q ? 6 : 32;
    cudaStream_t s = c.s[0], s1 = c.s[1];
    const size_t big = 24 * MiB, small = 4 * KiB;
    char* h = static_cast<char*>(c.pinned(2 * big));
    char* d = static_cast<char*>(c.dev(2 * big));
    cudaEvent_t ev = nullptr, ev1 = nullptr;
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&ev1, cudaEventDisableTiming));
    auto h2d = [&](size_t n, cudaStream_t st) { return cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, st); };
    auto d2h = [&](size_t n, cudaStream_t st) { return cudaMemcpyAsync(h + big, d + big, n, cudaMemcpyDeviceToHost, st); };
    auto spin_k = [&](cudaStream_t st, uint64_t us) { return k_spin(st, us * 1000); };
    struct Case {
        const char* name;
        std::function<void()> setup;
        std::function<cudaError_t()> call;
    };
    const std::vector<Case> cases = {
        {"launch_after_launch", [&] { CK(k_empty(s)); }, [&] { return k_empty(s); }},
        {"launch_after_small_h2d_done", [&] { CK(h2d(small, s)); CK(cudaStreamSynchronize(s)); }, [&] { return k_empty(s); }},
        {"launch_after_small_h2d", [&] { CK(h2d(small, s)); }, [&] { return k_empty(s); }},
        {"launch_after_big_h2d_running", [&] { CK(h2d(big, s)); }, [&] { return k_empty(s); }},
        {"launch_beside_big_h2d_other_stream", [&] { CK(h2d(big, s1)); }, [&] { return k_empty(s); }},
        {"launch_after_kernel_running", [&] { CK(spin_k(s, 200)); }, [&] { return k_empty(s); }},
        {"d2h_small_after_kernel_running", [&] { CK(spin_k(s, 200)); }, [&] { return d2h(small, s); }},
        {"d2h_small_after_kernel_done", [&] { CK(k_empty(s)); CK(cudaStreamSynchronize(s)); }, [&] { return d2h(small, s); }},
        {"d2h_small_after_d2h_small", [&] { CK(d2h(small, s)); }, [&] { return d2h(small, s); }},
        {"h2d_small_after_big_h2d_running", [&] { CK(h2d(big, s)); }, [&] { return h2d(small, s); }},
        {"h2d_small_idle", [] {}, [&] { return h2d(small, s); }},
        {"h2d_big_idle", [] {}, [&] { return h2d(big, s); }},
        {"d2h_big_after_kernel_running", [&] { CK(spin_k(s, 200)); }, [&] { return d2h(big, s); }},
        {"event_record_after_big_h2d_running", [&] { CK(h2d(big, s)); }, [&] { return cudaEventRecord(ev, s); }},
        {"event_record_after_kernel_running", [&] { CK(spin_k(s, 200)); }, [&] { return cudaEventRecord(ev, s); }},
        {"event_record_idle", [] {}, [&] { return cudaEventRecord(ev, s); }},
        {"event_sync_done", [&] { CK(cudaEventRecord(ev, s)); CK(cudaStreamSynchronize(s)); }, [&] { return cudaEventSynchronize(ev); }},
        {"event_query_done", [&] { CK(cudaEventRecord(ev, s)); CK(cudaStreamSynchronize(s)); }, [&] { return cudaEventQuery(ev); }},
        {"stream_sync_idle", [] {}, [&] { return cudaStreamSynchronize(s); }},
        {"wait_event_running", [&] { CK(spin_k(s1, 200)); CK(cudaEventRecord(ev1, s1)); }, [&] { return cudaStreamWaitEvent(s, ev1, 0); }},
        {"wait_event_done", [&] { CK(cudaEventRecord(ev1, s1)); CK(cudaStreamSynchronize(s1)); }, [&] { return cudaStreamWaitEvent(s, ev1, 0); }},
    };
    json pts = json::array();
    for (const Case& k : cases) {
        std::vector<double> t;
        for (int r = 0; r < reps; ++r) {
            CK(cudaDeviceSynchronize());
            spin_host_us(20);
            k.setup();
            t.push_back(time_us(k.call));
        }
        CK(cudaDeviceSynchronize());
        pts.push_back({{"case", k.name}, {"call_us", r3v(t)}});
        progress(c, "call_context %-36s %.2f us", k.name, median(t));
    }
    out["cases"] = pts;
    // Validation 09's iteration, two slots: host work 1.5 ms; 24 MiB upload; event record; a kernel
    // of 264 x 1024 threads with arguments (0.8 ms); 4 MiB download; event record; then (from the
    // second iteration) cudaEventSynchronize of the other slot's download event; host work 0.3 ms.
    // Calls timed by position.
    const int iters = q ? 4 : 12;
    cudaEvent_t done[2];
    for (auto& e : done) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    std::vector<std::vector<double>> at(6);
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < iters; ++i) {
        cudaStream_t st = c.s[i % 2];
        spin_host_us(1500);
        at[0].push_back(time_us([&] { return cudaMemcpyAsync(d + (i % 2) * (big / 2), h, big / 2, cudaMemcpyHostToDevice, st); }));
        at[1].push_back(time_us([&] { return cudaEventRecord(ev, st); }));
        at[2].push_back(time_us([&] { return k_spin_stamp(st, 264, 1024, 800000, 0, nullptr, nullptr); }));
        at[3].push_back(time_us([&] { return cudaMemcpyAsync(h + big, d + big, 4 * MiB, cudaMemcpyDeviceToHost, st); }));
        at[4].push_back(time_us([&] { return cudaEventRecord(done[i % 2], st); }));
        if (i > 0) at[5].push_back(time_us([&] { return cudaEventSynchronize(done[(i + 1) % 2]); }));
        spin_host_us(300);
    }
    CK(cudaDeviceSynchronize());
    json seq = json::array();
    for (auto& v : at) seq.push_back(r3v(v));
    out["seq09"] = {{"calls", {"h2d_12mib_after_host", "event_record", "kernel_264x1024", "d2h_4mib", "event_record", "event_sync_other_slot"}},
                    {"call_us", seq}};
    progress(c, "call_context seq09: upload %.2f, record %.2f, launch %.2f, download %.2f, record %.2f, event sync %.2f us",
             median(at[0]), median(at[1]), median(at[2]), median(at[3]), median(at[4]), at[5].empty() ? 0.0 : median(at[5]));
    for (auto& e : done) CK(cudaEventDestroy(e));
    CK(cudaEventDestroy(ev));
    CK(cudaEventDestroy(ev1));
    out["method"] = "cases: reps x (device sync, 20 us spin, the untimed set-up, the timed call; small = 4 KiB, big = 24 MiB "
                    "pinned, kernel running = a 200 us spin kernel, events with cudaEventDisableTiming); seq09: validation "
                    "09's iteration on two streams (1.5 ms host spin, 12 MiB upload, event record, a 0.8 ms kernel of 264 x "
                    "1024 threads with arguments, 4 MiB download, event record, cudaEventSynchronize of the other slot's, "
                    "0.3 ms spin), each call timed, call_us[position][iteration]";
    for (const auto& p : pts)
        if (p["case"] == "launch_after_big_h2d_running") {
            std::vector<double> v = p["call_us"].get<std::vector<double>>();
            preview(out, "check.launch_after_running_copy", median(v), "us", "kernel launch into a stream whose 24 MiB H2D copy runs");
        }
}
