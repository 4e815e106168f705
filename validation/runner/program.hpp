// hetsim-runner: the lowered program (docs/program-format.md, "hetsim.program" v2) as the runner
// sees it, its validation, and the execution plan (scratch buffers, issue order, budgets).
// Nothing in program.cu calls CUDA: `--check` runs on a machine without a GPU or driver.
#pragma once
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace runner {

constexpr int kProgramVersion = 2;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kDeviceMargin = kGiB;  // left free on the device

enum class Mem { Pinned, Pageable, Device, Managed };
enum class Dir { H2D, D2H, D2D };
enum class StreamKind { Legacy, Blocking, NonBlocking, PerThread };
enum class OpKind {
    Host, Kernel, Memcpy, Memset, EventRecord, StreamWaitEvent, EventSync, StreamSync, DeviceSync, Prefetch,
    // Version 2.
    HostFunc, GraphInstantiate, GraphLaunch, Malloc, Free, MallocHost, FreeHost, HostRegister, MallocAsync, FreeAsync
};

const char* to_string(Mem m);
const char* to_string(Dir d);
const char* to_string(StreamKind k);
const char* to_string(OpKind k);

// Ops whose work runs on a stream (the model's GPU phase).
bool has_gpu_phase(OpKind k);
// Zero-length GPU markers.
inline bool is_marker(OpKind k) { return k == OpKind::EventRecord || k == OpKind::StreamWaitEvent; }
// Allocation calls (host phase only; scratch memory of `bytes`).
inline bool is_alloc(OpKind k) {
    return k == OpKind::Malloc || k == OpKind::Free || k == OpKind::MallocHost || k == OpKind::FreeHost || k == OpKind::HostRegister ||
           k == OpKind::MallocAsync || k == OpKind::FreeAsync;
}

struct Buffer {
    std::string name;
    Mem kind = Mem::Device;
    uint64_t bytes = 0;
    bool on_device = false;  // managed: initial residency
};

struct Stream {
    std::string name;
    StreamKind kind = StreamKind::Blocking;
    int priority = 0;
    int thread = -1;  // owner of a per-thread stream
};

struct Thread {
    std::string name;
    std::vector<uint32_t> ops;
};

struct Op {
    uint32_t index = 0;
    std::string name;
    OpKind kind = OpKind::Host;
    int thread = -1;
    int stream = -1, event = -1, buffer = -1;
    int64_t duration_ps = 0;
    bool roofline = false;  // kernel with flops/bytes instead of duration_ps
    double flops = 0;
    uint64_t bytes = 0;
    uint32_t grid = 1, block = 256, registers = 32, shared_memory = 0;
    bool sync = false;
    Dir dir = Dir::H2D;
    Mem memory = Mem::Pinned;
    bool to_device = true;
    std::vector<uint32_t> uses, after;
    // Version 2.
    int graph = -1;           // graph_instantiate, graph_launch, graph nodes
    bool graph_node = false;  // a node of the preceding graph_launch: not issued by the host
    int node = -1;            // graph_node ops: the node's position in its graph
    int launch_op = -1;       // graph_node ops: the graph_launch op they belong to
};

struct Graph {
    std::string name;
    std::vector<Op> nodes;  // kernel, memcpy (async), memset (async) or host_func; index = position
};

struct Event {
    std::string name;
    bool blocking_sync = false;  // cudaEventBlockingSync
};

struct ProgramOptions {
    bool blocking_sync = false;  // cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync)
    bool cold_start = false;     // every measured run is a fresh process
    int max_connections = 0;     // CUDA_DEVICE_MAX_CONNECTIONS (0: leave unset)
};

struct Program {
    std::string file;      // the JSON file read
    std::string scenario;  // scenario name
    std::string source;    // scenario file it was lowered from
    bool tasks = false;
    std::vector<Buffer> buffers;
    std::vector<Stream> streams;
    ProgramOptions options;
    std::vector<Event> events;
    std::vector<Graph> graphs;
    std::vector<Thread> threads;
    std::vector<uint32_t> gpu_tasks;
    std::vector<Op> ops;
};

// A wrong program: printed as "hetsim-runner: FILE: MESSAGE", exit code 2.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Reads and validates a lowered program; throws InputError.
Program load_program(const std::string& path);

// Scratch buffers of one issuing thread (program thread, or the tasks-form issuer), sized to the
// largest copy/memset of each kind that thread issues.
struct Scratch {
    uint64_t pinned = 0;    // host side of pinned copies
    uint64_t pageable = 0;  // host side of pageable copies
    uint64_t dev_src = 0;   // device side read by d2h / d2d copies
    uint64_t dev_dst = 0;   // device side written by h2d / d2d copies and memsets
    uint64_t managed = 0;   // host side of `memory: managed` copies that name no buffer
};

// How a task-form dependency is realised.
enum class DepKind { SameStream, GpuEvent, HostFlag, HostWaitsHost, HostWaitsGpu };

struct Plan {
    int issuers = 0;                  // program threads, + 1 issuer thread in tasks form
    int issuer_thread = -1;           // tasks form: index of the issuer among issuers
    std::vector<int> issuer_of;       // per op
    std::vector<uint32_t> pos_in_thread;  // per op: position in its issuer's op list
    std::vector<std::vector<uint32_t>> issuer_ops;  // per issuer: ops in execution order
    std::vector<Scratch> scratch;     // per issuer
    uint64_t read_bytes = 0;          // roofline kernels' shared read buffer (device)
    std::vector<uint64_t> read_offset;  // per op (roofline kernels with bytes)
    Scratch graph_scratch;            // copies and memsets of graph nodes (captured once)
    std::vector<std::vector<uint32_t>> graph_nodes_of;  // per op (graph_launch): its node ops in order
    std::vector<int> launches_of_graph;  // per graph: how many graph_launch ops the program has
    // Allocation ops: peak live scratch (summed over issuing threads) and registered pageable memory.
    uint64_t alloc_device_peak = 0, alloc_pinned_peak = 0, register_bytes = 0;
    // Totals of what setup and the program allocate (alloc ops included at their peak).
    uint64_t device_total = 0, managed_total = 0, pinned_total = 0, pageable_total = 0;
    // Tasks form.
    std::vector<char> needs_done_event;  // GPU task with dependents on another stream or a host thread
    std::vector<int> host_flag_slot;     // host task with GPU dependents: slot in the mapped flag array
    int host_flags = 0;
    uint32_t max_smem = 0;
    size_t gpu_ops = 0, timed_gpu_ops = 0;
};

// Builds the plan; throws InputError for programs the runner cannot execute.
Plan make_plan(const Program& p);

// `--check`: what the runner would allocate and execute, without touching CUDA.
void print_plan(const Program& p, const Plan& plan, FILE* out, bool verbose, double peak_flops);

// Whole-SM residency estimate from the H200's limits (used by --check only; the real run asks
// the CUDA occupancy API).
int estimate_blocks_per_sm(uint32_t block, uint32_t regs, uint32_t smem);

std::string human_bytes(uint64_t b);

}  // namespace runner
