#include "sweep/suggest.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "frontend/yaml_util.hpp"

namespace hetsim::sweep {
namespace {

// The declared name of a lowered buffer: "h_buf" for "h_buf[1]".
std::string declared(const std::string& name) {
    const size_t b = name.find('[');
    return b == std::string::npos ? name : name.substr(0, b);
}

// Writes `value` at the dotted `path` of the document, creating maps on the way.
void apply_edit(YAML::Node root, const std::string& path, const std::string& value) {
    std::vector<std::string> parts;
    size_t from = 0;
    for (size_t dot; (dot = path.find('.', from)) != std::string::npos; from = dot + 1) parts.push_back(path.substr(from, dot - from));
    parts.push_back(path.substr(from));
    YAML::Node n = root;
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
        if (!n[parts[k]] || !n[parts[k]].IsMap()) n[parts[k]] = YAML::Node(YAML::NodeType::Map);
        YAML::Node next = n[parts[k]];
        n.reset(next);  // rebind (operator= would copy into the node n refers to)
    }
    n[parts.back()] = value;
}

// The scenario's text with the edits made: parsed, edited and written out again (comments and
// layout are lost; the values are the file's). The lowerer keys its caches by a node's place in
// the text, so the edited document is lowered from its own text, never as edited nodes.
std::string edited_text(const std::string& text, const std::string& file, const std::vector<std::pair<std::string, std::string>>& edits) {
    YAML::Node root = load_yaml_text(text, file);
    for (const auto& [path, value] : edits) apply_edit(root, path, value);
    YAML::Emitter e;
    e << root;
    return std::string(e.c_str()) + "\n";
}

// The value a param has in this run as written: its --set, else its text in the file.
std::string current_value(const YAML::Node& root, const LoadOptions& lo, const std::string& name) {
    std::string v;
    if (YAML::Node params = root["params"]; params && params.IsMap() && params[name] && params[name].IsScalar()) v = params[name].Scalar();
    for (const auto& [k, x] : lo.sets)
        if (k == name) v = x;
    return v;
}

class Runner {
public:
    Runner(const std::string& text, const std::string& file, const LoadOptions& lo, const EngineOptions& eo, uint64_t budget)
        : text_(text), file_(file), lo_(lo), eo_(eo), left_(budget), root_(load_yaml_text(text, file)) {}

    // The end to end with the change, or false when the budget is spent or the run fails.
    bool run(const Change& c, Time& out) {
        const std::string key = key_of(c);
        if (auto it = memo_.find(key); it != memo_.end()) {
            out = it->second.first;
            return it->second.second;
        }
        if (left_ == 0) return false;
        --left_;
        bool ok = true;
        try {
            out = end_to_end(c);
        } catch (const std::exception& e) {
            ok = false;  // not simulated: never suggested, but said
            failed_.push_back(c.text + ": " + e.what());
        }
        memo_[key] = {out, ok};
        return ok;
    }

    Time end_to_end(const Change& c) const {
        LoadOptions lo = lo_;
        for (const auto& s : c.sets) lo.sets.push_back(s);
        // A change of --set values only lowers the tree parsed once (lowering only reads it).
        Scenario sc = c.edits.empty() ? load_scenario_node(root_, text_, file_, lo) : load_scenario_text(edited_text(text_, file_, c.edits), file_, lo);
        const Timeline t = simulate(sc.program, sc.profile, eo_);
        return t.end_to_end - t.measured_from;  // measure: {warmup: K}: the last iteration
    }

    uint64_t left() const { return left_; }
    std::vector<std::string>& failed() { return failed_; }
    const YAML::Node& root() const { return root_; }

private:
    static std::string key_of(const Change& c) {
        std::string k;
        for (const auto& [a, b] : c.sets) k.append("set ").append(a).append("=").append(b).append("\n");
        for (const auto& [a, b] : c.edits) k.append("edit ").append(a).append("=").append(b).append("\n");
        return k;
    }

    const std::string& text_;
    const std::string& file_;
    const LoadOptions& lo_;
    const EngineOptions& eo_;
    uint64_t left_;
    YAML::Node root_;
    std::map<std::string, std::pair<Time, bool>> memo_;
    std::vector<std::string> failed_;
};

std::string knob_text(const std::vector<std::pair<std::string, std::string>>& sets) {
    std::string t;
    for (const auto& [k, v] : sets) t.append(t.empty() ? "" : " ").append(k).append("=").append(v);
    return t;
}

}  // namespace

Time simulate_change(const std::string& scenario_text, const std::string& file, const LoadOptions& lo, const EngineOptions& eo,
                     const Change& c) {
    Runner r(scenario_text, file, lo, eo, 1);
    return r.end_to_end(c);
}

report::Suggestions suggest(const std::string& text, const std::string& file, const LoadOptions& lo, const EngineOptions& eo,
                            const Scenario& base, const std::vector<uint32_t>& critical_ops, Time base_end,
                            const SuggestOptions& opts) {
    report::Suggestions out;
    out.baseline = base_end;
    const Program& p = base.program;
    if (p.ops.size() > opts.max_ops) {
        out.skipped = "the program has " + std::to_string(p.ops.size()) + " ops, more than the " + std::to_string(opts.max_ops) +
                      " that --suggest-max-ops allows (each suggestion re-lowers and re-simulates it)";
        return out;
    }
    // At most `budget` runs, and about `ops_budget` simulated ops in all (at least 4 runs).
    const uint64_t by_ops = std::max<uint64_t>(4, opts.ops_budget / std::max<uint64_t>(1, p.ops.size()));
    Runner runner(text, file, lo, eo, std::min(opts.budget, by_ops));
    std::vector<Change> singles;

    // Pinned instead of pageable: each pageable buffer a copy on the critical path uses.
    std::set<std::string> seen;
    for (uint32_t op : critical_ops) {
        if (op >= p.ops.size()) continue;
        const Op& o = p.ops[op];
        if (o.kind != OpKind::Memcpy || o.host_mem != MemKind::Pageable || o.buffer < 0 || static_cast<size_t>(o.buffer) >= p.buffers.size())
            continue;
        const std::string b = declared(p.buffers[static_cast<size_t>(o.buffer)].name);
        if (!seen.insert(b).second) continue;
        singles.push_back({b + " pinned instead of pageable (cudaMallocHost)", "pinned", {}, {{"buffers." + b + ".kind", "pinned"}}});
    }
    // Sync scheduling: the other one.
    if (p.blocking_sync) singles.push_back({"spin-wait syncs (options.sync: spin)", "sync", {}, {{"options.sync", "spin"}}});
    else singles.push_back({"blocking-sync syncs (options.sync: blocking, cudaDeviceScheduleBlockingSync)", "sync", {}, {{"options.sync", "blocking"}}});
    // More hardware queues, where streams with GPU work share fewer than 32.
    const uint64_t queues = p.max_connections ? p.max_connections : base.profile.hw_queues;
    std::set<int32_t> streams;
    for (const Op& o : p.ops)
        if (Program::has_gpu_phase(o.kind) && o.stream >= 0) streams.insert(o.stream);
    if (queues < 32 && streams.size() > 1 && base.profile.rules.hw_queues)
        singles.push_back({"CUDA_DEVICE_MAX_CONNECTIONS=32 (options.max_connections: 32)", "max_connections", {}, {{"options.max_connections", "32"}}});
    // Each knob value, one at a time.
    std::vector<std::string> current;
    for (const Knob& k : base.knobs) {
        current.push_back(current_value(runner.root(), lo, k.name));
        for (const std::string& v : k.values)
            if (v != current.back()) singles.push_back({k.name + "=" + v, "knob", {{k.name, v}}, {}});
    }

    auto record = [&](const Change& c, Time e) {
        report::Suggestion s;
        s.change = c.text;
        s.kind = c.kind;
        s.end_to_end = e;
        s.delta_pct = base_end.ps() > 0 ? std::round((static_cast<double>(e.ps()) / static_cast<double>(base_end.ps()) - 1.0) * 10000.0) / 100.0 : 0.0;
        s.sets = c.sets;
        s.edits = c.edits;
        out.list.push_back(std::move(s));
    };
    // A combination some of whose parts change nothing: a change listed already, made of some of
    // its parts, ends at the same time (`mem=pinned + h_batch pinned instead of pageable` when the
    // knob pins h_batch itself). The shorter one says it all.
    auto subset_of = [](const auto& part, const auto& whole) {
        for (const auto& x : part)
            if (std::find(whole.begin(), whole.end(), x) == whole.end()) return false;
        return true;
    };
    auto adds_nothing = [&](const Change& c, Time e) {
        for (const report::Suggestion& s : out.list)
            if (s.end_to_end == e && subset_of(s.sets, c.sets) && subset_of(s.edits, c.edits)) return true;
        return false;
    };
    std::vector<Change> helped;  // non-knob changes that shortened the run (report::shortens)
    // The best value of each knob alone (its current value when none beats the baseline).
    std::vector<std::string> best_value = current;
    std::vector<Time> best_time(base.knobs.size(), base_end);
    for (const Change& c : singles) {
        Time e;
        if (!runner.run(c, e)) continue;
        record(c, e);
        if (c.kind != "knob") {
            if (report::shortens(e, base_end)) helped.push_back(c);
            continue;
        }
        for (size_t k = 0; k < base.knobs.size(); ++k)
            if (base.knobs[k].name == c.sets[0].first && e < best_time[k]) best_time[k] = e, best_value[k] = c.sets[0].second;
    }

    // The best combination of the knobs (two or more).
    std::vector<std::pair<std::string, std::string>> best_combo;
    Time best_combo_time = base_end;
    auto combo_change = [&](const std::vector<std::string>& values) {
        Change c{"", "combination", {}, {}};
        for (size_t k = 0; k < values.size(); ++k)
            if (values[k] != current[k]) c.sets.push_back({base.knobs[k].name, values[k]});
        c.text = knob_text(c.sets);
        return c;
    };
    auto try_combo = [&](const std::vector<std::string>& values) {
        Change c = combo_change(values);
        if (c.sets.size() < 2) return;  // a single change: already tried
        Time e;
        if (!runner.run(c, e)) return;
        if (e < best_combo_time) best_combo_time = e, best_combo = c.sets;
    };
    if (base.knobs.size() >= 2) {
        uint64_t grid = 1;
        for (const Knob& k : base.knobs) grid = grid > opts.budget ? grid : grid * (k.values.size() + 1);
        if (grid <= runner.left()) {
            // Every combination: an odometer over the knobs' values and their current ones.
            std::vector<std::vector<std::string>> axes;
            for (size_t k = 0; k < base.knobs.size(); ++k) {
                std::vector<std::string> a = base.knobs[k].values;
                if (std::find(a.begin(), a.end(), current[k]) == a.end()) a.insert(a.begin(), current[k]);
                axes.push_back(std::move(a));
            }
            std::vector<size_t> at(axes.size(), 0);
            for (;;) {
                std::vector<std::string> v;
                for (size_t k = 0; k < axes.size(); ++k) v.push_back(axes[k][at[k]]);
                try_combo(v);
                size_t k = 0;
                while (k < at.size() && ++at[k] == axes[k].size()) at[k++] = 0;
                if (k == at.size()) break;
            }
        } else {
            // A descent: from the best single values, each knob in turn over its values with the
            // others fixed, until a round changes nothing or the budget is spent.
            std::vector<std::string> v = best_value;
            try_combo(v);
            Time cur = best_combo_time;
            for (bool changed = true; changed && runner.left() > 0;) {
                changed = false;
                for (size_t k = 0; k < base.knobs.size(); ++k)
                    for (const std::string& x : base.knobs[k].values) {
                        if (x == v[k]) continue;
                        std::vector<std::string> w = v;
                        w[k] = x;
                        try_combo(w);
                        if (best_combo_time < cur) cur = best_combo_time, v = w, changed = true;
                    }
            }
        }
        if (!best_combo.empty()) {
            Change c{knob_text(best_combo), "combination", best_combo, {}};
            if (!adds_nothing(c, best_combo_time)) record(c, best_combo_time);
        }
    }
    // Everything that helped, together: the best knob setting and the other changes.
    {
        Change all{"", "combination", {}, {}};
        if (!best_combo.empty()) all.sets = best_combo;
        else
            for (size_t k = 0; k < base.knobs.size(); ++k)
                if (best_value[k] != current[k]) all.sets.push_back({base.knobs[k].name, best_value[k]});
        for (const Change& c : helped) all.edits.insert(all.edits.end(), c.edits.begin(), c.edits.end());
        std::string words = knob_text(all.sets);
        for (const Change& c : helped) words.append(words.empty() ? "" : " + ").append(c.text);
        all.text = words;
        const size_t parts = all.sets.size() + helped.size();
        const bool new_combo = parts >= 2 && !(helped.empty() && !best_combo.empty());
        Time e;
        if (new_combo && runner.run(all, e) && !adds_nothing(all, e)) record(all, e);
    }
    out.failed = std::move(runner.failed());
    std::stable_sort(out.list.begin(), out.list.end(),
                     [](const report::Suggestion& a, const report::Suggestion& b) { return a.end_to_end < b.end_to_end; });
    return out;
}

}  // namespace hetsim::sweep
