// The lowered program: what the engine simulates and the GPU runner executes. One op list per
// host thread (threads form) or free-standing tasks with `after` lists (tasks form); loops are
// expanded, units resolved, names bound to indices.
//
// The op table (op_info, op_spellings) is the one place that says what each op kind is: where
// its GPU phase runs, which fields it carries, how a scenario spells it and which keys it takes.
// The frontend, the engine, the reports, the JSON codec and the GPU runner all read it.
//
// This header and core/program.cpp are compiled by nvcc into the runner as well: standard C++
// and header-only libraries only.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/time.hpp"

namespace hetsim {

enum class MemKind : uint8_t { Pinned, Pageable, Device, Managed };
enum class CopyDir : uint8_t { H2D, D2H, D2D };
enum class StreamKind : uint8_t { Blocking, NonBlocking, Legacy, PerThread };

enum class OpKind : uint8_t {
    HostWork,         // host compute for `duration`
    Kernel,           // kernel launch (async)
    Memcpy,           // host copy call; `sync` says cudaMemcpy vs cudaMemcpyAsync
    Memset,           // memset call; `sync` says cudaMemset vs cudaMemsetAsync
    EventRecord,      // cudaEventRecord(event, stream)
    StreamWaitEvent,  // cudaStreamWaitEvent(stream, event)
    EventSync,        // cudaEventSynchronize(event)
    StreamSync,       // cudaStreamSynchronize(stream)
    DeviceSync,       // cudaDeviceSynchronize()
    Prefetch,         // cudaMemPrefetchAsync(buffer, bytes, to device/host, stream)
    HostFunc,         // cudaLaunchHostFunc(stream, fn): `duration` of host work on a driver thread
    GraphInstantiate, // cudaGraphInstantiate(graph)
    GraphLaunch,      // cudaGraphLaunch(graph, stream); its nodes follow as ops with graph_node set
    Malloc,           // cudaMalloc
    Free,             // cudaFree: waits for the whole device first
    MallocHost,       // cudaMallocHost (pinned host memory)
    FreeHost,         // cudaFreeHost: waits for the whole device first
    HostRegister,     // cudaHostRegister (pin existing host memory)
    MallocAsync,      // cudaMallocAsync(stream): stream-ordered, from the pool
    FreeAsync,        // cudaFreeAsync(stream)
    QueuePut,         // put an item into a bounded host queue: waits while it is full
    QueueGet,         // take an item from a host queue: waits while it is empty
    HostWait,         // wait until a flag is set (by a host_func callback), and take the set
    Join,             // std::thread::join: waits until another host thread has run all its ops
    Barrier,          // between steady-state iterations: a device sync, then every host thread meets
};
constexpr int kOpKinds = static_cast<int>(OpKind::Barrier) + 1;

// Where an op's GPU phase runs: the hardware unit of the engine that takes it.
enum class GpuWork : uint8_t {
    None,      // no GPU phase: the host call is all there is
    Marker,    // a zero-length point on its stream (event record or wait, graph launch, stream-ordered allocation)
    Copy,      // a copy engine (H2D, D2H) by direction; D2D copies and memsets on the device-copy path
    Kernel,    // the SMs
    Callback,  // host work run by the driver's callback thread, between its stream's ops
};

// The fields an op kind carries beyond kind, thread and stream: what the JSON codec reads and
// writes, and what the frontend fills.
enum OpField : uint16_t {
    kFieldDuration = 1 << 0,  // `duration` (a kernel: when it has no roofline)
    kFieldBytes = 1 << 1,     // `bytes`
    kFieldSync = 1 << 2,      // blocking call vs the Async form
    kFieldCopy = 1 << 3,      // `dir` and `host_mem`
    kFieldTo = 1 << 4,        // `to_device`
    kFieldShape = 1 << 5,     // grid, block, registers, shared memory and the roofline's flops
    kFieldEvent = 1 << 6,     // `event`
    kFieldBuffer = 1 << 7,    // `buffer`: the named buffer of the host side (copies) or the target
    kFieldGraph = 1 << 8,     // `graph`
    kFieldUses = 1 << 9,      // buffers the op touches (managed residency, the host cache)
    kFieldQueue = 1 << 10,    // `queue`
    kFieldFlag = 1 << 11,     // `flag`: the one a callback sets, or the one waited for
    kFieldThread = 1 << 12,   // `target`: the host thread joined
    kFieldStream = 1 << 13,   // `stream`: the stream it is issued to, or the stream synced on
    kFieldExec = 1 << 14,     // `exec`: the executable graph a launch launches (Program::execs)
};

// One row per OpKind.
struct OpKindInfo {
    OpKind kind;
    const char* name;  // to_string and the program JSON's "kind"
    GpuWork gpu;
    uint16_t fields;   // OpField bits
};
namespace detail {
// The op table. Keep the rows in OpKind order: op_info indexes it.
inline constexpr uint16_t kCopyFields = kFieldBytes | kFieldSync | kFieldCopy | kFieldBuffer | kFieldStream;
inline constexpr uint16_t kS = kFieldStream;
inline constexpr OpKindInfo kOpTable[kOpKinds] = {
    {OpKind::HostWork, "host", GpuWork::None, kFieldDuration | kFieldUses},
    {OpKind::Kernel, "kernel", GpuWork::Kernel, kFieldDuration | kFieldBytes | kFieldShape | kFieldUses | kS},
    {OpKind::Memcpy, "memcpy", GpuWork::Copy, kCopyFields},
    {OpKind::Memset, "memset", GpuWork::Copy, kFieldBytes | kFieldSync | kS},
    {OpKind::EventRecord, "event_record", GpuWork::Marker, kFieldEvent | kS},
    {OpKind::StreamWaitEvent, "stream_wait_event", GpuWork::Marker, kFieldEvent | kS},
    {OpKind::EventSync, "event_sync", GpuWork::None, kFieldEvent},
    {OpKind::StreamSync, "stream_sync", GpuWork::None, kS},
    {OpKind::DeviceSync, "device_sync", GpuWork::None, 0},
    {OpKind::Prefetch, "prefetch", GpuWork::Copy, kFieldBytes | kFieldTo | kFieldBuffer | kS},
    {OpKind::HostFunc, "host_func", GpuWork::Callback, kFieldDuration | kFieldFlag | kS},
    {OpKind::GraphInstantiate, "graph_instantiate", GpuWork::None, kFieldGraph},
    {OpKind::GraphLaunch, "graph_launch", GpuWork::Marker, kFieldGraph | kFieldExec | kS},
    {OpKind::Malloc, "malloc", GpuWork::None, kFieldBytes | kFieldBuffer},
    {OpKind::Free, "free", GpuWork::None, kFieldBytes | kFieldBuffer},
    {OpKind::MallocHost, "malloc_host", GpuWork::None, kFieldBytes | kFieldBuffer},
    {OpKind::FreeHost, "free_host", GpuWork::None, kFieldBytes | kFieldBuffer},
    {OpKind::HostRegister, "host_register", GpuWork::None, kFieldBytes | kFieldBuffer},
    {OpKind::MallocAsync, "malloc_async", GpuWork::Marker, kFieldBytes | kFieldBuffer | kS},
    {OpKind::FreeAsync, "free_async", GpuWork::Marker, kFieldBytes | kFieldBuffer | kS},
    {OpKind::QueuePut, "put", GpuWork::None, kFieldQueue},
    {OpKind::QueueGet, "get", GpuWork::None, kFieldQueue},
    {OpKind::HostWait, "host_wait", GpuWork::None, kFieldFlag},
    {OpKind::Join, "join", GpuWork::None, kFieldThread},
    {OpKind::Barrier, "barrier", GpuWork::None, 0},
};
}  // namespace detail
inline const OpKindInfo& op_info(OpKind k) { return detail::kOpTable[static_cast<int>(k)]; }

// Where a spelling may appear.
enum OpForm : uint8_t { kInThreads = 1, kInTasks = 2, kInGraphs = 4 };

// One row per op name a scenario may write ("memcpy" and "memcpy_async" are one kind).
struct OpSpelling {
    const char* yaml;
    OpKind kind;
    bool blocking;     // the call waits for GPU work (for kinds with kFieldSync: the blocking form)
    const char* keys;  // its keys beside the op name and `name`, space-separated
    uint8_t forms;     // OpForm bits
};
const std::vector<OpSpelling>& op_spellings();
const OpSpelling* find_spelling(std::string_view yaml);

const char* to_string(OpKind k);
const char* to_string(MemKind k);
const char* to_string(CopyDir d);
const char* to_string(StreamKind k);
// The inverse of to_string; false when `s` names none.
bool from_string(std::string_view s, OpKind& out);
bool from_string(std::string_view s, MemKind& out);
bool from_string(std::string_view s, CopyDir& out);
bool from_string(std::string_view s, StreamKind& out);

struct Buffer {
    std::string name;
    MemKind kind = MemKind::Device;
    uint64_t bytes = 0;
    bool managed_on_device = false;  // initial residency of a managed buffer
};

struct Stream {
    std::string name;
    StreamKind kind = StreamKind::Blocking;
    int priority = 0;        // CUDA convention: lower number = higher priority
    int owner_thread = -1;   // per-thread default streams belong to one host thread
};

struct Event {
    std::string name;
    bool blocking_sync = false;  // created with cudaEventBlockingSync: syncs on it sleep
};

constexpr int32_t kNone = -1;

// A bounded queue between host threads (a mutex + condition variable queue, a DataLoader's
// batch queue): put waits while it holds `capacity` items, get while it is empty.
struct HostQueue {
    std::string name;
    uint32_t capacity = 1;
};

// A flag host work waits on: each set (by a host_func callback naming it) is taken by one
// host_wait; sets are counted, so none is lost (an atomic counter, a semaphore).
struct Flag {
    std::string name;
};

struct HostThread {
    std::string name;
    std::vector<uint32_t> ops;  // indices into Program::ops, in program order
    int32_t start_after = kNone;  // created when this op's host phase ends (kNone: at time zero)
};

struct KernelShape {
    uint32_t grid = 1;              // blocks
    uint32_t block = 256;           // threads per block
    uint32_t regs_per_thread = 32;
    uint32_t smem_per_block = 0;    // bytes
    bool operator==(const KernelShape&) const = default;
};

constexpr int32_t kMaxThreads = INT16_MAX;  // host threads a program may have (Op::thread is 16 bits)

// What all ops lowered from one place of the scenario share: their label, source position, loop
// depth, kernel shape and the managed buffers they touch. Interned: equal sites are one.
struct Site {
    uint32_t label = 0;       // index into Program::names
    uint32_t loc = 0;         // index into Program::locs
    uint8_t depth = 0;        // loop indices of each op (Program::iter_indices)
    uint16_t uses_count = 0;  // managed buffers touched, a slice of Program::uses
    uint32_t uses_begin = 0;
    KernelShape shape;        // kernels
    double flops = 0;         // roofline kernel (0 = use `duration`)
    // A pitched copy (cudaMemcpy2DAsync): `rows` rows of Op::bytes / rows bytes each, read every
    // `spitch` bytes and written every `dpitch` bytes. rows 0: a linear copy.
    uint32_t rows = 0;
    uint64_t spitch = 0, dpitch = 0;
    bool operator==(const Site&) const = default;
};

// One op: 40 bytes, so that a program of millions of ops stays small. What its kind does not
// use keeps its default.
struct Op {
    OpKind kind = OpKind::HostWork;
    bool sync : 1 = false;          // cudaMemcpy / cudaMemset (blocking) vs the Async form
    bool to_device : 1 = true;      // Prefetch target
    bool graph_node : 1 = false;    // a node of the GraphLaunch before it (no host call of its own)
    bool warmup : 1 = false;        // of a warm-up iteration (Program::warmup), not the measured one
    CopyDir dir = CopyDir::H2D;     // Memcpy
    MemKind host_mem = MemKind::Pinned;  // Memcpy: kind of the host side
    int16_t thread = kNone;         // issuing host thread (threads form; host tasks)
    int32_t stream = kNone;         // stream for GPU work, or the stream synced on
    union {                         // by kind (op_info(kind).fields): one of
        int32_t event = kNone;      //   EventRecord / StreamWaitEvent / EventSync
        int32_t buffer;             //   copies: the named buffer of the host side (pinned, pageable or
                                    //   managed); Prefetch and allocation calls: their target
        int32_t graph;              //   GraphInstantiate / GraphLaunch
        int32_t queue;              //   QueuePut / QueueGet
        int32_t flag;               //   HostFunc: the flag it sets (kNone: none); HostWait
        int32_t target;             //   Join: the host thread joined
    };
    uint32_t site = 0;              // index into Program::sites
    uint32_t iter_begin = 0;        // loop indices: Program::iter_indices[iter_begin, + site depth)
    Time duration;                  // HostWork, HostFunc; Kernel with fixed duration
    union {                         // by kind: one of
        uint64_t bytes = 0;         //   copies, memset, prefetch, allocations, roofline kernel traffic
        uint64_t exec;              //   GraphInstantiate: the executable graph it makes; GraphLaunch: the one it
                                    //   launches (an index into Program::execs; see assign_graph_execs)
    };
    // `bytes`, and 0 for the graph ops (they keep `exec` in its place).
    uint64_t bytes_or_0() const { return kind == OpKind::GraphInstantiate || kind == OpKind::GraphLaunch ? 0 : bytes; }
};

// Whether a synchronous call (Op::sync) waits for its own GPU work before it returns. cudaMemset
// and cudaMemcpy between device buffers do not: CUDA's API synchronization behaviour makes them
// asynchronous with respect to the host (measured: validation 39 and 116, a 5 us host phase
// for cudaMemset of 64-512 MiB); their synchronous form differs from the Async one only by going
// to the legacy default stream. (CUDA makes a synchronous memset of managed memory fully
// synchronous; hetsim's memsets, as the runner's, write device memory.)
inline bool sync_call_waits(const Op& op) {
    return op.sync && op.kind != OpKind::Memset && !(op.kind == OpKind::Memcpy && op.dir == CopyDir::D2D);
}

// A CUDA graph: its nodes and the dependencies between them. The node templates are ops
// without stream or thread; a launch copies them after its GraphLaunch op. Node k waits for
// nodes after[after_index[k] .. after_index[k + 1]); a node that waits for none starts the
// graph. A graph without after_index is a chain (each node waits for the one before it).
struct Graph {
    std::string name;
    std::vector<Op> nodes;
    std::vector<uint32_t> after_index, after;
    bool chain() const { return after_index.empty(); }
};

struct Program {
    std::string source;                  // scenario file path
    std::vector<Buffer> buffers;
    std::vector<Stream> streams;         // [0] is always the legacy default stream
    std::vector<Event> events;
    std::vector<HostThread> threads;
    std::vector<Op> ops;
    std::vector<Site> sites;
    std::vector<std::string> names;      // labels, interned
    std::vector<uint32_t> iter_indices;  // loop indices of ops (ops of one iteration share theirs)
    std::vector<uint32_t> uses;          // managed-buffer indices of sites
    // Tasks form: op i waits for after[after_index[i] .. after_index[i + 1]); empty otherwise.
    std::vector<uint32_t> after_index, after;
    std::vector<SourceLoc> locs;         // interned source positions
    std::vector<Graph> graphs;
    // Executable graphs (cudaGraphExec_t), one per GraphInstantiate op in index order: the op that
    // makes it. Op::exec of a launch indexes it (filled by assign_graph_execs or the JSON file).
    std::vector<uint32_t> execs;
    std::vector<HostQueue> queues;
    std::vector<Flag> flags;
    bool tasks_form = false;
    // Program-wide CUDA settings (scenario `options:`).
    bool blocking_sync = false;    // cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync)
    bool cold_start = false;       // a fresh process: first launches load their modules
    uint32_t max_connections = 0;  // CUDA_DEVICE_MAX_CONNECTIONS; 0 = the profile's gpu.hw_queues
    // Steady state (`measure: {warmup: K}`): each thread runs its ops K + 1 times, a Barrier
    // between iterations; the last iteration is the one measured.
    uint32_t warmup = 0;
    // Tasks placed on streams, in file order (issued at t=0 in this order).
    std::vector<uint32_t> gpu_tasks;

    const Site& site(const Op& op) const { return sites[op.site]; }
    const std::string& label(const Op& op) const { return names[sites[op.site].label]; }
    const SourceLoc& loc(const Op& op) const { return locs[sites[op.site].loc]; }
    // "label[i][j]" from the op's label and loop indices.
    std::string op_name(uint32_t op) const;
    // Loop indices of op i (empty outside loops).
    std::vector<uint32_t> loop_indices(uint32_t op) const;
    // Tasks form: the ops op i waits for.
    const uint32_t* after_begin(uint32_t op) const { return after.data() + after_index[op]; }
    const uint32_t* after_end(uint32_t op) const { return after.data() + after_index[op + 1]; }
    uint32_t after_count(uint32_t op) const { return after_index.empty() ? 0 : after_index[op + 1] - after_index[op]; }
    // Managed buffers op i touches.
    const uint32_t* uses_begin(const Op& op) const { return uses.data() + site(op).uses_begin; }
    uint32_t uses_count(const Op& op) const { return site(op).uses_count; }

    // True for ops whose work runs on the GPU (kernels, copies, memsets, markers, prefetches, callbacks).
    static bool has_gpu_phase(OpKind k) { return op_info(k).gpu != GpuWork::None; }
    // True for ops issued to a stream (the ones that take a launch-queue entry).
    static bool is_stream_op(OpKind k) { return has_gpu_phase(k); }
    // Zero-length GPU phases.
    static bool is_marker(OpKind k) { return op_info(k).gpu == GpuWork::Marker; }
    // The allocation calls (cudaMalloc ... cudaFreeAsync): `bytes` for buffer `buffer`.
    static bool is_allocation(OpKind k) { return k >= OpKind::Malloc && k <= OpKind::FreeAsync; }
};

// Which executable each graph_launch launches (CUDA: each cudaGraphInstantiate makes its own
// cudaGraphExec_t, and launches of one run one at a time, of different ones side by side).
// Fills Program::execs (the GraphInstantiate ops in index order: executable k is the k-th) and
// Op::exec of the instantiations and of every launch: the executable made by the latest
// graph_instantiate of its graph on the launch's own thread before it in program order; if the
// thread has none before it, the one graph_instantiate of the graph on another thread. Returns ""
// or, for a launch that has neither or more than one such instantiation on other threads, a
// message, with `bad` set to that launch op.
std::string assign_graph_execs(Program& pg, uint32_t& bad);
// Program::execs from the GraphInstantiate ops (and their Op::exec), launches left as they are.
void number_graph_execs(Program& pg);

}  // namespace hetsim
