// CUDA graphs: their declaration (the node ops, lowered in full) and their launches.
#include "frontend/lowerer.hpp"

namespace hetsim {

// ---------------------------------------------------------------- graph bodies

void Lowerer::lower_list(const YAML::Node& list, int32_t thread) {
    if (!list.IsSequence()) fail_at(list, "expected a list of ops, got " + a_node_type(list));
    for (const auto& op : list) lower_op(op, thread);
}

// A graph node may also have an `id` and an `after` list (the ids it waits for).
void Lowerer::lower_op(const YAML::Node& n, int32_t thread) {
    std::string kind = find_kind(*this, n);
    std::vector<std::string> keys = keys_for(kind, false);
    if (kind != "repeat" && kind != "if") keys.insert(keys.end(), {"id", "after"});
    check_keys(n, file_, keys, kind + " op");
    lower_checked_op(n, thread, kind);
}

void Lowerer::lower_checked_op(const YAML::Node& n, int32_t thread, const std::string& kind) {
    if (kind == "repeat") {
        const RepeatHead h = repeat_head(n, repeat_count(n));
        run_loop(field(n, "repeat"), h.var, h.count, h.body.size() == 0, [&] { lower_list(h.body, thread); });
        return;
    }
    if (kind == "if") {
        if_checks(n);
        const bool yes = if_taken(n, eval(field(n, "if"), "condition"));
        if (yes && field(n, "then")) lower_list(field(n, "then"), thread);
        if (!yes && field(n, "else")) lower_list(field(n, "else"), thread);
        return;
    }
    // a node of the graph being declared
    if (!(find_spelling(kind)->forms & kInGraphs))
        fail_at(field(n, kind), "'" + kind + "' cannot be a graph node; a graph holds kernel, memcpy_async, "
                                "memset_async and host_func ops (and repeat/if around them)");
    if (field(n, "stream"))
        fail_at(field(n, "stream"), "graph nodes run on the stream of their graph_launch; remove 'stream' here");
    Op op;
    Site site;
    std::string label;
    fill_op(op, site, kind, n, kNone, label, false);
    if (op.kind == OpKind::Memcpy && op.host_mem == MemKind::Pageable && op.dir != CopyDir::D2D)
        fail_at(n, "graph '" + sc_.program.graphs[capturing_].name + "': a memcpy_async node cannot copy pageable host memory "
                   "(hetsim stages a pageable copy on the thread that calls it, and a graph launch calls none); use "
                   "pinned memory, or copy before the graph_launch");
    for (int64_t v : loop_vals_) {  // loops inside the graph
        label += '[';
        label += std::to_string(v);
        label += ']';
    }
    op.stream = kNone;
    site.label = intern_name(label);
    site.loc = intern_loc(n);
    op.site = intern_site(site);
    NodeDeps deps;
    if (YAML::Node id = field(n, "id")) {
        deps.id = indexed_name(id, "node id");
        for (int64_t v : loop_vals_) deps.id += "[" + std::to_string(v) + "]";  // an id inside the graph's loops
        deps.id_node = static_cast<int32_t>(dep_nodes_.size());
        dep_nodes_.push_back(id);
    }
    if (YAML::Node a = field(n, "after")) {
        deps.has_after = true;
        deps.after_node = static_cast<int32_t>(dep_nodes_.size());
        dep_nodes_.push_back(a);
        if (a.IsScalar()) deps.after.emplace_back(indexed_name(a, "node id"), a);
        else if (a.IsSequence())
            for (const auto& r : a) deps.after.emplace_back(indexed_name(r, "node id"), r);
        else fail_at(a, "'after' must be a list of node ids such as [stem], got " + a_node_type(a));
    }
    node_deps_.push_back(std::move(deps));
    Graph& g = sc_.program.graphs[capturing_];
    if (g.nodes.size() >= opts_.max_ops)
        fail_at(n, "graph '" + g.name + "' has more than " + std::to_string(opts_.max_ops) + " nodes; raise the cap with --max-ops");
    g.nodes.push_back(op);
}

// A graph launch: the launch op, then a copy of each node on the launch's stream, named and
// placed as the node is in the graph, with the launch's loop indices.
void Lowerer::emit_graph_launch(Op launch, Site& site, const YAML::Node& n, const std::string& label, int32_t thread) {
    auto& pg = sc_.program;
    pg.threads[thread].ops.push_back(emit(launch, site, n, label));
    for (size_t k = 0; k < pg.graphs[launch.graph].nodes.size(); ++k) {
        Op node = pg.graphs[launch.graph].nodes[k];  // copied: emit may grow the vectors
        node.thread = static_cast<int16_t>(thread);
        node.stream = launch.stream;
        node.graph_node = true;
        Site ns = pg.sites[node.site];
        ns.depth = static_cast<uint8_t>(loop_names_.size());
        node.site = intern_site(ns);
        pg.threads[thread].ops.push_back(emit_interned(node, n));
    }
}

void Lowerer::parse_graphs(const YAML::Node& n) {
    if (!n.IsMap()) fail_at(n, "'graphs' must map graph names to lists of ops (the ops captured from one stream)");
    for (auto it = n.begin(); it != n.end(); ++it) {
        std::string name = need_name(it->first, "graph name");
        no_brackets(*this, it->first, name, "graph");
        if (graphs_.count(name)) fail_at(it->first, "duplicate graph '" + name + "'; each graph name may be declared once");
        if (!it->second.IsSequence() || it->second.size() == 0)
            fail_at(it->second, "graph '" + name + "' must be a non-empty list of ops such as [{kernel: k, duration: 5us}]");
        graphs_[name] = NamedDecl{static_cast<uint32_t>(sc_.program.graphs.size()), 1};
        sc_.program.graphs.emplace_back().name = name;
        capturing_ = static_cast<int32_t>(sc_.program.graphs.size() - 1);
        node_deps_.clear();
        dep_nodes_.clear();
        lower_list(it->second, kNone);
        if (sc_.program.graphs.back().nodes.empty())
            fail_at(it->second, "graph '" + name + "' has no nodes (its loops or conditions emit no op)");
        graph_dag(it->second);
        capturing_ = -1;
    }
}

}  // namespace hetsim
