// A traced PyTorch program as hetsim ops: per host thread and profiler step, the CUDA calls that
// reach the GPU (launches, copies, memsets, event records and waits, syncs, graph launches) with
// the GPU work each issued (measured durations, shapes, bytes, streams), and the host work
// between them (measured lengths, named after the innermost cpu_op / user_annotation). It also
// marks what the what-if knobs act on (pageable uploads, per-step readbacks, the DataLoader's
// work, a capturable kernel region) and keeps, for `hetsim compare`, where every op was in the
// trace. import/emit.* writes it as a scenario; import/measured.* reads it back as a timeline.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "import/kineto_trace.hpp"

namespace hetsim::import {

enum class WKind : uint8_t { Host, Kernel, Memcpy, Memset, EventRecord, StreamWait, StreamSync, EventSync, DeviceSync, GraphLaunch };
const char* to_string(WKind k);

// An interval of the trace in ns from the start of the first profiler step; start < 0: none.
struct Span {
    int64_t start = -1, end = -1;
    bool valid() const { return start >= 0; }
};

struct WOp {
    WKind kind = WKind::Host;
    std::string label;      // host work: the covering cpu_op; kernels: the short kernel name; copies: the covering op
    std::string name;       // kernels: the full (demangled) name; its identity in step signatures
    int64_t duration = 0;   // ns: host work, kernels (median over the steps once folded)
    int32_t stream = -1;    // index into Workload::streams (GPU ops, stream syncs and waits)
    uint64_t grid = 1, block = 1, registers = 0, shared_memory = 0;
    CopyDir dir = CopyDir::D2D;
    MemKind mem = MemKind::Device;  // host side of a copy
    uint64_t bytes = 0;
    bool sync = false;      // cudaMemcpy / cudaMemset (blocking) rather than the Async form
    int32_t record = -1;    // EventRecord: its record id; StreamWait / EventSync: the record waited for
    int32_t graph = -1;     // GraphLaunch: index into Workload::graphs
    // What the knobs act on.
    bool readback = false;  // a per-step sync: loss.item()'s copy, sync and host work, or a bare stream/device sync
    bool copy_sync = false; // the stream sync PyTorch adds after a blocking pageable upload
    bool pageable_upload = false;  // a pageable H2D copy
    bool loader = false;    // host work inside DataLoader.__next__
    bool alloc_record = false;  // an event record of the caching host allocator (inside aten::copy_)
    bool implicit = false;  // DeviceSync: the one cudaFree / cudaFreeHost does before it frees (no knob drops it)
    bool orphan = false;    // GPU work that no call of the trace issued (placed after a call of its stream's thread)
    // The outermost cpu_op / user_annotation (below ProfilerStep#N) that covers it, as its
    // start and end in the trace (-1: none): the host work of a captured op goes with it.
    int64_t top_start = -1, top_end = -1;
    // Where it was in the trace (ns from the window start): the call or host work, its GPU work.
    Span host, gpu;
    std::vector<Span> node_gpu;  // GraphLaunch: each node's GPU work
    ThreadKey tid{};             // the trace thread that made the call
    int64_t correlation = -1;    // the call's correlation id (-1: none)
};

struct WGraph {
    std::string name;
    std::vector<WOp> nodes;  // kernels, memsets, copies in launch order
};

struct WThread {
    std::string name;                     // "main", "thread_<tid>"
    std::vector<ThreadKey> tids;          // trace threads folded into it (the first is its own)
    std::vector<std::vector<WOp>> steps;  // its ops, per profiler step
    bool loader_in_thread = false;        // runs a single-process DataLoader (pinning would cost it)
};

// The default profiler overhead per boundary (docs/import.md, "Profiler overhead").
// validation/pytorch/fit_import.py --pooled over the nine interleaved runs 2026-12-02a, b, c, e, i,
// j, k, l, m (each run left out in turn: 1.0 or 1.2 us); 0.6 us on 2026-12-02a alone, 1.2 on 2026-12-01a.
constexpr int64_t kSpanOverheadNs = 1000, kCallOverheadNs = 1000;
// loader_workers: the main thread's cost of receiving a batch from a DataLoader worker process
// (docs/import.md, "Worker hand-off"): per KiB of the batch when the batch comes from the
// worker itself (pin_memory off: unpickling its shared-memory tensors), and once per batch when
// the loader's pin-memory thread hands it over (pin_memory on). Measured on the H200.
constexpr int64_t kHandoffPerKibPs = 391306, kPinnedGetNs = 57822;  // validation/pytorch/fit_import.py on 2026-12-01a
// How much longer CUPTI's record of a kernel is than the kernel's own blocks (docs/import.md,
// "Kernel records"): the profile's stream and graph-node gaps are measured between the blocks'
// %globaltimer stamps, so a kernel keeps its record's duration less this. Measured on the H200.
constexpr int64_t kKernelExcessNs = 672;  // validation/pytorch/fit_import.py --excess-only on 2026-12-02a

struct ImportOptions {
    std::string profile;       // hardware profile; empty: from the trace's device name
    int64_t legacy_stream = 7; // the CUPTI stream id of the legacy default stream
    // The profiler's own cost per recorded boundary (the start or the end of a cpu_op /
    // user_annotation span, or of a CUDA call), in ns, subtracted from the host work it falls
    // in (docs/import.md, "Profiler overhead"). Negative: the default rule.
    int64_t span_overhead = -1, call_overhead = -1;
    // CUPTI's kernel record's excess over the kernel's blocks, in ns, taken off every kernel's
    // measured duration (docs/import.md, "Kernel records"). Negative: the default.
    int64_t kernel_excess = -1;
};

struct Workload {
    std::string trace_file, device_name, profile;
    std::vector<std::string> streams;     // [0] "default", the legacy default stream
    std::vector<int64_t> stream_ids;      // the trace's stream id of each
    std::vector<WGraph> graphs;           // graphs launched in the trace
    std::vector<WThread> threads;         // [0] is the thread with the ProfilerStep annotations
    size_t steps = 1;                     // profiler steps in the window
    bool annotated_steps = true;          // false: no ProfilerStep#N, the whole trace is one step
    std::vector<int64_t> step_number;     // N of each ProfilerStep#N
    std::vector<Span> step_span;          // each step on the main thread (ns from the window start)
    int64_t window = 0;                   // first step start .. last step end
    int64_t measured_end = 0;             // the last end of any call or GPU work in the window
    // One step body in a repeat: the steps have the same op sequence (per thread: the first
    // body_len[t] ops of every step; the last step may have a tail after them, e.g. a sync).
    bool repeat = false;
    std::vector<size_t> body_len;
    std::string flat_reason;              // why not (when !repeat)
    int32_t records = 0;                  // event records (ids 0..records-1)
    std::vector<int32_t> record_event;    // record id -> event index (repeat: one per body position)
    std::vector<std::string> events;      // event names
    // The capturable region of the main thread's step body for cuda_graph: [begin, end) (repeat only).
    bool capturable = false;
    size_t capture_begin = 0, capture_end = 0;
    int32_t capture_stream = 0;
    std::string capture_reason;           // why not
    std::vector<std::string> notes;       // what the importer found and decided
    size_t calls_kept_as_host = 0;        // CUDA calls with no modelled op (their time is host work)
    int64_t between_steps = 0;            // ns of host time between ProfilerStep spans (prof.step()), left out
    size_t launches_without_kernel = 0;   // launches whose kernel the trace lacks
    size_t calls_in_capture = 0;          // calls inside a graph capture (host work)
    size_t orphans_placed = 0;            // GPU records no call issued, placed after a call of their stream's thread
    size_t orphans_before_window = 0;     // GPU records no call issued, ahead of the window's work on their stream: left out
    // Profiler overhead taken out of the host work (main thread, the whole window).
    int64_t span_overhead = 0, call_overhead = 0;  // ns per boundary, as applied
    int64_t overhead_removed = 0;         // ns subtracted from host work
    int64_t overhead_clamped = 0;         // ns that the host work did not have (a piece stops at 0)
    size_t span_boundaries = 0, call_boundaries = 0;
    // Kernel records: the excess taken off each kernel's measured duration (ns, as applied) and
    // the kernels (body or flat ops, and graph nodes) it was taken off.
    int64_t kernel_excess = 0;
    size_t kernels_shortened = 0;
};

// The trace as a workload. Throws InputError when the window holds no CUDA call that reaches the GPU.
Workload build_workload(const KinetoTrace& t, const ImportOptions& opt = {});

// A label as the scenario writes it (no "${", no control characters).
std::string clean_label(const std::string& s);
// "at::native::vectorized_elementwise_kernel" from "void at::native::vectorized_elementwise_kernel<4, ...>(...)".
std::string short_kernel_name(const std::string& full);

}  // namespace hetsim::import
