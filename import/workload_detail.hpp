// Internals of build_workload (import/workload.cpp, import/workload_build.cpp): the steps that
// turn classified CUDA calls into per-thread, per-step ops. Not a public interface.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "import/span_index.hpp"
#include "import/workload.hpp"

namespace hetsim::import::detail {

enum class CallKind : uint8_t {
    Other, Kernel, Memcpy, Memset, EventRecord, StreamWait, StreamSync, EventSync, DeviceSync, GraphLaunch,
    LaunchWithoutGpu,  // a launch or graph launch whose GPU work the trace lacks
    FreeSync,          // cudaFree / cudaFreeHost: waits for the whole device, then frees
};

struct Call {
    const ApiCall* api = nullptr;
    CallKind kind = CallKind::Other;
    std::vector<size_t> gpu;  // indices into KinetoTrace::gpu, by start
};

bool contains(const std::string& s, const char* sub);
bool is_loader_span(const std::string& n);    // DataLoader __next__ annotations
bool is_readback_span(const std::string& n);  // aten::item, aten::_local_scalar_dense
bool is_copy_span(const std::string& n);      // aten::copy_, aten::_to_copy, aten::to
CallKind classify(const KinetoTrace& t, const ApiCall& c, std::vector<size_t>& gpu);
bool is_capture_begin(const std::string& n);  // cudaStreamBeginCapture(ToGraph)
bool is_capture_end(const std::string& n);    // cudaStreamEndCapture

// Position of an op: thread, step, index in the step.
struct Ref {
    size_t th = 0, step = 0, pos = 0;
};

class Builder {
public:
    Builder(const KinetoTrace& t, Workload& w, const ImportOptions& opt, int64_t ws, int64_t we, std::vector<Span> step_abs);
    void make_threads(ThreadKey main, const std::vector<Call>& calls);
    // GPU records of the window that no call of the trace issued (a library's own thread, a
    // dropped call, no correlation id): each goes after a call of the thread that issued its
    // stream's previous work; those ahead of all the window's work on their stream were issued
    // before the window and are left out.
    void place_orphans(const std::vector<Call>& calls);
    void build_ops(const std::vector<Call>& calls);
    void link();             // streams of syncs and records, the record each wait or event sync waits for
    void find_repeat();      // the same op sequence every step? events per body position
    void fold_durations();   // repeat: median duration per body position; graph nodes: per node
    void shorten_kernels();  // each kernel's duration less CUPTI's record excess (docs/import.md, "Kernel records")
    void find_capture();     // the main thread's capturable kernel region (cuda_graph)

private:
    WOp& at(const Ref& r) { return w_.threads[r.th].steps[r.step][r.pos]; }
    size_t step_of(int64_t abs) const;
    int32_t stream_index(int64_t id);
    void covering(const WThread& th, int64_t abs, std::vector<const CpuSpan*>& out) const;
    std::string label_at(const WThread& th, int64_t abs, bool side) const;
    const CpuSpan* outermost(const WThread& th, int64_t abs) const;  // below ProfilerStep#N; null: none
    bool between_steps(int64_t abs) const;  // after one ProfilerStep span, before the next
    void emit_host(size_t th, int64_t a, int64_t b, bool side, const std::vector<int64_t>& cuts);
    // Profiler boundaries (span starts and ends; CUDA call starts and ends) of a thread's trace
    // threads in [a, b) and [a, b].
    size_t span_marks(const WThread& th, int64_t a, int64_t b) const;
    size_t call_marks(const WThread& th, int64_t a, int64_t b) const;
    void emit_call(size_t th, const Call& c, bool& prev_upload);
    void emit_orphan(size_t th, size_t gi, int64_t issue, ThreadKey tid);
    int32_t graph_for(const Call& c);
    // The next GPU op of trace thread `tid` after `r` (on another stream than `not_stream` when
    // that is >= 0); -1 / null: none.
    int32_t stream_ahead(const Ref& r, ThreadKey tid, int32_t not_stream = -1) const;
    const WOp* gpu_ahead(const Ref& r, ThreadKey tid, int32_t not_stream = -1) const;
    std::string signature(const Ref& r) const;
    bool fold(ThreadKey main, ThreadKey other, const std::vector<Call>& calls) const;

    const KinetoTrace& t_;
    Workload& w_;
    const ImportOptions& opt_;
    int64_t ws_, we_;
    std::vector<Span> step_abs_;
    std::map<ThreadKey, SpanIndex> index_;
    std::map<ThreadKey, std::vector<int64_t>> span_marks_, call_marks_;  // sorted
    std::map<ThreadKey, size_t> thread_of_;
    std::vector<Ref> record_ref_;                       // record id -> where it is
    std::vector<std::vector<std::vector<int64_t>>> graph_durations_;  // graph -> node -> per launch
    std::map<std::string, int32_t> graph_ids_;
    std::map<size_t, std::vector<std::pair<int64_t, size_t>>> orphans_after_;  // index into calls -> (issue time, GPU record) after it
    std::vector<int64_t> gpu_end_before_;                  // max end of t_.gpu[0..i] (by start)
};

}  // namespace hetsim::import::detail
