// hetsim-microbench: shared declarations (error checking, timers, context, kernels, statistics).
// See README.md beside this file for what each benchmark measures and the JSON layout.
#pragma once

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using json = nlohmann::ordered_json;

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * KiB;
constexpr size_t GiB = 1024 * MiB;

// ---- error checking -------------------------------------------------------------------------
// Every CUDA call goes through CK: on failure it prints the error name, the call text and
// file:line, writes what was measured so far to <output>.partial, and exits with status 1.
[[noreturn]] void mb_fail(const char* err_name, const char* err_str, const char* call, const char* file,
                          int line);
[[noreturn]] void mb_die(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
#define CK(call)                                                                                 \
    do {                                                                                         \
        cudaError_t ck_e_ = (call);                                                              \
        if (ck_e_ != cudaSuccess)                                                                \
            mb_fail(cudaGetErrorName(ck_e_), cudaGetErrorString(ck_e_), #call, __FILE__, __LINE__); \
    } while (0)

// ---- host clock -------------------------------------------------------------------------------
inline int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
inline double ns_to_us(int64_t ns) { return double(ns) * 1e-3; }
// Times one CUDA call f() (returning its cudaError_t, checked) on steady_clock, in us.
template <class F>
double time_us(F f) {
    const int64_t t0 = now_ns();
    cudaError_t e = f();
    const int64_t t1 = now_ns();
    CK(e);
    return ns_to_us(t1 - t0);
}
void spin_host_us(double us);  // busy-wait on steady_clock
// Round to 1 ns when the value is in us (keeps the JSON short).
inline double r3(double us) { return double(int64_t(us * 1000.0 + (us >= 0 ? 0.5 : -0.5))) / 1000.0; }
json r3v(const std::vector<double>& v);

// ---- statistics (for the in-binary preview; the real fit is done offline) ---------------------
double median(std::vector<double> v);
double percentile(std::vector<double> v, double p);  // p in [0,100]
double vmin(const std::vector<double>& v);
struct LineFit {
    double slope = 0, intercept = 0, r2 = 0;
    size_t n = 0;
};
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);
// Least squares y = X b for a small number of columns (normal equations).
std::vector<double> lstsq(const std::vector<std::vector<double>>& X, const std::vector<double>& y);

// ---- preview table ----------------------------------------------------------------------------
// Quick in-binary estimates of profile parameters, printed at the end and stored per benchmark.
void preview(json& bench, const std::string& param, double value, const char* unit, const std::string& how);

// ---- kernels (kernels.cu) ---------------------------------------------------------------------
// All wrappers launch through cudaLaunchKernel and return its status.
cudaError_t k_empty(cudaStream_t s);
// One block of 32 threads spinning on %globaltimer for ns (a stream blocker).
cudaError_t k_spin(cudaStream_t s, uint64_t ns);
// grid x block threads; each block spins spin_ns from its own start, then extra_cycles of clock64;
// block b writes its start/end %globaltimer to stamps[2b], stamps[2b+1] (stamps may be null);
// if host_end (a mapped pinned device pointer) is not null, block 0 also writes its end there.
cudaError_t k_spin_stamp(cudaStream_t s, int grid, int block, uint64_t spin_ns, uint32_t extra_cycles,
                         unsigned long long* stamps, unsigned long long* host_end);
// One thread writes %globaltimer (first instruction) to *dst (device or mapped host pointer).
// Block placement: grid x block threads, `smem` bytes of dynamic shared memory each (up to 200 KiB),
// each block spins spin_ns and writes its %smid to smid[b] and start/end %globaltimer to
// stamps[2b], stamps[2b+1] (device memory).
cudaError_t k_place(cudaStream_t s, int grid, int block, size_t smem, uint64_t spin_ns, unsigned int* smid,
                    unsigned long long* stamps);
cudaError_t k_stamp_start(cudaStream_t s, unsigned long long* dst);
// One block: thread 0 takes slot k = atomicAdd(counter, 1) and writes %globaltimer to starts[k];
// k_slot_end writes it to ends[*counter - 1] (graph_relaunch: one slot per graph launch).
cudaError_t k_slot_start(cudaStream_t s, unsigned int* counter, unsigned long long* starts);
cudaError_t k_slot_end(cudaStream_t s, const unsigned int* counter, unsigned long long* ends);
// One block of 32 threads spinning for a number of SM clock cycles (clock64).
cudaError_t k_spin_cycles(cudaStream_t s, unsigned long long cycles);
// Streaming read of bytes (multiple of 64) with 16-byte loads; block start/end stamps optional.
cudaError_t k_read(cudaStream_t s, int grid, int block, const void* p, size_t bytes, unsigned long long* stamps,
                   void* sink);
// Streaming write of bytes (multiple of 16).
cudaError_t k_write(cudaStream_t s, int grid, int block, void* p, size_t bytes, unsigned int value);
// Sparse read: one byte every `stride` bytes of p (stride 4096: one per 4 KiB page, as the validation
// runner touches the managed buffers a kernel `uses`), pages spread over all grid threads.
cudaError_t k_touch(cudaStream_t s, int grid, int block, const void* p, size_t bytes, size_t stride, void* sink);
// STREAM triad a = b + 1.5 c over `bytes` per array (multiple of 16): 2 x bytes read, bytes written.
cudaError_t k_triad(cudaStream_t s, int grid, int block, void* a, const void* b, const void* c, size_t bytes);
// Clock alignment: for i = 1..n wait until *flag == i, stamp %globaltimer into out[i], then out[0] = i.
cudaError_t k_pingpong(cudaStream_t s, unsigned int* flag, unsigned long long* out, int n);
// One thread reads %globaltimer n times into out[0..n).
cudaError_t k_timer_reads(cudaStream_t s, unsigned long long* out, int n);
// Resident blocks per SM of the kernels used with 1024-thread blocks (cudaOccupancy...).
json kernel_occupancy();
// Launch every kernel above except k_empty once (lazy module loading out of the way).
void warm_kernels(cudaStream_t s);
// kernels_mod.cu: two empty kernels in a module of their own, left cold for module_load.
cudaError_t k_mod_a(cudaStream_t s);
cudaError_t k_mod_b(cudaStream_t s);

// kernels_gi.cu: kernels of graph_instantiate only (their own module, first used there). Kinds:
// empty (1 x 1, no parameters), spin (1 x 32, spins 1 us, 3 parameters), wide (grid x 256, 8 pointers
// + 2 ints, does nothing), d0..d3 (four distinct functions of the wide shape), cold_empty and
// cold_wide (used once, for a kernel's first instantiation). i is the node index (an int parameter).
enum GiKind { kGiEmpty, kGiSpin, kGiWide, kGiD0, kGiD1, kGiD2, kGiD3, kGiColdEmpty, kGiColdWide };
cudaError_t k_gi_launch(cudaStream_t s, int kind, int grid, int i);
// Adds one kernel node of `kind` to g, depending on *dep (none when dep is null).
cudaError_t k_gi_add_node(cudaGraph_t g, cudaGraphNode_t* node, const cudaGraphNode_t* dep, int kind, int grid, int i);

// ---- context ----------------------------------------------------------------------------------
struct Options {
    std::string out;
    bool quick = false;
    std::vector<std::string> only;
    int device = 0;
    std::string command;
    // Hidden: run as a child process for one section that needs its own CUDA environment
    // (bench_v2.cu: run_child); the parent re-executes the binary with these and merges the JSON.
    std::string child, child_arg;
};

// A clock alignment between %globaltimer (GPU, ns) and steady_clock (host, ns):
// offset = gpu - host lies in [lo, hi] (bounds from ping-pong exchanges through mapped memory).
struct ClockSync {
    double lo = 0, hi = 0;
    int64_t host_ns = 0;  // host time of the alignment (middle of the exchanges)
    double min_rtt_ns = 0;
    int n = 0;
    double mid() const { return 0.5 * (lo + hi); }
};

struct Ctx {
    Options opt;
    cudaDeviceProp prop{};
    int sm_count = 0;
    double timer_tick_ns = 1000;  // %globaltimer update step, measured at start
    int64_t t0_ns = 0;            // program start

    cudaStream_t s[4]{};  // non-blocking streams
    // Lazily grown shared buffers (contents undefined).
    void* dev(size_t bytes);     // device memory (cudaMalloc)
    void* pinned(size_t bytes);  // pinned host memory (cudaHostAlloc, portable)
    // Small mapped pinned area (host pointer; device pointer via mapped_dev()).
    unsigned char* mapped = nullptr;
    unsigned char* mapped_d = nullptr;
    template <class T>
    T* mapped_dev(size_t off) { return reinterpret_cast<T*>(mapped_d + off); }
    template <class T>
    volatile T* mapped_host(size_t off) { return reinterpret_cast<volatile T*>(mapped + off); }
    static constexpr size_t kMappedBytes = 64 * KiB;

    void* dev_p = nullptr;
    size_t dev_n = 0;
    void* pin_p = nullptr;
    size_t pin_n = 0;

    json clock_syncs = json::array();
    void release();
    double elapsed_s() const { return double(now_ns() - t0_ns) * 1e-9; }
};

void progress(const Ctx& c, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Event helpers.
double event_us(cudaEvent_t a, cudaEvent_t b);  // elapsed a -> b in us
struct EventPool {
    std::vector<cudaEvent_t> ev;
    EventPool(size_t n, unsigned flags = cudaEventDefault);
    ~EventPool();
    cudaEvent_t operator[](size_t i) const { return ev[i]; }
};

// One timed copy in stream s (pageable_sweep, pageable_steady, memcpy2d, memcpy2d_pitches): event;
// t0; issue(); t1; event; stream sync; t2. Appends t1-t0, t2-t0 and the event interval (us).
void timed_copy(cudaStream_t s, const EventPool& ev, std::vector<double>& call_us, std::vector<double>& total_us,
                std::vector<double>& gpu_us, const std::function<cudaError_t()>& issue);

// Clock alignment (launch.cu). Stored in ctx.clock_syncs with its label.
ClockSync clock_sync(Ctx& c, const std::string& label, int n = 48);
// Host steady_clock time (ns) of a %globaltimer value, interpolating between alignments.
double gpu_to_host_ns(const std::vector<ClockSync>& syncs, double g);

// Device memory that may be used now, keeping a 2 GiB margin.
size_t usable_device_bytes();

// ---- benchmarks -------------------------------------------------------------------------------
struct Bench {
    const char* name;
    std::vector<const char*> fits;  // profile parameters the benchmark's samples are fitted to
    const char* checks;             // model rule it checks (or "")
    const char* what;
    void (*run)(Ctx&, json&);
};
const std::vector<Bench>& benches();

void bench_device(Ctx&, json&);
void bench_copy_sweep(Ctx&, json&);
void bench_pageable_sweep(Ctx&, json&);
void bench_pageable_steady(Ctx&, json&);
void bench_block_placement(Ctx&, json&);
void bench_alloc_sizes(Ctx&, json&);
void bench_copy_stream_switch(Ctx&, json&);
void bench_call_after_host_work(Ctx&, json&);
void bench_call_gap(Ctx&, json&);
void bench_um_tail_faults(Ctx&, json&);
void bench_call_context(Ctx&, json&);
void bench_d2d_memset(Ctx&, json&);
void bench_duplex(Ctx&, json&);
void bench_same_direction(Ctx&, json&);
void bench_launch(Ctx&, json&);
void bench_gaps(Ctx&, json&);
void bench_coresidency(Ctx&, json&);
void bench_hbm(Ctx&, json&);
void bench_um(Ctx&, json&);
void bench_hw_queues(Ctx&, json&);
void bench_launch_queue(Ctx&, json&);
void bench_module_load(Ctx&, json&);
void bench_host_func(Ctx&, json&);
void bench_graphs(Ctx&, json&);
void bench_alloc(Ctx&, json&);
void bench_blocking_sync(Ctx&, json&);
void bench_pageable_contention(Ctx&, json&);
void bench_um_blocks(Ctx&, json&);
// Child-process sections: set the environment / device flags a child needs before the first
// CUDA call, and run its measurement in the child.
void child_prepare(const Options& o);
void run_child(Ctx& c, json& out);
// Re-executes this binary as `--child name --child-arg arg` and returns the child's "result"
// (bench_v2.cu); a child that fails or runs past 60 s fails the section.
json spawn_child(Ctx& c, const std::string& name, const std::string& arg);
json child_queues_streams(Ctx& c);  // bench_v3.cu

// Sections of bench_v3.cu (issue 14: behaviours the model predicts worst on composed programs).
void bench_um_roundtrip(Ctx&, json&);
void bench_um_prefetch_host(Ctx&, json&);
void bench_um_sparse(Ctx&, json&);
void bench_um_partial_prefetch(Ctx&, json&);
void bench_alloc_streams(Ctx&, json&);
void bench_host_register_copies(Ctx&, json&);
void bench_hbm_beside_copies(Ctx&, json&);
void bench_graph_nodes(Ctx&, json&);
void bench_pageable_small(Ctx&, json&);
void bench_thread_launch_sync(Ctx&, json&);
void bench_queues_streams(Ctx&, json&);
void bench_priority_hbm(Ctx&, json&);
void bench_pipeline_chunks(Ctx&, json&);
// bench_host_sync.cu (issue 11): host queues, callback flags, thread start and join.
void bench_host_sync(Ctx&, json&);
void bench_memcpy2d(Ctx&, json&);
// bench_graph_relaunch.cu: a graph exec relaunched from another stream while it runs (graph.relaunch_gap).
void bench_graph_relaunch(Ctx&, json&);
// bench_v4.cu: follow-ups of graph_nodes (node gap vs grid) and memcpy2d (unequal pitches).
void bench_graph_node_grids(Ctx&, json&);
void bench_memcpy2d_pitches(Ctx&, json&);
// bench_v5.cu: small pageable copies from several host threads at once.
void bench_pageable_threads(Ctx&, json&);
// bench_graph_node_work.cu: graph node spacing against the kernel's run time, stores and blocker (graph.node_gap*).
void bench_graph_node_work(Ctx&, json&);
// bench_v6.cu: CPU-fault passes of 8-64 MiB, and a kernel beside a kernel that demand-faults.
void bench_um_beside_faults(Ctx&, json&);
// bench_v7.cu: cudaGraphInstantiate host time vs nodes, kernel shape, build method, first use; upload launch.
void bench_graph_instantiate(Ctx&, json&);
// bench_graph_copy_kernel.cu: copy node <-> kernel node hand-overs in a graph and in a stream.
void bench_graph_copy_kernel(Ctx&, json&);
// bench_host_func_wait.cu: callback start after its kernel, against the callback thread's idle time.
void bench_host_func_wait(Ctx&, json&);
// bench_pageable_turn.cu: a pageable copy's call after a pageable copy of the other direction.
void bench_pageable_turnaround(Ctx&, json&);

// Managed memory helpers.
cudaMemLocation loc_device(int dev);
cudaMemLocation loc_host();
// One byte of every 4 KiB page of p, read (as the validation runner's host work does with `uses`)
// or written (value v); returns the pass's time in us.
double touch_host(char* p, size_t bytes, bool write, unsigned char v);
// GPU time (events ev[0], ev[1]) of whatever f issues into s.
double ktime(cudaStream_t s, const EventPool& ev, const std::function<void()>& f);
// The graph stream capture of whatever issue() issues into cap (thread-local capture mode).
cudaGraph_t capture_graph(cudaStream_t cap, const std::function<void(cudaStream_t)>& issue);
// A host callback's start and end on steady_clock (stamp_cb, with cudaLaunchHostFunc(s, stamp_cb,
// &stamp)); it spins spin_ns between them.
struct HostStamp {
    std::atomic<int64_t> start{0}, end{0};
    int64_t spin_ns = 0;
};
void CUDART_CB stamp_cb(void* p);
void prefetch_sync(void* p, size_t bytes, cudaMemLocation l, cudaStream_t s);
// A managed buffer of `bytes` (cudaMallocManaged, attached globally) first written by the host
// (touch_host), or nullptr when it and 1 GiB more would pass usable_device_bytes(): then `pts`
// gets the point {"bytes": bytes, "skipped": why} and nothing is allocated.
char* host_written_managed(size_t bytes, json& pts, const char* why);
// Whether managed memory migrates on demand here; otherwise marks the section skipped.
bool managed_ok(Ctx& c, json& out);

// Size lists.
std::vector<size_t> pow2_sizes(size_t lo, size_t hi, int step_log2);  // lo, lo*2^step, ... <= hi
std::string size_str(size_t b);
