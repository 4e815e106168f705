// The tasks form: free-standing ops with `after` lists.
#include <algorithm>

#include "frontend/lowerer.hpp"
#include "sim/graph.hpp"

namespace hetsim {

// ---------------------------------------------------------------- tasks form

void Lowerer::lower_tasks(const YAML::Node& tasks) {
    Program& pg = sc_.program;
    pg.tasks_form = true;
    if (!tasks.IsMap() || tasks.size() == 0) fail_at(tasks, "'tasks' must map task names to ops with 'after' lists");
    std::unordered_map<std::string, uint32_t> index;
    std::vector<YAML::Node> after_nodes;
    std::vector<YAML::Node> key_nodes;
    std::vector<std::string> task_names;
    for (auto it = tasks.begin(); it != tasks.end(); ++it) {
        std::string name = need_name(it->first, "task name");
        if (index.count(name)) fail_at(it->first, "duplicate task '" + name + "'; each task name may be used once");
        const YAML::Node n = it->second;  // a copy: it->second is a member of a temporary
        std::string kind = find_kind(*this, n);
        if (kind == "repeat" || kind == "if" || kind == "event_sync" || kind == "stream_sync" || kind == "device_sync" ||
            kind == "event_record" || kind == "stream_wait_event")
            fail_at(field(n, kind), "'" + kind + "' is not a task; in the tasks form, dependencies are 'after' lists");
        if (kind == "graph_instantiate" || kind == "graph_launch" || is_alloc(find_spelling(kind)->kind))
            fail_at(field(n, kind), "'" + kind + "' is not a task; write graphs and allocation calls in the threads form");
        check_keys(n, file_, keys_for(kind, true), "task '" + name + "'");
        Op op;
        Site site;
        int32_t thread = kNone;
        if (kind == "host") {
            std::string tname = field(n, "thread") ? need_name(field(n, "thread"), "thread") : "main";
            auto t = threads_.find(tname);
            if (t == threads_.end()) {
                if (pg.threads.size() >= static_cast<size_t>(kMaxThreads))
                    fail_at(field(n, "thread") ? field(n, "thread") : n, "more than " + std::to_string(kMaxThreads) +
                                                                          " host threads; a program may have at most that many");
                t = threads_.emplace(tname, static_cast<int32_t>(pg.threads.size())).first;
                pg.threads.push_back(HostThread{tname, {}});
                per_thread_.push_back(-1);
            }
            thread = t->second;
        }
        op.thread = static_cast<int16_t>(thread);
        std::string label;
        fill_op(op, site, kind, n, thread, label, true);
        if (!field(n, "name")) label = name;
        uint32_t idx = emit(op, site, n, label);
        index[name] = idx;
        if (thread >= 0) pg.threads[thread].ops.push_back(idx);
        else pg.gpu_tasks.push_back(idx);
        after_nodes.push_back(field(n, "after"));
        key_nodes.push_back(it->first);
        task_names.push_back(name);
    }
    std::vector<std::string> names;
    for (const auto& kv : index) names.push_back(kv.first);
    std::sort(names.begin(), names.end());
    pg.after_index.assign(1, 0);
    for (size_t t = 0; t < after_nodes.size(); ++t) {
        const uint32_t first = static_cast<uint32_t>(pg.after.size());
        const YAML::Node& a = after_nodes[t];
        if (a) {
            std::vector<YAML::Node> refs;
            if (a.IsScalar()) refs.push_back(a);
            else if (a.IsSequence()) for (const auto& r : a) refs.push_back(r);
            else fail_at(a, "'after' must be a list of task names such as [load0, copy0], got " + a_node_type(a));
            for (const auto& r : refs) {
                std::string dep = need_name(r, "task name");
                auto it = index.find(dep);
                if (it == index.end()) {
                    std::string near = did_you_mean(dep, names);
                    std::string known;
                    for (size_t k = 0; k < names.size() && k < 8; ++k) known += (k ? ", " : "") + names[k];
                    if (names.size() > 8) known += ", ...";
                    fail_at(r, "'after' names unknown task '" + dep + "'" +
                                   (near.empty() ? " (tasks: " + known + ")" : "; did you mean '" + near + "'?"));
                }
                if (it->second == t)
                    fail_at(r, "task '" + task_names[t] + "' lists itself in 'after'; a task cannot wait for itself");
                if (std::find(pg.after.begin() + first, pg.after.end(), it->second) != pg.after.end())
                    fail_at(r, "task '" + dep + "' appears twice in 'after'; list it once");
                pg.after.push_back(it->second);
            }
        }
        pg.after_index.push_back(static_cast<uint32_t>(pg.after.size()));
    }
    std::vector<uint32_t> cycle = find_cycle(pg);
    if (!cycle.empty()) {
        // In the tasks form op i is task i; in the cycle each task waits for the one before it.
        std::string msg = "tasks form a dependency cycle:";
        bool implicit = false;  // some wait is thread or stream order, not an 'after' entry
        for (size_t k = 0; k < cycle.size(); ++k) {
            uint32_t x = cycle[k], y = cycle[(k + 1) % cycle.size()];
            msg += " " + task_names[x] + " ->";
            if (std::find(pg.after_begin(y), pg.after_end(y), x) == pg.after_end(y)) implicit = true;
        }
        msg += " " + task_names[cycle.front()] + " (each waits for the one before it); remove one of these 'after' entries";
        if (implicit) msg += " (tasks on one stream or host thread also run in file order)";
        throw InputError(pg.loc(pg.ops[cycle.front()]), msg);
    }
}

}  // namespace hetsim
