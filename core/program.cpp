#include "core/program.hpp"

#include <algorithm>

#include "core/timeline.hpp"

namespace hetsim {

static_assert(sizeof(Op) == 40, "Op is kept at 40 bytes: programs hold millions of them");

constexpr bool op_table_in_kind_order() {
    for (int k = 0; k < kOpKinds; ++k)
        if (static_cast<int>(detail::kOpTable[k].kind) != k) return false;
    return true;
}
static_assert(op_table_in_kind_order(), "op_info indexes the op table by kind: keep its rows in OpKind order");

namespace {

constexpr uint8_t kAll = kInThreads | kInTasks;
}  // namespace

const std::vector<OpSpelling>& op_spellings() {
    static const std::vector<OpSpelling> rows = {
        {"host", OpKind::HostWork, false, "duration uses reads writes", kAll},
        {"kernel", OpKind::Kernel, false, "stream duration flops bytes grid block registers shared_memory uses", kAll | kInGraphs},
        {"memcpy", OpKind::Memcpy, true, "src dst bytes direction memory", kAll},
        {"memcpy_async", OpKind::Memcpy, false, "src dst bytes direction memory stream", kAll | kInGraphs},
        {"memcpy2d_async", OpKind::Memcpy, false, "src dst width height spitch dpitch direction memory stream", kAll},
        {"memset", OpKind::Memset, true, "dst bytes direction memory", kAll},
        {"memset_async", OpKind::Memset, false, "dst bytes direction memory stream", kAll | kInGraphs},
        {"event_record", OpKind::EventRecord, false, "stream", kInThreads},
        {"stream_wait_event", OpKind::StreamWaitEvent, false, "stream", kInThreads},
        {"event_sync", OpKind::EventSync, true, "", kInThreads},
        {"stream_sync", OpKind::StreamSync, true, "", kInThreads},
        {"device_sync", OpKind::DeviceSync, true, "", kInThreads},
        {"prefetch", OpKind::Prefetch, false, "to bytes stream", kAll},
        {"host_func", OpKind::HostFunc, false, "duration stream sets", kAll | kInGraphs},
        {"graph_instantiate", OpKind::GraphInstantiate, false, "", kInThreads},
        {"graph_launch", OpKind::GraphLaunch, false, "stream", kInThreads},
        {"malloc", OpKind::Malloc, false, "bytes", kInThreads},
        {"free", OpKind::Free, true, "bytes", kInThreads},
        {"malloc_host", OpKind::MallocHost, false, "bytes", kInThreads},
        {"free_host", OpKind::FreeHost, true, "bytes", kInThreads},
        {"host_register", OpKind::HostRegister, false, "bytes", kInThreads},
        {"malloc_async", OpKind::MallocAsync, false, "bytes stream", kInThreads},
        {"free_async", OpKind::FreeAsync, false, "bytes stream", kInThreads},
        // Host hand-offs between threads (issue 11); `barrier` has no spelling (measure: warmup).
        {"put", OpKind::QueuePut, false, "", kInThreads},
        {"get", OpKind::QueueGet, true, "", kInThreads},
        {"host_wait", OpKind::HostWait, true, "", kInThreads},
        {"join", OpKind::Join, true, "", kInThreads},
    };
    return rows;
}

const OpSpelling* find_spelling(std::string_view yaml) {
    for (const OpSpelling& s : op_spellings())
        if (yaml == s.yaml) return &s;
    return nullptr;
}

const char* to_string(OpKind k) { return op_info(k).name; }

const char* to_string(MemKind k) {
    switch (k) {
        case MemKind::Pinned: return "pinned";
        case MemKind::Pageable: return "pageable";
        case MemKind::Device: return "device";
        case MemKind::Managed: return "managed";
    }
    return "?";
}

const char* to_string(CopyDir d) {
    switch (d) {
        case CopyDir::H2D: return "h2d";
        case CopyDir::D2H: return "d2h";
        case CopyDir::D2D: return "d2d";
    }
    return "?";
}

const char* to_string(StreamKind k) {
    switch (k) {
        case StreamKind::Blocking: return "blocking";
        case StreamKind::NonBlocking: return "non_blocking";
        case StreamKind::Legacy: return "legacy";
        case StreamKind::PerThread: return "per_thread";
    }
    return "?";
}

namespace {
template <class E>
bool parse_enum(std::string_view s, E& out, int count) {
    for (int v = 0; v < count; ++v)
        if (s == to_string(static_cast<E>(v))) {
            out = static_cast<E>(v);
            return true;
        }
    return false;
}
}  // namespace

bool from_string(std::string_view s, OpKind& out) { return parse_enum(s, out, kOpKinds); }
bool from_string(std::string_view s, MemKind& out) { return parse_enum(s, out, 4); }
bool from_string(std::string_view s, CopyDir& out) { return parse_enum(s, out, 3); }
bool from_string(std::string_view s, StreamKind& out) { return parse_enum(s, out, 4); }

std::string Program::op_name(uint32_t i) const {
    const Op& op = ops[i];
    const Site& st = sites[op.site];
    std::string s = names[st.label];
    for (uint32_t k = 0; k < st.depth; ++k) {
        s.push_back('[');
        s.append(std::to_string(iter_indices[op.iter_begin + k]));
        s.push_back(']');
    }
    return s;
}

std::vector<uint32_t> Program::loop_indices(uint32_t i) const {
    const Op& op = ops[i];
    auto first = iter_indices.begin() + op.iter_begin;
    return std::vector<uint32_t>(first, first + sites[op.site].depth);
}

const char* to_string(CauseKind k) {
    switch (k) {
        case CauseKind::None: return "start";
        case CauseKind::ProgramOrder: return "program order";
        case CauseKind::Submit: return "launch";
        case CauseKind::StreamOrder: return "stream order";
        case CauseKind::Event: return "event wait";
        case CauseKind::Legacy: return "legacy default stream";
        case CauseKind::Sync: return "host sync";
        case CauseKind::After: return "after";
        case CauseKind::Resource: return "resource busy";
        case CauseKind::Queue: return "hardware queue";
        case CauseKind::HostQueue: return "host queue";
        case CauseKind::Flag: return "flag";
        case CauseKind::Thread: return "host thread";
        case CauseKind::GraphExec: return "graph relaunch";
    }
    return "?";
}

const char* to_string(Engine e) {
    switch (e) {
        case Engine::None: return "none";
        case Engine::H2D: return "copy engine H2D";
        case Engine::D2H: return "copy engine D2H";
        case Engine::Compute: return "SMs";
        case Engine::DeviceCopy: return "device copy";
    }
    return "?";
}

}  // namespace hetsim

namespace hetsim {

void number_graph_execs(Program& pg) {
    pg.execs.clear();
    for (uint32_t i = 0; i < pg.ops.size(); ++i)
        if (pg.ops[i].kind == OpKind::GraphInstantiate) {
            pg.ops[i].exec = pg.execs.size();
            pg.execs.push_back(i);
        }
}

std::string assign_graph_execs(Program& pg, uint32_t& bad) {
    number_graph_execs(pg);
    // Per graph: its executables (in index order), for launches from a thread that instantiates none.
    std::vector<std::vector<uint32_t>> of_graph(pg.graphs.size());
    for (uint32_t e = 0; e < pg.execs.size(); ++e) of_graph[static_cast<size_t>(pg.ops[pg.execs[e]].graph)].push_back(e);
    std::vector<int64_t> own(pg.graphs.size(), -1);  // per graph: the launching thread's latest executable
    for (size_t t = 0; t < pg.threads.size(); ++t) {
        std::fill(own.begin(), own.end(), -1);
        for (uint32_t i : pg.threads[t].ops) {
            Op& op = pg.ops[i];
            if (op.kind == OpKind::GraphInstantiate) own[static_cast<size_t>(op.graph)] = static_cast<int64_t>(op.exec);
            if (op.kind != OpKind::GraphLaunch) continue;
            const size_t g = static_cast<size_t>(op.graph);
            if (own[g] >= 0) {
                op.exec = static_cast<uint64_t>(own[g]);
                continue;
            }
            std::vector<uint32_t> others;  // executables made on other threads
            bool later_here = false;       // this thread instantiates the graph, after this launch
            for (uint32_t e : of_graph[g]) {
                if (pg.ops[pg.execs[e]].thread == static_cast<int16_t>(t)) later_here = true;
                else others.push_back(e);
            }
            if (others.size() == 1) {
                op.exec = others[0];
                continue;
            }
            bad = i;
            const std::string& name = pg.graphs[g].name;
            const std::string& thread = pg.threads[t].name;
            if (others.empty() && !later_here)
                return "graph_launch of graph '" + name + "', which no op instantiates; add '- graph_instantiate: " + name +
                       "' before the first launch";
            if (others.empty())
                return "graph_launch of graph '" + name + "' comes before thread '" + thread +
                       "' instantiates it, and no other thread instantiates it: there is no executable graph to launch yet; "
                       "move the graph_instantiate of '" + name + "' before the launch";
            std::string where;
            for (size_t k = 0; k < others.size() && k < 3; ++k) {
                const Op& in = pg.ops[pg.execs[others[k]]];
                const SourceLoc& l = pg.loc(in);
                where += (k ? ", " : "") + std::string("thread '") + pg.threads[static_cast<size_t>(in.thread)].name + "'";
                if (l.line > 0) where += " at line " + std::to_string(l.line);
            }
            if (others.size() > 3) where += ", ...";
            return "graph_launch of graph '" + name + "' is ambiguous: thread '" + thread + "' does not instantiate '" + name +
                   "' before it, and other threads instantiate it " + std::to_string(others.size()) + " times (" + where +
                   "), each a separate executable graph; instantiate '" + name +
                   "' on the launching thread, or declare one graph per thread";
        }
    }
    return "";
}

}  // namespace hetsim
