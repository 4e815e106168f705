// Host threads and what passes between them (issue 11): the `threads:` section (list and map
// forms, thread arrays with an index variable, `start_after`), host queues and flags, the
// steady-state repetition of `measure: {warmup: K}`, and the dependencies of graph nodes.
#include <algorithm>
#include <cctype>

#include "frontend/lowerer.hpp"

namespace hetsim {

namespace {

// A declaration section of names, as `streams:` and `events:` are written: a list of names, or a
// mapping of names to their options (`count: N` declares an array name[0] .. name[N-1]).
template <class Add>
void each_declared(const Lowerer& L, const YAML::Node& n, const char* section, Add&& add) {
    if (n.IsSequence()) {
        for (const auto& e : n) add(e, YAML::Node());
    } else if (n.IsMap()) {
        for (auto it = n.begin(); it != n.end(); ++it) add(it->first, it->second);
    } else {
        L.fail_at(n, std::string("'") + section + "' must be a list of names or a mapping of names to their options");
    }
}

bool plain_name(const std::string& v) {
    return !v.empty() && (std::isalpha(static_cast<unsigned char>(v[0])) || v[0] == '_') &&
           std::all_of(v.begin(), v.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

// ---------------------------------------------------------------- queues and flags

void Lowerer::parse_queues(const YAML::Node& n) {
    auto& pg = sc_.program;
    each_declared(*this, n, "queues", [&](const YAML::Node& key, const YAML::Node& spec) {
        std::string name = need_name(key, "queue name");
        no_brackets(*this, key, name, "queue");
        if (queues_.count(name)) fail_at(key, "duplicate queue '" + name + "'; each queue name may be declared once");
        if (!spec || spec.IsNull())
            fail_at(key, "queue '" + name + "' needs a 'capacity' (the items it holds before a put waits), such as {capacity: 2}");
        if (!spec.IsMap()) fail_at(spec, "queue '" + name + "' must be a mapping such as {capacity: 2}, got " + a_node_type(spec));
        check_keys(spec, file_, {"capacity", "count"}, "queue '" + name + "'");
        if (!spec["capacity"]) fail_at(spec, "queue '" + name + "' needs a 'capacity' (the items it holds before a put waits), such as {capacity: 2}");
        const uint32_t capacity = static_cast<uint32_t>(
            need_int(spec["capacity"], "queue capacity", 1, 1 << 20, " (a queue holds at least one item: a put waits while it is full)"));
        const uint32_t count = spec["count"] ? static_cast<uint32_t>(need_int(spec["count"], "queue count", 1, 4096)) : 1;
        queues_[name] = NamedDecl{static_cast<uint32_t>(pg.queues.size()), count};
        for (uint32_t k = 0; k < count; ++k) pg.queues.push_back(HostQueue{count > 1 ? name + "[" + std::to_string(k) + "]" : name, capacity});
    });
}

void Lowerer::parse_flags(const YAML::Node& n) {
    auto& pg = sc_.program;
    each_declared(*this, n, "flags", [&](const YAML::Node& key, const YAML::Node& spec) {
        std::string name = need_name(key, "flag name");
        no_brackets(*this, key, name, "flag");
        if (flags_.count(name)) fail_at(key, "duplicate flag '" + name + "'; each flag name may be declared once");
        uint32_t count = 1;
        if (spec && !spec.IsNull()) {
            if (!spec.IsMap()) fail_at(spec, "flag '" + name + "' options must be a mapping such as {count: 4}");
            check_keys(spec, file_, {"count"}, "flag '" + name + "'");
            if (spec["count"]) count = static_cast<uint32_t>(need_int(spec["count"], "flag count", 1, 1 << 20));
        }
        flags_[name] = NamedDecl{static_cast<uint32_t>(pg.flags.size()), count};
        for (uint32_t k = 0; k < count; ++k) pg.flags.push_back(Flag{count > 1 ? name + "[" + std::to_string(k) + "]" : name});
    });
}

int32_t Lowerer::queue_ref(const YAML::Node& n) const { return resolve(n, need_name(n, "queue"), queues_, "queue"); }
int32_t Lowerer::flag_ref(const YAML::Node& n) const { return resolve(n, need_name(n, "flag"), flags_, "flag"); }

// ---------------------------------------------------------------- measure

void Lowerer::parse_measure(const YAML::Node& n) {
    if (!n.IsMap()) fail_at(n, "'measure' must be a mapping such as {warmup: 2}, got " + a_node_type(n));
    check_keys(n, file_, {"warmup"}, "measure");
    measure_node_.reset(n);
    if (YAML::Node w = n["warmup"])
        sc_.program.warmup = static_cast<uint32_t>(
            need_int(w, "warmup", 0, 1000, " (the warm-up iterations run before the measured one)"));
}

// ---------------------------------------------------------------- threads

void Lowerer::declare_threads(const YAML::Node& threads) {
    auto& pg = sc_.program;
    if (!threads.IsMap() || threads.size() == 0)
        fail_at(threads, "'threads' must map each host thread's name to its list of ops");
    for (auto it = threads.begin(); it != threads.end(); ++it) {
        ThreadSpec spec;
        spec.key = it->first;
        spec.name = need_name(it->first, "thread name");
        no_brackets(*this, it->first, spec.name, "thread");
        if (thread_decls_.count(spec.name))
            fail_at(it->first, "duplicate thread '" + spec.name + "'; give each host thread its own name");
        const YAML::Node v = it->second;  // a copy: it->second is a member of a temporary
        spec.ops.reset(v);
        // The map form has at least one of its keys; any other mapping is reported as not a list.
        if (v.IsMap() && (v["ops"] || v["count"] || v["var"] || v["start_after"])) {
            check_keys(v, file_, {"count", "var", "start_after", "ops"}, "thread '" + spec.name + "'");
            if (!v["ops"]) fail_at(v, "thread '" + spec.name + "' needs 'ops', its list of ops");
            spec.ops.reset(v["ops"]);
            if (YAML::Node c = v["count"]) spec.count = static_cast<uint32_t>(need_int(c, "thread count", 1, 4096));
            if (YAML::Node w = v["var"]) {
                spec.var = need_name(w, "thread index variable");
                spec.var_node.reset(w);
                if (!plain_name(spec.var))
                    fail_at(w, "thread index variable must be a plain name such as w, got '" + spec.var + "'");
                if (params_.count(spec.var))
                    fail_at(w, "thread index variable '" + spec.var + "' shadows a param of the same name; choose another name");
            }
            if (YAML::Node s = v["start_after"]) {
                // Checked as a name once the ops exist (it may use the index variable).
                if (!s.IsScalar() || s.Scalar().empty()) need_name(s, "start_after");
                spec.start_after.reset(s);
            }
        }
        if (pg.threads.size() + spec.count > static_cast<size_t>(kMaxThreads))
            fail_at(it->first, "more than " + std::to_string(kMaxThreads) + " host threads; a program may have at most that many");
        spec.first = static_cast<uint32_t>(pg.threads.size());
        thread_decls_[spec.name] = NamedDecl{spec.first, spec.count};
        for (uint32_t k = 0; k < spec.count; ++k) {
            std::string name = spec.count > 1 ? spec.name + "[" + std::to_string(k) + "]" : spec.name;
            threads_[name] = static_cast<int32_t>(pg.threads.size());
            pg.threads.push_back(HostThread{name, {}});
            per_thread_.push_back(-1);
        }
        specs_.push_back(std::move(spec));
    }
    if (pg.warmup > 0)
        for (const ThreadSpec& s : specs_)
            if (s.start_after)
                fail_at(s.start_after, "thread '" + s.name + "' is created by start_after, but measure: {warmup: " +
                                           std::to_string(pg.warmup) + "} repeats the body of every thread from its start; "
                                           "a thread created inside the measured region cannot be repeated (drop 'warmup' or 'start_after')");
}

void Lowerer::set_thread_var(const ThreadSpec& spec, int64_t k) {
    if (spec.var.empty()) return;
    if (k < 0) params_.erase(spec.var);
    else params_[spec.var] = Param{std::to_string(k), spec.var_node, ""};
    // Values computed with the previous index are kept by position: forget them.
    constants_.clear();
    param_values_.clear();
    codes_.clear();
}

void Lowerer::lower_threads() {
    for (const ThreadSpec& spec : specs_) {
        for (uint32_t k = 0; k < spec.count; ++k) {
            set_thread_var(spec, k);
            lower_thread(sc_.program.threads[spec.first + k].name, spec.ops);
        }
        set_thread_var(spec, -1);
    }
    resolve_start_after();
}

// `start_after: LABEL`: the op on another thread whose host phase creates the thread. LABEL is an
// op's name (`spawn[2]`) or its label (`spawn`); a label of one op creates every thread of the
// array, a label of as many ops as the array has threads creates thread k at the k-th.
void Lowerer::resolve_start_after() {
    auto& pg = sc_.program;
    for (const ThreadSpec& spec : specs_) {
        if (!spec.start_after) continue;
        // The ops named or labelled `want` on other threads (the name preferred).
        auto find = [&](const std::string& want) {
            std::vector<uint32_t> by_name, by_label;
            bool own = false;
            for (uint32_t t = 0; t < pg.threads.size(); ++t) {
                const bool mine = t >= spec.first && t < spec.first + spec.count;
                for (uint32_t i : pg.threads[t].ops) {
                    if (pg.ops[i].graph_node || pg.ops[i].kind == OpKind::Barrier) continue;
                    const std::string& lab = pg.label(pg.ops[i]);
                    const bool label = lab == want;  // op_name(i) starts with the label: build it only then
                    const bool name = want.compare(0, lab.size(), lab) == 0 && pg.op_name(i) == want;
                    if (!name && !label) continue;
                    if (mine) {
                        own = true;
                        continue;
                    }
                    if (name) by_name.push_back(i);
                    if (label) by_label.push_back(i);
                }
            }
            std::vector<uint32_t> found = by_name.empty() ? by_label : by_name;
            if (found.empty()) {
                if (own)
                    fail_at(spec.start_after, "thread '" + spec.name + "' cannot start after '" + want +
                                                  "', an op of its own: start_after names an op on another thread (the one that creates it)");
                fail_at(spec.start_after, "start_after names no op: no op on another thread is named or labelled '" + want + "'");
            }
            return found;
        };
        // With an index variable the name may differ per thread (`spawn[${w}]`): each then names one op.
        std::vector<std::string> wants;
        for (uint32_t k = 0; k < spec.count; ++k) {
            set_thread_var(spec, k);
            wants.push_back(need_name(spec.start_after, "start_after"));
            if (spec.var.empty()) break;
        }
        set_thread_var(spec, -1);
        const bool same = std::all_of(wants.begin(), wants.end(), [&](const std::string& w) { return w == wants[0]; });
        if (!same) {
            for (uint32_t k = 0; k < spec.count; ++k) {
                const std::vector<uint32_t> found = find(wants[k]);
                if (found.size() != 1)
                    fail_at(spec.start_after, "start_after '" + wants[k] + "' of thread " + pg.threads[spec.first + k].name + " names " +
                                                  std::to_string(found.size()) + " ops (the first " + pg.op_name(found[0]) +
                                                  "); name one op per thread, such as " + pg.op_name(found[0]));
                pg.threads[spec.first + k].start_after = static_cast<int32_t>(found[0]);
            }
            continue;
        }
        const std::string& want = wants[0];
        const std::vector<uint32_t> found = find(want);
        if (found.size() != 1 && found.size() != spec.count)
            fail_at(spec.start_after, "start_after '" + want + "' names " + std::to_string(found.size()) + " ops (the first " +
                                          pg.op_name(found[0]) + "); name one op (such as " + pg.op_name(found[0]) + ")" +
                                          (spec.count > 1 ? " or " + std::to_string(spec.count) + " ops, one per thread of '" + spec.name + "'" : ""));
        for (uint32_t k = 0; k < spec.count; ++k)
            pg.threads[spec.first + k].start_after = static_cast<int32_t>(found.size() == 1 ? found[0] : found[k]);
    }
    // A cycle (a starts after an op of b, b after an op of a) starts none of its threads: the run
    // ended in a deadlock message that blamed the ops for never being reached. Each thread has at
    // most one start_after, so following them from each thread finds every cycle.
    std::vector<uint8_t> state(pg.threads.size(), 0);  // 0 not seen, 1 on the current path, 2 done
    for (uint32_t t0 = 0; t0 < pg.threads.size(); ++t0) {
        std::vector<uint32_t> path;
        uint32_t t = t0;
        while (state[t] == 0 && pg.threads[t].start_after != kNone) {
            state[t] = 1;
            path.push_back(t);
            t = static_cast<uint32_t>(pg.ops[static_cast<size_t>(pg.threads[t].start_after)].thread);
        }
        if (state[t] == 1) {
            std::vector<uint32_t> cycle(std::find(path.begin(), path.end(), t), path.end());
            std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
            std::string chain;
            const size_t shown = std::min<size_t>(cycle.size(), 8);
            for (size_t k = 0; k < shown; ++k) {
                const uint32_t a = cycle[k];
                const uint32_t op = static_cast<uint32_t>(pg.threads[a].start_after);
                chain += (k ? ", which starts after " : "thread '" + pg.threads[a].name + "' starts after ") + pg.op_name(op) +
                         " of thread '" + pg.threads[static_cast<size_t>(pg.ops[op].thread)].name + "'";
            }
            if (shown < cycle.size()) chain += ", ... (" + std::to_string(cycle.size()) + " threads in all)";
            const auto spec = std::find_if(specs_.begin(), specs_.end(), [&](const ThreadSpec& sp) {
                return cycle[0] >= sp.first && cycle[0] < sp.first + sp.count;
            });
            fail_at(spec->start_after, "start_after makes a cycle: " + chain + "; no thread of the cycle can ever start");
        }
        for (uint32_t p : path) state[p] = 2;
    }
}

// ---------------------------------------------------------------- names with indices

std::string Lowerer::indexed_name(const YAML::Node& n, const char* what) const {
    const std::string text = need_name(n, what);
    const size_t b = text.find('[');
    if (b == std::string::npos) return text;
    std::string out = text.substr(0, b);
    size_t pos = b;
    while (pos < text.size()) {
        if (text[pos] != '[') fail_at(n, std::string(what) + " '" + text + "' must be a name with indices such as load[i - 1]");
        const size_t e = text.find(']', pos);
        if (e == std::string::npos) fail_at(n, std::string(what) + " '" + text + "' has a '[' without its ']'");
        Value v = eval_at(loc_of(n, file_), 0, text.substr(pos + 1, e - pos - 1));
        if (v.dim != Dim::None || !v.integral || v.i < 0)
            fail_at(n, std::string(what) + " index must be a whole number of at least 0 in '" + text + "'");
        out += "[" + std::to_string(v.i) + "]";
        pos = e + 1;
    }
    return out;
}

// ---------------------------------------------------------------- graph dependencies

// The nodes of the graph just declared, with their ids and `after` lists (node_deps_, in node
// order): none of either keeps it a chain; else each node waits for the nodes it names, a node
// without `after` for the node before it. The nodes are put in a dependency order (stable: file
// order where the dependencies allow), which the binder needs; a cycle is an error.
void Lowerer::graph_dag(const YAML::Node& body) {
    Graph& g = sc_.program.graphs[capturing_];
    const size_t n = g.nodes.size();
    bool dag = false;
    for (const NodeDeps& d : node_deps_) dag = dag || d.has_after || !d.id.empty();
    if (!dag) return;
    std::unordered_map<std::string, uint32_t> ids;
    std::vector<std::string> known;
    for (uint32_t k = 0; k < n; ++k) {
        const NodeDeps& d = node_deps_[k];
        if (d.id.empty()) continue;
        if (!ids.emplace(d.id, k).second)
            fail_at(dep_nodes_[static_cast<size_t>(d.id_node)], "duplicate node id '" + d.id + "' in graph '" + g.name + "'; give each node its own id");
        known.push_back(d.id);
    }
    std::sort(known.begin(), known.end());
    std::vector<std::vector<uint32_t>> deps(n);
    for (uint32_t k = 0; k < n; ++k) {
        const NodeDeps& d = node_deps_[k];
        if (!d.has_after) {
            if (k > 0) deps[k].push_back(k - 1);
            continue;
        }
        for (const auto& [name, where] : d.after) {
            auto it = ids.find(name);
            if (it == ids.end()) {
                std::string near = did_you_mean(name, known), list;
                for (size_t j = 0; j < known.size() && j < 8; ++j) list += (j ? ", " : "") + known[j];
                fail_at(where, "'after' names unknown node '" + name + "' of graph '" + g.name + "'" +
                                   (!near.empty() ? "; did you mean '" + near + "'?"
                                    : list.empty() ? " (no node of it has an 'id')" : " (its ids: " + list + ")"));
            }
            if (it->second == k) fail_at(where, "node '" + name + "' lists itself in 'after'; a node cannot wait for itself");
            if (std::find(deps[k].begin(), deps[k].end(), it->second) != deps[k].end())
                fail_at(where, "node '" + name + "' appears twice in 'after'; list it once");
            deps[k].push_back(it->second);
        }
    }
    // Kahn's order, the lowest ready node first.
    std::vector<uint32_t> waiting(n), order, pos(n, UINT32_MAX);
    std::vector<std::vector<uint32_t>> users(n);
    for (uint32_t k = 0; k < n; ++k) {
        waiting[k] = static_cast<uint32_t>(deps[k].size());
        for (uint32_t d : deps[k]) users[d].push_back(k);
    }
    std::vector<uint32_t> ready;
    for (uint32_t k = 0; k < n; ++k)
        if (!waiting[k]) ready.push_back(k);
    while (!ready.empty()) {
        auto lowest = std::min_element(ready.begin(), ready.end());
        const uint32_t k = *lowest;
        ready.erase(lowest);
        pos[k] = static_cast<uint32_t>(order.size());
        order.push_back(k);
        for (uint32_t u : users[k])
            if (--waiting[u] == 0) ready.push_back(u);
    }
    if (order.size() < n) {
        // A cycle: walk back from a node left over along its waits until a node repeats.
        auto shown = [&](uint32_t k) {
            return node_deps_[k].id.empty() ? sc_.program.names[sc_.program.sites[g.nodes[k].site].label] : node_deps_[k].id;
        };
        uint32_t k = 0;
        while (pos[k] != UINT32_MAX) ++k;
        std::vector<uint32_t> path;
        std::vector<uint8_t> seen(n, 0);
        while (!seen[k]) {
            seen[k] = 1;
            path.push_back(k);
            for (uint32_t d : deps[k])
                if (pos[d] == UINT32_MAX) {
                    k = d;
                    break;
                }
        }
        auto start = std::find(path.begin(), path.end(), k);
        std::vector<uint32_t> cycle(start, path.end());
        std::reverse(cycle.begin(), cycle.end());  // each waits for the one before it
        std::string msg = "graph '" + g.name + "' has a dependency cycle:" + cycle_text(cycle.size(), [&](size_t k) { return shown(cycle[k]); }) +
                          " (each waits for the one before it); remove one of these 'after' entries";
        const NodeDeps& at = node_deps_[cycle.front()];
        fail_at(at.after_node >= 0 ? dep_nodes_[static_cast<size_t>(at.after_node)] : body, msg);
    }
    std::vector<Op> nodes;
    nodes.reserve(n);
    g.after_index.assign(1, 0);
    for (uint32_t k : order) {
        nodes.push_back(g.nodes[k]);
        std::vector<uint32_t> d;
        for (uint32_t x : deps[k]) d.push_back(pos[x]);
        std::sort(d.begin(), d.end());
        g.after.insert(g.after.end(), d.begin(), d.end());
        g.after_index.push_back(static_cast<uint32_t>(g.after.size()));
    }
    g.nodes = std::move(nodes);
}

}  // namespace hetsim
