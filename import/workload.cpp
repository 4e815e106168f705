#include "import/workload.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "import/span_index.hpp"
#include "import/workload_detail.hpp"

namespace hetsim::import {

const char* to_string(WKind k) {
    switch (k) {
        case WKind::Host: return "host";
        case WKind::Kernel: return "kernel";
        case WKind::Memcpy: return "memcpy";
        case WKind::Memset: return "memset";
        case WKind::EventRecord: return "event_record";
        case WKind::StreamWait: return "stream_wait_event";
        case WKind::StreamSync: return "stream_sync";
        case WKind::EventSync: return "event_sync";
        case WKind::DeviceSync: return "device_sync";
        case WKind::GraphLaunch: return "graph_launch";
    }
    return "?";
}

std::string clean_label(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7f) continue;
        if (c == '$' && i + 1 < s.size() && s[i + 1] == '{') {
            out += "$ ";
            continue;
        }
        out += static_cast<char>(c);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out.empty() ? std::string("unnamed") : out;
}

std::string short_kernel_name(const std::string& full) {
    std::string s = full;
    for (const char* prefix : {"void ", "__global__ "})
        if (s.rfind(prefix, 0) == 0) s = s.substr(std::char_traits<char>::length(prefix));
    int depth = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '<' || c == '(') {
            if (depth == 0 && i > 0) return clean_label(s.substr(0, i));
            ++depth;
        } else if (c == '>' || c == ')') {
            --depth;
        }
    }
    return clean_label(s);
}

namespace detail {

bool is_capture_begin(const std::string& n) { return n.find("BeginCapture") != std::string::npos; }
bool is_capture_end(const std::string& n) { return n.find("EndCapture") != std::string::npos; }

bool contains(const std::string& s, const char* sub) { return s.find(sub) != std::string::npos; }

bool is_loader_span(const std::string& n) { return contains(n, "DataLoader") && contains(n, "__next__"); }
bool is_readback_span(const std::string& n) { return n == "aten::item" || n == "aten::_local_scalar_dense"; }
bool is_copy_span(const std::string& n) { return n == "aten::copy_" || n == "aten::_to_copy" || n == "aten::to"; }

CallKind classify(const KinetoTrace& t, const ApiCall& c, std::vector<size_t>& gpu) {
    gpu.clear();
    if (c.correlation >= 0) {
        auto [lo, hi] = t.gpu_by_correlation.equal_range(c.correlation);
        for (auto it = lo; it != hi; ++it) gpu.push_back(it->second);
        std::sort(gpu.begin(), gpu.end());  // by start (t.gpu is sorted)
    }
    const std::string& n = c.name;
    const bool launch = contains(n, "LaunchKernel") || contains(n, "LaunchCooperativeKernel");
    if (!gpu.empty()) {
        if (contains(n, "GraphLaunch")) return CallKind::GraphLaunch;
        const GpuActivity& g = t.gpu[gpu.front()];
        if (g.kind == GpuKind::Kernel) return CallKind::Kernel;
        if (g.kind == GpuKind::Memset) return CallKind::Memset;
        return g.host_to_host ? CallKind::Other : CallKind::Memcpy;
    }
    if (contains(n, "StreamSynchronize")) return CallKind::StreamSync;
    // cudaThreadSynchronize: the deprecated name of cudaDeviceSynchronize.
    if (contains(n, "DeviceSynchronize") || contains(n, "CtxSynchronize") || contains(n, "ThreadSynchronize")) return CallKind::DeviceSync;
    // cudaFree and cudaFreeHost synchronize the device before they free (CUDA's implicit
    // synchronization); their stream-ordered forms (cudaFreeAsync) and cuMemUnmap / cuMemRelease
    // (expandable segments) do not.
    if (n == "cudaFree" || n == "cudaFreeHost" || n == "cuMemFree" || n == "cuMemFree_v2" || n == "cuMemFreeHost") return CallKind::FreeSync;
    if (contains(n, "EventSynchronize")) return CallKind::EventSync;
    if (contains(n, "EventRecord")) return CallKind::EventRecord;
    if (contains(n, "StreamWaitEvent")) return CallKind::StreamWait;
    if (launch || contains(n, "GraphLaunch")) return CallKind::LaunchWithoutGpu;
    return CallKind::Other;
}

}  // namespace detail

using namespace detail;

namespace {

std::string profile_for(const std::string& device) {
    auto has = [&](const char* s) { return device.find(s) != std::string::npos; };
    if (has("GH200")) return "gh200";
    if (has("H200")) return "h200";
    if (has("H100")) return has("PCIe") ? "h100-pcie" : "h100-sxm";
    if (has("A100")) return "a100-pcie";
    return "";
}

}  // namespace

Workload build_workload(const KinetoTrace& t, const ImportOptions& opt) {
    Workload w;
    w.trace_file = t.file;
    w.device_name = t.device_name;
    w.profile = !opt.profile.empty() ? opt.profile : profile_for(t.device_name);
    if (w.profile.empty()) {
        w.profile = "h200";
        w.notes.push_back("the trace's device (" + (t.device_name.empty() ? std::string("unnamed") : t.device_name) +
                          ") has no shipped profile; h200 is used (import --hardware P to choose)");
    }

    // ---- the window: the profiler's active steps on the thread that records them
    ThreadKey main_key;
    int64_t ws = 0, we = 0;
    std::vector<Span> step_abs;
    if (!t.steps.empty()) {
        std::map<ThreadKey, size_t> count;
        for (const ProfilerStep& s : t.steps) ++count[s.thread];
        main_key = std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
        for (const ProfilerStep& s : t.steps)
            if (s.thread == main_key) {
                step_abs.push_back(Span{s.start, s.end});
                w.step_number.push_back(s.number);
            }
        ws = step_abs.front().start;
        for (const Span& s : step_abs) we = std::max(we, s.end);
    } else {
        w.annotated_steps = false;
        std::map<ThreadKey, size_t> count;
        for (const ApiCall& c : t.calls) ++count[c.thread];
        main_key = std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
        ws = t.calls.front().start;
        for (const ApiCall& c : t.calls) we = std::max(we, c.end);
        step_abs.push_back(Span{ws, we});
        w.step_number.push_back(0);
        w.notes.push_back("the trace has no ProfilerStep#N annotations (no profiler schedule): the whole trace is one step");
    }
    w.span_overhead = opt.span_overhead >= 0 ? opt.span_overhead : kSpanOverheadNs;
    w.call_overhead = opt.call_overhead >= 0 ? opt.call_overhead : kCallOverheadNs;
    w.kernel_excess = opt.kernel_excess >= 0 ? opt.kernel_excess : kKernelExcessNs;
    w.steps = step_abs.size();
    w.window = we - ws;
    for (const Span& s : step_abs) w.step_span.push_back(Span{s.start - ws, s.end - ws});

    // ---- the calls of the window, classified
    // A call inside a graph capture (cudaStreamBeginCapture .. cudaStreamEndCapture on its
    // thread) is recorded into the graph, not run: host work. A call that lies inside another
    // call of its thread that becomes an op (a driver call under its runtime call with another
    // correlation id) is part of that op.
    std::vector<Call> calls;
    std::vector<size_t> gpu;
    std::map<ThreadKey, bool> capturing;
    std::map<ThreadKey, int64_t> op_end;  // per thread: the end of its last call that became an op
    for (const ApiCall& c : t.calls) {
        if (c.start < ws || c.start > we) continue;
        if (is_capture_begin(c.name)) capturing[c.thread] = true;
        if (is_capture_end(c.name)) capturing[c.thread] = false;
        CallKind k = classify(t, c, gpu);
        if (capturing[c.thread] && gpu.empty()) {
            ++w.calls_kept_as_host;
            ++w.calls_in_capture;
            continue;
        }
        if (auto it = op_end.find(c.thread); it != op_end.end() && c.end <= it->second && gpu.empty()) continue;
        if (k == CallKind::LaunchWithoutGpu) ++w.launches_without_kernel;
        if (k == CallKind::Other || k == CallKind::LaunchWithoutGpu) {
            ++w.calls_kept_as_host;
            continue;
        }
        op_end[c.thread] = std::max(op_end[c.thread], c.end);
        calls.push_back(Call{&c, k, gpu});
    }
    if (calls.empty())
        throw InputError(SourceLoc{t.file}, "no CUDA call in the profiled window (" + std::to_string(w.steps) +
                                                " steps) launches, copies, syncs or waits: nothing to replay");

    // ---- host threads: those that call CUDA; the ones that only run while the main thread
    // waits (the autograd engine's device thread in backward) are folded into it
    Builder b(t, w, opt, ws, we, step_abs);
    b.make_threads(main_key, calls);
    b.place_orphans(calls);
    b.build_ops(calls);
    b.link();
    b.find_repeat();
    b.fold_durations();
    b.shorten_kernels();
    b.find_capture();
    if (w.orphans_placed)
        w.notes.push_back("GPU work that no call of the trace issued (a library's own thread, a call the profiler dropped, no "
                          "correlation id): " + std::to_string(w.orphans_placed) +
                          " records, each placed after the call of the thread that issued its stream's previous work (at its "
                          "GPU start where the stream was idle until then)");
    if (w.orphans_before_window)
        w.notes.push_back("GPU work that no call of the trace issued, ahead of the window's work on its stream and run back to "
                          "back with work started before the window (issued before it): " +
                          std::to_string(w.orphans_before_window) + " records, left out");
    if (w.calls_in_capture)
        w.notes.push_back("calls inside a graph capture (cudaStreamBeginCapture .. cudaStreamEndCapture) are recorded, not run: " +
                          std::to_string(w.calls_in_capture) + " calls, their time stays in the host work");
    return w;
}

}  // namespace hetsim::import
