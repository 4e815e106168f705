// The lowered program: what the engine simulates and the GPU runner executes.
// One op list per host thread (threads form) or free-standing tasks with `after` lists
// (tasks form); loops are expanded, units resolved, names bound to indices.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/error.hpp"
#include "sim/time.hpp"

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
};

const char* to_string(OpKind k);
const char* to_string(MemKind k);
const char* to_string(CopyDir d);
const char* to_string(StreamKind k);

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


struct HostThread {
    std::string name;
    std::vector<uint32_t> ops;  // indices into Program::ops, in program order
};

struct KernelShape {
    uint32_t grid = 1;              // blocks
    uint32_t block = 256;           // threads per block
    uint32_t regs_per_thread = 32;
    uint32_t smem_per_block = 0;    // bytes
};

constexpr int32_t kNone = -1;

struct Op {
    OpKind kind = OpKind::HostWork;
    bool sync = false;              // cudaMemcpy / cudaMemset (blocking) vs the Async form
    bool to_device = true;          // Prefetch target
    CopyDir dir = CopyDir::H2D;     // Memcpy
    MemKind host_mem = MemKind::Pinned;  // Memcpy: kind of the host side
    int32_t thread = kNone;         // issuing host thread (threads form; host tasks)
    int32_t stream = kNone;         // stream for GPU work, or the stream synced on
    int32_t event = kNone;          // EventRecord / StreamWaitEvent / EventSync
    int32_t buffer = kNone;         // Prefetch target; managed buffer of a copy; allocation target
    int32_t graph = kNone;          // GraphInstantiate / GraphLaunch / graph nodes
    int32_t host_buffer = kNone;    // copies: the named pinned/pageable buffer of the host side
    bool graph_node = false;        // a node of the GraphLaunch before it (no host call of its own)
    Time duration;                  // HostWork; Kernel with fixed duration
    uint64_t bytes = 0;             // copies, memset, prefetch, roofline kernel traffic
    double flops = 0;               // roofline kernel (0 = use `duration`)
    KernelShape shape;
    uint32_t name = 0;              // index into Program::names
    uint32_t iter_begin = 0;        // loop indices, a slice of Program::iter_indices
    uint8_t iter_count = 0;
    uint32_t uses_begin = 0;        // managed buffers touched, a slice of Program::uses
    uint16_t uses_count = 0;
    uint32_t after_begin = 0;       // tasks form: dependencies, a slice of Program::after
    uint32_t after_count = 0;
    uint32_t loc = 0;               // index into Program::locs (source position)
};

// A CUDA graph captured from one stream: its nodes run in order. The node templates are ops
// without stream or thread; a launch copies them after its GraphLaunch op.
struct Graph {
    std::string name;
    std::vector<Op> nodes;
};

struct Program {
    std::string source;                  // scenario file path
    std::vector<Buffer> buffers;
    std::vector<Stream> streams;         // [0] is always the legacy default stream
    std::vector<Event> events;
    std::vector<HostThread> threads;
    std::vector<Op> ops;
    std::vector<std::string> names;      // op labels, interned
    std::vector<uint32_t> iter_indices;  // loop indices of ops
    std::vector<uint32_t> uses;          // managed-buffer indices of ops
    std::vector<uint32_t> after;         // op indices (tasks form)
    std::vector<SourceLoc> locs;         // interned source positions
    std::vector<Graph> graphs;
    bool tasks_form = false;
    // Program-wide CUDA settings (scenario `options:`).
    bool blocking_sync = false;    // cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync)
    bool cold_start = false;       // a fresh process: first launches load their modules
    uint32_t max_connections = 0;  // CUDA_DEVICE_MAX_CONNECTIONS; 0 = the profile's gpu.hw_queues
    // Tasks placed on streams, in file order (issued at t=0 in this order).
    std::vector<uint32_t> gpu_tasks;

    // "label[i][j]" from the op's label and loop indices.
    std::string op_name(uint32_t op) const;
    // True for ops whose work runs on the GPU (kernels, copies, memsets, records, waits, prefetches).
    static bool has_gpu_phase(OpKind k);
    // True for ops issued to a stream (the ones that take a launch-queue entry).
    static bool is_stream_op(OpKind k);
};

}  // namespace hetsim
