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
