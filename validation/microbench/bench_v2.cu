// Benchmarks for the hardware-fidelity rules (program schema 2): hardware queues, launch queue
// depth, module loading, host functions, graphs, allocation calls, blocking sync, pageable
// contention and managed-memory blocks. Sections that need their own CUDA environment
// (CUDA_DEVICE_MAX_CONNECTIONS, cudaDeviceScheduleBlockingSync, a cold process) re-execute this
// binary with the hidden --child flag and merge the JSON it writes.
#include "common.hpp"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace {

constexpr size_t kOffEnd = 16 * KiB + 128;  // mapped area: a kernel's end stamp


}  // namespace

// Runs this binary as a child for section `name` with `arg`; returns the child's "result".
json spawn_child(Ctx& c, const std::string& name, const std::string& arg) {
    const std::string out = c.opt.out + ".child." + name + "." + arg + "." + std::to_string(getpid());
    std::vector<std::string> args = {"hetsim-microbench", "--child", name, "--child-arg", arg, "-o", out, "--device",
                                     std::to_string(c.opt.device)};
    if (c.opt.quick) args.push_back("--quick");
    std::vector<char*> av;
    for (auto& a : args) av.push_back(a.data());
    av.push_back(nullptr);
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) mb_die("%s: fork failed: %s", name.c_str(), strerror(errno));
    if (pid == 0) {
        execv("/proc/self/exe", av.data());
        fprintf(stderr, "hetsim-microbench: cannot re-execute /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    int status = 0;
    const int64_t limit = now_ns() + 60ll * 1000000000ll;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) mb_die("%s: waitpid failed: %s", name.c_str(), strerror(errno));
        if (now_ns() > limit) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            mb_die("%s: the child process (--child %s %s) ran past 60 s and was killed", name.c_str(), name.c_str(), arg.c_str());
        }
        usleep(2000);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        mb_die("%s: the child process (--child %s %s) failed (%s %d); its message is above", name.c_str(), name.c_str(), arg.c_str(),
               WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    std::ifstream f(out);
    std::stringstream ss;
    ss << f.rdbuf();
    remove(out.c_str());
    json j;
    try {
        j = json::parse(ss.str());
    } catch (const std::exception& e) {
        mb_die("%s: cannot parse the child's output: %s", name.c_str(), e.what());
    }
    if (!j.contains("result")) mb_die("%s: the child's output has no result", name.c_str());
    json r = j["result"];
    r["child_context_init_ms"] = j.value("context_init_ms", 0.0);
    return r;
}

namespace {

void CUDART_CB noop_cb(void*) {}

// ---- children ---------------------------------------------------------------------------------

// 32 streams x 2 dependent 1 ms spin kernels, issued stream by stream.
json child_hw_queues(Ctx& c) {
    const int ns = 32, reps = c.opt.quick ? 2 : 3;
    const uint64_t spin = 1000000;
    std::vector<cudaStream_t> st(ns);
    for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned long long* d = nullptr;
    CK(cudaMalloc(&d, size_t(ns) * 2 * 2 * sizeof(unsigned long long)));
    json out = json::array();
    for (int r = 0; r < reps; ++r) {
        CK(cudaDeviceSynchronize());
        const int64_t t0 = now_ns();
        for (int i = 0; i < ns; ++i)
            for (int k = 0; k < 2; ++k) CK(k_spin_stamp(st[size_t(i)], 1, 32, spin, 0, d + 2 * (2 * i + k), nullptr));
        CK(cudaDeviceSynchronize());
        const int64_t t1 = now_ns();
        std::vector<unsigned long long> h(size_t(ns) * 4);
        CK(cudaMemcpy(h.data(), d, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        unsigned long long lo = ~0ull, hi = 0;
        for (size_t i = 0; i < h.size(); i += 2) lo = std::min(lo, h[i]), hi = std::max(hi, h[i + 1]);
        std::vector<long long> s0, e0;
        for (size_t i = 0; i < h.size(); i += 2) s0.push_back((long long)(h[i] - lo)), e0.push_back((long long)(h[i + 1] - lo));
        out.push_back({{"gpu_span_us", r3(double(hi - lo) * 1e-3)}, {"host_us", r3(ns_to_us(t1 - t0))}, {"start_ns", s0}, {"end_ns", e0}});
    }
    CK(cudaFree(d));
    for (auto& s : st) CK(cudaStreamDestroy(s));
    const char* env = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    return {{"max_connections", env ? json(env) : json("default")}, {"streams", ns}, {"spin_ns", spin}, {"reps", out}};
}

json child_module_load(Ctx& c) {
    cudaStream_t s = c.s[0];
    CK(cudaStreamSynchronize(s));
    const double a1 = time_us([&] { return k_mod_a(s); });
    CK(cudaStreamSynchronize(s));
    const double a2 = time_us([&] { return k_mod_a(s); });
    CK(cudaStreamSynchronize(s));
    const double b1 = time_us([&] { return k_mod_b(s); });
    CK(cudaStreamSynchronize(s));
    const double b2 = time_us([&] { return k_mod_b(s); });
    CK(cudaStreamSynchronize(s));
    const char* env = getenv("CUDA_MODULE_LOADING");
    return {{"module_loading", env ? json(env) : json(nullptr)}, {"first_a_us", r3(a1)}, {"second_a_us", r3(a2)},
            {"first_b_us", r3(b1)}, {"second_b_us", r3(b2)}};
}

json child_blocking_sync(Ctx& c) {
    unsigned flags = 0;
    CK(cudaGetDeviceFlags(&flags));
    cudaStream_t s = c.s[0];
    const int n = c.opt.quick ? 10 : 60;  // the first ~15 wake-ups are slower (250-700 us), then ~90 us
    cudaEvent_t ev_block = nullptr, ev_spin = nullptr;
    CK(cudaEventCreateWithFlags(&ev_block, cudaEventBlockingSync | cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&ev_spin, cudaEventDisableTiming));
    volatile unsigned long long* estamp = c.mapped_host<unsigned long long>(kOffEnd);
    std::vector<ClockSync> syncs;
    syncs.push_back(clock_sync(c, "blocking_sync/a"));
    std::vector<std::string> kind;
    std::vector<long long> t2s, gs;
    for (int i = 0; i < n; ++i)
        for (const char* k : {"stream", "event_blocking", "event_spin"}) {
            *estamp = 0;
            CK(k_spin_stamp(s, 1, 32, 1000000, 0, nullptr, c.mapped_dev<unsigned long long>(kOffEnd)));
            if (k[0] == 's') {
                CK(cudaStreamSynchronize(s));
            } else {
                cudaEvent_t e = k[6] == 'b' ? ev_block : ev_spin;
                CK(cudaEventRecord(e, s));
                CK(cudaEventSynchronize(e));
            }
            t2s.push_back(now_ns());
            gs.push_back((long long)*estamp);
            kind.push_back(k);
            spin_host_us(20);
        }
    // Sleep sweep: the wake-up after kernels of 5 us .. 2 ms, rounds over the lengths in turn (the
    // host thread sleeps about the kernel's length; 2026-12-03x showed ~37 us after ~55 us asleep
    // against ~110 us after 1 ms, so the wake-up follows how long the thread slept).
    const std::vector<uint64_t> sweep_ns = {5000, 10000, 20000, 50000, 100000, 200000, 300000, 500000, 700000, 1000000, 2000000};
    const int rounds = c.opt.quick ? 3 : 20;
    std::vector<long long> sw_spin, sw_call, sw_ret, sw_end;
    auto sync_after = [&](uint64_t ns) {  // a spin kernel of ns, then a stream sync; 20 us of host work after
        *estamp = 0;
        CK(k_spin_stamp(s, 1, 32, ns, 0, nullptr, c.mapped_dev<unsigned long long>(kOffEnd)));
        const int64_t call = now_ns();
        CK(cudaStreamSynchronize(s));
        sw_ret.push_back(now_ns());
        sw_call.push_back(call);
        sw_end.push_back((long long)*estamp);
        sw_spin.push_back((long long)ns);
        spin_host_us(20);
    };
    for (int r = 0; r < rounds; ++r)
        for (uint64_t ns : sweep_ns) sync_after(ns);
    // Steady sweep: a block of 12 syncs after kernels of one length, as a loop of identical
    // iterations waits (the wake-up depends on the recent sleeps too: on 2026-12-03y/z the mixed
    // rounds above woke 51-58 us after 20-50 us, a loop of 55 us sleeps 37 us), over the lengths
    // ascending and then descending.
    const size_t mixed = sw_ret.size();
    const int block = c.opt.quick ? 4 : 12;
    std::vector<int> st_index;
    for (int pass = 0; pass < 2; ++pass)
        for (size_t k = 0; k < sweep_ns.size(); ++k) {
            const uint64_t ns = sweep_ns[pass == 0 ? k : sweep_ns.size() - 1 - k];
            for (int i = 0; i < block; ++i) {
                sync_after(ns);
                st_index.push_back(i);
            }
        }
    syncs.push_back(clock_sync(c, "blocking_sync/b"));
    std::vector<double> wake;
    for (size_t i = 0; i < t2s.size(); ++i) wake.push_back((double(t2s[i]) - gpu_to_host_ns(syncs, double(gs[i]))) * 1e-3);
    std::vector<double> sw_wake, sw_sleep, sw_spin_us, st_wake, st_sleep, st_spin_us;
    for (size_t i = 0; i < sw_ret.size(); ++i) {
        const double end = gpu_to_host_ns(syncs, double(sw_end[i]));
        (i < mixed ? sw_wake : st_wake).push_back((double(sw_ret[i]) - end) * 1e-3);
        (i < mixed ? sw_sleep : st_sleep).push_back((end - double(sw_call[i])) * 1e-3);
        (i < mixed ? sw_spin_us : st_spin_us).push_back(double(sw_spin[i]) * 1e-3);
    }
    CK(cudaEventDestroy(ev_block));
    CK(cudaEventDestroy(ev_spin));
    return {{"device_flags", flags}, {"blocking_sync_flag_set", (flags & cudaDeviceScheduleBlockingSync) != 0}, {"spin_ns", 1000000},
            {"kind", kind}, {"wakeup_us", r3v(wake)},
            {"sweep", {{"spin_us", r3v(sw_spin_us)}, {"sleep_us", r3v(sw_sleep)}, {"wakeup_us", r3v(sw_wake)}}},
            {"steady", {{"spin_us", r3v(st_spin_us)}, {"sleep_us", r3v(st_sleep)}, {"wakeup_us", r3v(st_wake)}, {"index", st_index}}}};
}

}  // namespace

void child_prepare(const Options& o) {
    if (o.child == "hw_queues" || o.child == "queues_streams") {
        if (o.child_arg == "default") unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
        else setenv("CUDA_DEVICE_MAX_CONNECTIONS", o.child_arg.c_str(), 1);
    } else if (o.child == "module_load") {
        setenv("CUDA_MODULE_LOADING", "LAZY", 1);
    } else if (o.child == "blocking_sync") {
        CK(cudaSetDevice(o.device));
        CK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));  // before the context exists
    } else {
        mb_die("unknown --child section '%s'", o.child.c_str());
    }
}

void run_child(Ctx& c, json& out) {
    if (c.opt.child == "hw_queues") out = child_hw_queues(c);
    else if (c.opt.child == "module_load") out = child_module_load(c);
    else if (c.opt.child == "blocking_sync") out = child_blocking_sync(c);
    else if (c.opt.child == "queues_streams") out = child_queues_streams(c);
}

// ---- a. hardware queues -------------------------------------------------------------------------
void bench_hw_queues(Ctx& c, json& out) {
    out["method"] = "child process per CUDA_DEVICE_MAX_CONNECTIONS (unset = default, 1..32): 32 non-blocking streams, "
                    "2 dependent 1 ms one-block spin kernels each, issued stream by stream; GPU span of the %globaltimer "
                    "start/end stamps (kernel index = 2*stream + k)";
    json runs = json::array();
    for (const char* n : {"default", "1", "2", "4", "8", "16", "32"}) runs.push_back(spawn_child(c, "hw_queues", n));
    out["runs"] = runs;
    for (const auto& r : runs)
        if (r["max_connections"] == "default") {
            std::vector<double> t;
            for (const auto& x : r["reps"]) t.push_back(x["gpu_span_us"].get<double>());
            preview(out, "check.hw_queues_default_span", median(t), "us", "32 streams x 2 x 1 ms, default connections");
        }
}

// ---- b. launch queue depth ----------------------------------------------------------------------
void bench_launch_queue(Ctx& c, json& out) {
    const int n = 2000, reps = c.opt.quick ? 1 : 2;
    const uint64_t blocker_ns = 40000000;  // 40 ms: far longer than issuing ~1000 launches
    cudaStream_t s = c.s[0], s2 = c.s[1];
    json rj = json::array();
    std::vector<double> depths;
    for (int r = 0; r < reps; ++r) {
        CK(cudaDeviceSynchronize());
        CK(k_spin(s, blocker_ns));
        std::vector<double> calls;
        calls.reserve(n);
        for (int i = 0; i < n; ++i) calls.push_back(time_us([&] { return k_empty(s); }));
        CK(cudaStreamSynchronize(s));
        int first = -1;
        for (int i = 0; i < n; ++i)
            if (calls[size_t(i)] > 1000.0) {
                first = i;
                break;
            }
        if (first >= 0) depths.push_back(first);
        rj.push_back({{"call_us", r3v(calls)}, {"first_blocking_index", first}});
    }
    out["same_stream"] = {{"method", "a 40 ms one-block spin kernel, then 2000 empty kernels into the same stream; host time "
                                     "of every launch call; the first call over 1 ms is where the queue was full"},
                          {"blocker_ns", blocker_ns},
                          {"n", n},
                          {"reps", rj}};
    // A second stream while the first is full: a helper thread fills stream 1 (and blocks), then
    // the main thread launches into stream 2.
    {
        CK(cudaDeviceSynchronize());
        CK(k_spin(s, blocker_ns));
        std::atomic<int> issued{0};
        std::atomic<bool> stop{false};
        std::thread filler([&] {
            for (int i = 0; i < n && !stop.load(); ++i) {
                cudaError_t e = k_empty(s);
                if (e != cudaSuccess) return;
                issued.fetch_add(1);
            }
        });
        // Wait until the filler stops advancing (blocked on the full queue) or finishes.
        int last = -1;
        int64_t since = now_ns();
        while (true) {
            int v = issued.load();
            if (v != last) {
                last = v;
                since = now_ns();
            }
            if (v >= n || now_ns() - since > 3000000) break;
            spin_host_us(50);
        }
        const int at = issued.load();
        std::vector<double> calls;
        for (int i = 0; i < 200; ++i) calls.push_back(time_us([&] { return k_empty(s2); }));
        const int after = issued.load();
        stop.store(true);
        filler.join();
        CK(cudaDeviceSynchronize());
        out["second_stream"] = {{"method", "a helper thread fills stream 1 behind a 40 ms blocker until its launch call blocks; "
                                           "then 200 empty launches into stream 2, host time of each"},
                                {"first_stream_issued_when_blocked", at},
                                {"first_stream_issued_after", after},
                                {"call_us", r3v(calls)}};
        preview(out, "check.second_stream_launch", median(calls), "us", "median launch into another stream while one is full");
    }
    if (!depths.empty()) preview(out, "gpu.launch_queue_depth", median(depths), "", "index of the first blocking launch call");
}

// ---- c. module loading ---------------------------------------------------------------------------
void bench_module_load(Ctx& c, json& out) {
    out["method"] = "fresh child process (CUDA_MODULE_LOADING=LAZY) per sample: host time of the first launch of kernel A "
                    "(a module never used before), the second launch of A, the first and second launch of kernel B (same module)";
    json s = json::array();
    std::vector<double> d;
    for (int i = 0; i < (c.opt.quick ? 2 : 4); ++i) {
        json r = spawn_child(c, "module_load", std::to_string(i));
        d.push_back(r["first_a_us"].get<double>() - r["second_a_us"].get<double>());
        s.push_back(r);
    }
    out["samples"] = s;
    preview(out, "host.module_load_cost", median(d), "us", "median first - second launch of kernel A");
}

// ---- d. host functions ---------------------------------------------------------------------------
void bench_host_func(Ctx& c, json& out) {
    cudaStream_t s = c.s[0];
    const int n = c.opt.quick ? 30 : 100;
    std::vector<double> calls;
    for (int i = 0; i < n; ++i) {
        calls.push_back(time_us([&] { return cudaLaunchHostFunc(s, noop_cb, nullptr); }));
        CK(cudaStreamSynchronize(s));
    }
    out["call"] = {{"method", "cudaLaunchHostFunc of an empty callback on an idle stream, stream sync after each"}, {"call_us", r3v(calls)}};
    // Callback start after the preceding kernel's end; kernel -> callback -> kernel.
    volatile unsigned long long* estamp = c.mapped_host<unsigned long long>(kOffEnd);
    unsigned long long* stamps = static_cast<unsigned long long*>(c.dev(4 * sizeof(unsigned long long)));
    std::vector<ClockSync> syncs;
    syncs.push_back(clock_sync(c, "host_func/a"));
    const int m = c.opt.quick ? 15 : 40;
    HostStamp hs;
    std::vector<long long> k_end, cb_start, cb_end, k1_end_g, k2_start_g;
    for (int i = 0; i < m; ++i) {
        *estamp = 0;
        CK(k_spin_stamp(s, 1, 32, 100000, 0, stamps, c.mapped_dev<unsigned long long>(kOffEnd)));
        CK(cudaLaunchHostFunc(s, stamp_cb, &hs));
        CK(k_spin_stamp(s, 1, 32, 20000, 0, stamps + 2, nullptr));
        CK(cudaStreamSynchronize(s));
        unsigned long long h[4];
        CK(cudaMemcpy(h, stamps, sizeof h, cudaMemcpyDeviceToHost));
        k_end.push_back((long long)*estamp);
        cb_start.push_back(hs.start.load());
        cb_end.push_back(hs.end.load());
        k1_end_g.push_back((long long)h[1]);
        k2_start_g.push_back((long long)h[2]);
        spin_host_us(30);
    }
    syncs.push_back(clock_sync(c, "host_func/b"));
    std::vector<double> lat, gap_after, kk;
    for (int i = 0; i < m; ++i) {
        lat.push_back((double(cb_start[size_t(i)]) - gpu_to_host_ns(syncs, double(k_end[size_t(i)]))) * 1e-3);
        gap_after.push_back((gpu_to_host_ns(syncs, double(k2_start_g[size_t(i)])) - double(cb_end[size_t(i)])) * 1e-3);
        kk.push_back(double(k2_start_g[size_t(i)] - k1_end_g[size_t(i)]) * 1e-3);
    }
    out["chain"] = {{"method", "100 us spin kernel (end stamp to mapped memory) -> host func (stamps its start/end on steady_clock) -> "
                               "20 us spin kernel (start stamp); clocks aligned by ping-pong (clock_syncs)"},
                    {"latency_us", r3v(lat)},
                    {"gap_after_us", r3v(gap_after)},
                    {"kernel_to_kernel_us", r3v(kk)}};
    preview(out, "host.host_func_call_cost", median(calls), "us", "median cudaLaunchHostFunc call");
    preview(out, "gpu.host_func_latency", median(lat), "us", "median callback start - preceding kernel end");
    preview(out, "gpu.host_func_gap", median(gap_after), "us", "median next kernel start - callback end");
}

// ---- e. graphs -------------------------------------------------------------------------------------
void bench_graphs(Ctx& c, json& out) {
    cudaStream_t s = c.s[0], cap = c.s[1];
    const int reps = c.opt.quick ? 3 : 5;
    EventPool ev(2);
    auto capture = [&](int n, bool copies, void* dst, const void* src) {
        cudaGraph_t g = nullptr;
        CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < n; ++i) {
            if (copies) CK(cudaMemcpyAsync(static_cast<char*>(dst) + size_t(i) * 4 * KiB, static_cast<const char*>(src) + size_t(i) * 4 * KiB,
                                           4 * KiB, cudaMemcpyHostToDevice, cap));
            else CK(k_empty(cap));
        }
        CK(cudaStreamEndCapture(cap, &g));
        return g;
    };
    json pts = json::array();
    for (int n : {10, 100, 1000}) {
        cudaGraph_t g = capture(n, false, nullptr, nullptr);
        std::vector<double> inst, launch, gpu_graph, gpu_stream;
        cudaGraphExec_t x = nullptr;
        for (int r = 0; r < reps; ++r) {
            if (x) CK(cudaGraphExecDestroy(x));
            inst.push_back(time_us([&] { return cudaGraphInstantiate(&x, g, 0); }));
        }
        CK(cudaGraphLaunch(x, s));  // first launch uploads the graph
        CK(cudaStreamSynchronize(s));
        for (int r = 0; r < 4 * reps; ++r) {
            launch.push_back(time_us([&] { return cudaGraphLaunch(x, s); }));
            CK(cudaStreamSynchronize(s));
        }
        if (n >= 100) {
            for (int r = 0; r < reps; ++r) {
                // GPU time: behind a blocker, so that the host's issue rate does not matter.
                CK(k_spin(s, 20000000));
                CK(cudaEventRecord(ev[0], s));
                CK(cudaGraphLaunch(x, s));
                CK(cudaEventRecord(ev[1], s));
                CK(cudaStreamSynchronize(s));
                gpu_graph.push_back(event_us(ev[0], ev[1]));
                CK(k_spin(s, 20000000));
                CK(cudaEventRecord(ev[0], s));
                for (int i = 0; i < n; ++i) CK(k_empty(s));
                CK(cudaEventRecord(ev[1], s));
                CK(cudaStreamSynchronize(s));
                gpu_stream.push_back(event_us(ev[0], ev[1]));
            }
        }
        CK(cudaGraphExecDestroy(x));
        CK(cudaGraphDestroy(g));
        pts.push_back({{"nodes", n}, {"instantiate_us", r3v(inst)}, {"launch_call_us", r3v(launch)}, {"gpu_graph_us", r3v(gpu_graph)},
                       {"gpu_stream_us", r3v(gpu_stream)}});
    }
    out["kernels"] = {{"method", "graphs of N empty kernels captured from a stream: cudaGraphInstantiate host time; cudaGraphLaunch "
                                 "host time (idle stream, sync after each); GPU time (events) of the graph vs the same N empty "
                                 "launches in a stream, each behind a 20 ms blocker"},
                      {"points", pts}};
    // Copy nodes: 100 pinned 4 KiB H2D copies.
    {
        const int n = 100;
        void* h = c.pinned(size_t(n) * 4 * KiB);
        void* d = c.dev(size_t(n) * 4 * KiB);
        cudaGraph_t g = capture(n, true, d, h);
        cudaGraphExec_t x = nullptr;
        CK(cudaGraphInstantiate(&x, g, 0));
        CK(cudaGraphLaunch(x, s));
        CK(cudaStreamSynchronize(s));
        std::vector<double> gg, gs;
        for (int r = 0; r < reps; ++r) {
            CK(k_spin(s, 5000000));
            CK(cudaEventRecord(ev[0], s));
            CK(cudaGraphLaunch(x, s));
            CK(cudaEventRecord(ev[1], s));
            CK(cudaStreamSynchronize(s));
            gg.push_back(event_us(ev[0], ev[1]));
            CK(k_spin(s, 5000000));
            CK(cudaEventRecord(ev[0], s));
            for (int i = 0; i < n; ++i)
                CK(cudaMemcpyAsync(static_cast<char*>(d) + size_t(i) * 4 * KiB, static_cast<const char*>(h) + size_t(i) * 4 * KiB, 4 * KiB,
                                   cudaMemcpyHostToDevice, s));
            CK(cudaEventRecord(ev[1], s));
            CK(cudaStreamSynchronize(s));
            gs.push_back(event_us(ev[0], ev[1]));
        }
        CK(cudaGraphExecDestroy(x));
        CK(cudaGraphDestroy(g));
        out["copies"] = {{"method", "100 pinned 4 KiB H2D copies: GPU time (events) as a captured graph vs in a stream, each behind a 5 ms blocker"},
                         {"n", n},
                         {"bytes", 4 * KiB},
                         {"gpu_graph_us", r3v(gg)},
                         {"gpu_stream_us", r3v(gs)}};
        preview(out, "graph.copy_node_extra", (median(gg) - median(gs)) / n, "us", "(graph - stream) / copies");
    }
    const json& p1000 = pts[2];
    std::vector<double> g1000 = p1000["gpu_graph_us"].get<std::vector<double>>();
    if (!g1000.empty()) preview(out, "check.graph_gpu_per_kernel_node", median(g1000) / 1000, "us", "GPU time per node, 1000 empty kernels");
}

// ---- f. allocation calls -----------------------------------------------------------------------------
void bench_alloc(Ctx& c, json& out) {
    c.release();  // give the shared buffers back: this section measures allocation itself
    const bool q = c.opt.quick;
    const int reps = q ? 2 : 4;
    json dev = json::array();
    std::vector<double> mall, fre;
    for (size_t b : {1 * MiB, 16 * MiB, 256 * MiB, 1 * GiB}) {
        if (b > usable_device_bytes()) {
            dev.push_back({{"bytes", b}, {"skipped", "not enough free device memory"}});
            continue;
        }
        std::vector<double> m, f;
        for (int r = 0; r < reps; ++r) {
            void* p = nullptr;
            CK(cudaDeviceSynchronize());
            m.push_back(time_us([&] { return cudaMalloc(&p, b); }));
            CK(cudaDeviceSynchronize());
            f.push_back(time_us([&] { return cudaFree(p); }));
        }
        mall.insert(mall.end(), m.begin(), m.end());
        fre.insert(fre.end(), f.begin(), f.end());
        dev.push_back({{"bytes", b}, {"malloc_us", r3v(m)}, {"free_us", r3v(f)}});
    }
    out["device"] = {{"method", "cudaMalloc then cudaFree of the same size on an idle device"}, {"points", dev}};
    // Pinned host memory and registration (within the host's available memory).
    size_t avail = 0;
    {
        std::ifstream mi("/proc/meminfo");
        std::string k;
        size_t v = 0;
        std::string unit;
        while (mi >> k >> v >> unit)
            if (k == "MemAvailable:") {
                avail = v * 1024;
                break;
            }
    }
    json host = json::array(), reg = json::array();
    for (size_t b : {64 * MiB, 256 * MiB, 1 * GiB}) {
        if (avail && b > avail / 4) {
            host.push_back({{"bytes", b}, {"skipped", "not enough available host memory"}});
            continue;
        }
        std::vector<double> m, f, rg, ur;
        for (int r = 0; r < (b >= GiB ? 1 : reps); ++r) {
            void* p = nullptr;
            m.push_back(time_us([&] { return cudaMallocHost(&p, b); }));
            f.push_back(time_us([&] { return cudaFreeHost(p); }));
            void* h = mmap(nullptr, b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (h == MAP_FAILED) mb_die("alloc: cannot map %zu bytes", b);
            for (size_t o = 0; o < b; o += 4096) static_cast<volatile char*>(h)[o] = 1;
            rg.push_back(time_us([&] { return cudaHostRegister(h, b, cudaHostRegisterDefault); }));
            ur.push_back(time_us([&] { return cudaHostUnregister(h); }));
            munmap(h, b);
        }
        host.push_back({{"bytes", b}, {"malloc_host_us", r3v(m)}, {"free_host_us", r3v(f)}});
        reg.push_back({{"bytes", b}, {"register_us", r3v(rg)}, {"unregister_us", r3v(ur)}});
    }
    out["host"] = {{"method", "cudaMallocHost then cudaFreeHost"}, {"points", host}};
    out["register"] = {{"method", "mmap + touch every page, then cudaHostRegister / cudaHostUnregister"}, {"points", reg}};
    // Stream-ordered allocation from a warm pool.
    {
        cudaMemPool_t pool = nullptr;
        CK(cudaDeviceGetDefaultMemPool(&pool, c.opt.device));
        uint64_t keep = UINT64_MAX;
        CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
        cudaStream_t s = c.s[0];
        json pts = json::array();
        std::vector<double> all;
        for (size_t b : {1 * MiB, 64 * MiB}) {
            void* p = nullptr;
            CK(cudaMallocAsync(&p, b, s));  // warm the pool
            CK(cudaFreeAsync(p, s));
            CK(cudaStreamSynchronize(s));
            std::vector<double> m, f;
            for (int i = 0; i < (q ? 20 : 50); ++i) {
                m.push_back(time_us([&] { return cudaMallocAsync(&p, b, s); }));
                f.push_back(time_us([&] { return cudaFreeAsync(p, s); }));
            }
            CK(cudaStreamSynchronize(s));
            all.insert(all.end(), m.begin(), m.end());
            pts.push_back({{"bytes", b}, {"malloc_async_us", r3v(m)}, {"free_async_us", r3v(f)}});
        }
        uint64_t zero = 0;
        CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &zero));
        CK(cudaMemPoolTrimTo(pool, 0));
        out["async"] = {{"method", "cudaMallocAsync / cudaFreeAsync pairs on one stream, default pool kept warm (release threshold max)"},
                        {"points", pts}};
        preview(out, "host.malloc_async_cost", median(all), "us", "median cudaMallocAsync, warm pool");
    }
    if (!mall.empty()) preview(out, "host.malloc_cost", median(mall), "us", "median cudaMalloc, all sizes");
    if (!fre.empty()) preview(out, "host.free_cost", median(fre), "us", "median cudaFree, idle device, all sizes");
}

// ---- g. blocking sync ------------------------------------------------------------------------------
void bench_blocking_sync(Ctx& c, json& out) {
    json r = spawn_child(c, "blocking_sync", "0");
    std::vector<double> w = r["wakeup_us"].get<std::vector<double>>(), ws;
    for (size_t i = 0; i < w.size(); ++i)
        if (r["kind"][i] == "stream") ws.push_back(w[i]);
    out["method"] = "child process with cudaDeviceScheduleBlockingSync: 1 ms spin kernel writing its end stamp to mapped memory, then "
                    "cudaStreamSynchronize, or cudaEventSynchronize on an event with / without cudaEventBlockingSync; wake-up = "
                    "return - host time of the end stamp (clock alignment in the child); then the sweep: rounds of spin kernels "
                    "of 5 us .. 2 ms each followed by cudaStreamSynchronize, with sleep = end stamp - sync call start; then the "
                    "steady sweep: blocks of 12 such syncs of one length each, the lengths ascending then descending";
    out["child"] = r;
    if (!ws.empty()) preview(out, "host.blocking_sync_wakeup", median(ws), "us", "median stream sync wake-up, blocking-sync context");
    if (r.contains("steady")) {
        const std::vector<double> sp = r["steady"]["spin_us"].get<std::vector<double>>(), sw = r["steady"]["wakeup_us"].get<std::vector<double>>();
        const std::vector<int> ix = r["steady"]["index"].get<std::vector<int>>();
        for (double len : {20.0, 100.0, 300.0, 1000.0}) {
            std::vector<double> v;
            for (size_t i = 0; i < sp.size() && i < sw.size() && i < ix.size(); ++i)
                if (sp[i] == len && ix[i] >= 4) v.push_back(sw[i]);
            if (!v.empty())
                preview(out, "check.blocking_sync_wakeup_after_" + std::to_string(int(len)) + "us", median(v), "us",
                        "median stream sync wake-up in a block of syncs after kernels of this length (the 5th on; the thread "
                        "slept about as long each time)");
        }
    }
}

// ---- h. pageable contention --------------------------------------------------------------------------
void bench_pageable_contention(Ctx& c, json& out) {
    const size_t b = 256 * MiB;
    const int reps = c.opt.quick ? 2 : 3;
    if (4 * b > usable_device_bytes()) {
        out["skipped"] = "not enough free device memory";
        return;
    }
    char* pin = static_cast<char*>(c.pinned(b));
    char* dev = static_cast<char*>(c.dev(2 * b));
    char* pg = static_cast<char*>(malloc(b));
    if (!pg) mb_die("pageable_contention: malloc of 256 MiB failed");
    for (size_t o = 0; o < b; o += 4096) pg[o] = 1;
    EventPool ev(2);
    cudaStream_t s = c.s[0], s2 = c.s[1];
    json cases = json::array();
    for (const char* dir : {"h2d", "d2h"}) {
        const bool h2d = dir[0] == 'h';
        // pg_alone / pg_beside: host time of the pageable copy's call alone and beside the pinned
        // copy (a pageable D2H call returns when drained, an H2D one when staged): how much the
        // pinned DMA slows the host's staging (issue 14: validation 15's pageable readbacks drain
        // at 8-10 GB/s beside pinned uploads, 14.5 GB/s alone).
        std::vector<double> alone, beside, pg_alone, pg_beside;
        for (int r = 0; r < reps; ++r) {
            for (int mode = 0; mode < 3; ++mode) {
                CK(cudaDeviceSynchronize());
                if (mode < 2) {
                    CK(cudaEventRecord(ev[0], s));
                    if (h2d) CK(cudaMemcpyAsync(dev, pin, b, cudaMemcpyHostToDevice, s));
                    else CK(cudaMemcpyAsync(pin, dev, b, cudaMemcpyDeviceToHost, s));
                    CK(cudaEventRecord(ev[1], s));
                }
                // The opposite-direction pageable copy in another stream (it may block the host).
                if (mode >= 1) {
                    const int64_t t0 = now_ns();
                    if (h2d) CK(cudaMemcpyAsync(pg, dev + b, b, cudaMemcpyDeviceToHost, s2));
                    else CK(cudaMemcpyAsync(dev + b, pg, b, cudaMemcpyHostToDevice, s2));
                    (mode == 1 ? pg_beside : pg_alone).push_back(ns_to_us(now_ns() - t0));
                }
                CK(cudaDeviceSynchronize());
                if (mode < 2) (mode ? beside : alone).push_back(event_us(ev[0], ev[1]));
            }
        }
        cases.push_back({{"pinned", dir},
                         {"bytes", b},
                         {"alone_us", r3v(alone)},
                         {"beside_pageable_us", r3v(beside)},
                         {"pageable_alone_call_us", r3v(pg_alone)},
                         {"pageable_beside_call_us", r3v(pg_beside)}});
        preview(out, std::string("check.pageable_contention_") + dir, median(beside) / median(alone), "x", "pinned copy beside / alone");
        preview(out, std::string("check.pageable_") + (h2d ? "d2h" : "h2d") + "_call_beside_pinned", median(pg_beside) / median(pg_alone), "x",
                "pageable copy's call beside the opposite pinned copy / alone");
    }
    free(pg);
    out["method"] = "256 MiB pinned copy (events in its stream) alone, and issued just before a 256 MiB opposite-direction "
                    "pageable copy in another stream; the pageable copy's call time (host clock) beside it and alone";
    out["cases"] = cases;
}

// ---- i. managed-memory blocks ------------------------------------------------------------------------
void bench_um_blocks(Ctx& c, json& out) {
    int cma = 0;
    CK(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, c.opt.device));
    if (!cma) {
        out["skipped"] = "no concurrentManagedAccess";
        return;
    }
    const bool q = c.opt.quick;
    cudaStream_t s = c.s[0];
    EventPool ev(2);
    cudaMemLocation to_dev{}, to_host{};
    to_dev.type = cudaMemLocationTypeDevice;
    to_dev.id = c.opt.device;
    to_host.type = cudaMemLocationTypeHost;
    to_host.id = 0;
    void* sink = c.dev(4096);
    // Half prefetched, then a read kernel over all of it.
    {
        const size_t b = 256 * MiB;
        if (b > usable_device_bytes()) {
            out["skipped"] = "not enough free device memory";
            return;
        }
        char* m = nullptr;
        CK(cudaMallocManaged(&m, b, cudaMemAttachGlobal));
        json modes = json::array();
        for (const char* mode : {"host", "half", "device"}) {
            std::vector<double> t;
            for (int r = 0; r < (q ? 1 : 2); ++r) {
                for (size_t o = 0; o < b; o += 4096) m[o] = 1;  // all on the host
                if (mode[0] == 'h' && mode[1] == 'a') CK(cudaMemPrefetchAsync(m, b / 2, to_dev, 0, s));
                if (mode[0] == 'd') CK(cudaMemPrefetchAsync(m, b, to_dev, 0, s));
                CK(cudaStreamSynchronize(s));
                CK(cudaEventRecord(ev[0], s));
                CK(k_read(s, c.sm_count * 2, 1024, m, b, nullptr, sink));
                CK(cudaEventRecord(ev[1], s));
                CK(cudaStreamSynchronize(s));
                t.push_back(event_us(ev[0], ev[1]));
            }
            modes.push_back({{"resident", mode}, {"gpu_read_us", r3v(t)}});
        }
        CK(cudaFree(m));
        out["half_prefetched"] = {{"method", "256 MiB managed, written on the host; none / the first half / all prefetched to the device; "
                                             "then a streaming read kernel over all of it (events)"},
                                  {"bytes", b},
                                  {"modes", modes}};
    }
    // Host time of a prefetch to the device vs its GPU time.
    json pts = json::array();
    for (size_t b : {256 * MiB, 1 * GiB}) {
        if (b > usable_device_bytes()) {
            pts.push_back({{"bytes", b}, {"skipped", "not enough free device memory"}});
            continue;
        }
        char* m = nullptr;
        CK(cudaMallocManaged(&m, b, cudaMemAttachGlobal));
        std::vector<double> call, gpu;
        for (int r = 0; r < (q ? 1 : 2); ++r) {
            for (size_t o = 0; o < b; o += 4096) m[o] = 1;
            CK(cudaStreamSynchronize(s));
            CK(cudaEventRecord(ev[0], s));
            call.push_back(time_us([&] { return cudaMemPrefetchAsync(m, b, to_dev, 0, s); }));
            CK(cudaEventRecord(ev[1], s));
            CK(cudaStreamSynchronize(s));
            gpu.push_back(event_us(ev[0], ev[1]));
            CK(cudaMemPrefetchAsync(m, b, to_host, 0, s));
            CK(cudaStreamSynchronize(s));
        }
        CK(cudaFree(m));
        pts.push_back({{"bytes", b}, {"call_us", r3v(call)}, {"gpu_us", r3v(gpu)}});
        preview(out, "check.prefetch_host_block_" + size_str(b), median(call) / median(gpu), "", "prefetch call / GPU time");
    }
    out["prefetch_blocking"] = {{"method", "host-resident managed buffer; host time of cudaMemPrefetchAsync to the device vs its GPU time (events)"},
                                {"points", pts}};
}
