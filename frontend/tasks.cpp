// The tasks form: free-standing ops with `after` lists.
#include <algorithm>
#include <cctype>
#include <functional>

#include "frontend/lowerer.hpp"
#include "sim/graph.hpp"

namespace hetsim {

// ---------------------------------------------------------------- tasks form

namespace {
// A task's `after` entry, its indices evaluated where the task was lowered.
struct TaskRef {
    std::string base;
    std::vector<int64_t> explicit_idx, loop_idx;  // given in the entry; the loop indices at the task
    YAML::Node node;
};
}  // namespace

void Lowerer::lower_tasks(const YAML::Node& tasks) {
    Program& pg = sc_.program;
    pg.tasks_form = true;
    if (!tasks.IsMap() || tasks.size() == 0) fail_at(tasks, "'tasks' must map task names to ops with 'after' lists");
    std::unordered_map<std::string, uint32_t> index;
    std::unordered_map<std::string, std::pair<size_t, YAML::Node>> depth_of;  // a task name's loop depth
    std::vector<std::vector<TaskRef>> after_refs;
    std::vector<std::string> task_names;
    // The tasks of one mapping; `repeat` and `if` blocks (a key whose value is {repeat: ..} or
    // {if: ..}) hold mappings of their own. Inside loops a task is named with the loop indices.
    std::function<void(const YAML::Node&)> lower_map = [&](const YAML::Node& map) {
        for (auto it = map.begin(); it != map.end(); ++it) {
            std::string name = need_name(it->first, "task name");
            const YAML::Node n = it->second;  // a copy: it->second is a member of a temporary
            if (n.IsMap() && (field(n, "repeat") || field(n, "if"))) {
                const bool rep = bool(field(n, "repeat"));
                check_keys(n, file_, rep ? std::vector<std::string>{"repeat", "var", "do"} : std::vector<std::string>{"if", "then", "else"},
                           rep ? "repeat block '" + name + "'" : "if block '" + name + "'");
                if (!rep) {
                    if (!field(n, "then") && !field(n, "else")) fail_at(n, "'if' needs a 'then' mapping of tasks (and optionally 'else')");
                    for (const char* branch : {"then", "else"})
                        if (field(n, branch) && !field(n, branch).IsMap() && !field(n, branch).IsNull())
                            fail_at(field(n, branch), std::string("'") + branch + "' must be a mapping of task names to tasks, got " +
                                                          a_node_type(field(n, branch)));
                    const bool yes = if_taken(n, eval(field(n, "if"), "condition"));
                    const YAML::Node branch = field(n, yes ? "then" : "else");
                    if (branch && branch.IsMap()) lower_map(branch);
                    continue;
                }
                const int64_t count = repeat_count(n);
                std::string var = loop_var(n);
                const YAML::Node body = field(n, "do");
                if (!body) fail_at(n, "repeat needs a 'do' mapping of tasks");
                if (!body.IsMap() && !body.IsNull())
                    fail_at(body, "in the tasks form, repeat's 'do' is a mapping of task names to tasks, got " + a_node_type(body));
                if (++depth_ > 16) fail_at(n, "repeat blocks nest deeper than 16");
                const bool empty = !body.IsMap() || body.size() == 0;
                run_loop(field(n, "repeat"), var, count, empty, [&] {
                    if (!empty) lower_map(body);
                });
                continue;
            }
            std::string full = name;
            for (int64_t v : loop_vals_) full += "[" + std::to_string(v) + "]";
            auto [d, fresh] = depth_of.try_emplace(name, loop_vals_.size(), it->first);
            if (!fresh && d->second.first != loop_vals_.size())
                fail_at(it->first, "task name '" + name + "' is used at two loop depths; give the tasks of each place their own name");
            if (index.count(full)) fail_at(it->first, "duplicate task '" + full + "'; each task name may be used once");
            std::string kind = find_kind(*this, n);
            if (kind == "repeat" || kind == "if" || kind == "event_sync" || kind == "stream_sync" || kind == "device_sync" ||
                kind == "event_record" || kind == "stream_wait_event")
                fail_at(field(n, kind), "'" + kind + "' is not a task; in the tasks form, dependencies are 'after' lists");
            if (kind == "graph_instantiate" || kind == "graph_launch" || is_alloc(find_spelling(kind)->kind) ||
                !(find_spelling(kind)->forms & kInTasks))
                fail_at(field(n, kind), "'" + kind + "' is not a task; write it in the threads form");
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
            index[full] = idx;
            if (thread >= 0) pg.threads[thread].ops.push_back(idx);
            else pg.gpu_tasks.push_back(idx);
            // The `after` entries, their index expressions evaluated in this iteration.
            std::vector<TaskRef> refs;
            const YAML::Node a = field(n, "after");
            if (a) {
                std::vector<YAML::Node> entries;
                if (a.IsScalar()) entries.push_back(a);
                else if (a.IsSequence()) for (const auto& r : a) entries.push_back(r);
                else fail_at(a, "'after' must be a list of task names such as [load0, copy0], got " + a_node_type(a));
                for (const auto& r : entries) {
                    const std::string text = indexed_name(r, "task name");
                    TaskRef ref;
                    ref.node.reset(r);
                    ref.base = text.substr(0, text.find('['));
                    for (size_t p = text.find('['); p != std::string::npos; p = text.find('[', p + 1))
                        ref.explicit_idx.push_back(std::stoll(text.substr(p + 1)));
                    ref.loop_idx = loop_vals_;
                    refs.push_back(std::move(ref));
                }
            }
            after_refs.push_back(std::move(refs));
            task_names.push_back(full);
        }
    };
    lower_map(tasks);
    std::vector<std::string> names;
    for (const auto& kv : index) names.push_back(kv.first);
    std::sort(names.begin(), names.end());
    pg.after_index.assign(1, 0);
    for (size_t t = 0; t < after_refs.size(); ++t) {
        const uint32_t first = static_cast<uint32_t>(pg.after.size());
        for (const TaskRef& r : after_refs[t]) {
            // The indices the entry leaves out are the loop indices where it is written (the
            // enclosing loops'): inside `repeat: n`, `after: [load]` names load[i] of the same i.
            std::string dep = r.base;
            auto d = depth_of.find(r.base);
            if (d != depth_of.end()) {
                const size_t want = d->second.first, given = r.explicit_idx.size();
                if (given > want)
                    fail_at(r.node, "task '" + r.base + "' has " + std::to_string(want) + " loop indices; '" + r.node.Scalar() +
                                        "' gives " + std::to_string(given));
                if (want - given > r.loop_idx.size())
                    fail_at(r.node, "task '" + r.base + "' is inside " + std::to_string(want) + " repeat block(s) and this entry outside them; give its indices, such as " +
                                        r.base + "[0]");
                for (size_t k = 0; k < want - given; ++k) dep += "[" + std::to_string(r.loop_idx[k]) + "]";
                for (int64_t v : r.explicit_idx) dep += "[" + std::to_string(v) + "]";
            }
            auto it = index.find(dep);
            if (it == index.end()) {
                std::string near = did_you_mean(dep, names);
                std::string known;
                for (size_t k = 0; k < names.size() && k < 8; ++k) known += (k ? ", " : "") + names[k];
                if (names.size() > 8) known += ", ...";
                fail_at(r.node, "'after' names unknown task '" + dep + "'" +
                                    (near.empty() ? " (tasks: " + known + ")" : "; did you mean '" + near + "'?"));
            }
            if (it->second == t)
                fail_at(r.node, "task '" + task_names[t] + "' lists itself in 'after'; a task cannot wait for itself");
            if (std::find(pg.after.begin() + first, pg.after.end(), it->second) != pg.after.end())
                fail_at(r.node, "task '" + dep + "' appears twice in 'after'; list it once");
            pg.after.push_back(it->second);
        }
        pg.after_index.push_back(static_cast<uint32_t>(pg.after.size()));
    }
    std::vector<uint32_t> cycle = find_cycle(pg);
    if (!cycle.empty()) {
        // In the tasks form op i is task i; in the cycle each task waits for the one before it.
        std::string msg = "tasks form a dependency cycle:" + cycle_text(cycle.size(), [&](size_t k) { return task_names[cycle[k]]; });
        bool implicit = false;  // some wait is thread or stream order, not an 'after' entry
        for (size_t k = 0; k < cycle.size(); ++k) {
            uint32_t x = cycle[k], y = cycle[(k + 1) % cycle.size()];
            if (std::find(pg.after_begin(y), pg.after_end(y), x) == pg.after_end(y)) implicit = true;
        }
        msg += " (each waits for the one before it); remove one of these 'after' entries";
        if (implicit) msg += " (tasks on one stream or host thread also run in file order)";
        throw InputError(pg.loc(pg.ops[cycle.front()]), msg);
    }
}

}  // namespace hetsim
