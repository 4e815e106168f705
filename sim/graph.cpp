#include "sim/graph.hpp"

#include <boost/graph/depth_first_search.hpp>
#include <map>

#include "sim/binder.hpp"

namespace hetsim {

DepGraph build_graph(const Program& pg) {
    DepGraph g(pg.ops.size());
    Binder b(pg, true);
    auto edge = [&g](int32_t from, uint32_t to, CauseKind k) {
        if (from >= 0 && static_cast<uint32_t>(from) != to) boost::add_edge(static_cast<uint32_t>(from), to, DepEdge{k}, g);
    };
    auto submit = [&](uint32_t i) {
        b.bind(i, [&](int32_t from, CauseKind k) { edge(from, i, k); });
        b.issued(i);
    };
    for (uint32_t op : pg.gpu_tasks) submit(op);
    for (const auto& t : pg.threads) {
        int32_t prev = -1;
        for (uint32_t i : t.ops) {
            const Op& op = pg.ops[i];
            edge(prev, i, CauseKind::ProgramOrder);
            auto sync = [&](int32_t from) { edge(from, i, CauseKind::Sync); };
            if (op.kind == OpKind::StreamSync) b.stream_tail(op.stream, sync);
            else if (op.kind == OpKind::EventSync) sync(b.event_last(op.event));
            else if (op.kind == OpKind::DeviceSync) b.device_tail(sync);
            if (Program::has_gpu_phase(op.kind)) submit(i);
            prev = static_cast<int32_t>(i);
        }
    }
    for (uint32_t i = 0; i < pg.ops.size(); ++i)
        for (uint32_t k = 0; k < pg.after_count(i); ++k) edge(static_cast<int32_t>(pg.after_begin(i)[k]), i, CauseKind::After);
    // Hand-offs between host threads, in FIFO order: the k-th put of a queue feeds its k-th get,
    // the k-th set of a flag (a host_func naming it) is taken by its k-th host_wait.
    std::vector<std::vector<uint32_t>> puts(pg.queues.size()), sets(pg.flags.size());
    std::vector<size_t> got(pg.queues.size()), waited(pg.flags.size());
    for (uint32_t i = 0; i < pg.ops.size(); ++i) {
        const Op& op = pg.ops[i];
        if (op.kind == OpKind::QueuePut && op.queue >= 0) puts[op.queue].push_back(i);
        else if (op.kind == OpKind::HostFunc && op.flag >= 0) sets[op.flag].push_back(i);
    }
    for (uint32_t i = 0; i < pg.ops.size(); ++i) {
        const Op& op = pg.ops[i];
        if (op.kind == OpKind::QueueGet && op.queue >= 0 && got[op.queue] < puts[op.queue].size())
            edge(static_cast<int32_t>(puts[op.queue][got[op.queue]++]), i, CauseKind::HostQueue);
        else if (op.kind == OpKind::HostWait && op.flag >= 0 && waited[op.flag] < sets[op.flag].size())
            edge(static_cast<int32_t>(sets[op.flag][waited[op.flag]++]), i, CauseKind::Flag);
        else if (op.kind == OpKind::Join && op.target >= 0 && !pg.threads[op.target].ops.empty())
            edge(static_cast<int32_t>(pg.threads[op.target].ops.back()), i, CauseKind::Thread);
    }
    // A thread created by an op (start_after) starts after it.
    for (const auto& t : pg.threads)
        if (t.start_after >= 0 && !t.ops.empty()) edge(t.start_after, t.ops.front(), CauseKind::Thread);
    return g;
}

std::vector<uint32_t> find_cycle(const Program& pg) {
    // Static order edges of the tasks form: thread order, stream order (file order), after lists.
    using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
    G g(pg.ops.size());
    for (const auto& t : pg.threads)
        for (size_t k = 1; k < t.ops.size(); ++k) boost::add_edge(t.ops[k - 1], t.ops[k], g);
    std::map<int32_t, uint32_t> last;
    for (uint32_t i : pg.gpu_tasks) {
        auto it = last.find(pg.ops[i].stream);
        if (it != last.end()) boost::add_edge(it->second, i, g);
        last[pg.ops[i].stream] = i;
    }
    for (uint32_t i = 0; i < pg.ops.size(); ++i)
        for (uint32_t k = 0; k < pg.after_count(i); ++k) boost::add_edge(pg.after_begin(i)[k], i, g);

    struct Found {};
    std::vector<uint32_t> parent(pg.ops.size(), UINT32_MAX), cycle;
    struct Visitor : boost::default_dfs_visitor {
        std::vector<uint32_t>* parent;
        std::vector<uint32_t>* cycle;
        void tree_edge(G::edge_descriptor e, const G& gr) { (*parent)[boost::target(e, gr)] = static_cast<uint32_t>(boost::source(e, gr)); }
        void back_edge(G::edge_descriptor e, const G& gr) {
            uint32_t from = static_cast<uint32_t>(boost::source(e, gr)), to = static_cast<uint32_t>(boost::target(e, gr));
            std::vector<uint32_t> c{from};
            for (uint32_t v = from; v != to && (*parent)[v] != UINT32_MAX;) {
                v = (*parent)[v];
                c.push_back(v);
            }
            cycle->assign(c.rbegin(), c.rend());
            throw Found{};
        }
    } vis;
    vis.parent = &parent;
    vis.cycle = &cycle;
    try {
        boost::depth_first_search(g, boost::visitor(vis));
    } catch (const Found&) {
    }
    return cycle;
}

namespace {
std::string dot_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        o += c;
    }
    return o;
}
const char* edge_style(CauseKind k) {
    switch (k) {
        case CauseKind::ProgramOrder: return "color=black";
        case CauseKind::StreamOrder: return "color=blue";
        case CauseKind::Event: return "color=darkgreen, style=bold";
        case CauseKind::Legacy: return "color=orange, style=dashed";
        case CauseKind::Sync: return "color=red, style=dashed";
        case CauseKind::After: return "color=purple";
        // Hand-offs between host threads: dotted, so they stand apart from the orders above.
        case CauseKind::HostQueue: return "color=brown, style=dotted, penwidth=2";
        case CauseKind::Flag: return "color=darkcyan, style=dotted, penwidth=2";
        case CauseKind::Thread: return "color=gray40, style=dotted, penwidth=2";
        default: return "color=gray";
    }
}
}  // namespace

void write_dot(std::ostream& out, const Program& pg, const DepGraph& g) {
    out << "digraph hetsim {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n";
    for (size_t t = 0; t < pg.threads.size(); ++t) {
        out << "  subgraph cluster_thread_" << t << " {\n    label=\"host thread " << dot_escape(pg.threads[t].name) << "\";\n";
        for (uint32_t i : pg.threads[t].ops)
            out << "    op" << i << " [label=\"" << dot_escape(pg.op_name(i)) << "\\n" << to_string(pg.ops[i].kind) << "\"];\n";
        out << "  }\n";
    }
    if (!pg.gpu_tasks.empty()) {
        std::map<int32_t, std::vector<uint32_t>> by_stream;
        for (uint32_t i : pg.gpu_tasks) by_stream[pg.ops[i].stream].push_back(i);
        for (const auto& [s, ops] : by_stream) {
            out << "  subgraph cluster_stream_" << s << " {\n    label=\"stream " << dot_escape(pg.streams[s].name) << "\";\n";
            for (uint32_t i : ops)
                out << "    op" << i << " [label=\"" << dot_escape(pg.op_name(i)) << "\\n" << to_string(pg.ops[i].kind) << "\"];\n";
            out << "  }\n";
        }
    }
    auto [ei, ee] = boost::edges(g);
    for (; ei != ee; ++ei) {
        CauseKind k = g[*ei].kind;
        out << "  op" << boost::source(*ei, g) << " -> op" << boost::target(*ei, g) << " [" << edge_style(k) << ", label=\""
            << to_string(k) << "\"];\n";
    }
    out << "}\n";
}

}  // namespace hetsim
