// hetsim-runner: the execution plan of a lowered program. The program is the simulator's own
// (core/program.hpp), read and checked by the shared codec (core/program_json.hpp); the plan adds
// what only the runner needs: what it can execute on this GPU, the per-op data the shared Op
// leaves out (graph node positions), scratch buffers, issue order and memory budgets.
// Nothing in plan.cu calls CUDA: `--check` runs on a machine without a GPU or driver.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/program.hpp"

namespace runner {

using hetsim::Buffer;
using hetsim::CopyDir;
using hetsim::Event;
using hetsim::Graph;
using hetsim::HostThread;
using hetsim::InputError;
using hetsim::MemKind;
using hetsim::Op;
using hetsim::OpKind;
using hetsim::Program;
using hetsim::Stream;
using hetsim::StreamKind;
using hetsim::to_string;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kDeviceMargin = kGiB;  // left free on the device

// What the runner measures of an op's GPU phase. It follows the op table's GpuWork, except for
// two kinds of the engine's zero-length markers: a graph launch's GPU work is its nodes' records,
// and cudaMallocAsync / cudaFreeAsync leave nothing to time on the GPU (host call only).
enum class GpuTiming : uint8_t {
    None,      // host phase only
    Span,      // kernels, copies, memsets, prefetches: start and end from CUPTI or timing events
    Marker,    // event record / wait: one point on the stream
    Callback,  // host_func: the callback's own host-clock stamps
};
GpuTiming gpu_timing(OpKind k);

// Scratch buffers of one issuing thread (program thread, or the tasks-form issuer), sized to the
// largest copy/memset of each kind that thread issues.
struct Scratch {
    uint64_t pinned = 0;    // host side of pinned copies
    uint64_t pageable = 0;  // host side of pageable copies
    uint64_t dev_src = 0;   // device side read by d2h / d2d copies
    uint64_t dev_dst = 0;   // device side written by h2d / d2d copies and memsets
    uint64_t managed = 0;   // host side of `memory: managed` copies that name no buffer
};

struct Plan {
    std::string file;      // the program file read
    std::string scenario;  // the program's scenario name
    int issuers = 0;                  // program threads, + 1 issuer thread in tasks form
    int issuer_thread = -1;           // tasks form: index of the issuer among issuers
    std::vector<int> issuer_of;       // per op
    std::vector<uint32_t> pos_in_thread;  // per op: position in its issuer's op list
    std::vector<std::vector<uint32_t>> issuer_ops;  // per issuer: ops in execution order
    std::vector<Scratch> scratch;     // per issuer
    uint64_t read_bytes = 0;          // roofline kernels' shared read buffer (device)
    std::vector<uint64_t> read_offset;  // per op (roofline kernels with bytes)
    Scratch graph_scratch;            // copies and memsets of graph nodes (captured once)
    std::vector<int> node_of;         // per op: a graph_node op's position in its graph, else -1
    std::vector<int> launch_of;       // per op: a graph_node op's graph_launch op, else -1
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
    // Host hand-offs (issue 11). Threads with start_after are created (std::thread) when that op's
    // host call returns; the others are the runner's persistent workers, started at time zero.
    std::vector<std::vector<int>> started_by;  // per op: the program threads it creates
    std::vector<char> late;                    // per issuer: created by an op
    int persistent = 0;                        // issuers started at time zero
    bool joins_workers = false;                // a join op targets a thread started at time zero

    // The graph a graph_node op belongs to (its launch's).
    int graph_of_node(const Program& p, uint32_t op) const { return p.ops[launch_of[op]].graph; }
};

// A kernel with `flops`/`bytes` (a roofline) instead of a fixed duration.
inline bool is_roofline(const Program& p, const Op& op) {
    return op.kind == OpKind::Kernel && (p.site(op).flops != 0 || op.bytes != 0);
}

// Builds the plan of a program read by hetsim::read_program_file; throws hetsim::InputError
// (naming `file`) for programs the runner cannot execute.
Plan make_plan(const Program& p, const std::string& file, const std::string& scenario);

// `--check`: what the runner would allocate and execute, without touching CUDA.
void print_plan(const Program& p, const Plan& plan, FILE* out, bool verbose, double peak_flops);

// Whole-SM residency estimate from the H200's limits (used by --check only; the real run asks
// the CUDA occupancy API).
int estimate_blocks_per_sm(uint32_t block, uint32_t regs, uint32_t smem);

std::string human_bytes(uint64_t b);

}  // namespace runner
