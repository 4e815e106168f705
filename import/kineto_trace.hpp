// A PyTorch profiler (Kineto) Chrome trace, read into typed records: the CPU spans (cpu_op,
// user_annotation) per host thread, the CUDA runtime/driver calls, the GPU activity (kernels,
// copies, memsets) keyed by correlation id, the ProfilerStep#N annotations and the device.
// Only reading and checking happen here; import/replay.* turns the records into a workload.
//
// The format is what torch.profiler.profile(...).export_chrome_trace writes (Kineto's
// ChromeTraceLogger): {"schemaVersion", "deviceProperties", "traceEvents": [...]}, complete
// events `"ph": "X"` with `ts`/`dur` in microseconds (floats, ns precision), `args` with
// `correlation`, `stream`, `device`, `grid`, `block`, `registers per thread`, `shared memory`,
// `bytes`. A `.gz` file (measure.py gzips traces over 8 MB) is read through zlib.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/program.hpp"
#include "frontend/limits.hpp"

namespace hetsim::import {

// A host thread of the trace: (pid, tid).
using ThreadKey = std::pair<int64_t, int64_t>;

// A cpu_op or user_annotation span on one host thread; times in ns from the trace's origin.
struct CpuSpan {
    int64_t start = 0, end = 0;
    std::string name;
    bool annotation = false;  // user_annotation (record_function, ProfilerStep#N, DataLoader)
};

// One CUDA runtime or driver API call.
struct ApiCall {
    std::string name;
    int64_t start = 0, end = 0;
    int64_t correlation = -1;
    ThreadKey thread;
    bool driver = false;
};

enum class GpuKind : uint8_t { Kernel, Memcpy, Memset };

// One kernel, copy or memset as the GPU ran it.
struct GpuActivity {
    GpuKind kind = GpuKind::Kernel;
    std::string name;  // the kernel's (demangled) name, or "Memcpy HtoD (Pageable -> Device)"
    int64_t start = 0, end = 0;
    int64_t correlation = -1;  // -1: the record has none
    int64_t device = 0;
    int64_t stream = 0;
    // kernels
    uint64_t grid = 1, block = 1, registers = 0, shared_memory = 0;
    // copies and memsets
    uint64_t bytes = 0;
    CopyDir dir = CopyDir::D2D;
    MemKind host_mem = MemKind::Device;  // the host side of an H2D/D2H copy: pinned, pageable or managed
    bool host_to_host = false;           // "Memcpy HtoH": not a GPU copy
};

// A cuda_sync event (written when the profiler ran with enable_cuda_sync_events): what CUPTI
// saw of a stream wait or event sync, by the correlation id of its call.
struct SyncInfo {
    int64_t stream = -1;              // the stream that waits ("Stream Wait Event"), -1: none
    int64_t wait_on_stream = -1;      // the stream of the event's record, -1: unknown
    int64_t record_correlation = -1;  // the correlation id of the cudaEventRecord, -1: unknown
};

struct ProfilerStep {
    int64_t number = 0;  // N of ProfilerStep#N
    int64_t start = 0, end = 0;
    ThreadKey thread;
};

struct KinetoTrace {
    std::string file;
    std::string device_name;      // deviceProperties[device].name ("NVIDIA H200"), "" when absent
    int64_t device = 0;           // the one device the GPU activity ran on
    std::map<ThreadKey, std::vector<CpuSpan>> spans;  // per thread, sorted by (start, longest first)
    std::vector<ApiCall> calls;   // sorted by start; one per correlation id (the outermost)
    std::vector<GpuActivity> gpu; // sorted by start
    std::multimap<int64_t, size_t> gpu_by_correlation;  // correlation -> index into gpu (-1: records without one)
    std::vector<ProfilerStep> steps;  // sorted by number; empty when the trace has none
    std::map<int64_t, SyncInfo> sync_by_correlation;  // cuda_sync events, by their call's correlation id
    size_t events = 0;            // traceEvents read
};

// Reads `path` (JSON, or gzip-compressed JSON). Throws InputError (file:line:col where it can)
// for: an unreadable or empty file, malformed or truncated JSON, a document that is not a
// Kineto trace, a trace without CUDA runtime calls or GPU activity, GPU activity on several
// devices, and malformed event fields; and a trace that would need more memory than
// `max_memory` (0: no cap): a file, or a gzip file's expanded text, over half the cap, or a JSON
// tree that with the text passes it (refused while it is read, not after).
KinetoTrace read_kineto_trace(const std::string& path, uint64_t max_memory = default_max_memory());

// The same from the file's text (already decompressed); `file` names it in messages.
KinetoTrace parse_kineto_trace(const std::string& text, const std::string& file, uint64_t max_memory = default_max_memory());

// True when `path` looks like a Kineto trace (a JSON object whose first key is not "schema" and
// that has "traceEvents", or a gzip file): for `hetsim compare`, which also reads
// hetsim-runner's measured timelines. Reads only the start of the file.
bool looks_like_kineto(const std::string& path);

}  // namespace hetsim::import
