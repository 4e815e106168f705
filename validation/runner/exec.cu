// hetsim-runner: setup, execution and timing of a lowered program on the GPU.
#include "exec.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>

#include <cuda.h>  // CUstream, cuStreamWaitValue32 type (resolved at run time, libcuda is not linked)

#include "cuda_util.hpp"
#include "cupti_timing.hpp"

// The per-thread-default-stream entry points that `nvcc --default-stream per-thread` compiles
// cudaMemcpy/cudaMemset to; exported by cudart, not declared in legacy-stream builds.
extern "C" cudaError_t CUDARTAPI cudaMemcpy_ptds(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind);
extern "C" cudaError_t CUDARTAPI cudaMemset_ptds(void* dst, int value, size_t count);

namespace runner {

// ---------------------------------------------------------------- error context, watchdog

std::atomic<int> g_phase{int(Phase::Setup)};
std::atomic<int> g_run{0};
const Program* g_program = nullptr;
thread_local int tl_op = -1;
thread_local const char* tl_thread = nullptr;
thread_local std::string tl_note;

const char* phase_name(Phase p) {
    switch (p) {
        case Phase::Setup: return "setup";
        case Phase::Warmup: return "warm-up run";
        case Phase::Timed: return "timed run";
        case Phase::Uninstrumented: return "uninstrumented run";
        case Phase::Collect: return "collecting timings";
        case Phase::Output: return "writing the output";
    }
    return "?";
}

namespace {

std::string context_string() {
    Phase ph = Phase(g_phase.load());
    std::string s = phase_name(ph);
    if (ph == Phase::Warmup || ph == Phase::Timed || ph == Phase::Uninstrumented) s += " " + std::to_string(g_run.load());
    if (tl_thread) s += std::string(", thread '") + tl_thread + "'";
    if (tl_op >= 0 && g_program && size_t(tl_op) < g_program->ops.size()) {
        const Op& o = g_program->ops[tl_op];
        s += ", op " + std::to_string(tl_op) + " '" + g_program->op_name(uint32_t(tl_op)) + "' (" + to_string(o.kind) + ")";
    }
    if (!tl_note.empty()) s += ", " + tl_note;
    return s;
}

const char* base_name(const char* f) {
    const char* s = std::strrchr(f, '/');
    return s ? s + 1 : f;
}

std::atomic<int> g_child{0};
std::string g_program_file;  // for messages
std::unique_ptr<std::atomic<int64_t>[]> g_progress;  // per issuing thread: op index, -1 idle, -2 done
std::vector<std::string> g_progress_names;
std::atomic<int> g_nprogress{0};

}  // namespace

void cuda_fail(cudaError_t e, const char* call, const char* file, int line) {
    std::fprintf(stderr, "hetsim-runner: CUDA error %s (%s) in %s at %s:%d [%s]\n", cudaGetErrorName(e), cudaGetErrorString(e), call,
                 base_name(file), line, context_string().c_str());
    std::fflush(stderr);
    std::_Exit(1);
}

void runtime_fail(const char* what, const char* file, int line) {
    std::fprintf(stderr, "hetsim-runner: %s at %s:%d [%s]\n", what, base_name(file), line, context_string().c_str());
    std::fflush(stderr);
    std::_Exit(1);
}

[[noreturn]] static void too_big(const std::string& msg) {
    std::fprintf(stderr, "hetsim-runner: %s: %s\n", g_program_file.empty() ? "program" : g_program_file.c_str(), msg.c_str());
    std::fflush(stderr);
    std::_Exit(2);
}

void start_watchdog(double seconds) {
    if (!(seconds > 0)) return;
    std::thread([seconds] {
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        Phase ph = Phase(g_phase.load());
        std::string where = phase_name(ph);
        if (ph == Phase::Warmup || ph == Phase::Timed || ph == Phase::Uninstrumented) where += " " + std::to_string(g_run.load());
        std::fprintf(stderr, "hetsim-runner: time limit of %g s (--time-limit-s) exceeded during %s; aborting\n", seconds, where.c_str());
        if (int c = g_child.load()) {
            std::fprintf(stderr, "  stopping the cold-start child process %d\n", c);
            kill(c, SIGKILL);
        }
        int n = g_nprogress.load(std::memory_order_acquire);
        for (int i = 0; i < n; ++i) {
            int64_t op = g_progress[i].load();
            std::string at = op == -1 ? "waiting to start" : op == -2 ? "finished its ops" : "at op " + std::to_string(op);
            if (op >= 0 && g_program && size_t(op) < g_program->ops.size())
                at += " '" + g_program->op_name(uint32_t(op)) + "' (" + to_string(g_program->ops[op].kind) + ")";
            std::fprintf(stderr, "  thread '%s': %s\n", g_progress_names[i].c_str(), at.c_str());
        }
        std::fflush(stderr);
        std::_Exit(3);
    }).detach();
}

void set_watched_child(int pid) { g_child.store(pid); }

// ---------------------------------------------------------------- executor

namespace {

using WaitValueFn = CUresult(CUDAAPI*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

enum class Timing { Cupti, Events };

struct Launch {
    unsigned grid = 1, block = 1;
    size_t smem = 0;
    int blocks_per_sm = 0;
    uint64_t waves = 0;
    KernelArgs args;
};

struct ScratchPtrs {
    void* pinned = nullptr;
    void* pageable = nullptr;
    void* dev_src = nullptr;
    void* dev_dst = nullptr;
    void* managed = nullptr;
};

struct CopyArgs {
    void* dst = nullptr;
    const void* src = nullptr;
    cudaMemcpyKind kind = cudaMemcpyDefault;
};

volatile unsigned char g_touch_sink;

uint64_t mem_available_bytes() {
    FILE* f = std::fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    uint64_t kb = 0;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "MemAvailable: %lu kB", &kb) == 1) break;
    std::fclose(f);
    return kb * 1024;
}

void CUDART_CB host_func_cb(void* data);

void touch_host_pages(const void* p, uint64_t bytes) {
    const volatile unsigned char* c = static_cast<const volatile unsigned char*>(p);
    unsigned char acc = 0;
    for (uint64_t off = 0; off < bytes; off += kPage) acc = static_cast<unsigned char>(acc + c[off]);
    g_touch_sink = acc;
}

void write_host_pages(void* p, uint64_t bytes) {
    volatile unsigned char* c = static_cast<volatile unsigned char*>(p);
    for (uint64_t off = 0; off < bytes; off += kPage) c[off] = 0;
}

// A flag (Program::flags): sets are counted, each host_wait takes one (a semaphore). The waiter
// spins on the counter, as the model's host.flag_wakeup (microbench host_sync flag_spin: the
// callback's stamp -> the spinning waiter runs, ~0.3 us) has it; a waiter asleep on a condition
// variable returns 13-24 us after the set instead (validation 82 on 2026-12-02f/g/h).
struct FlagRt {
    std::atomic<uint64_t> sets{0};
    void set() { sets.fetch_add(1, std::memory_order_release); }
    void wait() {
        uint64_t v = sets.load(std::memory_order_acquire);
        for (;;) {
            if (v == 0) {
                cpu_relax();
                v = sets.load(std::memory_order_acquire);
            } else if (sets.compare_exchange_weak(v, v - 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
                return;
            }
        }
    }
};

// A bounded host queue (Program::queues): put waits while full, get while empty.
struct QueueRt {
    std::mutex m;
    std::condition_variable not_full, not_empty;
    uint32_t items = 0, capacity = 1;
    void put() {
        {
            std::unique_lock<std::mutex> lock(m);
            not_full.wait(lock, [&] { return items < capacity; });
            ++items;
        }
        not_empty.notify_one();
    }
    void get() {
        {
            std::unique_lock<std::mutex> lock(m);
            not_empty.wait(lock, [&] { return items > 0; });
            --items;
        }
        not_full.notify_one();
    }
};

struct Stamps {  // a host-function callback's start/end on the host clock, per invocation
    int64_t spin_ns = 0;
    std::atomic<uint32_t> n{0};
    std::vector<int64_t> start, end;
    FlagRt* flag = nullptr;  // raised when the callback returns (host_func with `flag`)
};

class Executor {
public:
    Executor(const Program& p, const Plan& plan, const Options& o) : P(p), PL(plan), O(o) {}
    Measurement run_all();

private:
    const Program& P;
    const Plan& PL;
    const Options& O;
    Measurement M;

    Timing timing = Timing::Events;
    cudaDeviceProp prop{};
    int kernel_regs = 0;
    bool concurrent_managed = false;

    std::vector<void*> buf;  // per program buffer
    std::vector<ScratchPtrs> scr;
    void* read_buf = nullptr;
    void* tiny_dev = nullptr;   // stands in for scratch of zero-byte copies and memsets
    void* tiny_host = nullptr;
    unsigned long long* sink = nullptr;
    UseRegion* uses_dev = nullptr;
    std::vector<cudaStream_t> streams;
    cudaStream_t calib = nullptr;
    std::vector<cudaEvent_t> prog_events;
    std::vector<Launch> launch;  // per op (kernels)
    std::vector<char> ev_timed;  // per op: timed with events
    std::vector<cudaEvent_t> ev_start, ev_end;
    cudaEvent_t ev_ref = nullptr;
    unsigned* flags = nullptr;  // mapped pinned: [0] calibration flag, [1] its ack, [2..] host-task flags
    unsigned* flags_dev = nullptr;
    unsigned calib_token = 0;

    // Version 2: host functions, graphs, allocation ops.
    std::vector<std::unique_ptr<Stamps>> op_stamps;                 // per op (host_func)
    std::vector<std::vector<std::unique_ptr<Stamps>>> node_stamps;  // per graph, per node (host_func nodes)
    std::vector<std::vector<Launch>> node_launch;                   // per graph, per node (kernels)
    std::vector<std::vector<int>> node_rank;                        // per graph, per node: rank among nodes with CUPTI records
    std::vector<cudaGraph_t> graphs;
    std::unique_ptr<std::atomic<cudaGraphExec_t>[]> execs;          // per executable graph (Program::execs): made in this run, or null
    std::unique_ptr<std::atomic<uint32_t>[]> launch_count;          // per graph: launches in this run
    std::vector<uint32_t> launch_seq;                               // per graph_launch op: its number in this run
    ScratchPtrs gscr;                                               // graph nodes' copy scratch
    std::mutex alloc_mu;
    std::vector<std::vector<void*>> dev_allocs, async_allocs, host_allocs;  // per buffer, live scratch (LIFO)
    std::vector<void*> reg_scratch;                                 // per op (host_register): pageable scratch
    std::vector<void*> registered;                                  // registered in this run
    bool has_allocs = false;

    // Host hand-offs and steady state (issue 11).
    std::unique_ptr<QueueRt[]> queues_rt;
    std::unique_ptr<FlagRt[]> flags_rt;
    std::vector<std::thread> late;                       // per issuer: the std::thread of a thread created by an op
    std::unique_ptr<std::atomic<uint32_t>[]> spawned;    // per issuer: the run token once late[] holds its thread
    std::unique_ptr<std::atomic<uint32_t>[]> finished;   // per issuer: the run token once it has run its ops
    std::vector<char> joined;                            // per issuer: joined by a join op in this run
    std::atomic<uint32_t> bar_arrived{0}, bar_gen{0};    // the barrier between steady-state iterations
    uint32_t bar_passed = 0;
    int64_t measured_from = 0;                           // steady_clock at the release of the last barrier
    std::vector<std::vector<cudaGraphNode_t>> dag_nodes; // per graph with dependencies: its nodes as added
    std::vector<std::vector<uint64_t>> dag_ids;          // their CUPTI node ids

    // Tasks form.
    std::vector<cudaEvent_t> done_ev;
    std::unique_ptr<std::atomic<uint32_t>[]> host_done, issued;
    WaitValueFn wait_value = nullptr;

    // Workers and the current run.
    std::vector<std::thread> workers;
    std::mutex mu;
    std::condition_variable cv_start, cv_done;
    int gen = 0;
    bool quit = false;
    int setup_done = 0;
    std::atomic<int> ready{0}, go{0}, done_count{0};
    std::vector<int64_t> thread_end;
    bool instr = false;
    uint32_t token = 0;
    int64_t t0 = 0;
    RunResult* cur = nullptr;
    double ref_abs_ns = 0;
    int64_t ref_rtt_ns = 0;
    size_t probe_expected = 0, probe_missing = 0;  // CUPTI records of the last instrumented run

    void choose_timing_before_cuda();
    void setup();
    void allocate();
    void make_streams_and_events();
    void compute_launches();
    std::pair<size_t, int> fit(uint32_t block, uint32_t smem, uint32_t regs, const std::string& who);
    void enable_event_timing(bool all_gpu_ops);
    void setup_tasks();
    void start_workers();
    void stop_workers();
    void worker(int w);
    void late_thread(int w);
    void spawn(int t);
    void arrive_barrier();
    void exec_handoff(const Op& o, int64_t& a, int64_t& b);
    void build_dag(size_t g);
    RunResult run_once(bool instrumented);
    void host_func_times(uint32_t i, OpTimes& T);
    void calibrate_ref();
    void collect(RunResult& r, int64_t cupti_offset);
    void reset();
    void prefetch_to(void* p, uint64_t bytes, bool device, cudaStream_t s);
    void create_program_event(size_t i);
    // `op`: the op index, or -1 for a graph's node template (node `node` of graph `graph`).
    Launch make_launch(const Op& o, int op, int graph, int node, std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::pair<size_t, int>>& cache,
                       bool& padded);
    void capture_graphs();
    void issue_node(const Op& n, cudaStream_t s, Stamps* st, const Launch& L);
    void exec_alloc(const Op& o, uint32_t i, int64_t& a, int64_t& b);
    void free_leftovers();

    cudaStream_t stream_of(int s) const { return streams[s]; }
    bool per_thread(int s) const { return P.streams[s].kind == StreamKind::PerThread; }
    uint64_t ext_id(uint32_t op) const { return (uint64_t(token) << 32) | op; }
    CopyArgs copy_args(const Op& o, const ScratchPtrs& s) const;
    void exec_op(uint32_t i, int w);
    void issue(uint32_t i, cudaStream_t s, const CopyArgs& c);
    void run_thread(int w);
    void run_issuer(int w);
};

void Executor::choose_timing_before_cuda() {
    if (O.plain_child) {
        timing = Timing::Events;  // no timing events are created: every run is uninstrumented
        return;
    }
    if (O.timing == TimingRequest::Events) {
        timing = Timing::Events;
        M.timing_note = "events requested";
        return;
    }
    std::string why;
    if (cupti::start(O.cupti_lib, why)) {
        timing = Timing::Cupti;
        M.cupti_library = cupti::library_path();
        M.cupti_version = cupti::version();
        M.cupti_steady_timestamps = cupti::steady_timestamps();
        return;
    }
    if (O.timing == TimingRequest::Cupti) {
        std::fprintf(stderr, "hetsim-runner: --timing cupti: %s\n", why.c_str());
        std::_Exit(1);
    }
    timing = Timing::Events;
    M.timing_note = "CUPTI unavailable (" + why + "); fell back to events";
    M.warnings.push_back(M.timing_note);
}

void Executor::prefetch_to(void* p, uint64_t bytes, bool device, cudaStream_t s) {
    if (!p || !bytes || !concurrent_managed) return;
    cudaMemLocation loc{};
    loc.type = device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    loc.id = 0;
    CK(cudaMemPrefetchAsync(p, bytes, loc, 0, s));
}

void Executor::setup() {
    g_phase = int(Phase::Setup);
    tl_thread = "runner main";
    choose_timing_before_cuda();
    CK(cudaSetDevice(0));
    // options.sync: blocking = the host sleeps in synchronising calls; must precede the context.
    if (P.blocking_sync) CK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    CK(cudaFree(nullptr));  // creates the context
    CK(cudaGetDeviceProperties(&prop, 0));
    CK(cudaDriverGetVersion(&M.driver_version));
    CK(cudaRuntimeGetVersion(&M.runtime_version));
    M.gpu = prop.name;
    M.sm_count = prop.multiProcessorCount;
    M.cc_major = prop.major;
    M.cc_minor = prop.minor;
    int cma = 0;
    CK(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, 0));
    concurrent_managed = cma != 0;
    if (!concurrent_managed && PL.managed_total)
        M.warnings.push_back("the device lacks concurrentManagedAccess: managed residency is not reset between runs and prefetches will fail");

    // Budget: every device and managed byte must fit in free memory, less a 1 GiB margin.
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    uint64_t extra = 64 * kMiB;  // sink, uses table, events, module, rounding
    uint64_t need = PL.device_total + PL.managed_total + extra;
    if (need + kDeviceMargin > free_b)
        too_big("the program needs " + human_bytes(PL.device_total) + " of device memory (buffers, scratch" +
                (PL.alloc_device_peak ? ", " + human_bytes(PL.alloc_device_peak) + " for malloc/malloc_async ops at their peak" : std::string()) +
                ") and " + human_bytes(PL.managed_total) + " of managed memory; the GPU has " + human_bytes(total_b) + " in total, " +
                human_bytes(free_b) + " free, and the runner keeps " + human_bytes(kDeviceMargin) +
                " of it free (managed memory is never allocated beyond free device memory)");
    // Host memory: pinned + pageable (buffers, scratch, allocation ops) must fit in MemAvailable.
    if (uint64_t avail = mem_available_bytes()) {
        uint64_t host_need = PL.pinned_total + PL.pageable_total;
        if (host_need > avail / 10 * 9)
            too_big("the program needs " + human_bytes(PL.pinned_total) + " of pinned and " + human_bytes(PL.pageable_total) +
                    " of pageable host memory; the host has " + human_bytes(avail) + " available (MemAvailable) and the runner uses at most 90% of it");
    }
    int optin = prop.sharedMemPerBlockOptin ? int(prop.sharedMemPerBlockOptin) : 48 * 1024;
    if (PL.max_smem > uint32_t(optin))
        too_big("a kernel asks for " + std::to_string(PL.max_smem) + " B of shared memory per block; this GPU allows " + std::to_string(optin));
    CK(op_kernel_configure(optin));
    cudaFuncAttributes fa{};
    CK(op_kernel_attributes(&fa));
    kernel_regs = fa.numRegs;

    allocate();
    make_streams_and_events();
    compute_launches();
    // Host queues and flags (emptied before each run), the threads created by ops.
    queues_rt.reset(new QueueRt[std::max<size_t>(P.queues.size(), 1)]);
    for (size_t q = 0; q < P.queues.size(); ++q) queues_rt[q].capacity = P.queues[q].capacity;
    flags_rt.reset(new FlagRt[std::max<size_t>(P.flags.size(), 1)]);
    late.resize(PL.issuers);
    joined.assign(PL.issuers, 0);
    spawned.reset(new std::atomic<uint32_t>[PL.issuers]);
    finished.reset(new std::atomic<uint32_t>[PL.issuers]);
    for (int w = 0; w < PL.issuers; ++w) {
        spawned[w] = 0;
        finished[w] = 0;
    }
    capture_graphs();
    ev_timed.assign(P.ops.size(), 0);
    if (O.plain_child) {
    } else if (timing == Timing::Events) enable_event_timing(true);
    else enable_event_timing(false);  // prefetches: no CUPTI record kind
    setup_tasks();
    CK(cudaDeviceSynchronize());
    start_workers();
}

void Executor::allocate() {
    buf.assign(P.buffers.size(), nullptr);
    for (size_t i = 0; i < P.buffers.size(); ++i) {
        const Buffer& b = P.buffers[i];
        if (!b.bytes) continue;
        switch (b.kind) {
            case MemKind::Pinned: CK(cudaMallocHost(&buf[i], b.bytes)); break;
            case MemKind::Pageable:
                buf[i] = std::malloc(b.bytes);
                if (!buf[i]) too_big("cannot malloc " + human_bytes(b.bytes) + " for pageable buffer '" + b.name + "'");
                write_host_pages(buf[i], b.bytes);
                break;
            case MemKind::Device: CK(cudaMalloc(&buf[i], b.bytes)); break;
            case MemKind::Managed:
                CK(cudaMallocManaged(&buf[i], b.bytes, cudaMemAttachGlobal));
                write_host_pages(buf[i], b.bytes);  // populate on the host
                break;
        }
    }
    scr.resize(PL.issuers);
    for (int t = 0; t < PL.issuers; ++t) {
        const Scratch& s = PL.scratch[t];
        ScratchPtrs& p = scr[t];
        if (s.pinned) CK(cudaMallocHost(&p.pinned, s.pinned));
        if (s.pageable) {
            p.pageable = std::malloc(s.pageable);
            if (!p.pageable) too_big("cannot malloc " + human_bytes(s.pageable) + " of pageable scratch");
            write_host_pages(p.pageable, s.pageable);
        }
        if (s.dev_src) {
            CK(cudaMalloc(&p.dev_src, s.dev_src));
            CK(cudaMemset(p.dev_src, 0, s.dev_src));
        }
        if (s.dev_dst) CK(cudaMalloc(&p.dev_dst, s.dev_dst));
        if (s.managed) {
            CK(cudaMallocManaged(&p.managed, s.managed, cudaMemAttachGlobal));
            write_host_pages(p.managed, s.managed);
        }
    }
    {
        // Graph nodes' copies and memsets (captured once, so one set for all launches).
        const Scratch& s = PL.graph_scratch;
        tl_note = "graph node scratch";
        if (s.pinned) CK(cudaMallocHost(&gscr.pinned, s.pinned));
        if (s.pageable) {
            gscr.pageable = std::malloc(s.pageable);
            if (!gscr.pageable) too_big("cannot malloc " + human_bytes(s.pageable) + " of pageable scratch for graph nodes");
            write_host_pages(gscr.pageable, s.pageable);
        }
        if (s.dev_src) {
            CK(cudaMalloc(&gscr.dev_src, s.dev_src));
            CK(cudaMemset(gscr.dev_src, 0, s.dev_src));
        }
        if (s.dev_dst) CK(cudaMalloc(&gscr.dev_dst, s.dev_dst));
        if (s.managed) {
            CK(cudaMallocManaged(&gscr.managed, s.managed, cudaMemAttachGlobal));
            write_host_pages(gscr.managed, s.managed);
        }
        tl_note.clear();
    }
    // Allocation ops: live scratch per buffer; host_register ops get touched pageable scratch.
    dev_allocs.assign(P.buffers.size(), {});
    async_allocs.assign(P.buffers.size(), {});
    host_allocs.assign(P.buffers.size(), {});
    reg_scratch.assign(P.ops.size(), nullptr);
    for (uint32_t i = 0; i < P.ops.size(); ++i) {
        const Op& o = P.ops[i];
        has_allocs |= Program::is_allocation(o.kind);
        if (o.kind != OpKind::HostRegister || !o.bytes) continue;
        // Page-aligned, as cudaHostRegister wants.
        void* q = mmap(nullptr, o.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (q == MAP_FAILED) too_big("cannot map " + human_bytes(o.bytes) + " of pageable scratch for host_register op '" + P.op_name(i) + "'");
        write_host_pages(q, o.bytes);
        reg_scratch[i] = q;
    }
    if (PL.read_bytes) {
        CK(cudaMalloc(&read_buf, PL.read_bytes));
        CK(cudaMemset(read_buf, 0, PL.read_bytes));
    }
    CK(cudaMalloc(reinterpret_cast<void**>(&sink), kSinkWords * sizeof(unsigned long long)));
    CK(cudaMalloc(&tiny_dev, 4096));
    CK(cudaMallocHost(&tiny_host, 4096));
    std::vector<UseRegion> uses;
    for (const Op& o : P.ops)
        for (const uint32_t* u = P.uses_begin(o); u != P.uses_begin(o) + P.uses_count(o); ++u)
            uses.push_back(UseRegion{static_cast<const unsigned char*>(buf[*u]), P.buffers[*u].bytes});
    if (!uses.empty()) {
        CK(cudaMalloc(reinterpret_cast<void**>(&uses_dev), uses.size() * sizeof(UseRegion)));
        CK(cudaMemcpy(uses_dev, uses.data(), uses.size() * sizeof(UseRegion), cudaMemcpyHostToDevice));
    }
    size_t nflags = 2 + size_t(PL.host_flags);
    CK(cudaHostAlloc(reinterpret_cast<void**>(&flags), std::max<size_t>(nflags * sizeof(unsigned), 4096), cudaHostAllocMapped));
    std::memset(flags, 0, nflags * sizeof(unsigned));
    CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flags_dev), flags, 0));
}

void Executor::make_streams_and_events() {
    int least = 0, greatest = 0;
    CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    streams.assign(P.streams.size(), nullptr);
    for (size_t i = 0; i < P.streams.size(); ++i) {
        const Stream& s = P.streams[i];
        int prio = std::min(std::max(s.priority, greatest), least);
        if (prio != s.priority)
            M.warnings.push_back("stream '" + s.name + "': priority " + std::to_string(s.priority) + " clamped to " + std::to_string(prio));
        switch (s.kind) {
            case StreamKind::Legacy: streams[i] = cudaStreamLegacy; break;
            case StreamKind::PerThread: streams[i] = cudaStreamPerThread; break;
            case StreamKind::Blocking: CK(cudaStreamCreateWithPriority(&streams[i], cudaStreamDefault, prio)); break;
            case StreamKind::NonBlocking: CK(cudaStreamCreateWithPriority(&streams[i], cudaStreamNonBlocking, prio)); break;
        }
    }
    CK(cudaStreamCreateWithFlags(&calib, cudaStreamNonBlocking));
    prog_events.assign(P.events.size(), nullptr);
    for (size_t i = 0; i < prog_events.size(); ++i) create_program_event(i);
    CK(cudaEventCreate(&ev_ref));
    // Managed buffers start where the program says.
    for (size_t i = 0; i < P.buffers.size(); ++i)
        if (P.buffers[i].kind == MemKind::Managed) prefetch_to(buf[i], P.buffers[i].bytes, P.buffers[i].managed_on_device, calib);
    for (int t = 0; t < PL.issuers; ++t) prefetch_to(scr[t].managed, PL.scratch[t].managed, false, calib);
    CK(cudaStreamSynchronize(calib));
}

std::pair<size_t, int> Executor::fit(uint32_t block, uint32_t smem, uint32_t regs, const std::string& who) {
    auto occ = [&](size_t s) {
        int n = 0;
        CK(op_kernel_occupancy(&n, int(block), s));
        return n;
    };
    int occ0 = occ(smem);
    if (occ0 <= 0)
        too_big(who + ": a block of " + std::to_string(block) + " threads with " +
                std::to_string(smem) + " B of shared memory fits no SM of this GPU");
    int target = occ0;
    if (O.emulate_registers && int(regs) > kernel_regs) {
        uint32_t warps = (block + 31) / 32;
        uint32_t per_warp = ((regs * 32 + 255) / 256) * 256;
        if (uint64_t(per_warp) * warps > uint64_t(prop.regsPerBlock))
            too_big(who + ": " + std::to_string(block) + " threads x " + std::to_string(regs) +
                    " registers exceed the " + std::to_string(prop.regsPerBlock) + " registers a block may use");
        int by_regs = int((uint32_t(prop.regsPerMultiprocessor) / per_warp) / warps);
        target = std::max(1, std::min(occ0, by_regs));
    }
    if (target >= occ0) return {smem, occ0};
    // Pad the dynamic shared memory until no more than `target` blocks fit on an SM.
    size_t optin = prop.sharedMemPerBlockOptin;
    size_t lo = 1, hi = (optin - smem) / 128;  // in 128-byte steps; occ(smem + 128 * hi) is 1
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (occ(smem + 128 * mid) <= target) hi = mid;
        else lo = mid + 1;
    }
    size_t s = smem + 128 * lo;
    return {s, occ(s)};
}

Launch Executor::make_launch(const Op& o, int op, int graph, int node,
                             std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::pair<size_t, int>>& cache, bool& padded) {
    const hetsim::KernelShape& k = P.site(o).shape;
    const double flops = P.site(o).flops;
    const bool roofline = is_roofline(P, o);
    auto key = std::make_tuple(k.block, k.smem_per_block, k.regs_per_thread);
    auto it = cache.find(key);
    if (it == cache.end()) {
        std::string who = op >= 0 ? "op " + std::to_string(op) + " '" + P.op_name(uint32_t(op)) + "'"
                                  : "graph '" + P.graphs[graph].name + "' node " + std::to_string(node) + " '" + P.label(o) + "'";
        it = cache.emplace(key, fit(k.block, k.smem_per_block, k.regs_per_thread, who)).first;
    }
    Launch L;
    L.grid = k.grid;
    L.block = k.block;
    L.smem = it->second.first;
    L.blocks_per_sm = it->second.second;
    padded |= L.smem != k.smem_per_block;
    uint64_t per_wave = uint64_t(L.blocks_per_sm) * uint64_t(prop.multiProcessorCount);
    L.waves = (k.grid + per_wave - 1) / per_wave;
    double ns = roofline ? (flops > 0 ? flops / O.peak_flops * 1e9 : 0.0) : double(o.duration.ps()) / 1000.0;
    L.args.spin_ns = (unsigned long long)std::llround(ns / double(L.waves));
    if (roofline && o.bytes >= 16) {
        // Graph nodes read from the start of the buffer (their launches repeat anyway).
        L.args.src = static_cast<const char*>(read_buf) + (op < 0 || o.graph_node ? 0 : PL.read_offset[op]);
        L.args.n16 = o.bytes / 16;
    }
    L.args.sink = sink;
    return L;
}

void Executor::compute_launches() {
    launch.assign(P.ops.size(), Launch{});
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::pair<size_t, int>> cache;
    size_t use_off = 0;
    bool padded = false;
    for (uint32_t i = 0; i < P.ops.size(); ++i) {
        const Op& o = P.ops[i];
        size_t my_uses = use_off;
        use_off += P.uses_count(o);
        if (o.kind != OpKind::Kernel || o.graph_node) continue;
        Launch& L = launch[i];
        L = make_launch(o, int(i), -1, -1, cache, padded);
        if (P.uses_count(o)) {
            uint64_t per_wave = uint64_t(L.blocks_per_sm) * uint64_t(prop.multiProcessorCount);
            L.args.uses = uses_dev + my_uses;
            L.args.nuses = int(P.uses_count(o));
            L.args.touch_blocks = unsigned(std::min<uint64_t>(P.site(o).shape.grid, per_wave));
        }
    }
    node_launch.assign(P.graphs.size(), {});
    for (size_t g = 0; g < P.graphs.size(); ++g)
        for (size_t k = 0; k < P.graphs[g].nodes.size(); ++k) {
            const Op& n = P.graphs[g].nodes[k];
            node_launch[g].push_back(n.kind == OpKind::Kernel ? make_launch(n, -1, int(g), int(k), cache, padded) : Launch{});
        }
    if (!O.emulate_registers) M.register_emulation = "off (--no-register-emulation): residency follows shared_memory and block size only";
    else
        M.register_emulation = std::string("dynamic shared memory padded so that blocks per SM match `registers` (op kernel itself uses ") +
                               std::to_string(kernel_regs) + " registers)" + (padded ? "; some kernels were padded" : "; no kernel needed padding");
}

void Executor::create_program_event(size_t i) {
    unsigned flags = cudaEventDisableTiming | (P.events[i].blocking_sync ? cudaEventBlockingSync : 0u);
    CK(cudaEventCreateWithFlags(&prog_events[i], flags));
}

void CUDART_CB host_func_cb(void* data) {
    // A driver thread runs this: no CUDA calls here. Busy for spin_ns, stamps on the host clock.
    auto* st = static_cast<Stamps*>(data);
    uint32_t k = st->n.fetch_add(1);
    int64_t a = steady_ns(), until = a + st->spin_ns, b;
    while ((b = steady_ns()) < until) cpu_relax();
    if (k < st->start.size()) {
        st->start[k] = a;
        st->end[k] = b;
    }
    if (st->flag) st->flag->set();
}

void Executor::issue_node(const Op& n, cudaStream_t s, Stamps* st, const Launch& L) {
    switch (n.kind) {
        case OpKind::Kernel: CK(launch_op_kernel(L.grid, L.block, L.smem, s, L.args)); break;
        case OpKind::Memcpy: {
            CopyArgs c = copy_args(n, gscr);
            CK(cudaMemcpyAsync(c.dst, c.src, n.bytes, c.kind, s));
            break;
        }
        case OpKind::Memset: CK(cudaMemsetAsync(gscr.dev_dst ? gscr.dev_dst : tiny_dev, 0, n.bytes, s)); break;
        case OpKind::HostFunc: CK(cudaLaunchHostFunc(s, host_func_cb, st)); break;
        default: runtime_fail("internal: graph node of an unsupported kind", __FILE__, __LINE__);
    }
}

void Executor::capture_graphs() {
    op_stamps.clear();
    op_stamps.resize(P.ops.size());
    for (uint32_t i = 0; i < P.ops.size(); ++i) {
        const Op& o = P.ops[i];
        if (o.kind == OpKind::HostFunc && !o.graph_node) {
            op_stamps[i].reset(new Stamps);
            op_stamps[i]->spin_ns = o.duration.ps() / 1000;
            if (o.flag >= 0) op_stamps[i]->flag = &flags_rt[o.flag];
            op_stamps[i]->start.assign(1, 0);
            op_stamps[i]->end.assign(1, 0);
        }
    }
    const size_t ng = P.graphs.size();
    graphs.assign(ng, nullptr);
    execs.reset(new std::atomic<cudaGraphExec_t>[std::max<size_t>(P.execs.size(), 1)]);
    for (size_t e = 0; e < P.execs.size(); ++e) execs[e].store(nullptr);
    launch_count.reset(new std::atomic<uint32_t>[std::max<size_t>(ng, 1)]);
    launch_seq.assign(P.ops.size(), 0);
    node_stamps.clear();
    node_stamps.resize(ng);
    node_rank.assign(ng, {});
    for (size_t g = 0; g < ng; ++g) {
        launch_count[g].store(0);
        const Graph& G = P.graphs[g];
        int rank = 0;
        for (const Op& n : G.nodes) {
            node_stamps[g].emplace_back();
            if (n.kind == OpKind::HostFunc) {
                node_stamps[g].back().reset(new Stamps);
                Stamps& st = *node_stamps[g].back();
                st.spin_ns = n.duration.ps() / 1000;
                if (n.flag >= 0) st.flag = &flags_rt[n.flag];
                size_t launches = size_t(std::max(1, PL.launches_of_graph[g]));
                st.start.assign(launches, 0);
                st.end.assign(launches, 0);
                node_rank[g].push_back(-1);
            } else {
                node_rank[g].push_back(rank++);
            }
        }
        if (!G.chain()) {
            build_dag(g);
            continue;
        }
        // Capture from a stream of its own (untimed): the nodes form a chain, in order.
        cudaStream_t cs = nullptr;
        tl_note = "capturing graph '" + G.name + "'";
        CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
        CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
        for (size_t k = 0; k < G.nodes.size(); ++k) {
            tl_note = "capturing graph '" + G.name + "' node " + std::to_string(k) + " (" + to_string(G.nodes[k].kind) + ")";
            issue_node(G.nodes[k], cs, node_stamps[g][k].get(), node_launch[g][k]);
        }
        tl_note = "capturing graph '" + G.name + "'";
        CK(cudaStreamEndCapture(cs, &graphs[g]));
        CK(cudaStreamDestroy(cs));
        tl_note.clear();
    }
    if (ng && timing == Timing::Events && !O.plain_child)
        M.warnings.push_back("graph nodes get GPU times from CUPTI only: with event timing, only their host_func nodes are timed");
    bool dags = false;
    for (const Graph& G : P.graphs) dags |= !G.chain();
    if (dags && timing == Timing::Cupti && !cupti::graph_node_ids())
        M.warnings.push_back("this libcupti cannot tell graph nodes apart (no cuptiGetGraphNodeId or GRAPHNODE_CLONED callback): "
                             "nodes of graphs with dependencies have no GPU times");
}

// A graph whose nodes have dependencies (Graph::after): added node by node with explicit
// dependency arrays, in an order where each node's dependencies come first.
void Executor::build_dag(size_t g) {
    const Graph& G = P.graphs[g];
    const size_t n = G.nodes.size();
    tl_note = "building graph '" + G.name + "'";
    CK(cudaGraphCreate(&graphs[g], 0));
    dag_nodes.resize(P.graphs.size());
    dag_ids.resize(P.graphs.size());
    dag_nodes[g].assign(n, nullptr);
    dag_ids[g].assign(n, 0);
    std::vector<char> added(n, 0);
    std::vector<cudaGraphNode_t> deps;
    for (size_t done = 0; done < n;) {
        const size_t before = done;
        for (size_t k = 0; k < n; ++k) {
            if (added[k]) continue;
            bool ready = true;
            deps.clear();
            for (uint32_t a = G.after_index[k]; a < G.after_index[k + 1]; ++a) {
                ready &= added[G.after[a]] != 0;
                deps.push_back(dag_nodes[g][G.after[a]]);
            }
            if (!ready) continue;
            const Op& nd = G.nodes[k];
            tl_note = "building graph '" + G.name + "' node " + std::to_string(k) + " (" + to_string(nd.kind) + ")";
            cudaGraphNode_t* out = &dag_nodes[g][k];
            const cudaGraphNode_t* dp = deps.empty() ? nullptr : deps.data();
            switch (nd.kind) {
                case OpKind::Kernel: {
                    const Launch& L = node_launch[g][k];
                    CK(add_op_kernel_node(out, graphs[g], dp, deps.size(), L.grid, L.block, L.smem, L.args));
                    break;
                }
                case OpKind::Memcpy: {
                    CopyArgs c = copy_args(nd, gscr);
                    if (nd.bytes) CK(cudaGraphAddMemcpyNode1D(out, graphs[g], dp, deps.size(), c.dst, c.src, nd.bytes, c.kind));
                    else CK(cudaGraphAddEmptyNode(out, graphs[g], dp, deps.size()));
                    break;
                }
                case OpKind::Memset: {
                    if (!nd.bytes) {
                        CK(cudaGraphAddEmptyNode(out, graphs[g], dp, deps.size()));
                        break;
                    }
                    cudaMemsetParams m{};
                    m.dst = gscr.dev_dst ? gscr.dev_dst : tiny_dev;
                    m.value = 0;
                    m.elementSize = 1;
                    m.width = nd.bytes;
                    m.height = 1;
                    m.pitch = 0;
                    CK(cudaGraphAddMemsetNode(out, graphs[g], dp, deps.size(), &m));
                    break;
                }
                case OpKind::HostFunc: {
                    cudaHostNodeParams h{};
                    h.fn = host_func_cb;
                    h.userData = node_stamps[g][k].get();
                    CK(cudaGraphAddHostNode(out, graphs[g], dp, deps.size(), &h));
                    break;
                }
                default: runtime_fail("internal: graph node of an unsupported kind", __FILE__, __LINE__);
            }
            dag_ids[g][k] = cupti::node_id(dag_nodes[g][k]);
            added[k] = 1;
            ++done;
        }
        if (done == before) runtime_fail(("graph '" + G.name + "': its node dependencies form a cycle").c_str(), __FILE__, __LINE__);
    }
    tl_note.clear();
}

// Allocation ops: the call is timed between a and b; bookkeeping stays outside.
void Executor::exec_alloc(const Op& o, uint32_t i, int64_t& a, int64_t& b) {
    cudaStream_t s = o.stream >= 0 ? stream_of(o.stream) : cudaStreamLegacy;
    auto pop = [&](std::vector<std::vector<void*>>& stacks, const char* what) -> void* {
        std::lock_guard<std::mutex> lock(alloc_mu);
        auto& v = stacks[o.buffer];
        if (v.empty())
            runtime_fail(("the program frees buffer '" + P.buffers[o.buffer].name + "' but no " + what + " of it is live in this run").c_str(), __FILE__, __LINE__);
        void* q = v.back();
        v.pop_back();
        return q;
    };
    auto push = [&](std::vector<std::vector<void*>>& stacks, void* q) {
        std::lock_guard<std::mutex> lock(alloc_mu);
        stacks[o.buffer].push_back(q);
    };
    void* q = nullptr;
    switch (o.kind) {
        case OpKind::Malloc:
            a = steady_ns();
            CK(cudaMalloc(&q, o.bytes));
            b = steady_ns();
            push(dev_allocs, q);
            break;
        case OpKind::Free:
            q = pop(dev_allocs, "malloc");
            a = steady_ns();
            CK(cudaFree(q));
            b = steady_ns();
            break;
        case OpKind::MallocHost:
            a = steady_ns();
            CK(cudaMallocHost(&q, o.bytes));
            b = steady_ns();
            push(host_allocs, q);
            break;
        case OpKind::FreeHost:
            q = pop(host_allocs, "malloc_host");
            a = steady_ns();
            CK(cudaFreeHost(q));
            b = steady_ns();
            break;
        case OpKind::HostRegister:
            q = reg_scratch[i];
            a = steady_ns();
            if (q) CK(cudaHostRegister(q, o.bytes, cudaHostRegisterDefault));
            b = steady_ns();
            if (q) {
                std::lock_guard<std::mutex> lock(alloc_mu);
                registered.push_back(q);
            }
            break;
        case OpKind::MallocAsync:
            a = steady_ns();
            CK(cudaMallocAsync(&q, o.bytes, s));
            b = steady_ns();
            push(async_allocs, q);
            break;
        case OpKind::FreeAsync:
            q = pop(async_allocs, "malloc_async");
            a = steady_ns();
            CK(cudaFreeAsync(q, s));
            b = steady_ns();
            break;
        default: break;
    }
}

void Executor::free_leftovers() {
    if (!has_allocs) return;
    // After the run, untimed: what the program left allocated or registered.
    tl_note = "freeing what allocation ops left";
    for (auto& v : dev_allocs) {
        for (void* q : v) CK(cudaFree(q));
        v.clear();
    }
    for (auto& v : async_allocs) {
        for (void* q : v) CK(cudaFreeAsync(q, calib));
        v.clear();
    }
    CK(cudaStreamSynchronize(calib));
    for (auto& v : host_allocs) {
        for (void* q : v) CK(cudaFreeHost(q));
        v.clear();
    }
    for (void* q : registered) CK(cudaHostUnregister(q));
    registered.clear();
    // Give freed stream-ordered memory back, so that every run starts from the same pool state.
    cudaMemPool_t pool = nullptr;
    CK(cudaDeviceGetDefaultMemPool(&pool, 0));
    CK(cudaMemPoolTrimTo(pool, 0));
    tl_note.clear();
}

void Executor::enable_event_timing(bool all_gpu_ops) {
    if (ev_start.empty()) {
        ev_start.assign(P.ops.size(), nullptr);
        ev_end.assign(P.ops.size(), nullptr);
    }
    for (uint32_t i = 0; i < P.ops.size(); ++i) {
        const Op& o = P.ops[i];
        const GpuTiming t = gpu_timing(o.kind);
        if (t == GpuTiming::None || o.graph_node || t == GpuTiming::Callback) continue;  // host funcs: callback stamps
        if (!all_gpu_ops && o.kind != OpKind::Prefetch) continue;
        if (t != GpuTiming::Marker && !ev_start[i]) CK(cudaEventCreate(&ev_start[i]));
        if (!ev_end[i]) CK(cudaEventCreate(&ev_end[i]));
        ev_timed[i] = 1;
    }
}

void Executor::setup_tasks() {
    if (!P.tasks_form) return;
    const size_t n = P.ops.size();
    host_done.reset(new std::atomic<uint32_t>[n]);
    issued.reset(new std::atomic<uint32_t>[n]);
    for (size_t i = 0; i < n; ++i) {
        host_done[i] = 0;
        issued[i] = 0;
    }
    done_ev.assign(n, nullptr);
    for (size_t i = 0; i < n; ++i)
        if (PL.needs_done_event[i]) CK(cudaEventCreateWithFlags(&done_ev[i], cudaEventDisableTiming));
    if (PL.host_flags) {
        // GPU tasks that wait for host tasks: cuStreamWaitValue32 on a host-written flag, or a
        // one-thread poll kernel where stream memory operations are not available.
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
            q == cudaDriverEntryPointSuccess && fn) {
            wait_value = reinterpret_cast<WaitValueFn>(fn);
            flags[0] = 1;
            CUresult r = wait_value(reinterpret_cast<CUstream>(calib), reinterpret_cast<CUdeviceptr>(flags_dev), 1, CU_STREAM_WAIT_VALUE_GEQ);
            cudaError_t e = cudaStreamSynchronize(calib);
            flags[0] = 0;
            if (r != CUDA_SUCCESS || e != cudaSuccess) {
                wait_value = nullptr;
                (void)cudaGetLastError();
            }
        } else {
            (void)cudaGetLastError();
        }
        M.wait_value = wait_value != nullptr;
        if (!wait_value)
            M.warnings.push_back("cuStreamWaitValue32 unavailable: GPU tasks after host tasks wait in a one-thread poll kernel (it holds one block slot)");
    }
}

void Executor::start_workers() {
    thread_end.assign(PL.issuers, 0);
    g_progress.reset(new std::atomic<int64_t>[std::max(PL.issuers, 1)]);
    g_progress_names.clear();
    for (int w = 0; w < PL.issuers; ++w) {
        g_progress[w] = -1;
        g_progress_names.push_back(w == PL.issuer_thread ? std::string("gpu-task issuer") : P.threads[w].name);
    }
    g_nprogress.store(PL.issuers, std::memory_order_release);
    for (int w = 0; w < PL.issuers; ++w)
        if (!PL.late[w]) workers.emplace_back(&Executor::worker, this, w);
    std::unique_lock<std::mutex> lock(mu);
    cv_done.wait(lock, [&] { return setup_done == PL.persistent; });
}

void Executor::stop_workers() {
    {
        std::lock_guard<std::mutex> lock(mu);
        quit = true;
    }
    cv_start.notify_all();
    for (auto& t : workers) t.join();
    workers.clear();
}

void Executor::worker(int w) {
    tl_thread = g_progress_names[w].c_str();
    CK(cudaSetDevice(0));
    CK(cudaStreamSynchronize(cudaStreamPerThread));  // creates this thread's per-thread stream now
    int seen = 0;
    {
        std::lock_guard<std::mutex> lock(mu);
        ++setup_done;
    }
    cv_done.notify_all();
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mu);
            cv_start.wait(lock, [&] { return quit || gen != seen; });
            if (quit) return;
            seen = gen;
        }
        g_progress[w] = -1;
        ready.fetch_add(1);
        while (go.load(std::memory_order_acquire) != seen) cpu_relax();
        if (w == PL.issuer_thread) run_issuer(w);
        else run_thread(w);
        tl_op = -1;
        finished[w].store(token, std::memory_order_release);
        CK(cudaDeviceSynchronize());
        thread_end[w] = steady_ns();
        g_progress[w] = -2;
        if (done_count.fetch_add(1) + 1 == PL.issuers) {
            std::lock_guard<std::mutex> lock(mu);
            cv_done.notify_all();
        }
    }
}

CopyArgs Executor::copy_args(const Op& o, const ScratchPtrs& s) const {
    CopyArgs c;
    // A copy that names its host buffer uses it: an upload from one buffer after a download into
    // another is not a re-read of the bytes the download just wrote (a pageable H2D from memory a
    // pageable D2H has just filled costs ~10 us more at 64 KiB: machine start 2026-12-03t/v).
    // Anonymous copies share their thread's scratch, one per host memory kind.
    void* host = nullptr;
    if (o.buffer >= 0 && o.host_mem != MemKind::Device) host = buf[o.buffer];
    else if (o.host_mem == MemKind::Pinned) host = s.pinned;
    else if (o.host_mem == MemKind::Pageable) host = s.pageable;
    else if (o.host_mem == MemKind::Managed) host = s.managed;
    switch (o.dir) {
        case CopyDir::H2D:
            c.src = host;
            c.dst = s.dev_dst;
            c.kind = o.host_mem == MemKind::Managed ? cudaMemcpyDefault : cudaMemcpyHostToDevice;
            break;
        case CopyDir::D2H:
            c.src = s.dev_src;
            c.dst = host;
            c.kind = o.host_mem == MemKind::Managed ? cudaMemcpyDefault : cudaMemcpyDeviceToHost;
            break;
        case CopyDir::D2D:
            c.src = s.dev_src;
            c.dst = s.dev_dst;
            c.kind = cudaMemcpyDeviceToDevice;
            break;
    }
    // Zero-byte copies still make their call; give them valid pointers.
    bool host_dst = o.dir == CopyDir::D2H, host_src = o.dir == CopyDir::H2D;
    if (!c.src) c.src = host_src ? tiny_host : tiny_dev;
    if (!c.dst) c.dst = host_dst ? tiny_host : tiny_dev;
    return c;
}

void Executor::issue(uint32_t i, cudaStream_t s, const CopyArgs& c) {
    const Op& o = P.ops[i];
    switch (o.kind) {
        case OpKind::Kernel: {
            const Launch& L = launch[i];
            CK(launch_op_kernel(L.grid, L.block, L.smem, s, L.args));
            break;
        }
        case OpKind::Memcpy:
            if (const hetsim::Site& st = P.site(o); st.rows) {  // pitched: cudaMemcpy2D(Async)
                const size_t width = o.bytes / st.rows;
                if (!o.sync) CK(cudaMemcpy2DAsync(c.dst, st.dpitch, c.src, st.spitch, width, st.rows, c.kind, s));
                else CK(cudaMemcpy2D(c.dst, st.dpitch, c.src, st.spitch, width, st.rows, c.kind));
            } else if (!o.sync) CK(cudaMemcpyAsync(c.dst, c.src, o.bytes, c.kind, s));
            else if (per_thread(o.stream)) CK(cudaMemcpy_ptds(c.dst, c.src, o.bytes, c.kind));
            else CK(cudaMemcpy(c.dst, c.src, o.bytes, c.kind));
            break;
        case OpKind::Memset:
            if (!o.sync) CK(cudaMemsetAsync(c.dst, 0, o.bytes, s));
            else if (per_thread(o.stream)) CK(cudaMemset_ptds(c.dst, 0, o.bytes));
            else CK(cudaMemset(c.dst, 0, o.bytes));
            break;
        case OpKind::EventRecord: CK(cudaEventRecord(prog_events[o.event], s)); break;
        case OpKind::StreamWaitEvent: CK(cudaStreamWaitEvent(s, prog_events[o.event], 0)); break;
        case OpKind::EventSync: CK(cudaEventSynchronize(prog_events[o.event])); break;
        case OpKind::StreamSync: CK(cudaStreamSynchronize(s)); break;
        case OpKind::DeviceSync: CK(cudaDeviceSynchronize()); break;
        case OpKind::Prefetch: {
            cudaMemLocation loc{};
            loc.type = o.to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
            loc.id = 0;
            CK(cudaMemPrefetchAsync(buf[o.buffer], o.bytes, loc, 0, s));
            break;
        }
        case OpKind::HostFunc: CK(cudaLaunchHostFunc(s, host_func_cb, op_stamps[i].get())); break;
        case OpKind::GraphInstantiate: {
            cudaGraphExec_t e = nullptr;
            CK(cudaGraphInstantiate(&e, graphs[o.graph], 0));
            execs[o.exec].store(e);  // executable o.exec: this op's own (each op runs once a run)
            break;
        }
        case OpKind::GraphLaunch: {
            // The executable the program names (the frontend's rule: the launching thread's latest
            // graph_instantiate, else the one on another thread), not whichever was made last.
            cudaGraphExec_t e = execs[o.exec].load();
            if (!e)
                runtime_fail(("graph '" + P.graphs[o.graph].name + "' is launched (executable " + std::to_string(o.exec) + ") before its graph_instantiate '" +
                              P.op_name(P.execs[o.exec]) + "' ran in this run").c_str(), __FILE__, __LINE__);
            launch_seq[i] = launch_count[o.graph].fetch_add(1);
            CK(cudaGraphLaunch(e, s));
            break;
        }
        default: break;  // host work, allocation ops (exec_alloc)
    }
}

void Executor::exec_op(uint32_t i, int w) {
    const Op& o = P.ops[i];
    tl_op = int(i);
    g_progress[w].store(i, std::memory_order_relaxed);
    // Host stamps in every run (the two steady_clock reads around a call are taken anyway); GPU
    // timing (events, CUPTI ids) only in instrumented runs.
    OpTimes& T = cur->ops[i];
    if (o.kind == OpKind::HostWork) {
        int64_t a = steady_ns();
        for (const uint32_t* u = P.uses_begin(o); u != P.uses_begin(o) + P.uses_count(o); ++u) touch_host_pages(buf[*u], P.buffers[*u].bytes);
        int64_t until = steady_ns() + o.duration.ps() / 1000;
        int64_t b;
        while ((b = steady_ns()) < until) {
        }
        T.host_start = double(a - t0);
        T.host_end = double(b - t0);
        return;
    }
    if (o.graph_node) {
        // Executed by its graph_launch: no host call; host times = the launch call's end.
        const int launch_op = PL.launch_of[i];
        if (!std::isnan(cur->ops[launch_op].host_end)) T.host_start = T.host_end = cur->ops[launch_op].host_end;
        return;
    }
    if (Program::is_allocation(o.kind) || o.kind == OpKind::QueuePut || o.kind == OpKind::QueueGet || o.kind == OpKind::HostWait ||
        o.kind == OpKind::Join || o.kind == OpKind::Barrier) {
        int64_t a = 0, b = 0;
        if (Program::is_allocation(o.kind)) exec_alloc(o, i, a, b);
        else exec_handoff(o, a, b);
        T.host_start = double(a - t0);
        T.host_end = double(b - t0);
        return;
    }
    cudaStream_t s = o.stream >= 0 ? stream_of(o.stream) : cudaStreamLegacy;
    CopyArgs c;
    if (o.kind == OpKind::Memcpy) c = copy_args(o, scr[w]);
    else if (o.kind == OpKind::Memset) c.dst = scr[w].dev_dst ? scr[w].dev_dst : tiny_dev;
    const bool ev = instr && ev_timed[i];
    const bool cu = instr && timing == Timing::Cupti &&
                    (o.kind == OpKind::Kernel || o.kind == OpKind::Memcpy || o.kind == OpKind::Memset || o.kind == OpKind::GraphLaunch);
    if (ev && ev_start[i]) CK(cudaEventRecord(ev_start[i], s));
    if (cu) cupti::push(ext_id(i));
    int64_t a = steady_ns();
    issue(i, s, c);
    int64_t b = steady_ns();
    if (cu) cupti::pop();
    if (ev) CK(cudaEventRecord(ev_end[i], s));
    if (w == PL.issuer_thread) {
        T.issue_start = double(a - t0);
        T.issue_end = double(b - t0);
    } else {
        T.host_start = double(a - t0);
        T.host_end = double(b - t0);
    }
}

// Host queues, flags, joins and the barrier between steady-state iterations: the host phase is
// the whole call, waiting included.
void Executor::exec_handoff(const Op& o, int64_t& a, int64_t& b) {
    a = steady_ns();
    switch (o.kind) {
        case OpKind::QueuePut: queues_rt[o.queue].put(); break;
        case OpKind::QueueGet: queues_rt[o.queue].get(); break;
        case OpKind::HostWait: flags_rt[o.flag].wait(); break;
        case OpKind::Join: {
            const int t = o.target;
            if (PL.late[t]) {
                // Created by an op of this run (perhaps not yet): then std::thread::join.
                while (spawned[t].load(std::memory_order_acquire) != token) std::this_thread::yield();
                late[t].join();
                joined[t] = 1;
            } else {
                // A thread of time zero (a runner worker): until it has run its ops.
                while (finished[t].load(std::memory_order_acquire) != token) std::this_thread::yield();
            }
            break;
        }
        case OpKind::Barrier:
            CK(cudaDeviceSynchronize());
            arrive_barrier();
            break;
        default: break;
    }
    b = steady_ns();
}

// Every program thread meets here; the last to arrive releases them all (a spinning barrier, as
// the start of a run is). The release of the last one begins the measured iteration.
void Executor::arrive_barrier() {
    const uint32_t g = bar_gen.load(std::memory_order_acquire);
    if (bar_arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == uint32_t(P.threads.size())) {
        bar_arrived.store(0, std::memory_order_relaxed);
        const int64_t release = steady_ns();
        if (++bar_passed == P.warmup) measured_from = release;
        bar_gen.store(g + 1, std::memory_order_release);
        return;
    }
    while (bar_gen.load(std::memory_order_acquire) == g) cpu_relax();
}

// A thread created by an op (start_after), right after that op's host call returned.
void Executor::spawn(int t) {
    late[t] = std::thread(&Executor::late_thread, this, t);
    spawned[t].store(token, std::memory_order_release);
}

void Executor::late_thread(int w) {
    tl_thread = g_progress_names[w].c_str();
    run_thread(w);
    tl_op = -1;
    thread_end[w] = steady_ns();
    finished[w].store(token, std::memory_order_release);
    g_progress[w] = -2;
    if (done_count.fetch_add(1) + 1 == PL.issuers) {
        std::lock_guard<std::mutex> lock(mu);
        cv_done.notify_all();
    }
}

void Executor::run_thread(int w) {
    const bool tasks = P.tasks_form;
    for (uint32_t i : PL.issuer_ops[w]) {
        if (tasks) {
            tl_op = int(i);
            g_progress[w].store(i, std::memory_order_relaxed);
            for (const uint32_t* ap = P.after_begin(i); ap != P.after_end(i); ++ap) {
                const uint32_t a = *ap;
                if (P.ops[a].thread >= 0) {
                    while (host_done[a].load(std::memory_order_acquire) != token) cpu_relax();
                } else {
                    while (issued[a].load(std::memory_order_acquire) != token) cpu_relax();
                    CK(cudaEventSynchronize(done_ev[a]));
                }
            }
        }
        exec_op(i, w);
        for (int t : PL.started_by[i]) spawn(t);
        if (tasks) {
            host_done[i].store(token, std::memory_order_release);
            int slot = PL.host_flag_slot[i];
            if (slot >= 0) __atomic_store_n(&flags[2 + slot], token, __ATOMIC_SEQ_CST);
        }
    }
}

void Executor::run_issuer(int w) {
    for (uint32_t g : PL.issuer_ops[w]) {
        const Op& o = P.ops[g];
        cudaStream_t s = stream_of(o.stream);
        tl_op = int(g);
        for (const uint32_t* ap = P.after_begin(g); ap != P.after_end(g); ++ap) {
            const uint32_t a = *ap;
            const Op& dep = P.ops[a];
            if (dep.thread < 0) {
                if (dep.stream != o.stream) CK(cudaStreamWaitEvent(s, done_ev[a], 0));
            } else {
                int slot = PL.host_flag_slot[a];
                if (wait_value) {
                    CUresult r = wait_value(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(flags_dev + 2 + slot), token,
                                            CU_STREAM_WAIT_VALUE_GEQ);
                    if (r != CUDA_SUCCESS) runtime_fail(("cuStreamWaitValue32 failed with CUresult " + std::to_string(int(r))).c_str(), __FILE__, __LINE__);
                } else {
                    unsigned long long timeout = (unsigned long long)(O.time_limit_s > 0 ? O.time_limit_s * 1e9 : 3.6e12);
                    CK(launch_poll_kernel(s, flags_dev + 2 + slot, token, nullptr, timeout));
                }
            }
        }
        exec_op(g, w);
        if (PL.needs_done_event[g]) CK(cudaEventRecord(done_ev[g], s));
        issued[g].store(token, std::memory_order_release);
    }
}

void Executor::calibrate_ref() {
    // The reference timing event completes when a poll kernel sees a flag the host sets at a known
    // steady_clock time; the kernel's acknowledgement bounds the delay (half the round trip).
    for (int attempt = 0; attempt < 5; ++attempt) {
        unsigned tok = ++calib_token;
        CK(launch_poll_kernel(calib, flags_dev, tok, flags_dev + 1, 2000000000ull));
        CK(cudaEventRecord(ev_ref, calib));
        int64_t until = steady_ns() + 300000;  // let the kernel start polling
        while (steady_ns() < until) cpu_relax();
        int64_t t1 = steady_ns();
        __atomic_store_n(&flags[0], tok, __ATOMIC_SEQ_CST);
        int64_t t2;
        while (__atomic_load_n(&flags[1], __ATOMIC_ACQUIRE) != tok) {
            if (steady_ns() - t1 > 3000000000ll) runtime_fail("clock calibration: the poll kernel never acknowledged", __FILE__, __LINE__);
            cpu_relax();
        }
        t2 = steady_ns();
        CK(cudaEventSynchronize(ev_ref));
        ref_rtt_ns = t2 - t1;
        ref_abs_ns = double(t1) + double(t2 - t1) / 2.0;
        if (ref_rtt_ns < 20000) break;
    }
}

RunResult Executor::run_once(bool instrumented) {
    RunResult r;
    instr = instrumented;
    token = ++calib_token;  // strictly increasing across runs; also names this run's CUPTI ids
    cur = &r;
    r.ops.assign(P.ops.size(), OpTimes{});
    bool any_ev = false;
    for (char c : ev_timed) any_ev |= c != 0;
    if (instr && any_ev) calibrate_ref();
    int64_t off_before = 0, off_after = 0, win = 0;
    if (instr && timing == Timing::Cupti) off_before = cupti::clock_offset(&win);
    ready = 0;
    done_count = 0;
    bar_arrived = 0;
    bar_passed = 0;
    measured_from = 0;
    {
        std::lock_guard<std::mutex> lock(mu);
        ++gen;
    }
    cv_start.notify_all();
    for (int w = 0; w < PL.issuers; ++w)
        if (PL.late[w]) g_progress[w] = -1;
    while (ready.load() != PL.persistent) cpu_relax();
    t0 = steady_ns();
    go.store(gen, std::memory_order_release);
    {
        std::unique_lock<std::mutex> lock(mu);
        cv_done.wait(lock, [&] { return done_count.load() == PL.issuers; });
    }
    // Threads created by ops that no join op joined.
    for (int w = 0; w < PL.issuers; ++w) {
        if (PL.late[w] && !joined[w] && late[w].joinable()) late[w].join();
        joined[w] = 0;
    }
    CK(cudaDeviceSynchronize());
    int64_t last = t0;
    for (int64_t e : thread_end) last = std::max(last, e);
    if (P.warmup) {
        if (bar_passed != P.warmup)
            runtime_fail(("the run passed " + std::to_string(bar_passed) + " barriers, the program has warmup " + std::to_string(P.warmup)).c_str(),
                         __FILE__, __LINE__);
        r.measured_from_ns = double(measured_from - t0);
    }
    r.end_to_end_sync_ns = double(last - t0) - r.measured_from_ns;
    if (instr) {
        int saved = g_phase.load();
        g_phase = int(Phase::Collect);
        if (timing == Timing::Cupti) {
            int64_t win2 = 0;
            off_after = cupti::clock_offset(&win2);
            M.clock_uncertainty_ns = double(std::max(win, win2)) / 2.0;
        }
        collect(r, (off_before + off_after) / 2);
        g_phase = saved;
    }
    else {
        for (uint32_t i = 0; i < P.ops.size(); ++i)
            if (P.ops[i].kind == OpKind::HostFunc) host_func_times(i, r.ops[i]);
    }
    reset();
    cur = nullptr;
    return r;
}

// A host function's GPU phase: its callback's own host-clock stamps (every run has them).
void Executor::host_func_times(uint32_t i, OpTimes& T) {
    const Op& o = P.ops[i];
    const Stamps* st = o.graph_node ? node_stamps[PL.graph_of_node(P, i)][PL.node_of[i]].get() : op_stamps[i].get();
    uint32_t k = o.graph_node ? launch_seq[PL.launch_of[i]] : 0;
    if (st && k < st->n.load() && k < st->start.size()) {
        T.gpu_start = double(st->start[k] - t0);
        T.gpu_end = double(st->end[k] - t0);
    }
}

void Executor::collect(RunResult& r, int64_t cupti_offset) {
    std::unordered_map<uint64_t, cupti::Span> spans;
    if (timing == Timing::Cupti) cupti::collect(spans);
    size_t missing = 0, expected = 0;
    for (uint32_t i = 0; i < P.ops.size(); ++i) {
        const Op& o = P.ops[i];
        OpTimes& T = r.ops[i];
        const double call_end = o.thread >= 0 ? T.host_end : T.issue_end;
        if (o.kind == OpKind::HostFunc) {
            host_func_times(i, T);
            continue;
        }
        if (o.graph_node) {
            if (timing != Timing::Cupti) continue;
            ++expected;
            auto it = spans.find(ext_id(uint32_t(PL.launch_of[i])));
            const int g = PL.graph_of_node(P, i);
            if (!P.graphs[g].chain()) {
                // Nodes with dependencies: the record whose node id is this node's.
                const uint64_t id = dag_ids[g][PL.node_of[i]];
                size_t found = SIZE_MAX;
                if (it != spans.end() && id)
                    for (size_t k = 0; k < it->second.nodes.size() && found == SIZE_MAX; ++k)
                        if (it->second.nodes[k] == id) found = k;
                if (found == SIZE_MAX) {
                    ++missing;
                    continue;
                }
                T.gpu_start = double(int64_t(it->second.parts[found].first) - cupti_offset - t0);
                T.gpu_end = double(int64_t(it->second.parts[found].second) - cupti_offset - t0);
                continue;
            }
            int rank = node_rank[g][PL.node_of[i]];
            if (it == spans.end() || rank < 0) {
                ++missing;
                continue;
            }
            auto& parts = it->second.parts;
            std::sort(parts.begin(), parts.end());  // the nodes form a chain: start order = node order
            if (size_t(rank) >= parts.size()) {
                ++missing;
                continue;
            }
            T.gpu_start = double(int64_t(parts[rank].first) - cupti_offset - t0);
            T.gpu_end = double(int64_t(parts[rank].second) - cupti_offset - t0);
            continue;
        }
        if (ev_timed[i]) {
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, ev_ref, ev_end[i]));
            T.gpu_end = ref_abs_ns + double(ms) * 1e6 - double(t0);
            if (ev_start[i]) {
                CK(cudaEventElapsedTime(&ms, ev_ref, ev_start[i]));
                T.gpu_start = ref_abs_ns + double(ms) * 1e6 - double(t0);
            } else {
                T.gpu_start = T.gpu_end;
            }
            // A blocking call returns only after its GPU work: the end event, recorded after the
            // return, is late by the wake-up; the return bounds the end.
            bool blocking = sync_call_waits(o) || (o.kind == OpKind::Memcpy && o.host_mem == MemKind::Pageable && o.dir == CopyDir::D2H);
            if (blocking && !std::isnan(call_end)) {
                T.gpu_end = std::min(T.gpu_end, call_end);
                T.gpu_start = std::min(T.gpu_start, T.gpu_end);
            }
        } else if (timing == Timing::Cupti && (o.kind == OpKind::Kernel || o.kind == OpKind::Memcpy || o.kind == OpKind::Memset)) {
            ++expected;
            auto it = spans.find(ext_id(i));
            if (it == spans.end()) {
                ++missing;
                continue;
            }
            T.gpu_start = double(int64_t(it->second.start) - cupti_offset - t0);
            T.gpu_end = double(int64_t(it->second.end) - cupti_offset - t0);
        } else if (gpu_timing(o.kind) == GpuTiming::Marker) {
            T.gpu_start = T.gpu_end = call_end;  // CUPTI has no record of markers
        }
    }
    r.end_to_end_ns = 0;
    for (const OpTimes& T : r.ops) {
        if (!std::isnan(T.host_end)) r.end_to_end_ns = std::max(r.end_to_end_ns, T.host_end);
        if (!std::isnan(T.gpu_end)) r.end_to_end_ns = std::max(r.end_to_end_ns, T.gpu_end);
    }
    r.end_to_end_ns -= r.measured_from_ns;  // steady state: the window of the measured iteration
    probe_expected = expected;
    probe_missing = missing;
}

void Executor::reset() {
    CK(cudaDeviceSynchronize());
    for (size_t i = 0; i < P.buffers.size(); ++i)
        if (P.buffers[i].kind == MemKind::Managed) prefetch_to(buf[i], P.buffers[i].bytes, P.buffers[i].managed_on_device, calib);
    for (int t = 0; t < PL.issuers; ++t) prefetch_to(scr[t].managed, PL.scratch[t].managed, false, calib);
    CK(cudaStreamSynchronize(calib));
    // Fresh program events: a wait on an event not yet recorded in this run must not bind to
    // the previous run's record.
    for (size_t i = 0; i < prog_events.size(); ++i) {
        CK(cudaEventDestroy(prog_events[i]));
        create_program_event(i);
    }
    free_leftovers();
    // Graph instances of this run; host-function stamps.
    for (size_t e = 0; e < P.execs.size(); ++e)
        if (cudaGraphExec_t x = execs[e].exchange(nullptr)) CK(cudaGraphExecDestroy(x));
    for (size_t g = 0; g < P.graphs.size(); ++g) launch_count[g].store(0);
    for (size_t q = 0; q < P.queues.size(); ++q) queues_rt[q].items = 0;  // what a run left in its queues
    for (size_t f = 0; f < P.flags.size(); ++f) flags_rt[f].sets = 0;
    for (auto& st : op_stamps)
        if (st) st->n.store(0);
    for (auto& v : node_stamps)
        for (auto& st : v)
            if (st) st->n.store(0);
}

Measurement Executor::run_all() {
    setup();
    // Warm-ups; with CUPTI they also check that records arrive (else RUNTIME records are added,
    // and failing that, events take over).
    int warm = O.warmup, extra = 0;
    if (O.cold_child) {
        // Cold start: exactly one run in this fresh process, nothing before it.
        if (O.cold_child == 1) {
            g_phase = int(Phase::Timed);
            g_run = 1;
            M.timed.push_back(run_once(true));
            if (timing == Timing::Cupti && probe_missing)
                M.warnings.push_back("cold run: no CUPTI record for " + std::to_string(probe_missing) + " of " + std::to_string(probe_expected) +
                                     " ops (no warm-up checks CUPTI in a cold process)");
            if (timing == Timing::Cupti) cupti::disable();
        } else {
            if (timing == Timing::Cupti) cupti::disable();
            g_phase = int(Phase::Uninstrumented);
            g_run = 1;
            M.plain.push_back(run_once(false));
            M.uninstrumented_ns.push_back(M.plain.back().end_to_end_sync_ns);
        }
        warm = 0;
    }
    if (O.plain_child) {
        // The uninstrumented runs of a program, in a process that never loaded CUPTI.
        for (int k = 1; k <= O.warmup; ++k) {
            g_phase = int(Phase::Warmup);
            g_run = k;
            (void)run_once(false);
            ++M.warmup_done;
        }
        warm = 0;
    } else if (O.cold_child) {
    } else if (timing == Timing::Cupti && warm < 1) {
        warm = 1;
        M.warnings.push_back("one warm-up run added to check CUPTI");
    }
    for (int k = 1; k <= warm + extra; ++k) {
        g_phase = int(Phase::Warmup);
        g_run = k;
        (void)run_once(true);
        ++M.warmup_done;
        if (timing != Timing::Cupti || probe_expected == 0) continue;
        if (probe_missing == probe_expected) {
            if (!cupti::runtime_records() && cupti::enable_runtime_records()) {
                M.cupti_runtime_records = true;
                extra = std::max(extra, k - warm + 1);
                continue;
            }
            std::string why = "CUPTI delivered no activity records for the program's " + std::to_string(probe_expected) + " GPU ops";
            if (O.timing == TimingRequest::Cupti) runtime_fail(("--timing cupti: " + why).c_str(), __FILE__, __LINE__);
            cupti::disable();
            timing = Timing::Events;
            enable_event_timing(true);
            M.timing_note = why + "; fell back to events";
            M.warnings.push_back(M.timing_note);
            extra = std::max(extra, k - warm + 1);  // one warm-up with the events in place
        } else if (probe_missing && k == warm + extra) {
            M.warnings.push_back("CUPTI gave no record for " + std::to_string(probe_missing) + " of " + std::to_string(probe_expected) +
                                 " kernels/copies/memsets in the last warm-up; those ops have no GPU times");
        }
    }
    for (int k = 1; k <= (O.cold_child || O.plain_child ? 0 : O.runs); ++k) {
        g_phase = int(Phase::Timed);
        g_run = k;
        M.timed.push_back(run_once(true));
        if (timing == Timing::Cupti && probe_missing)
            M.warnings.push_back("timed run " + std::to_string(k) + ": no CUPTI record for " + std::to_string(probe_missing) + " ops");
    }
    if (timing == Timing::Cupti && !O.cold_child) {
        if (uint64_t d = cupti::dropped_records()) M.warnings.push_back("CUPTI dropped " + std::to_string(d) + " activity records");
        cupti::disable();
    }
    for (int k = 1; k <= (O.cold_child || O.plain_elsewhere ? 0 : O.runs); ++k) {
        g_phase = int(Phase::Uninstrumented);
        g_run = k;
        M.plain.push_back(run_once(false));
        M.uninstrumented_ns.push_back(M.plain.back().end_to_end_sync_ns);
    }
    g_phase = int(Phase::Output);
    stop_workers();
    M.timing = timing == Timing::Cupti ? "cupti" : "events";
    M.cupti_runtime_records = timing == Timing::Cupti && cupti::runtime_records();
    if (timing == Timing::Cupti) {
        M.clock_note = M.cupti_steady_timestamps ? "CUPTI timestamps from a steady_clock callback; offset checked by paired reads each run"
                                                 : "CUPTI timestamps (CLOCK_REALTIME) mapped to steady_clock by paired reads before and after each run";
    } else {
        M.clock_note = "reference timing event completed by a poll kernel released at a known steady_clock time; error about half the round trip";
        M.clock_uncertainty_ns = double(ref_rtt_ns) / 2.0;
    }
    {
        FILE* f = std::fopen("/proc/driver/nvidia/version", "r");
        if (f) {
            char line[512] = {0};
            if (std::fgets(line, sizeof line, f)) {
                std::string s = line;
                // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  ..."
                auto pos = s.find("Kernel Module");
                if (pos != std::string::npos) {
                    std::string rest = s.substr(pos + 13);
                    size_t b = rest.find_first_not_of(' ');
                    size_t e = rest.find(' ', b);
                    if (b != std::string::npos) M.driver_release = rest.substr(b, e == std::string::npos ? std::string::npos : e - b);
                }
            }
            std::fclose(f);
        }
    }
    return M;
}

}  // namespace

Measurement execute(const Program& p, const Plan& plan, const Options& opt) {
    g_program = &p;
    g_program_file = plan.file;
    // Before the first CUDA (and CUPTI) call: the number of hardware queues streams map onto.
    if (p.max_connections > 0) setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(p.max_connections).c_str(), 1);
    // Load every module at context creation so that no timed launch pays lazy loading; a cold
    // start measures the first launches as a fresh process pays them.
    if (!p.cold_start) setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    Executor ex(p, plan, opt);
    return ex.run_all();
}

}  // namespace runner
