#include "import/measured.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hetsim::import {
namespace {

struct Expected {
    OpKind kind;
    const WOp* op;     // the workload op (graph nodes: the launch)
    int32_t node = -1; // graph node index
    size_t step = 0;
};

OpKind op_kind(WKind k) {
    switch (k) {
        case WKind::Host: return OpKind::HostWork;
        case WKind::Kernel: return OpKind::Kernel;
        case WKind::Memcpy: return OpKind::Memcpy;
        case WKind::Memset: return OpKind::Memset;
        case WKind::EventRecord: return OpKind::EventRecord;
        case WKind::StreamWait: return OpKind::StreamWaitEvent;
        case WKind::StreamSync: return OpKind::StreamSync;
        case WKind::EventSync: return OpKind::EventSync;
        case WKind::DeviceSync: return OpKind::DeviceSync;
        case WKind::GraphLaunch: return OpKind::GraphLaunch;
    }
    return OpKind::HostWork;
}

Time ps(int64_t ns) { return Time::ns(ns); }

Engine engine_of(const Op& op) {
    switch (op.kind) {
        case OpKind::Kernel: return Engine::Compute;
        case OpKind::Memset: return Engine::DeviceCopy;
        case OpKind::Memcpy: return op.dir == CopyDir::D2D ? Engine::DeviceCopy : op.dir == CopyDir::H2D ? Engine::H2D : Engine::D2H;
        default: return Engine::None;
    }
}

bool blocking(const Op& op) {
    switch (op.kind) {
        case OpKind::EventSync: case OpKind::StreamSync: case OpKind::DeviceSync: return true;
        case OpKind::Memcpy: case OpKind::Memset: return op.sync;
        default: return false;
    }
}

}  // namespace

MeasuredTrace read_kineto_measured(const std::string& trace, const Program& p, const ImportOptions& opt, uint64_t max_memory) {
    const KinetoTrace t = read_kineto_trace(trace, max_memory);
    const Workload w = build_workload(t, opt);
    MeasuredTrace m;
    m.timeline.ops.resize(p.ops.size());
    m.step_number = w.step_number;
    for (const Span& s : w.step_span) m.step_start.push_back(ps(s.start)), m.step_length.push_back(ps(s.end - s.start));
    m.step_first_op.assign(w.steps, -1);
    auto mismatch = [&](const std::string& what) -> InputError {
        return InputError(SourceLoc{trace}, what + " (compare reads the trace the scenario was imported from, with the knobs at their imported "
                                                   "values; re-import it, or drop the --set values)");
    };
    for (const WThread& th : w.threads) {
        std::vector<Expected> want;
        for (size_t s = 0; s < th.steps.size(); ++s)
            for (const WOp& op : th.steps[s]) {
                want.push_back(Expected{op_kind(op.kind), &op, -1, s});
                if (op.kind == WKind::GraphLaunch)
                    for (size_t k = 0; k < w.graphs[static_cast<size_t>(op.graph)].nodes.size(); ++k) {
                        const WOp& n = w.graphs[static_cast<size_t>(op.graph)].nodes[k];
                        want.push_back(Expected{op_kind(n.kind), &op, static_cast<int32_t>(k), s});
                    }
            }
        const HostThread* pt = nullptr;
        for (const HostThread& h : p.threads)
            if (h.name == th.name) pt = &h;
        if (!pt) throw mismatch("the scenario has no host thread '" + th.name + "', which the trace imports as");
        // The import instantiates the trace's graphs at the main thread's start (they were
        // instantiated before the profiled window): those ops have no measured counterpart and
        // get zero-length records where the window's first op starts.
        size_t lead = 0;
        while (lead < pt->ops.size() && p.ops[pt->ops[lead]].kind == OpKind::GraphInstantiate) ++lead;
        if (pt->ops.size() - lead != want.size())
            throw mismatch("thread '" + th.name + "' of the scenario has " + std::to_string(pt->ops.size() - lead) + " ops; the trace's " +
                           std::to_string(w.steps) + " steps import as " + std::to_string(want.size()));
        for (size_t k = 0; k < lead; ++k) {
            OpRecord& r = m.timeline.ops[pt->ops[k]];
            r.host_start = r.host_end = want.empty() ? Time{} : ps(want.front().op->host.start);
        }
        for (size_t k = 0; k < want.size(); ++k) {
            const uint32_t i = pt->ops[k + lead];
            const Op& op = p.ops[i];
            const Expected& e = want[k];
            const std::string& label = p.label(op);
            const bool named = e.kind == OpKind::HostWork || (e.node < 0 && (e.kind == OpKind::Kernel || e.kind == OpKind::Memcpy || e.kind == OpKind::Memset));
            if (op.kind != e.kind || (named && label != e.op->label))
                throw mismatch("op " + std::to_string(k) + " of thread '" + th.name + "' is " + to_string(op.kind) + " '" + p.op_name(i) +
                               "' in the scenario but " + to_string(e.kind) + (named ? " '" + e.op->label + "'" : std::string()) +
                               " in the trace");
            OpRecord& r = m.timeline.ops[i];
            if (th.name == "main" && m.step_first_op[e.step] < 0) m.step_first_op[e.step] = static_cast<int32_t>(i);
            if (e.node >= 0) {
                const Span& g = e.op->node_gpu[static_cast<size_t>(e.node)];
                r.gpu_start = ps(g.start), r.gpu_end = ps(g.end), r.engine = engine_of(op);
                continue;
            }
            r.host_start = ps(e.op->host.start);
            r.host_end = ps(std::max(e.op->host.start, e.op->host.end));
            if (blocking(op)) r.sync_wait = r.host_end - r.host_start;
            if (e.op->gpu.valid()) r.gpu_start = ps(e.op->gpu.start), r.gpu_end = ps(e.op->gpu.end), r.engine = engine_of(op);
        }
    }
    m.timeline.end_to_end = ps(std::max(w.window, w.measured_end));
    return m;
}

std::vector<StepError> step_errors(const MeasuredTrace& m, const Timeline& sim) {
    std::vector<StepError> out;
    for (size_t s = 0; s < m.step_length.size(); ++s) {
        StepError e;
        e.number = m.step_number[s];
        e.measured = m.step_length[s];
        const int32_t a = m.step_first_op[s];
        const int32_t b = s + 1 < m.step_first_op.size() ? m.step_first_op[s + 1] : -1;
        if (a < 0 || static_cast<size_t>(a) >= sim.ops.size()) continue;
        const Time start = sim.ops[static_cast<size_t>(a)].host_start;
        const Time end = b >= 0 && static_cast<size_t>(b) < sim.ops.size() ? sim.ops[static_cast<size_t>(b)].host_start : sim.end_to_end;
        e.simulated = end - start;
        e.error_pct = e.measured.ps() ? 100.0 * static_cast<double>((e.simulated - e.measured).ps()) / static_cast<double>(e.measured.ps()) : 0;
        out.push_back(e);
    }
    return out;
}

}  // namespace hetsim::import
