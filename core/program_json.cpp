#include "core/program_json.hpp"

#include <map>
#include <tuple>

#include "core/error.hpp"

namespace hetsim {

using nlohmann::json;

namespace {

bool roofline(const Op& o, const Site& s) { return s.flops != 0 || o.bytes != 0; }

// The fields of one op or graph node template, as its kind's row of the op table lists them.
void op_fields(const Program& p, const Op& o, json& j) {
    const uint16_t f = op_info(o.kind).fields;
    const Site& s = p.site(o);
    if (o.stream >= 0) j["stream"] = o.stream;
    if ((f & kFieldEvent) && o.event >= 0) j["event"] = o.event;
    // Version 2 names a copy's pinned or pageable host buffer "host_buffer" and its managed one "buffer".
    if ((f & kFieldBuffer) && o.buffer >= 0)
        j[(f & kFieldCopy) && o.host_mem != MemKind::Managed ? "host_buffer" : "buffer"] = o.buffer;
    if ((f & kFieldGraph) && o.graph >= 0) j["graph"] = o.graph;
    if ((f & kFieldQueue) && o.queue >= 0) j["queue"] = o.queue;
    if ((f & kFieldFlag) && o.flag >= 0) j["flag"] = o.flag;
    if ((f & kFieldThread) && o.target >= 0) j["target"] = o.target;
    if (o.graph_node) j["graph_node"] = true;
    const bool roof = (f & kFieldShape) && roofline(o, s);
    if ((f & kFieldDuration) && !roof) j["duration_ps"] = o.duration.ps();
    if (roof) j["flops"] = s.flops;
    if ((f & kFieldBytes) && ((f & kFieldShape) == 0 || roof)) j["bytes"] = o.bytes;
    if (f & kFieldShape) {
        j["grid"] = s.shape.grid;
        j["block"] = s.shape.block;
        j["registers"] = s.shape.regs_per_thread;
        j["shared_memory"] = s.shape.smem_per_block;
    }
    if (f & kFieldSync) j["sync"] = static_cast<bool>(o.sync);
    if (f & kFieldCopy) {
        j["direction"] = to_string(o.dir);
        j["memory"] = to_string(o.host_mem);
    }
    if (f & kFieldTo) j["to"] = o.to_device ? "device" : "host";
    if ((f & kFieldUses) && s.uses_count) j["uses"] = std::vector<uint32_t>(p.uses_begin(o), p.uses_begin(o) + s.uses_count);
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
            json node{{"name", p.label(o)}, {"kind", to_string(o.kind)}};
            op_fields(p, o, node);
            nodes.push_back(std::move(node));
        }
        json graph{{"name", g.name}, {"nodes", nodes}};
        if (!g.chain()) {  // a DAG: node k waits for the nodes in its "after" (none: the launch)
            json after = json::array();
            for (size_t k = 0; k < g.nodes.size(); ++k)
                after.push_back(std::vector<uint32_t>(g.after.begin() + g.after_index[k], g.after.begin() + g.after_index[k + 1]));
            graph["after"] = after;
        }
        graphs.push_back(std::move(graph));
    }
    j["graphs"] = graphs;
    // Host queues, flags and steady state (written only when a scenario uses them).
    if (!p.queues.empty()) {
        json queues = json::array();
        for (const auto& q : p.queues) queues.push_back({{"name", q.name}, {"capacity", q.capacity}});
        j["queues"] = queues;
    }
    if (!p.flags.empty()) {
        json flags = json::array();
        for (const auto& f : p.flags) flags.push_back({{"name", f.name}});
        j["flags"] = flags;
    }
    if (p.warmup) j["warmup"] = p.warmup;
    json threads = json::array();
    for (const auto& t : p.threads) {
        json th{{"name", t.name}, {"ops", t.ops}};
        if (t.start_after >= 0) th["start_after"] = t.start_after;
        threads.push_back(std::move(th));
    }
    j["threads"] = threads;
    j["gpu_tasks"] = p.gpu_tasks;
    json ops = json::array();
    int32_t launched = kNone;  // the graph of the last launch: its nodes follow it
    for (uint32_t i = 0; i < p.ops.size(); ++i) {
        const Op& o = p.ops[i];
        json op{{"index", i}, {"name", p.op_name(i)}, {"kind", to_string(o.kind)}, {"thread", o.thread}};
        if (o.kind == OpKind::GraphLaunch) launched = o.graph;
        if (o.graph_node) op["graph"] = launched;
        if (p.site(o).depth) {  // the label without loop indices (a kernel's identity) and the indices
            op["label"] = p.label(o);
            op["loop"] = p.loop_indices(i);
        }
        op_fields(p, o, op);
        if (o.warmup) op["warmup"] = true;
        if (p.after_count(i)) op["after"] = std::vector<uint32_t>(p.after_begin(i), p.after_end(i));
        ops.push_back(std::move(op));
    }
    j["ops"] = ops;
    return j;
}

namespace {

template <class E>
E enum_at(const json& o, const char* key, const std::string& file, const char* what) {
    std::string s = o.at(key).get<std::string>();
    E e{};
    if (!from_string(s, e)) throw InputError({file}, std::string("unknown ") + what + " '" + s + "' in lowered program");
    return e;
}

// Sites are not written out: reading interns them again from each op's label, loop depth,
// kernel shape and uses.
struct SiteTable {
    Program& p;
    std::map<std::string, uint32_t> names;
    std::map<std::tuple<uint32_t, uint8_t, uint32_t, uint32_t, uint32_t, uint32_t, double, std::vector<uint32_t>>, uint32_t> sites;

    uint32_t intern(const std::string& label, uint8_t depth, const KernelShape& k, double flops, const std::vector<uint32_t>& uses) {
        auto [n, added] = names.try_emplace(label, static_cast<uint32_t>(p.names.size()));
        if (added) p.names.push_back(label);
        auto key = std::make_tuple(n->second, depth, k.grid, k.block, k.regs_per_thread, k.smem_per_block, flops, uses);
        auto [s, fresh] = sites.try_emplace(key, static_cast<uint32_t>(p.sites.size()));
        if (fresh) {
            Site st;
            st.label = n->second;
            st.depth = depth;
            st.shape = k;
            st.flops = flops;
            st.uses_begin = static_cast<uint32_t>(p.uses.size());
            st.uses_count = static_cast<uint16_t>(uses.size());
            p.uses.insert(p.uses.end(), uses.begin(), uses.end());
            p.sites.push_back(st);
        }
        return s->second;
    }
};

Op op_from_json(const json& o, const std::string& file, SiteTable& sites, const std::vector<uint32_t>& loop) {
    Op op;
    op.kind = enum_at<OpKind>(o, "kind", file, "op kind");
    const uint16_t f = op_info(op.kind).fields;
    op.thread = static_cast<int16_t>(o.value("thread", kNone));
    op.stream = o.value("stream", kNone);
    if (f & kFieldEvent) op.event = o.value("event", kNone);
    if (f & kFieldBuffer) op.buffer = o.value("buffer", o.value("host_buffer", kNone));
    if (f & kFieldGraph) op.graph = o.value("graph", kNone);
    if (f & kFieldQueue) op.queue = o.value("queue", kNone);
    if (f & kFieldFlag) op.flag = o.value("flag", kNone);
    if (f & kFieldThread) op.target = o.value("target", kNone);
    op.warmup = o.value("warmup", false);
    op.graph_node = o.value("graph_node", false);
    op.duration = Time::ps(o.value("duration_ps", int64_t{0}));
    op.bytes = o.value("bytes", uint64_t{0});
    op.sync = o.value("sync", false);
    op.to_device = o.value("to", std::string("device")) == "device";
    if (o.contains("direction")) op.dir = enum_at<CopyDir>(o, "direction", file, "direction");
    if (o.contains("memory")) op.host_mem = enum_at<MemKind>(o, "memory", file, "memory kind");
    KernelShape k;
    k.grid = o.value("grid", 1u);
    k.block = o.value("block", 256u);
    k.regs_per_thread = o.value("registers", 32u);
    k.smem_per_block = o.value("shared_memory", 0u);
    std::vector<uint32_t> uses = o.value("uses", std::vector<uint32_t>{});
    std::string label = o.contains("label") ? o.at("label").get<std::string>() : o.at("name").get<std::string>();
    op.site = sites.intern(label, static_cast<uint8_t>(loop.size()), k, o.value("flops", 0.0), uses);
    return op;
}

}  // namespace

Program program_from_json(const json& j, const std::string& file) {
    if (!j.is_object() || j.value("schema", "") != "hetsim.program")
        throw InputError({file}, "not a hetsim lowered program (expected \"schema\": \"hetsim.program\")");
    if (j.value("version", -1) != kProgramSchemaVersion)
        throw InputError({file}, "lowered program has schema version " + j.value("version", json(-1)).dump() + "; this hetsim reads version " +
                                     std::to_string(kProgramSchemaVersion) + " (lower the scenario again)");
    Program p;
    SiteTable sites{p, {}, {}};
    p.locs.push_back(SourceLoc{file});
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
            p.buffers.push_back(Buffer{b.at("name"), enum_at<MemKind>(b, "kind", file, "memory kind"), b.at("bytes").get<uint64_t>(),
                                       b.at("resident") == "device"});
        for (const auto& s : j.at("streams"))
            p.streams.push_back(Stream{s.at("name"), enum_at<StreamKind>(s, "kind", file, "stream kind"), s.at("priority").get<int>(),
                                       s.at("thread").get<int>()});
        for (const auto& e : j.at("events")) p.events.push_back(Event{e.at("name"), e.value("blocking_sync", false)});
        if (j.contains("graphs"))
            for (const auto& g : j.at("graphs")) {
                Graph graph;
                graph.name = g.at("name").get<std::string>();
                for (const auto& n : g.at("nodes")) graph.nodes.push_back(op_from_json(n, file, sites, {}));
                if (g.contains("after")) {
                    graph.after_index.push_back(0);
                    for (const auto& a : g.at("after")) {
                        for (uint32_t x : a.get<std::vector<uint32_t>>()) graph.after.push_back(x);
                        graph.after_index.push_back(static_cast<uint32_t>(graph.after.size()));
                    }
                }
                p.graphs.push_back(std::move(graph));
            }
        if (j.contains("queues"))
            for (const auto& q : j.at("queues")) p.queues.push_back(HostQueue{q.at("name"), q.at("capacity").get<uint32_t>()});
        if (j.contains("flags"))
            for (const auto& f : j.at("flags")) p.flags.push_back(Flag{f.at("name")});
        p.warmup = j.value("warmup", 0u);
        for (const auto& t : j.at("threads"))
            p.threads.push_back(HostThread{t.at("name"), t.at("ops").get<std::vector<uint32_t>>(), t.value("start_after", kNone)});
        p.gpu_tasks = j.at("gpu_tasks").get<std::vector<uint32_t>>();
        if (p.tasks_form) p.after_index.push_back(0);
        for (const auto& o : j.at("ops")) {
            std::vector<uint32_t> loop = o.value("loop", std::vector<uint32_t>{});
            Op op = op_from_json(o, file, sites, loop);
            op.iter_begin = static_cast<uint32_t>(p.iter_indices.size());
            p.iter_indices.insert(p.iter_indices.end(), loop.begin(), loop.end());
            if (p.tasks_form) {
                std::vector<uint32_t> after = o.value("after", std::vector<uint32_t>{});
                p.after.insert(p.after.end(), after.begin(), after.end());
                p.after_index.push_back(static_cast<uint32_t>(p.after.size()));
            }
            p.ops.push_back(op);
        }
    } catch (const json::exception& e) {
        throw InputError({file}, std::string("malformed lowered program: ") + e.what());
    }
    return p;
}

}  // namespace hetsim
