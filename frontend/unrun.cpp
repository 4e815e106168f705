// Op lists that never run: a repeat whose count is 0, the branch an if does not take. Nothing
// there is lowered, but every check that does not depend on a value still runs (op kinds and
// their keys, repeat and if headers, the names of declared streams, events, buffers and graphs),
// so that a mistake is not hidden until a count or a condition changes.
#include "frontend/lowerer.hpp"

namespace hetsim {

void Lowerer::check_unrun(const YAML::Node& list) {
    if (!list.IsSequence()) fail_at(list, "expected a list of ops, got " + a_node_type(list));
    for (const auto& n : list) {
        const std::string kind = checked_kind(n);
        if (kind == "repeat") {
            const YAML::Node body = field(n, "do");
            if (!body) fail_at(n, "repeat needs a 'do' list of ops");
            if (!body.IsSequence()) fail_at(body, "repeat's 'do' must be a list of ops, got " + a_node_type(body));
            check_unrun(body);
            continue;
        }
        if (kind == "if") {
            if_checks(n);
            for (const char* branch : {"then", "else"})
                if (field(n, branch)) check_unrun(field(n, branch));
            continue;
        }
        // A name written as is (no ${...}): its declaration must exist. The index of an array
        // reference may read loop variables, so only the name before '[' is checked.
        auto declared = [&](const YAML::Node& v, const std::unordered_map<std::string, NamedDecl>& decls, const char* what) {
            if (!v || !v.IsScalar() || v.Scalar().find("${") != std::string::npos) return;
            const std::string& text = v.Scalar();
            const std::string name = text.substr(0, text.find('['));
            if (name.empty() || (decls.count(name) != 0) || (&decls == &streams_ && name == "per_thread")) return;
            resolve(v, name, decls, what);  // reports the undefined name, as a run would
        };
        const YAML::Node head = field(n, kind);
        declared(field(n, "stream"), streams_, "stream");
        if (kind == "event_record" || kind == "stream_wait_event" || kind == "event_sync") declared(head, events_, "event");
        else if (kind == "stream_sync") declared(head, streams_, "stream");
        else if (kind == "graph_instantiate" || kind == "graph_launch") declared(head, graphs_, "graph");
        else if (kind == "prefetch" || (find_spelling(kind) && is_alloc(find_spelling(kind)->kind))) declared(head, buffers_, "buffer");
        for (const char* key : {"src", "dst"}) declared(field(n, key), buffers_, "buffer");
        if (const YAML::Node u = field(n, "uses"); u && u.IsSequence())
            for (const auto& b : u) declared(b, buffers_, "buffer");
    }
}

// The lowered program as a whole: something to simulate, and no graph launched that is never
// instantiated (CUDA refuses cudaGraphLaunch of a graph without its cudaGraphExec_t). Then which
// executable graph each launch launches (assign_graph_execs: the latest instantiation on its own
// thread, else the one on another thread; several there is ambiguous).
void Lowerer::check_program(const YAML::Node& work) {
    Program& pg = sc_.program;
    if (pg.ops.empty())
        fail_at(work, "the scenario has no ops: every op list is empty or its loops run 0 times, so there is nothing to simulate");
    std::vector<bool> instantiated(pg.graphs.size(), false);
    for (const Op& op : pg.ops)
        if (op.kind == OpKind::GraphInstantiate) instantiated[static_cast<size_t>(op.graph)] = true;
    for (const Op& op : pg.ops)
        if (op.kind == OpKind::GraphLaunch && !instantiated[static_cast<size_t>(op.graph)])
            throw InputError(pg.loc(op), "graph_launch of graph '" + pg.graphs[static_cast<size_t>(op.graph)].name +
                                             "', which no op instantiates; add '- graph_instantiate: " +
                                             pg.graphs[static_cast<size_t>(op.graph)].name + "' before the first launch");
    uint32_t bad = 0;
    const std::string why = assign_graph_execs(pg, bad);
    if (!why.empty()) throw InputError(pg.loc(pg.ops[bad]), why);
}

}  // namespace hetsim
