// The count before expanding: the ops, iterations and loop-index entries a threads form will
// expand to, from its loop structure alone, so that a scenario over a cap is refused before
// anything is allocated and the Program's vectors are reserved at their exact sizes.
#include "frontend/lowerer.hpp"

namespace hetsim {

namespace {

uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t sat_mul(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

}  // namespace


// ---------------------------------------------------------------- the count before expanding

// The loop structure of the op lists, read without reporting anything: a statement that cannot
// be counted (a mistake the lowering will report, or a value it cannot compile) becomes
// kUnknown, and counting stops only if the count reaches it.
Lowerer::CountStmt Lowerer::count_stmt(const YAML::Node& n, std::vector<std::string>& scope, Bounds& bounds) {
    CountStmt c;
    const size_t stack = param_stack_.size();
    std::vector<std::string> params;
    try {
        MapFields* mf = n.IsMap() && n.Mark().pos >= 0 ? &fields_of(n) : nullptr;
        std::string kind;
        if (mf && mf->checked) {
            kind = mf->kind;
        } else {
            kind = find_kind(*this, n);
            check_keys(n, file_, keys_for(kind, false), kind + " op");
        }
        if (kind == "repeat" || kind == "if") {
            const YAML::Node value = field(n, kind);
            if (!value.IsScalar()) return c;
            std::optional<ExprCode> code = compile_in(substitute(value, value.Scalar()), scope, params);
            if (!code) return c;
            if (kind == "repeat") {
                std::string var = field(n, "var") ? need_name(field(n, "var"), "loop variable") : "i";
                if (!(std::isalpha(static_cast<unsigned char>(var[0])) || var[0] == '_') ||
                    !std::all_of(var.begin(), var.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }) ||
                    std::find(scope.begin(), scope.end(), var) != scope.end() || params_.count(var))
                    return c;
                const YAML::Node body = field(n, "do");
                if (!body || !body.IsSequence() || scope.size() >= 16) return c;
                c.empty_body = body.size() == 0;
                scope.push_back(var);
                c.body = count_list(body, scope, bounds);
                scope.pop_back();
            } else {
                if (!field(n, "then") && !field(n, "else")) return c;
                for (const char* branch : {"then", "else"})
                    if (field(n, branch) && !field(n, branch).IsSequence()) return c;
                if ((c.has_then = bool(field(n, "then")))) c.body = count_list(field(n, "then"), scope, bounds);
                if ((c.has_else = bool(field(n, "else")))) c.other = count_list(field(n, "else"), scope, bounds);
            }
            c.kind = kind == "repeat" ? CountStmt::kRepeat : CountStmt::kIf;
            c.node = value;
            c.code = std::move(*code);
            c.vars = c.code.vars;
            for (const auto* list : {&c.body, &c.other})
                for (const CountStmt& b : *list) c.vars |= b.vars;
            return c;
        }
        const YAML::Node head = field(n, kind);
        if (kind == "join" && head.IsScalar()) {  // an array name: one join per thread
            auto d = thread_decls_.find(substitute(head, head.Scalar()));
            if (d != thread_decls_.end()) c.emits = d->second.count;
        }
        if (kind == "graph_launch") {
            auto g = graphs_.find(need_name(head, "graph"));
            if (g == graphs_.end()) return c;
            c.emits = static_cast<uint32_t>(std::min<size_t>(1 + sc_.program.graphs[g->second.first].nodes.size(), UINT32_MAX));
        }
        // Bounds on what the op can intern: one source position, one label per element of the
        // array its head indexes (event_record: ev[i % 2] is labelled by the event), its `uses`.
        uint64_t labels = 1;
        auto array_count = [&](const std::string& text) -> uint64_t {
            const size_t b = text.find('[');
            if (b == std::string::npos) return 1;
            uint64_t most = 1;
            for (const auto* decls : {&streams_, &events_, &buffers_, &graphs_})
                if (auto it = decls->find(text.substr(0, b)); it != decls->end()) most = std::max<uint64_t>(most, it->second.count);
            return most;
        };
        if (head && head.IsScalar()) labels = array_count(substitute(head, head.Scalar()));
        bounds.names += labels;
        bounds.locs += 1;
        if (const YAML::Node u = field(n, "uses"); u && u.IsSequence()) {
            uint64_t lists = 1;
            for (const auto& b : u)
                if (b.IsScalar()) lists = sat_mul(lists, array_count(substitute(b, b.Scalar())));
            bounds.uses = sat_add(bounds.uses, sat_mul(lists, u.size()));
        }
        c.kind = CountStmt::kOp;
        c.node = n;
        return c;
    } catch (const std::exception&) {
        param_stack_.resize(stack);
        c.kind = CountStmt::kUnknown;
        return c;
    }
}

std::vector<Lowerer::CountStmt> Lowerer::count_list(const YAML::Node& list, std::vector<std::string>& scope, Bounds& bounds) {
    std::vector<CountStmt> out;
    if (!list.IsSequence()) {
        out.emplace_back();  // kUnknown
        return out;
    }
    out.reserve(list.size());
    for (const auto& n : list) out.push_back(count_stmt(n, scope, bounds));
    return out;
}

namespace {
struct Uncountable {};  // thrown where the count reaches a statement it cannot count
}  // namespace

// Adds the ops, iterations and loop-index entries of `b` (at loop depth `depth`, loop variables
// `vars`) to `t` in expansion order, as the lowering counts them; false at the first cap passed
// (`over` says which and where). A repeat whose body does not read its variable counts one
// iteration and multiplies.
bool Lowerer::count_block(const std::vector<CountStmt>& b, int depth, Tally& t, int64_t* vars, Over& over) const {
    const uint64_t icap = iteration_cap(), max_ops = opts_.max_ops;
    for (const CountStmt& c : b) {
        Value v;
        switch (c.kind) {
            case CountStmt::kUnknown: throw Uncountable{};
            case CountStmt::kOp:
                if (sat_add(t.ops, c.emits) > max_ops) {
                    over = Over{true, c.node};
                    return false;
                }
                t.ops += c.emits;
                if (depth > 0 && t.dirty) {
                    t.entries += static_cast<uint64_t>(depth);
                    t.dirty = false;
                }
                break;
            case CountStmt::kIf: {
                if (!run_expr(c.code, vars, v) || v.dim != Dim::None) throw Uncountable{};
                const bool yes = v.integral ? v.i != 0 : v.d != 0;
                if (yes && c.has_then && !count_block(c.body, depth, t, vars, over)) return false;
                if (!yes && c.has_else && !count_block(c.other, depth, t, vars, over)) return false;
                break;
            }
            case CountStmt::kRepeat: {
                const int64_t hi = static_cast<int64_t>(std::min<uint64_t>(max_ops, INT64_MAX));
                if (!run_expr(c.code, vars, v) || v.dim != Dim::None || !v.integral || v.i < 0 || v.i > hi) throw Uncountable{};
                const uint64_t k = static_cast<uint64_t>(v.i);
                if (c.empty_body) {
                    if (k > 0 && (t.iterations = sat_add(t.iterations, k)) > icap) {
                        over = Over{false, c.node};
                        return false;
                    }
                    t.dirty = true;
                    break;
                }
                uint64_t i = 0;
                if (k > 0 && !(c.vars & (1u << depth))) {  // every iteration is the same: count one
                    vars[depth] = 0;
                    Tally one;
                    Over inside;
                    if (count_block(c.body, depth + 1, one, vars, inside)) {
                        const uint64_t per = sat_add(one.iterations, 1);
                        i = std::min(k, (icap - t.iterations) / per);
                        if (one.ops) i = std::min(i, (max_ops - t.ops) / one.ops);
                        t.iterations += i * per;
                        t.ops += i * one.ops;
                        t.entries = sat_add(t.entries, sat_mul(i, one.entries));
                    }
                }
                for (; i < k; ++i) {  // iteration by iteration (the rest, when some did not fit)
                    vars[depth] = static_cast<int64_t>(i);
                    if ((t.iterations = sat_add(t.iterations, 1)) > icap) {
                        over = Over{false, c.node};
                        return false;
                    }
                    t.dirty = true;
                    if (!count_block(c.body, depth + 1, t, vars, over)) return false;
                }
                t.dirty = true;
                break;
            }
        }
    }
    return true;
}

// Counts the ops of every thread before any is expanded. Over --max-ops (or over the iteration
// cap), the scenario is refused here, at the op (or loop) where the expansion would pass the cap,
// unless the memory cap could stop the expansion before that. Otherwise the program's op lists
// and loop indices are reserved at their exact sizes. When something cannot be counted, nothing
// is decided here: the expansion checks the caps as it goes.
void Lowerer::count_before_expanding() {
    Bounds bounds;
    std::vector<std::string> scope;
    // Per thread, its statements (a thread array with an index variable: per thread, as each
    // compiles with its own index; else shared).
    std::vector<std::vector<CountStmt>> lists;
    std::vector<uint32_t> list_of;  // per thread
    for (const ThreadSpec& spec : specs_) {
        for (uint32_t k = 0; k < spec.count; ++k) {
            if (k == 0 || !spec.var.empty()) {
                set_thread_var(spec, k);
                lists.push_back(count_list(spec.ops, scope, bounds));
            }
            list_of.push_back(static_cast<uint32_t>(lists.size() - 1));
        }
        set_thread_var(spec, -1);
    }
    Tally t;
    t.iterations = iterations_;
    std::vector<uint64_t> per_thread;
    Over over;
    bool fits = true;
    int64_t vars[17] = {};
    const uint32_t runs = sc_.program.warmup + 1;  // measure: {warmup: K}: K + 1 iterations, K barriers
    try {
        for (uint32_t list : list_of) {
            const uint64_t before = t.ops;
            for (uint32_t r = 0; fits && r < runs; ++r) {
                if (!count_block(lists[list], 0, t, vars, over)) fits = false;
                else if (r + 1 < runs && sat_add(t.ops, 1) > opts_.max_ops) over = Over{true, measure_node_}, fits = false;
                else if (r + 1 < runs) ++t.ops;
            }
            if (!fits) break;
            per_thread.push_back(t.ops - before);
        }
    } catch (const Uncountable&) {
        return;
    }
    // The memory estimate at the end (or where a cap is passed), with the interned tables at their bounds.
    ProgramSize size = size_of(sc_.program);
    size.ops = t.ops;
    size.iter_indices = sat_add(size.iter_indices, t.entries);
    size.names = sat_add(size.names, bounds.names);
    size.locs = sat_add(size.locs, bounds.locs);
    size.uses = sat_add(size.uses, bounds.uses);
    const bool memory_fits = opts_.max_memory == 0 || estimated_run_bytes(size, opts_.run_bytes_per_op) <= opts_.max_memory;
    if (!memory_fits) return;
    if (!fits) {
        if (over.ops) fail_op_cap(over.where);
        fail_iteration_cap(over.where);
    }
    Program& pg = sc_.program;
    pg.ops.reserve(t.ops);
    for (size_t k = 0; k < per_thread.size(); ++k) pg.threads[k].ops.reserve(per_thread[k]);
    pg.iter_indices.reserve(pg.iter_indices.size() + t.entries);
}

}  // namespace hetsim
