#include "core/program_json.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "core/input_file.hpp"
#include "core/error.hpp"

namespace hetsim {

using nlohmann::json;

namespace {

bool roofline(const Op& o, const Site& s) { return s.flops != 0 || o.bytes != 0; }

// The fields of one op or graph node template, as its kind's row of the op table lists them.
void op_fields(const Program& p, const Op& o, json& j) {
    const uint16_t f = op_info(o.kind).fields;
    const Site& s = p.site(o);
    if ((f & kFieldStream) && o.stream >= 0) j["stream"] = o.stream;
    if ((f & kFieldEvent) && o.event >= 0) j["event"] = o.event;
    if ((f & kFieldBuffer) && o.buffer >= 0) j["buffer"] = o.buffer;
    if ((f & kFieldGraph) && o.graph >= 0) j["graph"] = o.graph;
    if (f & kFieldExec) j["exec"] = o.exec;
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
    if ((f & kFieldCopy) && s.rows) {  // a pitched copy: rows of bytes / height each
        j["height"] = s.rows;
        j["spitch"] = s.spitch;
        j["dpitch"] = s.dpitch;
    }
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
    if (p.warmup) j["warmup"] = p.warmup;  // steady state: warm-up iterations before the measured one
    json bufs = json::array();
    for (const auto& b : p.buffers) {
        json buf{{"name", b.name}, {"kind", to_string(b.kind)}, {"bytes", b.bytes}};
        if (b.kind == MemKind::Managed) buf["resident"] = b.managed_on_device ? "device" : "host";
        bufs.push_back(std::move(buf));
    }
    j["buffers"] = bufs;
    json streams = json::array();
    for (const auto& s : p.streams) {
        json st{{"name", s.name}, {"kind", to_string(s.kind)}, {"priority", s.priority}};
        if (s.kind == StreamKind::PerThread) st["thread"] = s.owner_thread;
        streams.push_back(std::move(st));
    }
    j["streams"] = streams;
    json events = json::array();
    for (const auto& e : p.events) events.push_back({{"name", e.name}, {"blocking_sync", e.blocking_sync}});
    j["events"] = events;
    json queues = json::array();
    for (const auto& q : p.queues) queues.push_back({{"name", q.name}, {"capacity", q.capacity}});
    j["queues"] = queues;
    json flags = json::array();
    for (const auto& f : p.flags) flags.push_back({{"name", f.name}});
    j["flags"] = flags;
    json graphs = json::array();
    for (const auto& g : p.graphs) {
        json nodes = json::array();
        for (size_t k = 0; k < g.nodes.size(); ++k) {
            const Op& o = g.nodes[k];
            json node{{"name", p.label(o)}, {"kind", to_string(o.kind)}};
            op_fields(p, o, node);
            if (!g.chain())  // every node names the nodes it waits for (none: it starts the graph)
                node["after"] = std::vector<uint32_t>(g.after.begin() + g.after_index[k], g.after.begin() + g.after_index[k + 1]);
            nodes.push_back(std::move(node));
        }
        graphs.push_back({{"name", g.name}, {"nodes", nodes}});
    }
    j["graphs"] = graphs;
    json threads = json::array();
    for (const auto& t : p.threads) {
        json th{{"name", t.name}, {"ops", t.ops}};
        if (t.start_after >= 0) th["start_after"] = t.start_after;
        threads.push_back(std::move(th));
    }
    j["threads"] = threads;
    j["gpu_tasks"] = p.gpu_tasks;
    json ops = json::array();
    for (uint32_t i = 0; i < p.ops.size(); ++i) {
        const Op& o = p.ops[i];
        json op{{"index", i}, {"name", p.op_name(i)}, {"kind", to_string(o.kind)}, {"thread", o.thread}};
        if (o.warmup) op["warmup"] = true;
        if (p.site(o).depth) {  // the label without loop indices (a kernel's identity) and the indices
            op["label"] = p.label(o);
            op["loop"] = p.loop_indices(i);
        }
        op_fields(p, o, op);
        if (p.after_count(i)) op["after"] = std::vector<uint32_t>(p.after_begin(i), p.after_end(i));
        ops.push_back(std::move(op));
    }
    j["ops"] = ops;
    return j;
}

// ---------------------------------------------------------------- reading

namespace {

std::string plural(size_t n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

// A value as a message shows it: its JSON text, cut short.
std::string shown(const json& v) {
    std::string s = v.dump(-1, ' ', true, json::error_handler_t::replace);
    return s.size() > 48 ? s.substr(0, 45) + "..." : s;
}

std::string loop_suffix(const std::vector<uint32_t>& loop) {
    std::string s;
    for (uint32_t i : loop) {
        s += '[';
        s += std::to_string(i);
        s += ']';
    }
    return s;
}

// A graph node kind (kernel, memcpy, memset, host_func): a spelling of it may appear in graphs.
bool graph_node_kind(OpKind k) {
    for (const OpSpelling& s : op_spellings())
        if (s.kind == k && (s.forms & kInGraphs)) return true;
    return false;
}

// A GPU task kind of the tasks form (kernel, memcpy, memset, prefetch, host_func).
bool gpu_task_kind(OpKind k) {
    if (op_info(k).gpu == GpuWork::None) return false;
    for (const OpSpelling& s : op_spellings())
        if (s.kind == k && (s.forms & kInTasks)) return true;
    return false;
}

// What a host thread of the tasks form may run: host work and host calls (allocations,
// graph_instantiate); GPU work are tasks of their own.
bool tasks_host_kind(OpKind k) {
    return k == OpKind::HostWork || Program::is_allocation(k) || k == OpKind::GraphInstantiate;
}

// The keys an op (or graph node template) of kind k may have.
const std::vector<std::string>& keys_of(OpKind k, bool node) {
    static const auto table = [] {
        std::vector<std::vector<std::string>> t(2 * kOpKinds);
        for (int i = 0; i < kOpKinds; ++i)
            for (int nd = 0; nd < 2; ++nd) {
                const OpKind kind = static_cast<OpKind>(i);
                const uint16_t f = op_info(kind).fields;
                auto& v = t[2 * i + nd];
                v = nd ? std::vector<std::string>{"name", "kind", "after"}
                       : std::vector<std::string>{"index", "name", "kind", "thread", "label", "loop", "after", "warmup"};
                if (!nd && graph_node_kind(kind)) v.push_back("graph_node");
                if ((f & kFieldStream) && !nd) v.push_back("stream");
                if (f & kFieldEvent) v.push_back("event");
                if (f & kFieldBuffer) v.push_back("buffer");
                if (f & kFieldGraph) v.push_back("graph");
                if ((f & kFieldExec) && !nd) v.push_back("exec");
                if (f & kFieldQueue) v.push_back("queue");
                if (f & kFieldFlag) v.push_back("flag");
                if (f & kFieldThread) v.push_back("target");
                if (f & kFieldDuration) v.push_back("duration_ps");
                if (f & kFieldShape) v.insert(v.end(), {"flops", "grid", "block", "registers", "shared_memory"});
                if (f & kFieldBytes) v.push_back("bytes");
                if (f & kFieldSync) v.push_back("sync");
                if (f & kFieldCopy) v.insert(v.end(), {"direction", "memory"});
                if ((f & kFieldCopy) && !nd) v.insert(v.end(), {"height", "spitch", "dpitch"});
                if (f & kFieldTo) v.push_back("to");
                if (f & kFieldUses) v.push_back("uses");
                std::vector<std::string> unique;
                for (auto& key : v)
                    if (std::find(unique.begin(), unique.end(), key) == unique.end()) unique.push_back(key);
                v = unique;
            }
        return t;
    }();
    return table[2 * static_cast<int>(k) + (node ? 1 : 0)];
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& k : v) s += (s.empty() ? "" : ", ") + k;
    return s;
}

// Where a value is: a JSON path such as "ops[3]", and for an op or graph node, once known,
// what it is ("of kernel 'k[1]'"). Messages read "ops[3].stream of kernel 'k[1]': ...".
struct At {
    std::string path;
    OpKind kind = OpKind::HostWork;
    const std::string* name = nullptr;  // set once the op's kind and name are read

    std::string what() const { return name ? std::string(" of ") + to_string(kind) + " '" + *name + "'" : std::string(); }
    std::string here() const { return path + what(); }
    std::string key(const std::string& k) const { return (path.empty() ? k : path + "." + k) + what(); }
    std::string item(const std::string& k, size_t i) const { return (path.empty() ? k : path + "." + k) + "[" + std::to_string(i) + "]" + what(); }
};

// Sites are not written out: reading interns them again from each op's label, loop depth,
// kernel shape, roofline flops and uses.
struct SiteTable {
    Program& p;
    std::map<std::string, uint32_t> names;
    std::map<std::tuple<uint32_t, uint8_t, uint32_t, uint32_t, uint32_t, uint32_t, double, std::vector<uint32_t>, uint32_t, uint64_t, uint64_t>,
             uint32_t>
        sites;

    uint32_t intern(const std::string& label, uint8_t depth, const KernelShape& k, double flops, const std::vector<uint32_t>& uses,
                    uint32_t rows = 0, uint64_t spitch = 0, uint64_t dpitch = 0) {
        auto [n, added] = names.try_emplace(label, static_cast<uint32_t>(p.names.size()));
        if (added) p.names.push_back(label);
        auto key = std::make_tuple(n->second, depth, k.grid, k.block, k.regs_per_thread, k.smem_per_block, flops, uses, rows, spitch, dpitch);
        auto [s, fresh] = sites.try_emplace(key, static_cast<uint32_t>(p.sites.size()));
        if (fresh) {
            Site st;
            st.label = n->second;
            st.depth = depth;
            st.shape = k;
            st.flops = flops;
            st.rows = rows;
            st.spitch = spitch;
            st.dpitch = dpitch;
            st.uses_begin = static_cast<uint32_t>(p.uses.size());
            st.uses_count = static_cast<uint16_t>(uses.size());
            p.uses.insert(p.uses.end(), uses.begin(), uses.end());
            p.sites.push_back(st);
        }
        return s->second;
    }
};

// What an op's site holds beside its label and depth.
struct SiteFields {
    KernelShape shape;
    double flops = 0;
    uint32_t rows = 0;  // a pitched copy
    uint64_t spitch = 0, dpitch = 0;
    std::vector<uint32_t> uses;
};

class Reader {
public:
    Reader(const json& j, const std::string& file) : j_(j), file_(file) {}
    Program read(std::string* scenario_name);

private:
    const json& j_;
    const std::string& file_;
    Program p_;
    SiteTable sites_{p_, {}, {}};
    size_t n_ops_ = 0;
    int version_ = kProgramSchemaVersion;

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw InputError(SourceLoc{file_}, where.empty() ? what : where + ": " + what);
    }

    // ---- values
    const json* find(const json& o, const char* key) const {
        auto it = o.find(key);
        return it == o.end() ? nullptr : &*it;
    }
    const json& need(const json& o, const char* key, const At& at) const {
        const json* v = find(o, key);
        if (!v) fail(at.here(), std::string("missing key \"") + key + "\"");
        return *v;
    }
    const json& object(const json& v, const std::string& where) const {
        if (!v.is_object()) fail(where, "must be an object, got " + shown(v));
        return v;
    }
    const json& list(const json& v, const std::string& where) const {
        if (!v.is_array()) fail(where, "must be an array, got " + shown(v));
        return v;
    }
    std::string text(const json& v, const std::string& where) const {
        if (!v.is_string()) fail(where, "must be a string, got " + shown(v));
        return v.get<std::string>();
    }
    bool boolean(const json& v, const std::string& where) const {
        if (!v.is_boolean()) fail(where, "must be true or false, got " + shown(v));
        return v.get<bool>();
    }
    int64_t integer(const json& v, const std::string& where, int64_t lo, int64_t hi) const {
        if (!v.is_number_integer()) fail(where, "must be an integer, got " + shown(v));
        if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
            fail(where, "is " + shown(v) + ", expected " + std::to_string(lo) + ".." + std::to_string(hi));
        const int64_t x = v.get<int64_t>();
        if (x < lo || x > hi) fail(where, "is " + std::to_string(x) + ", expected " + std::to_string(lo) + ".." + std::to_string(hi));
        return x;
    }
    uint64_t count(const json& v, const std::string& where) const {
        if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
            fail(where, "must be a non-negative integer, got " + shown(v));
        return v.get<uint64_t>();
    }
    double amount(const json& v, const std::string& where) const {
        if (!v.is_number()) fail(where, "must be a number, got " + shown(v));
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < 0) fail(where, "must be a finite non-negative number, got " + shown(v));
        return d;
    }
    template <class E>
    E enumeration(const json& v, const std::string& where, int n, const char* what) const {
        const std::string s = text(v, where);
        E e{};
        if (from_string(s, e)) return e;
        std::string expected;
        for (int i = 0; i < n; ++i) expected += std::string(i ? ", " : "") + to_string(static_cast<E>(i));
        fail(where, std::string("unknown ") + what + " \"" + s + "\" (expected one of: " + expected + ")");
    }
    // An index into one of the program's lists.
    int32_t ref(const json& v, const std::string& where, size_t size, const char* noun) const {
        const int64_t x = integer(v, where, 0, INT32_MAX);
        if (static_cast<uint64_t>(x) >= size)
            fail(where, std::string("names ") + noun + " " + std::to_string(x) + ", but the program has " + plural(size, noun));
        return static_cast<int32_t>(x);
    }
    std::vector<uint32_t> refs(const json& v, const std::string& where, size_t size, const char* noun) const {
        std::vector<uint32_t> out;
        list(v, where);
        out.reserve(v.size());
        for (size_t k = 0; k < v.size(); ++k) out.push_back(static_cast<uint32_t>(ref(v[k], where + "[" + std::to_string(k) + "]", size, noun)));
        return out;
    }
    void only_keys(const json& o, const At& at, const std::vector<std::string>& keys, const char* what) const {
        for (auto it = o.begin(); it != o.end(); ++it)
            if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
                fail(at.key(it.key()), std::string("unknown key (") + what + " has: " + joined(keys) + ")");
    }

    // ---- parts
    void read_options(const json& o);
    template <class T, class Fill>
    void read_items(const json& v, const char* list_key, const char* what, const std::vector<std::string>& keys, std::vector<T>& out, Fill fill);
    void read_buffers(const json& v);
    void read_streams(const json& v);
    void read_events(const json& v);
    void read_queues(const json& v);
    void read_flags(const json& v);
    void read_graphs(const json& v);
    void check_graph_order(const Graph& g, const std::string& at) const;
    void check_thread_starts();
    void read_threads(const json& v);
    void read_op(const json& o, size_t i);
    void read_fields(const json& o, const At& at, Op& op, SiteFields& sf, bool node);
    void check_lists();
    void check_graph_launches();
    void check_graph_execs();
    void check_node(const Op& nd, uint32_t i, const Op& gn, const Graph& g, size_t k, uint32_t launch) const;
};

void Reader::read_options(const json& o) {
    const At at{"options"};
    object(o, "options");
    only_keys(o, at, {"sync", "cold_start", "max_connections"}, "options");
    if (const json* v = find(o, "sync")) {
        const std::string s = text(*v, "options.sync");
        if (s != "spin" && s != "blocking") fail("options.sync", "must be \"spin\" or \"blocking\", got \"" + s + "\"");
        p_.blocking_sync = s == "blocking";
    }
    if (const json* v = find(o, "cold_start")) p_.cold_start = boolean(*v, "options.cold_start");
    if (const json* v = find(o, "max_connections")) p_.max_connections = static_cast<uint32_t>(integer(*v, "options.max_connections", 0, 32));
}

// The declaration lists (buffers, streams, events, queues, flags): an array of objects, each with
// only `keys`; `fill` reads one object's fields at `at` into a new element of `out`.
template <class T, class Fill>
void Reader::read_items(const json& v, const char* list_key, const char* what, const std::vector<std::string>& keys, std::vector<T>& out,
                        Fill fill) {
    list(v, list_key);
    for (size_t i = 0; i < v.size(); ++i) {
        const At at{std::string(list_key) + "[" + std::to_string(i) + "]"};
        const json& o = object(v[i], at.path);
        only_keys(o, at, keys, what);
        T item;
        fill(o, at, i, item);
        out.push_back(std::move(item));
    }
}

void Reader::read_buffers(const json& v) {
    read_items(v, "buffers", "a buffer", {"name", "kind", "bytes", "resident"}, p_.buffers, [&](const json& b, const At& at, size_t, Buffer& buf) {
        buf.name = text(need(b, "name", at), at.key("name"));
        buf.kind = enumeration<MemKind>(need(b, "kind", at), at.key("kind"), 4, "memory kind");
        buf.bytes = count(need(b, "bytes", at), at.key("bytes"));
        if (const json* r = find(b, "resident")) {
            if (buf.kind != MemKind::Managed) fail(at.key("resident"), std::string("applies only to managed buffers; this one is ") + to_string(buf.kind));
            const std::string s = text(*r, at.key("resident"));
            if (s != "host" && s != "device") fail(at.key("resident"), "must be \"host\" or \"device\", got \"" + s + "\"");
            buf.managed_on_device = s == "device";
        }
    });
}

void Reader::read_streams(const json& v) {
    list(v, "streams");
    if (v.empty()) fail("streams", "is empty; stream 0 must be the legacy default stream");
    read_items(v, "streams", "a stream", {"name", "kind", "priority", "thread"}, p_.streams, [&](const json& s, const At& at, size_t i, Stream& st) {
        st.name = text(need(s, "name", at), at.key("name"));
        st.kind = enumeration<StreamKind>(need(s, "kind", at), at.key("kind"), 4, "stream kind");
        st.priority = static_cast<int>(integer(need(s, "priority", at), at.key("priority"), -64, 64));
        if ((i == 0) != (st.kind == StreamKind::Legacy))
            fail(at.key("kind"), "stream 0 must be the legacy default stream and no other stream may be legacy");
        if (st.kind == StreamKind::PerThread)
            st.owner_thread = static_cast<int>(integer(need(s, "thread", at), at.key("thread"), 0, kMaxThreads - 1));
        else if (find(s, "thread"))
            fail(at.key("thread"), std::string("only a per-thread stream has an owner thread; this one is ") + to_string(st.kind));
    });
}

void Reader::read_events(const json& v) {
    read_items(v, "events", "an event", {"name", "blocking_sync"}, p_.events, [&](const json& e, const At& at, size_t, Event& ev) {
        ev.name = text(need(e, "name", at), at.key("name"));
        if (const json* b = find(e, "blocking_sync")) ev.blocking_sync = boolean(*b, at.key("blocking_sync"));
    });
}

void Reader::read_queues(const json& v) {
    read_items(v, "queues", "a host queue", {"name", "capacity"}, p_.queues, [&](const json& q, const At& at, size_t, HostQueue& hq) {
        hq.name = text(need(q, "name", at), at.key("name"));
        hq.capacity = static_cast<uint32_t>(integer(need(q, "capacity", at), at.key("capacity"), 1, UINT32_MAX));
    });
}

void Reader::read_flags(const json& v) {
    read_items(v, "flags", "a flag", {"name"}, p_.flags,
               [&](const json& f, const At& at, size_t, Flag& fl) { fl.name = text(need(f, "name", at), at.key("name")); });
}

// Graph nodes with dependencies: each node's `after` names earlier or later nodes of its graph,
// but no cycle (the graph could never finish).
void Reader::check_graph_order(const Graph& g, const std::string& at) const {
    const size_t n = g.nodes.size();
    std::vector<uint32_t> waits(n, 0), order;
    std::vector<std::vector<uint32_t>> succ(n);
    for (size_t k = 0; k < n; ++k)
        for (uint32_t a = g.after_index[k]; a < g.after_index[k + 1]; ++a) {
            succ[g.after[a]].push_back(static_cast<uint32_t>(k));
            ++waits[k];
        }
    for (uint32_t k = 0; k < n; ++k)
        if (!waits[k]) order.push_back(k);
    for (size_t i = 0; i < order.size(); ++i)
        for (uint32_t s : succ[order[i]])
            if (!--waits[s]) order.push_back(s);
    if (order.size() == n) return;
    std::string on;
    for (size_t k = 0, shown = 0; k < n && shown < 8; ++k)
        if (waits[k]) on += (shown++ ? ", " : "") + std::to_string(k);
    fail(at, "the nodes' \"after\" lists form a cycle (nodes " + on + " can never start)");
}

void Reader::read_graphs(const json& v) {
    list(v, "graphs");
    for (size_t g = 0; g < v.size(); ++g) {
        const At at{"graphs[" + std::to_string(g) + "]"};
        const json& gr = object(v[g], at.path);
        only_keys(gr, at, {"name", "nodes"}, "a graph");
        Graph graph;
        graph.name = text(need(gr, "name", at), at.key("name"));
        p_.graphs.push_back(std::move(graph));
    }
    for (size_t g = 0; g < v.size(); ++g) {
        const At gat{"graphs[" + std::to_string(g) + "]"};
        const json& nodes = list(need(v[g], "nodes", gat), gat.key("nodes"));
        if (nodes.empty()) fail(gat.key("nodes"), "is empty; a graph has at least one node");
        for (size_t k = 0; k < nodes.size(); ++k) {
            At at{gat.path + ".nodes[" + std::to_string(k) + "]"};
            const json& o = object(nodes[k], at.path);
            const std::string name = text(need(o, "name", at), at.key("name"));
            Op op;
            op.kind = enumeration<OpKind>(need(o, "kind", at), at.key("kind"), kOpKinds, "op kind");
            at.kind = op.kind;
            at.name = &name;
            if (!graph_node_kind(op.kind))
                fail(at.key("kind"), std::string("a graph node is a kernel, memcpy, memset or host_func, not a ") + to_string(op.kind));
            for (const char* key : {"index", "thread", "stream"})
                if (find(o, key)) fail(at.key(key), "a graph node has no \"index\", \"thread\" or \"stream\" (it runs where its graph is launched)");
            only_keys(o, at, keys_of(op.kind, true), (std::string("a ") + to_string(op.kind) + " graph node").c_str());
            SiteFields sf;
            read_fields(o, at, op, sf, true);
            op.site = sites_.intern(name, 0, sf.shape, sf.flops, sf.uses);
            p_.graphs[g].nodes.push_back(op);
        }
        // Dependencies: either every node names the nodes it waits for, or none does (a chain).
        Graph& gr = p_.graphs[g];
        const bool dag = find(nodes[0], "after") != nullptr;
        if (!dag) {
            for (size_t k = 1; k < nodes.size(); ++k)
                if (find(nodes[k], "after"))
                    fail(gat.path + ".nodes[0]", "missing key \"after\" (node " + std::to_string(k) +
                                                     " names the nodes it waits for, so every node of the graph does; [] for none)");
            continue;
        }
        gr.after_index.push_back(0);
        for (size_t k = 0; k < nodes.size(); ++k) {
            const std::string at = gat.path + ".nodes[" + std::to_string(k) + "]";
            const json* a = find(nodes[k], "after");
            if (!a) fail(at, "missing key \"after\" (node 0 names the nodes it waits for, so every node of the graph does; [] for none)");
            std::vector<uint32_t> after = refs(*a, at + ".after", nodes.size(), "node");
            for (size_t m = 0; m < after.size(); ++m) {
                if (after[m] == k) fail(at + ".after[" + std::to_string(m) + "]", "is the node itself; a node cannot wait for itself");
                for (size_t q = 0; q < m; ++q)
                    if (after[q] == after[m]) fail(at + ".after[" + std::to_string(m) + "]", "names node " + std::to_string(after[m]) + " a second time; list it once");
            }
            gr.after.insert(gr.after.end(), after.begin(), after.end());
            gr.after_index.push_back(static_cast<uint32_t>(gr.after.size()));
        }
        check_graph_order(gr, gat.key("nodes"));
    }
}

void Reader::read_threads(const json& v) {
    list(v, "threads");
    if (v.size() > static_cast<size_t>(kMaxThreads)) fail("threads", "has " + std::to_string(v.size()) + " threads; a program may have at most " + std::to_string(kMaxThreads));
    for (size_t t = 0; t < v.size(); ++t) {
        const At at{"threads[" + std::to_string(t) + "]"};
        const json& th = object(v[t], at.path);
        only_keys(th, at, {"name", "ops", "start_after"}, "a thread");
        HostThread ht;
        ht.name = text(need(th, "name", at), at.key("name"));
        ht.ops = refs(need(th, "ops", at), at.key("ops"), n_ops_, "op");
        if (const json* s = find(th, "start_after")) ht.start_after = ref(*s, at.key("start_after"), n_ops_, "op");
        p_.threads.push_back(std::move(ht));
    }
}

// The keys of an op's kind (its row of the op table), shared by ops and graph node templates.
void Reader::read_fields(const json& o, const At& at, Op& op, SiteFields& sf, bool node) {
    const uint16_t f = op_info(op.kind).fields;
    if ((f & kFieldStream) && !node) op.stream = ref(need(o, "stream", at), at.key("stream"), p_.streams.size(), "stream");
    if (f & kFieldEvent) op.event = ref(need(o, "event", at), at.key("event"), p_.events.size(), "event");
    if (f & kFieldGraph) op.graph = ref(need(o, "graph", at), at.key("graph"), p_.graphs.size(), "graph");
    if ((f & kFieldExec) && !node && version_ >= 4)  // checked against the instantiations once all ops are read
        op.exec = static_cast<uint64_t>(integer(need(o, "exec", at), at.key("exec"), 0, UINT32_MAX));
    if (f & kFieldQueue) op.queue = ref(need(o, "queue", at), at.key("queue"), p_.queues.size(), "queue");
    if (f & kFieldFlag) {  // host_wait waits for one; a host_func may set one
        const json* fl = op.kind == OpKind::HostWait ? &need(o, "flag", at) : find(o, "flag");
        if (fl) op.flag = ref(*fl, at.key("flag"), p_.flags.size(), "flag");
    }
    if (f & kFieldThread) {
        op.target = ref(need(o, "target", at), at.key("target"), p_.threads.size(), "thread");
        if (op.target == op.thread) fail(at.key("target"), "is the op's own thread; a thread cannot join itself");
    }
    if (f & kFieldSync) {
        op.sync = boolean(need(o, "sync", at), at.key("sync"));
        if (node && op.sync) fail(at.key("sync"), "graph nodes are captured from a stream: copies and memsets are async (\"sync\": false)");
    }
    if (f & kFieldCopy) {
        op.dir = enumeration<CopyDir>(need(o, "direction", at), at.key("direction"), 3, "direction");
        op.host_mem = enumeration<MemKind>(need(o, "memory", at), at.key("memory"), 4, "memory kind");
        if ((op.dir == CopyDir::D2D) != (op.host_mem == MemKind::Device))
            fail(at.key("memory"), std::string("is ") + to_string(op.host_mem) + " with direction " + to_string(op.dir) +
                                       " (d2d copies have memory \"device\"; h2d and d2h copies pinned, pageable or managed)");
    }
    if (op.kind == OpKind::Memset) {  // as the frontend lowers a memset: device memory, on the device-copy path
        op.dir = CopyDir::D2D;
        op.host_mem = MemKind::Device;
    }
    if (f & kFieldShape) {
        sf.shape.grid = static_cast<uint32_t>(integer(need(o, "grid", at), at.key("grid"), 1, INT32_MAX));
        sf.shape.block = static_cast<uint32_t>(integer(need(o, "block", at), at.key("block"), 1, 1024));
        sf.shape.regs_per_thread = static_cast<uint32_t>(integer(need(o, "registers", at), at.key("registers"), 1, 255));
        sf.shape.smem_per_block = static_cast<uint32_t>(integer(need(o, "shared_memory", at), at.key("shared_memory"), 0, UINT32_MAX));
        const json *d = find(o, "duration_ps"), *fl = find(o, "flops"), *by = find(o, "bytes");
        if (d && (fl || by)) fail(at.here(), "a kernel has either \"duration_ps\" or \"flops\"/\"bytes\" (a roofline), not both");
        if (!d && !fl && !by) fail(at.here(), "missing key \"duration_ps\" (or \"flops\"/\"bytes\" for a roofline kernel)");
        if (d) op.duration = Time::ps(integer(*d, at.key("duration_ps"), 0, INT64_MAX));
        if (fl) sf.flops = amount(*fl, at.key("flops"));
        if (by) op.bytes = count(*by, at.key("bytes"));
    } else {
        if (f & kFieldDuration) op.duration = Time::ps(integer(need(o, "duration_ps", at), at.key("duration_ps"), 0, INT64_MAX));
        if (f & kFieldBytes) op.bytes = count(need(o, "bytes", at), at.key("bytes"));
    }
    if ((f & kFieldCopy) && !node) {
        // A pitched copy (cudaMemcpy2DAsync): "height" rows of bytes / height, and both pitches.
        const json *h = find(o, "height"), *sp = find(o, "spitch"), *dp = find(o, "dpitch");
        if (!h && (sp || dp)) fail(at.key(sp ? "spitch" : "dpitch"), "is a pitch, but the copy has no \"height\" (a pitched copy has all three)");
        if (h) {
            sf.rows = static_cast<uint32_t>(integer(*h, at.key("height"), 1, UINT32_MAX));
            sf.spitch = count(need(o, "spitch", at), at.key("spitch"));
            sf.dpitch = count(need(o, "dpitch", at), at.key("dpitch"));
            if (op.bytes % sf.rows)
                fail(at.key("bytes"), "is " + std::to_string(op.bytes) + ", not a whole number of rows: \"height\" is " + std::to_string(sf.rows));
            const uint64_t width = op.bytes / sf.rows;
            for (const auto& [key, pitch] : {std::pair<const char*, uint64_t>{"spitch", sf.spitch}, {"dpitch", sf.dpitch}})
                if (pitch < width)
                    fail(at.key(key), "is " + std::to_string(pitch) + ", narrower than a row of " + std::to_string(width) +
                                          " bytes (bytes / height); a pitch is at least the width");
        }
    }
    if (f & kFieldTo) {
        const std::string to = text(need(o, "to", at), at.key("to"));
        if (to != "device" && to != "host") fail(at.key("to"), "must be \"device\" or \"host\", got \"" + to + "\"");
        op.to_device = to == "device";
    }
    if (f & kFieldBuffer) {
        // A copy may name the buffer of its host side; a prefetch and an allocation name theirs.
        const bool copy = f & kFieldCopy;
        const char* key = "buffer";
        const json* b = find(o, key);
        if (!b && !copy) fail(at.here(), "missing key \"buffer\"");
        if (b) {
            op.buffer = ref(*b, at.key(key), p_.buffers.size(), "buffer");
            const Buffer& buf = p_.buffers[op.buffer];
            auto kind_is = [&](MemKind want, const char* why) {
                if (buf.kind != want)
                    fail(at.key(key), "names buffer '" + buf.name + "' which is " + to_string(buf.kind) + "; " + why);
            };
            switch (op.kind) {
                case OpKind::Memcpy: kind_is(op.host_mem, "a copy's buffer has the kind its \"memory\" says"); break;
                case OpKind::Prefetch: kind_is(MemKind::Managed, "a prefetch moves a managed buffer"); break;
                case OpKind::Malloc:
                case OpKind::Free:
                case OpKind::MallocAsync:
                case OpKind::FreeAsync: kind_is(MemKind::Device, "the allocation is device memory"); break;
                default: kind_is(MemKind::Pinned, "the allocation is pinned host memory"); break;
            }
            if ((op.kind == OpKind::Memcpy || op.kind == OpKind::Prefetch) && op.bytes > buf.bytes)
                fail(at.key("bytes"), "is " + std::to_string(op.bytes) + ", more than the " + std::to_string(buf.bytes) + " bytes of buffer '" +
                                          buf.name + "'");
            if (op.kind == OpKind::Memcpy && sf.rows) {  // the host side's extent: pitch x (rows - 1) + width
                const uint64_t pitch = op.dir == CopyDir::H2D ? sf.spitch : sf.dpitch;
                const uint64_t extent = pitch * (sf.rows - 1) + op.bytes / sf.rows;
                if (extent > buf.bytes)
                    fail(at.key(op.dir == CopyDir::H2D ? "spitch" : "dpitch"),
                         "makes the copy span " + std::to_string(extent) + " bytes of buffer '" + buf.name + "', which has " +
                             std::to_string(buf.bytes));
            }
        }
    }
    if (f & kFieldUses)
        if (const json* u = find(o, "uses")) {
            sf.uses = refs(*u, at.key("uses"), p_.buffers.size(), "buffer");
            if (sf.uses.size() > UINT16_MAX) fail(at.key("uses"), "lists more than 65535 buffers");
            for (size_t k = 0; k < sf.uses.size(); ++k)
                if (p_.buffers[sf.uses[k]].kind != MemKind::Managed)
                    fail(at.item("uses", k), "names buffer '" + p_.buffers[sf.uses[k]].name + "' which is " +
                                                 to_string(p_.buffers[sf.uses[k]].kind) + "; \"uses\" lists managed buffers");
        }
}

void Reader::read_op(const json& o, size_t i) {
    At at{"ops[" + std::to_string(i) + "]"};
    object(o, at.path);
    if (integer(need(o, "index", at), at.key("index"), 0, INT32_MAX) != static_cast<int64_t>(i))
        fail(at.key("index"), "is " + shown(o["index"]) + ", expected its position " + std::to_string(i));
    const std::string name = text(need(o, "name", at), at.key("name"));
    Op op;
    op.kind = enumeration<OpKind>(need(o, "kind", at), at.key("kind"), kOpKinds, "op kind");
    at.kind = op.kind;
    at.name = &name;
    only_keys(o, at, keys_of(op.kind, false), (std::string("a ") + to_string(op.kind) + " op").c_str());
    op.thread = static_cast<int16_t>(integer(need(o, "thread", at), at.key("thread"), -1, static_cast<int64_t>(p_.threads.size()) - 1));
    // The name is the label and the loop indices: op_name() gives it back.
    std::vector<uint32_t> loop;
    if (const json* l = find(o, "loop")) {
        list(*l, at.key("loop"));
        if (l->size() > UINT8_MAX) fail(at.key("loop"), "has " + std::to_string(l->size()) + " indices; loops nest at most 255 deep");
        for (size_t k = 0; k < l->size(); ++k) loop.push_back(static_cast<uint32_t>(integer((*l)[k], at.item("loop", k), 0, UINT32_MAX)));
    }
    std::string label = name;
    if (const json* lb = find(o, "label")) label = text(*lb, at.key("label"));
    else if (!loop.empty()) fail(at.here(), "missing key \"label\" (the name without its loop indices)");
    if (label + loop_suffix(loop) != name)
        fail(at.key("name"), "is '" + name + "', but \"label\" '" + label + "' with \"loop\" " + shown(json(loop)) + " makes '" + label +
                                 loop_suffix(loop) + "'");
    if (const json* g = find(o, "graph_node")) op.graph_node = boolean(*g, at.key("graph_node"));
    if (const json* w = find(o, "warmup")) {
        op.warmup = boolean(*w, at.key("warmup"));
        if (op.warmup && !p_.warmup) fail(at.key("warmup"), "marks an op of a warm-up iteration, but the program has none (no \"warmup\")");
    }
    SiteFields sf;
    read_fields(o, at, op, sf, false);
    if (op.kind == OpKind::HostWork && op.thread < 0) fail(at.key("thread"), "is -1, but host work runs on a host thread");
    if (((op_info(op.kind).fields & (kFieldQueue | kFieldThread)) || op.kind == OpKind::HostWait || op.kind == OpKind::Barrier) && op.thread < 0)
        fail(at.key("thread"), std::string("is -1, but ") + to_string(op.kind) + " runs on a host thread");
    if (Program::is_allocation(op.kind) && op.thread < 0)
        fail(at.key("thread"), std::string("is -1, but ") + to_string(op.kind) + " is a host call and runs on a host thread");
    if (op.stream >= 0) {
        const Stream& s = p_.streams[op.stream];
        if (s.kind == StreamKind::PerThread && !p_.tasks_form && s.owner_thread != op.thread)
            fail(at.key("stream"), "is the per-thread stream of thread " + std::to_string(s.owner_thread) + ", used from thread " +
                                       std::to_string(op.thread));
        if (op.sync && op.stream != 0 && s.kind != StreamKind::PerThread)
            fail(at.key("stream"), "names stream '" + s.name + "', but a synchronous copy or memset goes to the default stream (legacy or per-thread)");
    }
    if (const json* a = find(o, "after")) {
        if (!p_.tasks_form) fail(at.key("after"), "only exists in the tasks form");
        std::vector<uint32_t> after = refs(*a, at.key("after"), n_ops_, "op");
        for (size_t k = 0; k < after.size(); ++k) {
            if (after[k] == i) fail(at.item("after", k), "is the op itself; an op cannot wait for itself");
            for (size_t m = 0; m < k; ++m)
                if (after[m] == after[k]) fail(at.item("after", k), "names op " + std::to_string(after[k]) + " a second time; list it once");
        }
        p_.after.insert(p_.after.end(), after.begin(), after.end());
    }
    if (p_.tasks_form) p_.after_index.push_back(static_cast<uint32_t>(p_.after.size()));
    // Ops of one loop iteration share their loop indices, as the frontend lowers them.
    const uint32_t depth = static_cast<uint32_t>(loop.size());
    const bool same = !p_.ops.empty() && p_.site(p_.ops.back()).depth == depth &&
                      std::equal(loop.begin(), loop.end(), p_.iter_indices.begin() + p_.ops.back().iter_begin);
    if (same) {
        op.iter_begin = p_.ops.back().iter_begin;
    } else {
        op.iter_begin = static_cast<uint32_t>(p_.iter_indices.size());
        p_.iter_indices.insert(p_.iter_indices.end(), loop.begin(), loop.end());
    }
    op.site = sites_.intern(label, static_cast<uint8_t>(depth), sf.shape, sf.flops, sf.uses, sf.rows, sf.spitch, sf.dpitch);
    p_.ops.push_back(op);
}

std::string op_at(const Program& p, uint32_t i) {
    return "ops[" + std::to_string(i) + "] of " + to_string(p.ops[i].kind) + " '" + p.op_name(i) + "'";
}

// Every op is executed exactly once, by the thread (or the GPU task list) it names.
void Reader::check_lists() {
    std::vector<uint8_t> seen(p_.ops.size(), 0);
    for (size_t t = 0; t < p_.threads.size(); ++t)
        for (size_t k = 0; k < p_.threads[t].ops.size(); ++k) {
            const uint32_t i = p_.threads[t].ops[k];
            const Op& op = p_.ops[i];
            const std::string at = "threads[" + std::to_string(t) + "].ops[" + std::to_string(k) + "]";
            if (seen[i]++) fail(at, "lists " + op_at(p_, i) + " a second time (each op is in one thread or in gpu_tasks, once)");
            if (op.thread != static_cast<int>(t))
                fail(at, "lists " + op_at(p_, i) + " under thread " + std::to_string(t) + ", but its \"thread\" is " + std::to_string(op.thread));
            if (p_.tasks_form && !tasks_host_kind(op.kind))
                fail(at, "lists " + op_at(p_, i) + " on a host thread; in the tasks form host threads run only host work and host calls "
                                                  "(allocations, graph_instantiate)");
        }
    if (!p_.tasks_form && !p_.gpu_tasks.empty()) fail("gpu_tasks", "is not empty, but only the tasks form has GPU tasks");
    for (size_t k = 0; k < p_.gpu_tasks.size(); ++k) {
        const uint32_t i = p_.gpu_tasks[k];
        const Op& op = p_.ops[i];
        const std::string at = "gpu_tasks[" + std::to_string(k) + "]";
        if (seen[i]++) fail(at, "lists " + op_at(p_, i) + " a second time (each op is in one thread or in gpu_tasks, once)");
        if (op.thread != kNone) fail(at, "lists " + op_at(p_, i) + ", whose \"thread\" is " + std::to_string(op.thread) + "; a GPU task has -1");
        if (op.graph_node || !gpu_task_kind(op.kind))
            fail(at, "lists " + op_at(p_, i) + ", which is not a GPU task (kernel, memcpy, memset, prefetch, host_func)");
    }
    for (uint32_t i = 0; i < p_.ops.size(); ++i)
        if (!seen[i]) fail(op_at(p_, i), "is not listed in any thread (or gpu_tasks); nothing would execute it");
}

// A graph_node op repeats its node of the graph: the kind and every field but the stream and thread.
void Reader::check_node(const Op& nd, uint32_t i, const Op& gn, const Graph& g, size_t k, uint32_t launch) const {
    const Site &a = p_.site(nd), &b = p_.site(gn);
    const char* differs = nullptr;
    if (p_.label(nd) != p_.label(gn)) differs = "label";
    else if (nd.duration != gn.duration) differs = "duration_ps";
    else if (nd.bytes != gn.bytes) differs = "bytes";
    else if (nd.sync != gn.sync) differs = "sync";
    else if (nd.dir != gn.dir) differs = "direction";
    else if (nd.host_mem != gn.host_mem) differs = "memory";
    else if (nd.buffer != gn.buffer) differs = "buffer";
    else if (!(a.shape == b.shape)) differs = "grid, block, registers or shared_memory";
    else if (a.flops != b.flops) differs = "flops";
    else if (a.uses_count != b.uses_count || !std::equal(p_.uses_begin(nd), p_.uses_begin(nd) + a.uses_count, p_.uses_begin(gn)))
        differs = "uses";
    if (differs)
        fail(op_at(p_, i), "is node " + std::to_string(k) + " of graph '" + g.name + "' launched by ops[" + std::to_string(launch) +
                               "] but differs from it in " + differs);
}

// The ops after a graph_launch in its thread are the launch's nodes, in node order.
// A thread started by an op: the op is another thread's, and no chain of starts leads back.
void Reader::check_thread_starts() {
    for (size_t t = 0; t < p_.threads.size(); ++t) {
        const std::string at = "threads[" + std::to_string(t) + "].start_after";
        int32_t by = p_.threads[t].start_after;
        if (by < 0) continue;
        if (p_.ops[by].thread == static_cast<int>(t)) fail(at, "names " + op_at(p_, static_cast<uint32_t>(by)) + ", an op of this thread; a thread cannot start itself");
        if (p_.ops[by].thread < 0) fail(at, "names " + op_at(p_, static_cast<uint32_t>(by)) + ", a GPU task; a thread is started by an op of another host thread");
        for (size_t steps = 0; by >= 0 && steps <= p_.threads.size(); ++steps) {
            const int32_t u = p_.ops[by].thread;
            if (u == static_cast<int>(t)) fail(at, "names " + op_at(p_, static_cast<uint32_t>(p_.threads[t].start_after)) +
                                                       ", but that op's thread is itself started (directly or not) by this thread");
            by = u >= 0 ? p_.threads[u].start_after : kNone;
        }
    }
}

// Executable k is made by the k-th graph_instantiate op; a launch launches one of its graph.
// Version 3 files: the rule of assign_graph_execs gives each launch its executable.
void Reader::check_graph_execs() {
    if (version_ < 4) {
        uint32_t bad = 0;
        const std::string why = assign_graph_execs(p_, bad);
        if (!why.empty()) fail(op_at(p_, bad), why);
        return;
    }
    number_graph_execs(p_);
    for (uint32_t i = 0; i < p_.ops.size(); ++i) {
        const Op& op = p_.ops[i];
        if (op.kind != OpKind::GraphLaunch) continue;
        const std::string at = "ops[" + std::to_string(i) + "].exec of graph_launch '" + p_.op_name(i) + "'";
        if (op.exec >= p_.execs.size())
            fail(at, "is " + std::to_string(op.exec) + ", but the program has " +
                         plural(p_.execs.size(), "executable graph") + " (one per graph_instantiate op)");
        const Op& in = p_.ops[p_.execs[op.exec]];
        if (in.graph != op.graph)
            fail(at, "is " + std::to_string(op.exec) + ", made by " + op_at(p_, p_.execs[op.exec]) + " of graph '" +
                         p_.graphs[in.graph].name + "', not of graph '" + p_.graphs[op.graph].name + "' that it launches");
    }
}

void Reader::check_graph_launches() {
    std::vector<uint8_t> follows(p_.ops.size(), 0);
    for (size_t t = 0; t < p_.threads.size(); ++t) {
        const auto& list = p_.threads[t].ops;
        for (size_t k = 0; k < list.size(); ++k) {
            const uint32_t li = list[k];
            const Op& op = p_.ops[li];
            if (op.graph_node && !follows[li])
                fail(op_at(p_, li), "is a graph_node op but does not follow its graph_launch (and the graph's earlier nodes) in its thread");
            if (op.kind != OpKind::GraphLaunch) continue;
            const Graph& g = p_.graphs[op.graph];
            for (size_t n = 0; n < g.nodes.size(); ++n) {
                if (k + 1 + n >= list.size() || !p_.ops[list[k + 1 + n]].graph_node)
                    fail(op_at(p_, li), "launches graph '" + g.name + "' of " + plural(g.nodes.size(), "node") + ", but only " +
                                            plural(n, "graph_node op") + (n == 1 ? " follows" : " follow") + " it in thread '" + p_.threads[t].name + "'");
                const uint32_t ni = list[k + 1 + n];
                const Op& nd = p_.ops[ni];
                const Op& gn = g.nodes[n];
                if (nd.kind != gn.kind || nd.stream != op.stream)
                    fail(op_at(p_, ni), "expected node " + std::to_string(n) + " of graph '" + g.name + "' launched by ops[" + std::to_string(li) +
                                            "] (graph_node: true, kind " + to_string(gn.kind) + ", stream " + std::to_string(op.stream) + ")");
                check_node(nd, ni, gn, g, n, li);
                follows[ni] = 1;
            }
            k += g.nodes.size();
        }
    }
}

Program Reader::read(std::string* scenario_name) {
    if (!j_.is_object() || !j_.contains("schema"))
        fail("", "not a hetsim lowered program (expected an object with \"schema\": \"hetsim.program\"; write one with "
                 "`hetsim lower scenario.yaml -o program.json`)");
    if (j_["schema"] != "hetsim.program") {
        const std::string s = shown(j_["schema"]);
        fail("schema", "is " + s + ", expected \"hetsim.program\"" + (s == "\"hetsim.measured\"" ? " (this is a measured timeline, not a program)" : ""));
    }
    const json* ver = j_.contains("version") ? &j_["version"] : nullptr;
    if (!ver || !ver->is_number_integer() || *ver < kProgramSchemaOldest || *ver > kProgramSchemaVersion)
        fail("", "lowered program has schema version " + (ver ? shown(*ver) : std::string("(missing)")) + "; this hetsim reads versions " +
                     std::to_string(kProgramSchemaOldest) + " to " + std::to_string(kProgramSchemaVersion) +
                     " (docs/program-format.md; lower the scenario again)");
    version_ = ver->get<int>();
    only_keys(j_, At{}, {"schema", "version", "scenario", "source", "form", "options", "warmup", "buffers", "streams", "events", "queues",
                         "flags", "graphs", "threads", "gpu_tasks", "ops"},
              "a lowered program");
    const At top{};
    if (const json* s = find(j_, "scenario")) {
        const std::string name = text(*s, "scenario");
        if (scenario_name) *scenario_name = name;
    }
    if (const json* s = find(j_, "source")) p_.source = text(*s, "source");
    const std::string form = text(need(j_, "form", top), "form");
    if (form != "threads" && form != "tasks") fail("form", "is \"" + form + "\", expected \"threads\" or \"tasks\"");
    p_.tasks_form = form == "tasks";
    p_.locs.push_back(SourceLoc{file_});
    if (const json* o = find(j_, "options")) read_options(*o);
    if (const json* w = find(j_, "warmup")) p_.warmup = static_cast<uint32_t>(integer(*w, "warmup", 0, UINT32_MAX));
    read_buffers(need(j_, "buffers", top));
    read_streams(need(j_, "streams", top));
    read_events(need(j_, "events", top));
    if (const json* q = find(j_, "queues")) read_queues(*q);
    if (const json* f = find(j_, "flags")) read_flags(*f);
    if (const json* g = find(j_, "graphs")) read_graphs(*g);
    const json& ops = list(need(j_, "ops", top), "ops");
    n_ops_ = ops.size();
    read_threads(need(j_, "threads", top));
    p_.gpu_tasks = refs(need(j_, "gpu_tasks", top), "gpu_tasks", n_ops_, "op");
    for (size_t s = 0; s < p_.streams.size(); ++s)
        if (p_.streams[s].kind == StreamKind::PerThread &&
            (p_.streams[s].owner_thread < 0 || static_cast<size_t>(p_.streams[s].owner_thread) >= p_.threads.size()))
            fail("streams[" + std::to_string(s) + "].thread", "is " + std::to_string(p_.streams[s].owner_thread) +
                                                              ", but a per-thread stream belongs to one of the program's " +
                                                              plural(p_.threads.size(), "thread"));
    p_.ops.reserve(n_ops_);
    if (p_.tasks_form) {
        p_.after_index.reserve(n_ops_ + 1);
        p_.after_index.push_back(0);
    }
    for (size_t i = 0; i < n_ops_; ++i) read_op(ops[i], i);
    check_lists();
    check_thread_starts();
    check_graph_launches();
    check_graph_execs();
    return std::move(p_);
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix,
// with bytes that are not printable ASCII written as \xNN so that the message stays one line.
std::string parse_reason(const std::string& what) {
    std::string s = what;
    if (auto p = s.find("column "); p != std::string::npos) {
        if (auto q = s.find(": ", p); q != std::string::npos) s = s.substr(q + 2);
    } else if (auto r = s.find("] "); r != std::string::npos) {
        s = s.substr(r + 2);
    }
    return printable(s);
}

}  // namespace

Program program_from_json(const json& j, const std::string& file, std::string* scenario_name) {
    return Reader(j, file).read(scenario_name);
}

namespace {
const char* kExpected = "it should be a lowered program (hetsim lower SCENARIO.yaml -o program.json)";
}

Program program_from_text(const std::string& text, const std::string& file, std::string* scenario_name) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError(SourceLoc{file, 1, 1}, std::string("the file is empty; ") + kExpected);
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        SourceLoc at{file, 1, 1};
        for (size_t i = 0; e.byte > 0 && i + 1 < e.byte && i < text.size(); ++i) {  // e.byte: 1-based, where the parser gave up
            if (text[i] == '\n') {
                ++at.line;
                at.col = 1;
            } else {
                ++at.col;
            }
        }
        throw InputError(at, "not valid JSON: " + parse_reason(e.what()) + "; " + kExpected);
    } catch (const json::exception& e) {
        throw InputError(SourceLoc{file}, "not valid JSON: " + parse_reason(e.what()) + "; " + kExpected);
    }
    return program_from_json(j, file, scenario_name);
}

Program read_program_file(const std::string& path, std::string* scenario_name) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(SourceLoc{path}, std::string("is a directory; ") + kExpected);
    require_regular_input(path, kExpected);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(SourceLoc{path}, std::string("cannot read the file (") + std::strerror(errno) + "); " + kExpected);
    std::stringstream ss;
    ss << in.rdbuf();
    return program_from_text(ss.str(), path, scenario_name);
}

}  // namespace hetsim
