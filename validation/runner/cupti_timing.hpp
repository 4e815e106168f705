// hetsim-runner: GPU start/end of kernels, copies and memsets from CUPTI activity records.
// libcupti is opened with dlopen at run time (never linked), so the runner runs where it is absent.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace runner::cupti {

struct Span {
    uint64_t start = UINT64_MAX, end = 0;  // CUPTI timestamps, ns
    std::vector<std::pair<uint64_t, uint64_t>> parts;  // every record (start, end), in arrival order
    std::vector<uint64_t> nodes;  // per part: the graph node that ran it (graph_node_ids: original node id; 0 outside graphs)
};

// Loads libcupti (hint first: a path given by --cupti-lib; then $HETSIM_CUPTI_LIB, the loader's
// search path and the usual CUDA and pip locations), checks its version against the headers,
// makes CUPTI take its timestamps from steady_clock when it can, and enables the CONCURRENT_KERNEL,
// MEMCPY, MEMSET and EXTERNAL_CORRELATION activity kinds. Must run before the first CUDA call.
// Returns false, with the reason, when CUPTI cannot be used; then nothing is left enabled.
bool start(const std::string& hint, std::string& why);

const std::string& library_path();
uint32_t version();
bool steady_timestamps();  // CUPTI timestamps come from our steady_clock callback

// Also enables RUNTIME API records (some CUPTI versions emit external-correlation records only then).
bool enable_runtime_records();
bool runtime_records();

// Stops producing records (uninstrumented runs, or falling back to events).
void disable();

// External correlation id around each API call that issues GPU work.
void push(uint64_t id);
void pop();

// Flushes all buffers, then moves the GPU spans gathered so far out, keyed by external id (an op
// issued by one API call may produce several records: they are merged to min start / max end).
void collect(std::unordered_map<uint64_t, Span>& out);
uint64_t dropped_records();

// Graph nodes built with explicit dependencies are told apart by their node ids: CUPTI gives each
// record the id of the node that ran it, in the instantiated (cloned) graph; a resource callback
// (GRAPHNODE_CLONED) maps the clones back to the nodes the runner added. False when this libcupti
// lacks cuptiGetGraphNodeId or the callback could not be subscribed (then such nodes have no GPU times).
bool graph_node_ids();
// cuptiGetGraphNodeId of a node the runner added (0 when graph_node_ids() is false).
uint64_t node_id(void* cuda_graph_node);

// CUPTI time minus steady_clock time (ns), from the tightest of several paired reads; `window`
// gets that pair's width (the uncertainty).
int64_t clock_offset(int64_t* window);

}  // namespace runner::cupti
