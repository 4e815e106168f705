// Parsing, validation and planning of a lowered program. No CUDA calls in this file.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "program.hpp"

namespace runner {

using nlohmann::json;

const char* to_string(Mem m) {
    switch (m) {
        case Mem::Pinned: return "pinned";
        case Mem::Pageable: return "pageable";
        case Mem::Device: return "device";
        case Mem::Managed: return "managed";
    }
    return "?";
}
const char* to_string(Dir d) {
    switch (d) {
        case Dir::H2D: return "h2d";
        case Dir::D2H: return "d2h";
        case Dir::D2D: return "d2d";
    }
    return "?";
}
const char* to_string(StreamKind k) {
    switch (k) {
        case StreamKind::Legacy: return "legacy";
        case StreamKind::Blocking: return "blocking";
        case StreamKind::NonBlocking: return "non_blocking";
        case StreamKind::PerThread: return "per_thread";
    }
    return "?";
}
const char* to_string(OpKind k) {
    switch (k) {
        case OpKind::Host: return "host";
        case OpKind::Kernel: return "kernel";
        case OpKind::Memcpy: return "memcpy";
        case OpKind::Memset: return "memset";
        case OpKind::EventRecord: return "event_record";
        case OpKind::StreamWaitEvent: return "stream_wait_event";
        case OpKind::EventSync: return "event_sync";
        case OpKind::StreamSync: return "stream_sync";
        case OpKind::DeviceSync: return "device_sync";
        case OpKind::Prefetch: return "prefetch";
        case OpKind::HostFunc: return "host_func";
        case OpKind::GraphInstantiate: return "graph_instantiate";
        case OpKind::GraphLaunch: return "graph_launch";
        case OpKind::Malloc: return "malloc";
        case OpKind::Free: return "free";
        case OpKind::MallocHost: return "malloc_host";
        case OpKind::FreeHost: return "free_host";
        case OpKind::HostRegister: return "host_register";
        case OpKind::MallocAsync: return "malloc_async";
        case OpKind::FreeAsync: return "free_async";
    }
    return "?";
}

bool has_gpu_phase(OpKind k) {
    switch (k) {
        case OpKind::Kernel:
        case OpKind::Memcpy:
        case OpKind::Memset:
        case OpKind::EventRecord:
        case OpKind::StreamWaitEvent:
        case OpKind::Prefetch:
        case OpKind::HostFunc: return true;
        default: return false;
    }
}

std::string human_bytes(uint64_t b) {
    char buf[64];
    if (b >= kGiB) std::snprintf(buf, sizeof buf, "%" PRIu64 " B (%.2f GiB)", b, double(b) / double(kGiB));
    else if (b >= kMiB) std::snprintf(buf, sizeof buf, "%" PRIu64 " B (%.2f MiB)", b, double(b) / double(kMiB));
    else std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
    return buf;
}

namespace {

[[noreturn]] void fail(const std::string& msg) { throw InputError(msg); }

const json& need(const json& o, const char* key, const std::string& where) {
    auto it = o.find(key);
    if (it == o.end()) fail(where + ": missing key \"" + key + "\"");
    return *it;
}

std::string need_str(const json& o, const char* key, const std::string& where) {
    const json& v = need(o, key, where);
    if (!v.is_string()) fail(where + ": \"" + key + "\" must be a string, got " + v.dump());
    return v.get<std::string>();
}

int64_t as_int(const json& v, const char* key, const std::string& where, int64_t lo, int64_t hi) {
    if (!v.is_number_integer()) fail(where + ": \"" + key + "\" must be an integer, got " + v.dump());
    int64_t x;
    if (v.is_number_unsigned()) {
        uint64_t u = v.get<uint64_t>();
        if (u > uint64_t(INT64_MAX)) fail(where + ": \"" + key + "\" is out of range: " + v.dump());
        x = int64_t(u);
    } else {
        x = v.get<int64_t>();
    }
    if (x < lo || x > hi)
        fail(where + ": \"" + key + "\" is " + std::to_string(x) + ", expected " + std::to_string(lo) + ".." + std::to_string(hi));
    return x;
}

int64_t need_int(const json& o, const char* key, const std::string& where, int64_t lo, int64_t hi) {
    return as_int(need(o, key, where), key, where, lo, hi);
}

uint64_t need_u64(const json& o, const char* key, const std::string& where) {
    const json& v = need(o, key, where);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
        fail(where + ": \"" + key + "\" must be a non-negative integer, got " + v.dump());
    return v.get<uint64_t>();
}

bool need_bool(const json& o, const char* key, const std::string& where) {
    const json& v = need(o, key, where);
    if (!v.is_boolean()) fail(where + ": \"" + key + "\" must be true or false, got " + v.dump());
    return v.get<bool>();
}

double need_num(const json& o, const char* key, const std::string& where) {
    const json& v = need(o, key, where);
    if (!v.is_number()) fail(where + ": \"" + key + "\" must be a number, got " + v.dump());
    double d = v.get<double>();
    if (!std::isfinite(d) || d < 0) fail(where + ": \"" + key + "\" must be a finite non-negative number, got " + v.dump());
    return d;
}

const json& need_array(const json& o, const char* key, const std::string& where) {
    const json& v = need(o, key, where);
    if (!v.is_array()) fail(where + ": \"" + key + "\" must be an array");
    return v;
}

std::vector<uint32_t> index_list(const json& o, const char* key, const std::string& where, size_t limit, const char* what) {
    std::vector<uint32_t> out;
    for (const json& v : need_array(o, key, where)) {
        int64_t x = as_int(v, key, where, 0, INT32_MAX);
        if (uint64_t(x) >= limit)
            fail(where + ": \"" + key + "\" names " + what + " " + std::to_string(x) + " but the program has " + std::to_string(limit));
        out.push_back(uint32_t(x));
    }
    return out;
}

template <class E, size_t N>
E enum_of(const json& o, const char* key, const std::string& where, const E (&all)[N]) {
    std::string s = need_str(o, key, where);
    std::string expected;
    for (E e : all) {
        if (s == to_string(e)) return e;
        expected += std::string(expected.empty() ? "" : ", ") + to_string(e);
    }
    fail(where + ": unknown " + key + " \"" + s + "\" (expected one of: " + expected + ")");
}

std::string op_where(const Op& o) { return "op " + std::to_string(o.index) + " '" + o.name + "' (" + to_string(o.kind) + ")"; }

// The kind-specific keys of an op or a graph node (a node has no index, thread or stream).
void parse_fields(const Program& p, const json& o, Op& op, const std::string& w, bool node) {
    static const Mem mems[] = {Mem::Pinned, Mem::Pageable, Mem::Device, Mem::Managed};
    static const Dir dirs[] = {Dir::H2D, Dir::D2H, Dir::D2D};
    auto opt_index = [&](const char* key, size_t limit, const char* what) -> int {
        if (!o.contains(key)) return -1;
        int64_t x = need_int(o, key, w, 0, INT32_MAX);
        if (uint64_t(x) >= limit)
            fail(w + ": \"" + key + "\" names " + what + " " + std::to_string(x) + " but the program has " + std::to_string(limit));
        return int(x);
    };
    op.stream = opt_index("stream", p.streams.size(), "stream");
    op.event = opt_index("event", p.events.size(), "event");
    op.buffer = opt_index("buffer", p.buffers.size(), "buffer");
    auto need_stream = [&] { if (!node && op.stream < 0) fail(w + ": missing key \"stream\""); };
    auto need_event = [&] { if (op.event < 0) fail(w + ": missing key \"event\""); };
    switch (op.kind) {
        case OpKind::Host:
            op.duration_ps = need_int(o, "duration_ps", w, 0, INT64_MAX);
            if (op.thread < 0) fail(w + ": host work needs a host thread (\"thread\" is -1)");
            break;
        case OpKind::Kernel:
            need_stream();
            if (o.contains("duration_ps")) {
                op.duration_ps = need_int(o, "duration_ps", w, 0, INT64_MAX);
                if (o.contains("flops") || o.contains("bytes"))
                    fail(w + ": a kernel has either \"duration_ps\" or \"flops\"/\"bytes\", not both");
            } else {
                if (!o.contains("flops") && !o.contains("bytes")) fail(w + ": a kernel needs \"duration_ps\" or \"flops\"/\"bytes\"");
                op.roofline = true;
                op.flops = o.contains("flops") ? need_num(o, "flops", w) : 0.0;
                op.bytes = o.contains("bytes") ? need_u64(o, "bytes", w) : 0;
            }
            op.grid = uint32_t(need_int(o, "grid", w, 1, INT32_MAX));
            op.block = uint32_t(need_int(o, "block", w, 1, 1024));
            op.registers = uint32_t(need_int(o, "registers", w, 1, 255));
            op.shared_memory = uint32_t(need_int(o, "shared_memory", w, 0, UINT32_MAX));
            break;
        case OpKind::Memcpy:
            need_stream();
            op.sync = need_bool(o, "sync", w);
            op.dir = enum_of(o, "direction", w, dirs);
            op.memory = enum_of(o, "memory", w, mems);
            op.bytes = need_u64(o, "bytes", w);
            if ((op.dir == Dir::D2D) != (op.memory == Mem::Device))
                fail(w + ": direction " + to_string(op.dir) + " with memory " + to_string(op.memory) +
                     " (d2d copies have memory \"device\"; h2d/d2h copies pinned, pageable or managed)");
            if (op.buffer >= 0) {
                const Buffer& b = p.buffers[op.buffer];
                if (b.kind != Mem::Managed || op.memory != Mem::Managed)
                    fail(w + ": \"buffer\" on a copy must name the managed buffer of a managed copy; '" + b.name + "' is " + to_string(b.kind));
                if (op.bytes > b.bytes) fail(w + ": copies " + std::to_string(op.bytes) + " bytes from/to buffer '" + b.name + "' of " + std::to_string(b.bytes));
            }
            break;
        case OpKind::Memset:
            need_stream();
            op.sync = need_bool(o, "sync", w);
            op.bytes = need_u64(o, "bytes", w);
            break;
        case OpKind::EventRecord:
        case OpKind::StreamWaitEvent:
            need_stream();
            need_event();
            break;
        case OpKind::EventSync: need_event(); break;
        case OpKind::StreamSync: need_stream(); break;
        case OpKind::DeviceSync: break;
        case OpKind::Prefetch: {
            need_stream();
            if (op.buffer < 0) fail(w + ": missing key \"buffer\"");
            const Buffer& b = p.buffers[op.buffer];
            if (b.kind != Mem::Managed) fail(w + ": prefetch of buffer '" + b.name + "' which is " + to_string(b.kind) + ", not managed");
            std::string to = need_str(o, "to", w);
            if (to != "device" && to != "host") fail(w + ": \"to\" must be \"device\" or \"host\", got \"" + to + "\"");
            op.to_device = to == "device";
            op.bytes = need_u64(o, "bytes", w);
            if (op.bytes > b.bytes) fail(w + ": prefetches " + std::to_string(op.bytes) + " bytes of buffer '" + b.name + "' of " + std::to_string(b.bytes));
            break;
        }
        case OpKind::HostFunc:
            need_stream();
            op.duration_ps = need_int(o, "duration_ps", w, 0, INT64_MAX);
            break;
        case OpKind::GraphInstantiate:
        case OpKind::GraphLaunch: {
            if (node) fail(w + ": a graph node cannot be a " + to_string(op.kind));
            if (op.kind == OpKind::GraphLaunch) need_stream();
            int64_t g = need_int(o, "graph", w, 0, INT32_MAX);
            if (uint64_t(g) >= p.graphs.size())
                fail(w + ": \"graph\" names graph " + std::to_string(g) + " but the program has " + std::to_string(p.graphs.size()));
            op.graph = int(g);
            break;
        }
        case OpKind::Malloc:
        case OpKind::Free:
        case OpKind::MallocHost:
        case OpKind::FreeHost:
        case OpKind::HostRegister:
        case OpKind::MallocAsync:
        case OpKind::FreeAsync:
            if (node) fail(w + ": a graph node cannot be a " + to_string(op.kind));
            if (op.kind == OpKind::MallocAsync || op.kind == OpKind::FreeAsync) need_stream();
            if (op.buffer < 0) fail(w + ": missing key \"buffer\"");
            op.bytes = need_u64(o, "bytes", w);
            if (op.thread < 0) fail(w + ": " + to_string(op.kind) + " is a host call and needs a host thread (\"thread\" is -1)");
            break;
    }
    if (node && op.kind != OpKind::Kernel && op.kind != OpKind::Memcpy && op.kind != OpKind::Memset && op.kind != OpKind::HostFunc)
        fail(w + ": a graph node is a kernel, memcpy, memset or host_func, not " + to_string(op.kind));
    if (node && op.sync) fail(w + ": graph nodes are captured from a stream: copies and memsets must be async (\"sync\": false)");
    if (o.contains("uses")) {
        if (op.kind != OpKind::Host && op.kind != OpKind::Kernel) fail(w + ": \"uses\" is only supported on host work and kernels");
        op.uses = index_list(o, "uses", w, p.buffers.size(), "buffer");
        for (uint32_t u : op.uses)
            if (p.buffers[u].kind != Mem::Managed) fail(w + ": \"uses\" names buffer '" + p.buffers[u].name + "' which is " + to_string(p.buffers[u].kind) + ", not managed");
    }
}

}  // namespace

Program load_program(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot open the program file");
    json j;
    try {
        j = json::parse(in);
    } catch (const json::exception& e) {
        fail(std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object() || !j.contains("schema"))
        fail("not a hetsim lowered program (expected an object with \"schema\": \"hetsim.program\"; write one with `hetsim lower scenario.yaml -o program.json`)");
    if (j["schema"] != "hetsim.program") {
        std::string s = j["schema"].dump();
        fail("schema is " + s + ", expected \"hetsim.program\"" +
             (s == "\"hetsim.measured\"" ? " (this is a measured timeline, not a program)" : ""));
    }
    if (!j.contains("version") || j["version"] != kProgramVersion)
        fail("program schema version " + (j.contains("version") ? j["version"].dump() : std::string("(missing)")) +
             "; this runner reads version " + std::to_string(kProgramVersion) +
             " only (docs/program-format.md; lower the scenario again with a hetsim that writes version " + std::to_string(kProgramVersion) + ")");

    static const Mem mems[] = {Mem::Pinned, Mem::Pageable, Mem::Device, Mem::Managed};
    static const StreamKind sks[] = {StreamKind::Legacy, StreamKind::Blocking, StreamKind::NonBlocking, StreamKind::PerThread};
    static const OpKind oks[] = {OpKind::Host, OpKind::Kernel, OpKind::Memcpy, OpKind::Memset, OpKind::EventRecord,
                                 OpKind::StreamWaitEvent, OpKind::EventSync, OpKind::StreamSync, OpKind::DeviceSync, OpKind::Prefetch,
                                 OpKind::HostFunc, OpKind::GraphInstantiate, OpKind::GraphLaunch, OpKind::Malloc, OpKind::Free,
                                 OpKind::MallocHost, OpKind::FreeHost, OpKind::HostRegister, OpKind::MallocAsync, OpKind::FreeAsync};

    Program p;
    p.file = path;
    p.scenario = j.contains("scenario") && j["scenario"].is_string() ? j["scenario"].get<std::string>() : std::string();
    p.source = j.contains("source") && j["source"].is_string() ? j["source"].get<std::string>() : std::string();
    std::string form = need_str(j, "form", "program");
    if (form != "threads" && form != "tasks") fail("program: \"form\" is \"" + form + "\", expected \"threads\" or \"tasks\"");
    p.tasks = form == "tasks";

    const json& bufs = need_array(j, "buffers", "program");
    for (size_t i = 0; i < bufs.size(); ++i) {
        std::string w = "buffer " + std::to_string(i);
        if (!bufs[i].is_object()) fail(w + ": expected an object");
        Buffer b;
        b.name = need_str(bufs[i], "name", w);
        w += " '" + b.name + "'";
        b.kind = enum_of(bufs[i], "kind", w, mems);
        b.bytes = need_u64(bufs[i], "bytes", w);
        std::string res = bufs[i].contains("resident") ? need_str(bufs[i], "resident", w) : std::string("host");
        if (res != "host" && res != "device") fail(w + ": \"resident\" must be \"host\" or \"device\", got \"" + res + "\"");
        b.on_device = res == "device";
        p.buffers.push_back(b);
    }

    const json& streams = need_array(j, "streams", "program");
    for (size_t i = 0; i < streams.size(); ++i) {
        std::string w = "stream " + std::to_string(i);
        if (!streams[i].is_object()) fail(w + ": expected an object");
        Stream s;
        s.name = need_str(streams[i], "name", w);
        w += " '" + s.name + "'";
        s.kind = enum_of(streams[i], "kind", w, sks);
        s.priority = int(need_int(streams[i], "priority", w, -64, 64));
        s.thread = int(need_int(streams[i], "thread", w, -1, INT32_MAX));
        if ((i == 0) != (s.kind == StreamKind::Legacy))
            fail(w + ": stream 0 must be the legacy default stream and no other stream may be legacy");
        p.streams.push_back(s);
    }
    if (p.streams.empty()) fail("program: \"streams\" is empty; stream 0 must be the legacy default stream");

    if (j.contains("options")) {
        const json& o = j["options"];
        if (!o.is_object()) fail("program: \"options\" must be an object {sync, cold_start, max_connections}");
        if (o.contains("sync")) {
            std::string sy = need_str(o, "sync", "options");
            if (sy != "spin" && sy != "blocking") fail("options: \"sync\" must be \"spin\" or \"blocking\", got \"" + sy + "\"");
            p.options.blocking_sync = sy == "blocking";
        }
        if (o.contains("cold_start")) p.options.cold_start = need_bool(o, "cold_start", "options");
        if (o.contains("max_connections")) p.options.max_connections = int(need_int(o, "max_connections", "options", 0, 32));
    }

    for (const json& e : need_array(j, "events", "program")) {
        std::string w = "event " + std::to_string(p.events.size());
        if (!e.is_object()) fail("events: expected objects {name, blocking_sync}");
        Event ev;
        ev.name = need_str(e, "name", w);
        if (e.contains("blocking_sync")) ev.blocking_sync = need_bool(e, "blocking_sync", w + " '" + ev.name + "'");
        p.events.push_back(ev);
    }

    if (j.contains("graphs")) {
        const json& gs = need_array(j, "graphs", "program");
        for (size_t g = 0; g < gs.size(); ++g) {
            std::string w = "graph " + std::to_string(g);
            if (!gs[g].is_object()) fail(w + ": expected an object {name, nodes}");
            Graph gr;
            gr.name = need_str(gs[g], "name", w);
            p.graphs.push_back(gr);
        }
        // Nodes after all names: a node never names a graph, but keep the two passes simple.
        for (size_t g = 0; g < gs.size(); ++g) {
            Graph& gr = p.graphs[g];
            std::string gw = "graph " + std::to_string(g) + " '" + gr.name + "'";
            const json& nodes = need_array(gs[g], "nodes", gw);
            if (nodes.empty()) fail(gw + ": has no nodes");
            for (size_t k = 0; k < nodes.size(); ++k) {
                const json& o = nodes[k];
                std::string w = gw + " node " + std::to_string(k);
                if (!o.is_object()) fail(w + ": expected an object");
                Op op;
                op.index = uint32_t(k);
                op.node = int(k);
                op.graph = int(g);
                op.name = o.contains("name") && o["name"].is_string() ? o["name"].get<std::string>() : gr.name + "#" + std::to_string(k);
                op.kind = enum_of(o, "kind", w, oks);
                w += " '" + op.name + "' (" + to_string(op.kind) + ")";
                if (o.contains("stream") || o.contains("thread") || o.contains("index"))
                    fail(w + ": a graph node has no \"index\", \"thread\" or \"stream\" (it runs where its graph is launched)");
                parse_fields(p, o, op, w, true);
                if (!op.uses.empty()) fail(w + ": \"uses\" on graph nodes is not supported by the runner");
                gr.nodes.push_back(std::move(op));
            }
        }
    }

    const json& ops = need_array(j, "ops", "program");
    const json& threads = need_array(j, "threads", "program");
    for (size_t i = 0; i < threads.size(); ++i) {
        std::string w = "thread " + std::to_string(i);
        if (!threads[i].is_object()) fail(w + ": expected an object");
        Thread t;
        t.name = need_str(threads[i], "name", w);
        t.ops = index_list(threads[i], "ops", w + " '" + t.name + "'", ops.size(), "op");
        p.threads.push_back(t);
    }
    p.gpu_tasks = index_list(j, "gpu_tasks", "program", ops.size(), "op");
    for (size_t i = 0; i < p.streams.size(); ++i)
        if (p.streams[i].kind == StreamKind::PerThread && (p.streams[i].thread < 0 || size_t(p.streams[i].thread) >= p.threads.size()))
            fail("stream " + std::to_string(i) + " '" + p.streams[i].name + "': per-thread stream of thread " +
                 std::to_string(p.streams[i].thread) + " but the program has " + std::to_string(p.threads.size()) + " threads");

    for (size_t i = 0; i < ops.size(); ++i) {
        const json& o = ops[i];
        std::string w = "op " + std::to_string(i);
        if (!o.is_object()) fail(w + ": expected an object");
        Op op;
        op.index = uint32_t(i);
        if (need_int(o, "index", w, 0, INT32_MAX) != int64_t(i)) fail(w + ": \"index\" is " + o["index"].dump() + ", expected its position " + std::to_string(i));
        op.name = need_str(o, "name", w);
        op.kind = enum_of(o, "kind", w + " '" + op.name + "'", oks);
        w = op_where(op);
        op.thread = int(need_int(o, "thread", w, -1, int64_t(p.threads.size()) - 1));
        if (o.contains("graph_node")) op.graph_node = need_bool(o, "graph_node", w);
        parse_fields(p, o, op, w, false);
        if (op.graph_node) {
            if (op.kind != OpKind::Kernel && op.kind != OpKind::Memcpy && op.kind != OpKind::Memset && op.kind != OpKind::HostFunc)
                fail(w + ": a graph node op is a kernel, memcpy, memset or host_func");
            int64_t g = need_int(o, "graph", w, 0, INT32_MAX);
            if (uint64_t(g) >= p.graphs.size())
                fail(w + ": \"graph\" names graph " + std::to_string(g) + " but the program has " + std::to_string(p.graphs.size()));
            op.graph = int(g);
        }
        if (o.contains("after")) {
            if (!p.tasks) fail(w + ": \"after\" only exists in the tasks form");
            op.after = index_list(o, "after", w, ops.size(), "op");
            for (uint32_t a : op.after)
                if (a == i) fail(w + ": lists itself in \"after\"");
        }
        // Streams used from the wrong thread.
        if (op.stream >= 0 && p.streams[op.stream].kind == StreamKind::PerThread && !p.tasks && p.streams[op.stream].thread != op.thread)
            fail(w + ": uses the per-thread stream of thread " + std::to_string(p.streams[op.stream].thread) + " from thread " + std::to_string(op.thread));
        if (op.sync && op.stream >= 0 && op.stream != 0 && p.streams[op.stream].kind != StreamKind::PerThread)
            fail(w + ": a synchronous copy/memset goes to the default stream (legacy or per-thread), not stream '" + p.streams[op.stream].name + "'");
        p.ops.push_back(std::move(op));
    }

    // Every op is executed exactly once, by the thread (or GPU task list) it names.
    std::vector<int> seen(p.ops.size(), 0);
    for (size_t t = 0; t < p.threads.size(); ++t)
        for (uint32_t i : p.threads[t].ops) {
            const Op& op = p.ops[i];
            if (seen[i]++) fail(op_where(op) + ": listed more than once in threads/gpu_tasks");
            if (op.thread != int(t)) fail(op_where(op) + ": listed under thread " + std::to_string(t) + " but its \"thread\" is " + std::to_string(op.thread));
            if (p.tasks && op.kind != OpKind::Host && !is_alloc(op.kind) && op.kind != OpKind::GraphInstantiate)
                fail(op_where(op) + ": in the tasks form only host work and host calls (allocations, graph_instantiate) run on host threads");
        }
    // Graph launches: the ops after a graph_launch in its thread are its nodes, in node order.
    for (size_t t = 0; t < p.threads.size(); ++t) {
        const auto& list = p.threads[t].ops;
        for (size_t k = 0; k < list.size(); ++k) {
            Op& op = p.ops[list[k]];
            if (op.graph_node && op.launch_op < 0)
                fail(op_where(op) + ": a graph_node op must follow its graph_launch (and the graph's earlier nodes) in its thread");
            if (op.kind != OpKind::GraphLaunch) continue;
            const Graph& g = p.graphs[op.graph];
            for (size_t n = 0; n < g.nodes.size(); ++n) {
                if (k + 1 + n >= list.size())
                    fail(op_where(op) + ": graph '" + g.name + "' has " + std::to_string(g.nodes.size()) + " nodes but only " +
                         std::to_string(n) + " graph_node ops follow the launch in thread '" + p.threads[t].name + "'");
                Op& nd = p.ops[list[k + 1 + n]];
                const Op& gn = g.nodes[n];
                if (!nd.graph_node || nd.graph != op.graph || nd.kind != gn.kind || nd.stream != op.stream)
                    fail(op_where(nd) + ": expected node " + std::to_string(n) + " of graph '" + g.name + "' launched by op " +
                         std::to_string(op.index) + " (graph_node: true, graph " + std::to_string(op.graph) + ", kind " + to_string(gn.kind) +
                         ", stream " + std::to_string(op.stream) + ")");
                nd.node = int(n);
                nd.launch_op = int(op.index);
            }
            k += g.nodes.size();
        }
    }
    if (!p.tasks && !p.gpu_tasks.empty()) fail("program: \"gpu_tasks\" is only used in the tasks form");
    for (uint32_t i : p.gpu_tasks) {
        const Op& op = p.ops[i];
        if (seen[i]++) fail(op_where(op) + ": listed more than once in threads/gpu_tasks");
        if (op.thread != -1) fail(op_where(op) + ": a GPU task has \"thread\": -1");
        if (op.graph_node || (op.kind != OpKind::Kernel && op.kind != OpKind::Memcpy && op.kind != OpKind::Memset && op.kind != OpKind::Prefetch &&
                              op.kind != OpKind::HostFunc))
            fail(op_where(op) + ": not a GPU task kind (kernel, memcpy, memset, prefetch, host_func)");
    }
    for (size_t i = 0; i < p.ops.size(); ++i)
        if (!seen[i]) fail(op_where(p.ops[i]) + ": not listed in any thread (or gpu_tasks); nothing would execute it");
    return p;
}

int estimate_blocks_per_sm(uint32_t block, uint32_t regs, uint32_t smem) {
    // H200 (sm_90): 2048 threads, 32 blocks, 64 K registers (256 per warp granule), 228 KiB
    // shared memory with 1 KiB reserved per block, 227 KiB per block at most.
    if (block == 0 || block > 1024 || smem > 227u * 1024u) return 0;
    uint32_t warps = (block + 31) / 32;
    uint32_t by_threads = 2048 / (warps * 32);
    uint32_t regs_per_warp = ((regs * 32 + 255) / 256) * 256;
    uint32_t by_regs = regs_per_warp ? (65536 / regs_per_warp) / warps : 32;
    uint32_t smem_alloc = ((smem + 127) / 128) * 128 + 1024;
    uint32_t by_smem = (228u * 1024u) / smem_alloc;
    return int(std::min({by_threads, 32u, by_regs, by_smem}));
}

Plan make_plan(const Program& p) {
    Plan plan;
    const size_t n = p.ops.size();
    int nthreads = int(p.threads.size());
    bool issuer = p.tasks && !p.gpu_tasks.empty();
    plan.issuers = nthreads + (issuer ? 1 : 0);
    plan.issuer_thread = issuer ? nthreads : -1;
    plan.issuer_of.assign(n, -1);
    plan.pos_in_thread.assign(n, 0);
    plan.issuer_ops.resize(plan.issuers);
    plan.scratch.resize(plan.issuers);
    plan.read_offset.assign(n, 0);
    plan.needs_done_event.assign(n, 0);
    plan.host_flag_slot.assign(n, -1);
    for (int t = 0; t < nthreads; ++t) plan.issuer_ops[t] = p.threads[t].ops;

    if (p.tasks) {
        // One check over everything that orders tasks: `after`, host-thread order, stream order.
        std::vector<std::vector<uint32_t>> succ(n);
        std::vector<uint32_t> indeg(n, 0);
        auto edge = [&](uint32_t a, uint32_t b) { succ[a].push_back(b); ++indeg[b]; };
        for (const Op& op : p.ops)
            for (uint32_t a : op.after) edge(a, op.index);
        for (const Thread& t : p.threads)
            for (size_t k = 1; k < t.ops.size(); ++k) edge(t.ops[k - 1], t.ops[k]);
        std::map<int, uint32_t> last_on_stream;
        for (uint32_t g : p.gpu_tasks) {
            auto it = last_on_stream.find(p.ops[g].stream);
            if (it != last_on_stream.end()) edge(it->second, g);
            last_on_stream[p.ops[g].stream] = g;
        }
        std::vector<uint32_t> deg = indeg, order;
        for (uint32_t i = 0; i < n; ++i)
            if (!deg[i]) order.push_back(i);
        for (size_t k = 0; k < order.size(); ++k)
            for (uint32_t s : succ[order[k]])
                if (!--deg[s]) order.push_back(s);
        if (order.size() != n) {
            // Peel off ops that only wait for the cycle, to name the ops on it.
            std::vector<char> stuck(n, 0);
            for (uint32_t i = 0; i < n; ++i) stuck[i] = deg[i] != 0;
            for (bool changed = true; changed;) {
                changed = false;
                for (uint32_t i = 0; i < n; ++i) {
                    if (!stuck[i]) continue;
                    bool feeds = false;
                    for (uint32_t s : succ[i]) feeds |= stuck[s] != 0;
                    if (!feeds) { stuck[i] = 0; changed = true; }
                }
            }
            std::string names;
            int shown = 0;
            for (uint32_t i = 0; i < n && shown < 8; ++i)
                if (stuck[i]) names += (shown++ ? ", " : "") + ("'" + p.ops[i].name + "'");
            fail("the tasks cannot run: their 'after' lists together with host-thread order and stream order form a cycle through " + names);
        }
        // Issue order of GPU tasks: file order, except that a task goes after the GPU tasks it
        // depends on (so that the event it waits for is recorded first).
        std::vector<uint32_t> pos(n, UINT32_MAX);
        for (size_t k = 0; k < p.gpu_tasks.size(); ++k) pos[p.gpu_tasks[k]] = uint32_t(k);
        std::vector<uint32_t> gdeg(n, 0);
        std::vector<std::vector<uint32_t>> gsucc(n);
        last_on_stream.clear();
        for (uint32_t g : p.gpu_tasks) {
            for (uint32_t a : p.ops[g].after)
                if (pos[a] != UINT32_MAX) { gsucc[a].push_back(g); ++gdeg[g]; }
            auto it = last_on_stream.find(p.ops[g].stream);
            if (it != last_on_stream.end()) { gsucc[it->second].push_back(g); ++gdeg[g]; }
            last_on_stream[p.ops[g].stream] = g;
        }
        std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> ready;
        for (uint32_t g : p.gpu_tasks)
            if (!gdeg[g]) ready.push(pos[g]);
        while (!ready.empty()) {
            uint32_t g = p.gpu_tasks[ready.top()];
            ready.pop();
            plan.issuer_ops[plan.issuer_thread].push_back(g);
            for (uint32_t s : gsucc[g])
                if (!--gdeg[s]) ready.push(pos[s]);
        }
        // How each dependency is realised.
        int per_thread_stream = -1;
        for (uint32_t g : p.gpu_tasks) {
            int s = p.ops[g].stream;
            if (p.streams[s].kind == StreamKind::PerThread) {
                if (per_thread_stream >= 0 && per_thread_stream != s)
                    fail("GPU tasks use two different per-thread streams; the runner issues all GPU tasks from one thread and cannot emulate that");
                per_thread_stream = s;
            }
        }
        for (const Op& op : p.ops)
            for (uint32_t a : op.after) {
                const Op& dep = p.ops[a];
                bool dep_gpu = dep.thread < 0, me_gpu = op.thread < 0;
                if (dep_gpu && (!me_gpu || dep.stream != op.stream)) plan.needs_done_event[a] = 1;
                if (!dep_gpu && me_gpu && plan.host_flag_slot[a] < 0) plan.host_flag_slot[a] = plan.host_flags++;
            }
    }

    for (int t = 0; t < plan.issuers; ++t)
        for (size_t k = 0; k < plan.issuer_ops[t].size(); ++k) {
            plan.issuer_of[plan.issuer_ops[t][k]] = t;
            plan.pos_in_thread[plan.issuer_ops[t][k]] = uint32_t(k);
        }

    // Scratch buffers and the shared read buffer of roofline kernels.
    uint64_t max_read = 0;
    plan.graph_nodes_of.assign(n, {});
    plan.launches_of_graph.assign(p.graphs.size(), 0);
    for (const Op& op : p.ops) {
        if (op.graph_node) plan.graph_nodes_of[op.launch_op].push_back(op.index);
        if (op.kind == OpKind::GraphLaunch) ++plan.launches_of_graph[op.graph];
    }
    std::vector<const Op*> all;  // program ops, then graph nodes (captured once, with the graph scratch)
    for (const Op& op : p.ops)
        if (!op.graph_node) all.push_back(&op);
    for (const Graph& g : p.graphs)
        for (const Op& op : g.nodes) all.push_back(&op);
    for (const Op* opp : all) {
        const Op& op = *opp;
        const bool node = op.node >= 0 && !op.graph_node;
        Scratch& s = node ? plan.graph_scratch : plan.scratch[plan.issuer_of[op.index]];
        if (has_gpu_phase(op.kind) && !node) {
            ++plan.gpu_ops;
            ++plan.timed_gpu_ops;
        }
        if (op.kind == OpKind::Memcpy) {
            if (op.dir == Dir::D2D) {
                s.dev_src = std::max(s.dev_src, op.bytes);
                s.dev_dst = std::max(s.dev_dst, op.bytes);
            } else {
                uint64_t& dev = op.dir == Dir::H2D ? s.dev_dst : s.dev_src;
                dev = std::max(dev, op.bytes);
                if (op.memory == Mem::Pinned) s.pinned = std::max(s.pinned, op.bytes);
                else if (op.memory == Mem::Pageable) s.pageable = std::max(s.pageable, op.bytes);
                else if (op.memory == Mem::Managed && op.buffer < 0) s.managed = std::max(s.managed, op.bytes);
            }
        } else if (op.kind == OpKind::Memset) {
            s.dev_dst = std::max(s.dev_dst, op.bytes);
        } else if (op.kind == OpKind::Kernel) {
            if (op.roofline) max_read = std::max(max_read, op.bytes);
            plan.max_smem = std::max(plan.max_smem, op.shared_memory);
            if (op.shared_memory > 227u * 1024u)
                fail(op_where(op) + ": asks for " + std::to_string(op.shared_memory) + " bytes of shared memory per block; an H200 block gets at most 232448 (227 KiB)");
            if (estimate_blocks_per_sm(op.block, op.registers, op.shared_memory) == 0)
                fail(op_where(op) + ": a block of " + std::to_string(op.block) + " threads x " + std::to_string(op.registers) +
                     " registers with " + std::to_string(op.shared_memory) + " B of shared memory fits no SM");
        }
    }
    for (const Op& op : p.ops)
        if (op.graph_node) {
            ++plan.gpu_ops;
            ++plan.timed_gpu_ops;
        }
    // Allocation ops: the live scratch of each issuing thread at its peak (free / free_host /
    // free_async release the most recent allocation of their buffer), summed over the threads.
    for (int t = 0; t < plan.issuers; ++t) {
        std::map<int, std::vector<uint64_t>> dev, host;
        uint64_t live_dev = 0, live_host = 0, peak_dev = 0, peak_host = 0;
        for (uint32_t i : plan.issuer_ops[t]) {
            const Op& op = p.ops[i];
            switch (op.kind) {
                case OpKind::Malloc:
                case OpKind::MallocAsync: dev[op.buffer].push_back(op.bytes); live_dev += op.bytes; break;
                case OpKind::MallocHost: host[op.buffer].push_back(op.bytes); live_host += op.bytes; break;
                case OpKind::Free:
                case OpKind::FreeAsync:
                    if (!dev[op.buffer].empty()) {
                        live_dev -= dev[op.buffer].back();
                        dev[op.buffer].pop_back();
                    }
                    break;
                case OpKind::FreeHost:
                    if (!host[op.buffer].empty()) {
                        live_host -= host[op.buffer].back();
                        host[op.buffer].pop_back();
                    }
                    break;
                case OpKind::HostRegister: plan.register_bytes += op.bytes; break;
                default: break;
            }
            peak_dev = std::max(peak_dev, live_dev);
            peak_host = std::max(peak_host, live_host);
        }
        plan.alloc_device_peak += peak_dev;
        plan.alloc_pinned_peak += peak_host;
    }
    // Every free needs an allocation of its kind for its buffer, somewhere in the program.
    {
        std::map<std::pair<int, int>, int64_t> count;  // (buffer, 0 device / 1 async / 2 host)
        for (const Op& op : p.ops) {
            if (op.kind == OpKind::Malloc) ++count[{op.buffer, 0}];
            if (op.kind == OpKind::MallocAsync) ++count[{op.buffer, 1}];
            if (op.kind == OpKind::MallocHost) ++count[{op.buffer, 2}];
        }
        for (const Op& op : p.ops) {
            int k = op.kind == OpKind::Free ? 0 : op.kind == OpKind::FreeAsync ? 1 : op.kind == OpKind::FreeHost ? 2 : -1;
            if (k < 0) continue;
            if (--count[{op.buffer, k}] < 0)
                fail(op_where(op) + ": frees buffer '" + p.buffers[op.buffer].name + "' more often than the program allocates it with " +
                     (k == 0 ? "malloc" : k == 1 ? "malloc_async" : "malloc_host"));
        }
    }
    if (max_read) {
        // Successive roofline kernels read different parts of one buffer, so that none finds its
        // data in the L2 (60 MiB) left by the previous one, and kernels running side by side do
        // not share reads: up to four kernels in a row are disjoint when the buffer allows (it
        // holds all of them when they total less, and is capped at 32 GiB unless one kernel
        // needs more).
        auto round = [](uint64_t b) { return (b + 255) / 256 * 256; };
        uint64_t sum = 0;
        for (const Op& op : p.ops)
            if (op.kind == OpKind::Kernel && op.roofline && op.bytes && !op.graph_node) sum += round(op.bytes);
        uint64_t want = std::min(4 * round(max_read) + 128 * kMiB, std::max(32 * kGiB, round(max_read) + 128 * kMiB));
        plan.read_bytes = std::max(std::min(sum, want), round(max_read));
        uint64_t cursor = 0;
        for (const Op& op : p.ops)
            if (op.kind == OpKind::Kernel && op.roofline && op.bytes && !op.graph_node) {
                if (cursor + round(op.bytes) > plan.read_bytes) cursor = 0;
                plan.read_offset[op.index] = cursor;
                cursor += round(op.bytes);
            }
    }
    for (const Buffer& b : p.buffers) {
        if (b.kind == Mem::Device) plan.device_total += b.bytes;
        else if (b.kind == Mem::Managed) plan.managed_total += b.bytes;
        else if (b.kind == Mem::Pinned) plan.pinned_total += b.bytes;
        else plan.pageable_total += b.bytes;
    }
    for (const Scratch& s : plan.scratch) {
        plan.device_total += s.dev_src + s.dev_dst;
        plan.pinned_total += s.pinned;
        plan.pageable_total += s.pageable;
        plan.managed_total += s.managed;
    }
    {
        const Scratch& s = plan.graph_scratch;
        plan.device_total += s.dev_src + s.dev_dst;
        plan.pinned_total += s.pinned;
        plan.pageable_total += s.pageable;
        plan.managed_total += s.managed;
    }
    plan.device_total += plan.read_bytes + plan.alloc_device_peak;
    plan.pinned_total += plan.alloc_pinned_peak;
    plan.pageable_total += plan.register_bytes;
    return plan;
}

namespace {

std::string stream_desc(const Program& p, int s) {
    if (s < 0) return "-";
    const Stream& st = p.streams[s];
    std::string d = std::to_string(s) + " '" + st.name + "' " + to_string(st.kind);
    if (st.priority) d += " prio " + std::to_string(st.priority);
    return d;
}

std::string ns_str(double ns) {
    char b[64];
    if (ns >= 1e6) std::snprintf(b, sizeof b, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3) std::snprintf(b, sizeof b, "%.3f us", ns / 1e3);
    else std::snprintf(b, sizeof b, "%.0f ns", ns);
    return b;
}

std::string describe(const Program& p, const Plan& plan, const Op& op, double peak_flops) {
    std::ostringstream d;
    switch (op.kind) {
        case OpKind::Host:
            d << "busy loop " << ns_str(double(op.duration_ps) / 1000.0);
            break;
        case OpKind::Kernel: {
            int bps = estimate_blocks_per_sm(op.block, op.registers, op.shared_memory);
            uint64_t per_wave = uint64_t(bps) * 132;
            uint64_t waves = per_wave ? (op.grid + per_wave - 1) / per_wave : 0;
            d << "kernel<<<" << op.grid << ", " << op.block << ", smem " << op.shared_memory << ">>> regs " << op.registers
              << " (est. " << bps << " blocks/SM, " << waves << " wave" << (waves == 1 ? "" : "s") << " on 132 SMs); ";
            if (!op.roofline) d << "spin " << ns_str(double(op.duration_ps) / 1000.0) << " in all";
            else {
                if (op.bytes) d << "stream-read " << op.bytes << " B at offset " << plan.read_offset[op.index];
                if (op.flops) d << (op.bytes ? ", " : "") << "spin >= " << ns_str(op.flops / peak_flops * 1e9) << " for " << op.flops << " flop";
            }
            break;
        }
        case OpKind::Memcpy: {
            const char* kind = op.dir == Dir::D2D ? "device->device" : op.dir == Dir::H2D ? "host->device" : "device->host";
            d << (op.sync ? "cudaMemcpy " : "cudaMemcpyAsync ") << to_string(op.dir) << " " << op.bytes << " B, " << kind
              << ", host side " << to_string(op.memory);
            if (op.memory == Mem::Managed) d << (op.buffer >= 0 ? " buffer '" + p.buffers[op.buffer].name + "'" : std::string(" scratch"));
            break;
        }
        case OpKind::Memset: d << (op.sync ? "cudaMemset " : "cudaMemsetAsync ") << op.bytes << " B (device scratch)"; break;
        case OpKind::EventRecord: d << "cudaEventRecord '" << p.events[op.event].name << "'"; break;
        case OpKind::StreamWaitEvent: d << "cudaStreamWaitEvent '" << p.events[op.event].name << "'"; break;
        case OpKind::EventSync: d << "cudaEventSynchronize '" << p.events[op.event].name << "'"; break;
        case OpKind::StreamSync: d << "cudaStreamSynchronize"; break;
        case OpKind::DeviceSync: d << "cudaDeviceSynchronize"; break;
        case OpKind::Prefetch:
            d << "cudaMemPrefetchAsync '" << p.buffers[op.buffer].name << "' " << op.bytes << " B to " << (op.to_device ? "device 0" : "host");
            break;
        case OpKind::HostFunc: d << "cudaLaunchHostFunc, callback busy for " << ns_str(double(op.duration_ps) / 1000.0); break;
        case OpKind::GraphInstantiate:
            d << "cudaGraphInstantiate '" << p.graphs[op.graph].name << "' (" << p.graphs[op.graph].nodes.size() << " nodes)";
            break;
        case OpKind::GraphLaunch: d << "cudaGraphLaunch '" << p.graphs[op.graph].name << "'"; break;
        case OpKind::Malloc: d << "cudaMalloc " << human_bytes(op.bytes) << " (scratch of '" << p.buffers[op.buffer].name << "')"; break;
        case OpKind::Free: d << "cudaFree of the latest malloc of '" << p.buffers[op.buffer].name << "'"; break;
        case OpKind::MallocHost: d << "cudaMallocHost " << human_bytes(op.bytes) << " (scratch of '" << p.buffers[op.buffer].name << "')"; break;
        case OpKind::FreeHost: d << "cudaFreeHost of the latest malloc_host of '" << p.buffers[op.buffer].name << "'"; break;
        case OpKind::HostRegister: d << "cudaHostRegister " << human_bytes(op.bytes) << " of pageable scratch (unregistered after the run)"; break;
        case OpKind::MallocAsync: d << "cudaMallocAsync " << human_bytes(op.bytes) << " (scratch of '" << p.buffers[op.buffer].name << "')"; break;
        case OpKind::FreeAsync: d << "cudaFreeAsync of the latest malloc_async of '" << p.buffers[op.buffer].name << "'"; break;
    }
    if (op.graph_node) d << " [node " << op.node << " of the launch by op " << op.launch_op << "; not issued by the host]";
    if (op.stream >= 0) d << " on stream " << stream_desc(p, op.stream);
    if (!op.uses.empty()) {
        d << "; touches";
        for (uint32_t u : op.uses) d << " '" << p.buffers[u].name << "'";
    }
    if (!op.after.empty()) {
        d << "; after";
        for (uint32_t a : op.after) {
            const Op& dep = p.ops[a];
            d << " " << a;
            if (dep.thread < 0 && op.thread < 0) d << (dep.stream == op.stream ? "(stream order)" : "(event wait)");
            else if (dep.thread < 0) d << "(event sync)";
            else if (op.thread < 0) d << "(host flag, stream wait-value)";
            else d << "(host flag)";
        }
    }
    return d.str();
}

}  // namespace

void print_plan(const Program& p, const Plan& plan, FILE* out, bool verbose, double peak_flops) {
    std::fprintf(out, "program %s: scenario '%s' (from %s), form %s, %zu ops, %zu GPU ops\n", p.file.c_str(), p.scenario.c_str(),
                 p.source.c_str(), p.tasks ? "tasks" : "threads", p.ops.size(), plan.gpu_ops);
    std::fprintf(out, "\nbuffers (allocated before time zero):\n");
    for (size_t i = 0; i < p.buffers.size(); ++i) {
        const Buffer& b = p.buffers[i];
        const char* how = b.kind == Mem::Pinned ? "cudaMallocHost" : b.kind == Mem::Pageable ? "malloc + touch every page"
                        : b.kind == Mem::Device ? "cudaMalloc" : "cudaMallocManaged + host touch + prefetch";
        std::fprintf(out, "  [%zu] %-16s %-8s %s  %s%s\n", i, b.name.c_str(), to_string(b.kind), human_bytes(b.bytes).c_str(), how,
                     b.kind == Mem::Managed ? (b.on_device ? ", resident on device" : ", resident on host") : "");
    }
    std::fprintf(out, "\nscratch buffers (copies and memsets do not name buffers):\n");
    for (int t = 0; t < plan.issuers; ++t) {
        const Scratch& s = plan.scratch[t];
        std::string who = t == plan.issuer_thread ? std::string("GPU-task issuer") : "thread " + std::to_string(t) + " '" + p.threads[t].name + "'";
        std::fprintf(out, "  %s:", who.c_str());
        bool any = false;
        auto item = [&](const char* what, uint64_t b) {
            if (!b) return;
            std::fprintf(out, "%s %s %s", any ? "," : "", what, human_bytes(b).c_str());
            any = true;
        };
        item("pinned", s.pinned);
        item("pageable", s.pageable);
        item("device src", s.dev_src);
        item("device dst", s.dev_dst);
        item("managed (host-resident)", s.managed);
        std::fprintf(out, "%s\n", any ? "" : " none");
    }
    if (plan.read_bytes) std::fprintf(out, "  roofline read buffer (device, shared): %s\n", human_bytes(plan.read_bytes).c_str());
    if (!p.graphs.empty()) {
        const Scratch& s = plan.graph_scratch;
        std::fprintf(out, "  graph nodes: pinned %s, device src %s, device dst %s\n", human_bytes(s.pinned).c_str(), human_bytes(s.dev_src).c_str(),
                     human_bytes(s.dev_dst).c_str());
    }
    if (plan.alloc_device_peak || plan.alloc_pinned_peak || plan.register_bytes)
        std::fprintf(out, "  allocation ops at their peak: device %s, pinned %s, registered pageable %s\n", human_bytes(plan.alloc_device_peak).c_str(),
                     human_bytes(plan.alloc_pinned_peak).c_str(), human_bytes(plan.register_bytes).c_str());
    std::fprintf(out, "\ntotals: device %s, managed %s (device + managed + 1 GiB must fit in free device memory), pinned %s, pageable %s\n",
                 human_bytes(plan.device_total).c_str(), human_bytes(plan.managed_total).c_str(), human_bytes(plan.pinned_total).c_str(),
                 human_bytes(plan.pageable_total).c_str());

    std::fprintf(out, "\nstreams:\n");
    for (size_t s = 0; s < p.streams.size(); ++s) {
        const Stream& st = p.streams[s];
        const char* how = st.kind == StreamKind::Legacy ? "cudaStreamLegacy"
                        : st.kind == StreamKind::PerThread ? "cudaStreamPerThread (of its owner thread)"
                        : st.kind == StreamKind::Blocking ? "cudaStreamCreateWithPriority(cudaStreamDefault)"
                                                          : "cudaStreamCreateWithPriority(cudaStreamNonBlocking)";
        std::fprintf(out, "  %s: %s\n", stream_desc(p, int(s)).c_str(), how);
    }
    if (!p.events.empty()) {
        std::fprintf(out, "events (cudaEventDisableTiming):");
        for (const auto& e : p.events) std::fprintf(out, " '%s'%s", e.name.c_str(), e.blocking_sync ? " (+cudaEventBlockingSync)" : "");
        std::fprintf(out, "\n");
    }
    for (const Graph& g : p.graphs) {
        std::fprintf(out, "graph '%s': %zu nodes, captured from a capture stream at setup:", g.name.c_str(), g.nodes.size());
        for (const Op& nd : g.nodes) std::fprintf(out, " %s", to_string(nd.kind));
        std::fprintf(out, "\n");
    }
    std::fprintf(out, "\noptions: sync %s, cold_start %s, max_connections %d%s\n", p.options.blocking_sync ? "blocking (cudaDeviceScheduleBlockingSync)" : "spin",
                 p.options.cold_start ? "yes (one fresh process per measured run, no warm-up)" : "no", p.options.max_connections,
                 p.options.max_connections ? " (CUDA_DEVICE_MAX_CONNECTIONS)" : " (unset)");
    if (p.tasks) {
        int ev = 0;
        for (char c : plan.needs_done_event) ev += c;
        std::fprintf(out, "\ntasks form: %zu GPU tasks issued at time zero by a dedicated thread; %d completion events, %d host flags\n",
                     p.gpu_tasks.size(), ev, plan.host_flags);
    }
    const size_t limit = verbose ? SIZE_MAX : 40;
    for (int t = 0; t < plan.issuers; ++t) {
        const auto& ops = plan.issuer_ops[t];
        std::string who = t == plan.issuer_thread ? std::string("GPU-task issuer (issue order)") : "thread " + std::to_string(t) + " '" + p.threads[t].name + "'";
        std::fprintf(out, "\n%s: %zu ops\n", who.c_str(), ops.size());
        for (size_t k = 0; k < ops.size() && k < limit; ++k) {
            const Op& op = p.ops[ops[k]];
            std::fprintf(out, "  %6u %-18s %-28s %s\n", op.index, to_string(op.kind), op.name.c_str(), describe(p, plan, op, peak_flops).c_str());
        }
        if (ops.size() > limit) std::fprintf(out, "  ... %zu more (--verbose lists all)\n", ops.size() - limit);
    }
}

}  // namespace runner
