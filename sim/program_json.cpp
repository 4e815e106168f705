#include "sim/program_json.hpp"

#include <unordered_map>

#include "sim/error.hpp"

namespace hetsim {

using nlohmann::json;

namespace {
// The fields of one op (or graph node template) that depend on its kind.
void op_fields(const Op& o, json& op) {
    if (o.stream >= 0) op["stream"] = o.stream;
    if (o.event >= 0) op["event"] = o.event;
    if (o.buffer >= 0) op["buffer"] = o.buffer;
    if (o.graph >= 0) op["graph"] = o.graph;
    if (o.graph_node) op["graph_node"] = true;
    if (o.host_buffer >= 0) op["host_buffer"] = o.host_buffer;
    switch (o.kind) {
        case OpKind::HostWork:
        case OpKind::HostFunc: op["duration_ps"] = o.duration.ps(); break;
        case OpKind::Kernel:
            if (o.flops == 0 && o.bytes == 0) op["duration_ps"] = o.duration.ps();
            else {
                op["flops"] = o.flops;
                op["bytes"] = o.bytes;
            }
            op["grid"] = o.shape.grid;
            op["block"] = o.shape.block;
            op["registers"] = o.shape.regs_per_thread;
            op["shared_memory"] = o.shape.smem_per_block;
            break;
        case OpKind::Memcpy:
            op["sync"] = o.sync;
            op["direction"] = to_string(o.dir);
            op["memory"] = to_string(o.host_mem);
            op["bytes"] = o.bytes;
            break;
        case OpKind::Memset:
            op["sync"] = o.sync;
            op["bytes"] = o.bytes;
            break;
        case OpKind::Prefetch:
            op["to"] = o.to_device ? "device" : "host";
            op["bytes"] = o.bytes;
            break;
        case OpKind::Malloc: case OpKind::Free: case OpKind::MallocHost: case OpKind::FreeHost:
        case OpKind::HostRegister: case OpKind::MallocAsync: case OpKind::FreeAsync:
            op["bytes"] = o.bytes;
            break;
        default: break;
    }
}
}  // namespace

json program_to_json(const Program& p, const std::string& scenario_name) {
    json j;
    j["schema"] = "hetsim.program";
    j["version"] = kProgramSchemaVersion;
    j["scenario"] = scenario_name;
    j["source"] = p.source;
    j["form"] = p.tasks_form ? "tasks" : "threads";
    j["options"] = {{"sync", p.blocking_sync ? "blocking" : "spin"}, {"cold_start", p.cold_start},
                    {"max_connections", p.max_connections}};
    json bufs = json::array();
    for (const auto& b : p.buffers)
        bufs.push_back({{"name", b.name}, {"kind", to_string(b.kind)}, {"bytes", b.bytes},
                        {"resident", b.managed_on_device ? "device" : "host"}});
    j["buffers"] = bufs;
    json streams = json::array();
    for (const auto& s : p.streams)
        streams.push_back({{"name", s.name}, {"kind", to_string(s.kind)}, {"priority", s.priority}, {"thread", s.owner_thread}});
    j["streams"] = streams;
    json events = json::array();
    for (const auto& e : p.events) events.push_back({{"name", e.name}, {"blocking_sync", e.blocking_sync}});
    j["events"] = events;
    json graphs = json::array();
    for (const auto& g : p.graphs) {
        json nodes = json::array();
        for (const Op& o : g.nodes) {
            json node{{"name", p.names[o.name]}, {"kind", to_string(o.kind)}};
            op_fields(o, node);
            nodes.push_back(std::move(node));
        }
        graphs.push_back({{"name", g.name}, {"nodes", nodes}});
    }
    j["graphs"] = graphs;
    json threads = json::array();
    for (const auto& t : p.threads) threads.push_back({{"name", t.name}, {"ops", t.ops}});
    j["threads"] = threads;
    j["gpu_tasks"] = p.gpu_tasks;
    json ops = json::array();
    for (uint32_t i = 0; i < p.ops.size(); ++i) {
        const Op& o = p.ops[i];
        json op{{"index", i}, {"name", p.op_name(i)}, {"kind", to_string(o.kind)}, {"thread", o.thread}};
        if (o.iter_count) {  // the label without loop indices (a kernel's identity) and the indices
            op["label"] = p.names[o.name];
            op["loop"] = std::vector<uint32_t>(p.iter_indices.begin() + o.iter_begin,
                                               p.iter_indices.begin() + o.iter_begin + o.iter_count);
        }
        op_fields(o, op);
        if (o.uses_count) op["uses"] = std::vector<uint32_t>(p.uses.begin() + o.uses_begin, p.uses.begin() + o.uses_begin + o.uses_count);
        if (o.after_count) op["after"] = std::vector<uint32_t>(p.after.begin() + o.after_begin, p.after.begin() + o.after_begin + o.after_count);
        ops.push_back(std::move(op));
    }
    j["ops"] = ops;
    return j;
}

namespace {
template <class E, size_t N>
E enum_of(const std::string& s, const E (&all)[N], const std::string& file, const char* what) {
    for (E e : all)
        if (s == to_string(e)) return e;
    throw InputError({file}, std::string("unknown ") + what + " '" + s + "' in lowered program");
}
}  // namespace

Program program_from_json(const json& j, const std::string& file) {
    if (!j.is_object() || j.value("schema", "") != "hetsim.program")
        throw InputError({file}, "not a hetsim lowered program (expected \"schema\": \"hetsim.program\")");
    if (j.value("version", -1) != kProgramSchemaVersion)
        throw InputError({file}, "lowered program has schema version " + j.value("version", json(-1)).dump() + "; this hetsim reads version " +
                                     std::to_string(kProgramSchemaVersion) + " (lower the scenario again)");
    static const MemKind mems[] = {MemKind::Pinned, MemKind::Pageable, MemKind::Device, MemKind::Managed};
    static const StreamKind sks[] = {StreamKind::Blocking, StreamKind::NonBlocking, StreamKind::Legacy, StreamKind::PerThread};
    Program p;
    std::unordered_map<std::string, uint32_t> name_ids;  // labels interned as the lowerer does
    auto op_from_json = [&](const json& o, const std::string& f) {
        static const OpKind oks[] = {OpKind::HostWork, OpKind::Kernel, OpKind::Memcpy, OpKind::Memset, OpKind::EventRecord,
                                     OpKind::StreamWaitEvent, OpKind::EventSync, OpKind::StreamSync, OpKind::DeviceSync,
                                     OpKind::Prefetch, OpKind::HostFunc, OpKind::GraphInstantiate, OpKind::GraphLaunch,
                                     OpKind::Malloc, OpKind::Free, OpKind::MallocHost, OpKind::FreeHost, OpKind::HostRegister,
                                     OpKind::MallocAsync, OpKind::FreeAsync};
        static const CopyDir dirs[] = {CopyDir::H2D, CopyDir::D2H, CopyDir::D2D};
        Op op;
        op.kind = enum_of(o.at("kind").get<std::string>(), oks, f, "op kind");
        op.thread = o.value("thread", kNone);
        op.stream = o.value("stream", kNone);
        op.event = o.value("event", kNone);
        op.buffer = o.value("buffer", kNone);
        op.graph = o.value("graph", kNone);
        op.graph_node = o.value("graph_node", false);
        op.host_buffer = o.value("host_buffer", kNone);
        op.duration = Time::ps(o.value("duration_ps", int64_t{0}));
        op.bytes = o.value("bytes", uint64_t{0});
        op.flops = o.value("flops", 0.0);
        op.sync = o.value("sync", false);
        op.to_device = o.value("to", std::string("device")) == "device";
        if (o.contains("direction")) op.dir = enum_of(o.at("direction").get<std::string>(), dirs, f, "direction");
        if (o.contains("memory")) op.host_mem = enum_of(o.at("memory").get<std::string>(), mems, f, "memory kind");
        op.shape.grid = o.value("grid", 1u);
        op.shape.block = o.value("block", 256u);
        op.shape.regs_per_thread = o.value("registers", 32u);
        op.shape.smem_per_block = o.value("shared_memory", 0u);
        return op;
    };
    try {
        if (j.contains("options")) {
            const json& o = j.at("options");
            p.blocking_sync = o.value("sync", std::string("spin")) == "blocking";
            p.cold_start = o.value("cold_start", false);
            p.max_connections = o.value("max_connections", 0u);
        }
        p.source = j.at("source").get<std::string>();
        p.tasks_form = j.at("form") == "tasks";
        for (const auto& b : j.at("buffers"))
            p.buffers.push_back(Buffer{b.at("name"), enum_of(b.at("kind").get<std::string>(), mems, file, "memory kind"),
                                       b.at("bytes").get<uint64_t>(), b.at("resident") == "device"});
        for (const auto& s : j.at("streams"))
            p.streams.push_back(Stream{s.at("name"), enum_of(s.at("kind").get<std::string>(), sks, file, "stream kind"),
                                       s.at("priority").get<int>(), s.at("thread").get<int>()});
        for (const auto& e : j.at("events")) p.events.push_back(Event{e.at("name"), e.value("blocking_sync", false)});
        if (j.contains("graphs"))
            for (const auto& g : j.at("graphs")) {
                Graph graph{g.at("name").get<std::string>(), {}};
                for (const auto& n : g.at("nodes")) {
                    Op node = op_from_json(n, file);
                    auto [it, added] = name_ids.try_emplace(n.at("name").get<std::string>(), static_cast<uint32_t>(p.names.size()));
                    if (added) p.names.push_back(it->first);
                    node.name = it->second;
                    graph.nodes.push_back(node);
                }
                p.graphs.push_back(std::move(graph));
            }
        for (const auto& t : j.at("threads")) p.threads.push_back(HostThread{t.at("name"), t.at("ops").get<std::vector<uint32_t>>()});
        p.gpu_tasks = j.at("gpu_tasks").get<std::vector<uint32_t>>();
        for (const auto& o : j.at("ops")) {
            Op op = op_from_json(o, file);
            std::string label = o.contains("label") ? o.at("label").get<std::string>() : o.at("name").get<std::string>();
            auto [it, added] = name_ids.try_emplace(label, static_cast<uint32_t>(p.names.size()));
            if (added) p.names.push_back(label);
            op.name = it->second;
            if (o.contains("loop")) {
                op.iter_begin = static_cast<uint32_t>(p.iter_indices.size());
                for (uint32_t v : o.at("loop")) p.iter_indices.push_back(v);
                op.iter_count = static_cast<uint8_t>(p.iter_indices.size() - op.iter_begin);
            }
            if (o.contains("uses")) {
                op.uses_begin = static_cast<uint32_t>(p.uses.size());
                for (uint32_t u : o.at("uses")) p.uses.push_back(u);
                op.uses_count = static_cast<uint16_t>(p.uses.size() - op.uses_begin);
            }
            if (o.contains("after")) {
                op.after_begin = static_cast<uint32_t>(p.after.size());
                for (uint32_t a : o.at("after")) p.after.push_back(a);
                op.after_count = static_cast<uint32_t>(p.after.size() - op.after_begin);
            }
            p.ops.push_back(op);
        }
    } catch (const json::exception& e) {
        throw InputError({file}, std::string("malformed lowered program: ") + e.what());
    }
    return p;
}

}  // namespace hetsim
