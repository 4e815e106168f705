// Op lists of the threads form: repeat and if blocks, compiled once into statements whose
// op templates later iterations append without reading the YAML again.
#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>

#include "frontend/lowerer.hpp"

namespace hetsim {

void Lowerer::lower_thread(const std::string& name, const YAML::Node& list) {
    int32_t thread = threads_.at(name);
    if (!list.IsSequence()) fail_at(list, "thread '" + name + "' must be a list of ops, got " + a_node_type(list));
    // measure: {warmup: K}: the list K + 1 times, a barrier between iterations; the ops before
    // the last barrier are of warm-up iterations.
    auto& pg = sc_.program;
    Block top;
    size_t first = pg.ops.size();
    for (uint32_t it = 0; it <= pg.warmup; ++it) {
        run_block(top, list, thread);
        if (it == pg.warmup) break;
        Op barrier;
        barrier.kind = OpKind::Barrier;
        barrier.thread = static_cast<int16_t>(thread);
        Site site;
        pg.threads[thread].ops.push_back(emit(barrier, site, measure_node_, "barrier[" + std::to_string(it) + "]"));
        for (; first < pg.ops.size(); ++first) pg.ops[first].warmup = true;
    }
}

// ---------------------------------------------------------------- repeat and if

int64_t Lowerer::repeat_count(const YAML::Node& n) {
    return need_int(field(n, "repeat"), "repeat count", 0, static_cast<int64_t>(std::min<uint64_t>(opts_.max_ops, INT64_MAX)),
                    "; " + std::to_string(opts_.max_ops) +
                        " is the cap on ops (--max-ops): lower the count, or raise the cap with --max-ops if this is intended",
                    "");
}

std::string Lowerer::loop_var(const YAML::Node& n) {
    std::string var = field(n, "var") ? need_name(field(n, "var"), "loop variable") : "i";
    if (!(std::isalpha(static_cast<unsigned char>(var[0])) || var[0] == '_') ||
        !std::all_of(var.begin(), var.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
        fail_at(field(n, "var"), "loop variable must be a plain name such as i or chunk, got '" + var + "'");
    for (const auto& lv : loop_names_)
        if (lv == var) fail_at(field(n, "var") ? field(n, "var") : n, "loop variable '" + var + "' is already used by an enclosing repeat; " +
                                                                  (field(n, "var") ? "give this one another name" : "name this one with 'var'"));
    if (params_.count(var)) fail_at(field(n, "var") ? field(n, "var") : n, "loop variable '" + var + "' shadows a param of the same name");
    return var;
}

Lowerer::RepeatHead Lowerer::repeat_head(const YAML::Node& n, int64_t count) {
    std::string var = loop_var(n);
    if (!field(n, "do")) fail_at(n, "repeat needs a 'do' list of ops");
    if (!field(n, "do").IsSequence()) fail_at(field(n, "do"), "repeat's 'do' must be a list of ops, got " + a_node_type(field(n, "do")));
    if (++depth_ > 16) fail_at(n, "repeat blocks nest deeper than 16");
    return RepeatHead{count, var, field(n, "do")};
}

void Lowerer::if_checks(const YAML::Node& n) const {
    if (!field(n, "then") && !field(n, "else")) fail_at(n, "'if' needs a 'then' list of ops (and optionally 'else')");
    for (const char* branch : {"then", "else"})
        if (field(n, branch) && !field(n, branch).IsSequence())
            fail_at(field(n, branch), std::string("'") + branch + "' must be a list of ops, got " + a_node_type(field(n, branch)));
}

bool Lowerer::if_taken(const YAML::Node& n, const Value& c) const {
    if (c.dim != Dim::None)
        fail_at(field(n, "if"), "condition must be a comparison such as 'i > 0', got " + shown(field(n, "if")) + " (a " + to_string(c.dim) + ")");
    if (!c.integral && !std::isfinite(c.d))
        fail_at(field(n, "if"), "condition " + shown(field(n, "if")) + " is not a number (" + (std::isnan(c.d) ? "NaN" : "infinite") +
                                    "); write a comparison such as 'i > 0'");
    return c.integral ? c.i != 0 : c.d != 0;
}

void Lowerer::fail_op_cap(const YAML::Node& where) const {
    fail_at(where, "the scenario expands to more than " + std::to_string(opts_.max_ops) +
                       " ops; raise the cap with --max-ops if this is intended");
}

void Lowerer::fail_iteration_cap(const YAML::Node& count) const {
    fail_at(count, "the scenario's loops run more than " + std::to_string(iteration_cap()) +
                       " iterations in all; lower the counts, or raise the cap with --max-ops if this is intended");
}

// ---------------------------------------------------------------- op lists

// A list runs its compiled statements; the first time, it compiles each one while lowering it in
// full (in file order, so that the first mistake is the one reported).
void Lowerer::run_block(Block& b, const YAML::Node& list, int32_t thread) {
    if (b.built) {
        for (Stmt& s : b.stmts) run_stmt(s, thread);
        return;
    }
    if (!list.IsSequence()) fail_at(list, "expected a list of ops, got " + a_node_type(list));
    b.stmts.reserve(list.size());  // no reallocation while a statement is being compiled
    for (const auto& n : list) {
        b.stmts.emplace_back();
        first_stmt(b.stmts.back(), n, thread);
    }
    b.built = true;
}

namespace {
bool same_value(const Value& a, const Value& b) {
    return a.dim == b.dim && a.integral == b.integral && a.i == b.i && std::bit_cast<uint64_t>(a.d) == std::bit_cast<uint64_t>(b.d);
}
}  // namespace

void Lowerer::set_value(Stmt& s, const std::vector<Rec>& recs, const Value& v) const {
    Value check;
    if (recs.empty()) {
        s.state = 0;
        s.value = v;
    } else if (recs.size() == 1 && recs[0].code && !recs[0].index && run_expr(*recs[0].code, loop_vals_.data(), check) &&
               same_value(check, v)) {
        s.state = 1;
        s.code = *recs[0].code;
    } else {
        s.state = 2;
    }
}

void Lowerer::first_stmt(Stmt& s, const YAML::Node& n, int32_t thread) {
    s.node = n;
    s.op_kind = checked_kind(n);
    if (s.op_kind == "repeat") {
        s.kind = Stmt::kRepeat;
        s.value_node = field(n, "repeat");
        int64_t count;
        {
            Recording r(*this);
            count = repeat_count(n);
            set_value(s, r.recs, Value::integer(count));
        }
        const RepeatHead h = repeat_head(n, count);
        s.var = h.var;
        s.body_node = h.body;
        s.empty = h.body.size() == 0;
        if (count == 0) check_unrun(s.body_node);  // its mistakes are errors even when it never runs
        run_loop(s.value_node, s.var, count, s.empty, [&] { run_block(s.body, s.body_node, thread); });
    } else if (s.op_kind == "if") {
        s.kind = Stmt::kIf;
        if_checks(n);
        s.value_node = field(n, "if");
        s.then_node = field(n, "then");
        s.else_node = field(n, "else");
        s.has_then = bool(s.then_node);
        s.has_else = bool(s.else_node);
        Value c;
        {
            Recording r(*this);
            c = eval(s.value_node, "condition");
            set_value(s, r.recs, c);
        }
        const bool yes = if_taken(n, c);
        // The branch not taken is checked too (in file order): its mistakes are errors as well.
        if (s.has_then) yes ? run_block(s.then_block, s.then_node, thread) : check_unrun(s.then_node);
        if (s.has_else) yes ? check_unrun(s.else_node) : run_block(s.else_block, s.else_node, thread);
    } else {
        s.kind = Stmt::kOp;
        first_op(s, thread);
    }
}

void Lowerer::run_stmt(Stmt& s, int32_t thread) {
    if (s.kind == Stmt::kOp) return run_op(s, thread);
    if (s.kind == Stmt::kRepeat) {
        const int64_t hi = static_cast<int64_t>(std::min<uint64_t>(opts_.max_ops, INT64_MAX));
        Value v = s.value;
        if (s.state != 0 &&
            !(s.state == 1 && run_expr(s.code, loop_vals_.data(), v) && v.dim == Dim::None && v.integral && v.i >= 0 && v.i <= hi))
            v = Value::integer(repeat_count(s.node));  // checks it in full (and reports what is wrong)
        ++depth_;  // the header's other checks passed when it was compiled, in this same scope
        run_loop(s.value_node, s.var, v.i, s.empty, [&] { run_block(s.body, s.body_node, thread); });
        return;
    }
    Value c = s.value;
    if (s.state != 0 && !(s.state == 1 && run_expr(s.code, loop_vals_.data(), c))) c = eval(s.value_node, "condition");
    const bool yes = if_taken(s.node, c);
    if (yes && s.has_then) run_block(s.then_block, s.then_node, thread);
    if (!yes && s.has_else) run_block(s.else_block, s.else_node, thread);
}

// ---------------------------------------------------------------- op templates

// Lowers the op map `n` in full (every field read from the YAML and checked) and appends it.
void Lowerer::full_op(const YAML::Node& n, int32_t thread, const std::string& kind, std::vector<Rec>* recs) {
    Op op;
    op.thread = static_cast<int16_t>(thread);
    Site site;
    std::string label;
    {
        struct Stop {
            const Lowerer& l;
            ~Stop() { l.recs_ = nullptr; }
        } stop{*this};
        recs_ = recs;
        fill_op(op, site, kind, n, thread, label, false);
    }
    if (op.kind == OpKind::GraphLaunch) return emit_graph_launch(op, site, n, label, thread);
    if (op.kind == OpKind::Join && join_count_ > 1) {  // `join: workers`: each thread of the array, in order
        const int32_t first = op.target;
        for (uint32_t k = 0; k < join_count_; ++k) {
            op.target = first + static_cast<int32_t>(k);
            Site s = site;
            sc_.program.threads[thread].ops.push_back(emit(op, s, n, "join:" + sc_.program.threads[op.target].name));
        }
        return;
    }
    sc_.program.threads[thread].ops.push_back(emit(op, site, n, label));
}

size_t Lowerer::KeyHash::operator()(const Key& k) const {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (uint64_t w : k) h = (h ^ w) * 0x100000001b3ULL + (h >> 29);
    return static_cast<size_t>(h);
}

namespace {
void put_key(std::array<uint64_t, 8>& key, int k, const Value& v) {
    key[2 * k] = v.integral ? static_cast<uint64_t>(v.i) : std::bit_cast<uint64_t>(v.d);
    key[2 * k + 1] = 0x10000u | (uint64_t{v.integral} << 8) | static_cast<uint64_t>(v.dim);
}
constexpr size_t kMemoEntries = 4096;  // distinct values of an op's kKey fields kept
}  // namespace

// The first time an op map is reached inside a loop: lower it in full, then keep it as a template
// with its loop-dependent values compiled and sorted by what they change in the op.
void Lowerer::first_op(Stmt& s, int32_t thread) {
    if (loop_names_.empty()) return full_op(s.node, thread, s.op_kind, nullptr);  // runs once
    auto& pg = sc_.program;
    auto t = std::make_unique<OpTemplate>();
    std::vector<Rec> recs;
    const size_t first = pg.ops.size();
    copy_limit_ = UINT64_MAX;
    full_op(s.node, thread, s.op_kind, &recs);
    const Op& op = pg.ops[first];
    t->op = op;
    t->slow = op.kind == OpKind::Join;  // one map, one op per thread joined: lowered in full
    if (op.kind == OpKind::GraphLaunch) t->nodes.assign(pg.ops.begin() + static_cast<std::ptrdiff_t>(first) + 1, pg.ops.end());
    if (op.kind == OpKind::Memcpy || op.kind == OpKind::Memset) t->bytes_limit = copy_limit_;
    else if (op.kind == OpKind::Prefetch) t->bytes_limit = pg.buffers[op.buffer].bytes;
    const auto& fields = fields_of(s.node).fields;
    Key key{};
    for (const Rec& r : recs) {
        Value check;
        if (!r.code || !run_expr(*r.code, loop_vals_.data(), check) || !same_value(check, r.value)) {
            t->slow = true;
            break;
        }
        const std::string* name = nullptr;
        int matches = 0;
        for (const auto& [k, v] : fields)
            if (v.is(r.node)) name = &k, ++matches;
        Dyn d;
        d.code = *r.code;
        d.decl = r.decl;
        const OpKind ok = op.kind;
        if (matches == 1 && *name == "stream" && r.index) d.role = Dyn::kStream;
        else if (matches == 1 && *name == "duration" && !r.index && (ok == OpKind::HostWork || ok == OpKind::HostFunc || ok == OpKind::Kernel))
            d.role = Dyn::kDuration;
        else if (matches == 1 && *name == "bytes" && !r.index &&
                 (ok == OpKind::Memcpy || ok == OpKind::Memset || ok == OpKind::Prefetch || ok == OpKind::Kernel || is_alloc(ok)))
            d.role = Dyn::kBytes;
        else if (matches == 1 && (*name == "src" || *name == "dst") && r.index && (ok == OpKind::Memcpy || ok == OpKind::Memset))
            d.role = ok == OpKind::Memcpy && ((*name == "src" && op.dir == CopyDir::H2D) || (*name == "dst" && op.dir == CopyDir::D2H))
                         ? Dyn::kBuffer
                         : Dyn::kCheck;
        if (d.role == Dyn::kKey) {
            if (t->keys == kMaxKeys) {
                t->slow = true;
                break;
            }
            put_key(key, t->keys++, r.value);
        }
        t->dyns.push_back(std::move(d));
    }
    if (!t->slow && t->keys) t->memo.emplace(key, op);
    s.tpl = std::move(t);
}

void Lowerer::run_op(Stmt& s, int32_t thread) {
    OpTemplate* t = s.tpl.get();
    if (!t || t->slow) return full_op(s.node, thread, s.op_kind, nullptr);
    const int64_t* vars = loop_vals_.data();
    Value v;
    Op op;
    if (t->keys) {
        Key key{};
        int k = 0;
        for (const Dyn& d : t->dyns)
            if (d.role == Dyn::kKey) {
                if (!run_expr(d.code, vars, v)) return full_op(s.node, thread, s.op_kind, nullptr);
                put_key(key, k++, v);
            }
        auto it = t->memo.find(key);
        if (it == t->memo.end()) return memo_miss(s, thread, key);
        op = it->second;
    } else {
        op = t->op;
    }
    // Each value passes the checks the full lowering makes of it, or the op is lowered in full.
    for (const Dyn& d : t->dyns) {
        if (d.role == Dyn::kKey) continue;
        if (!run_expr(d.code, vars, v) || !v.integral) return full_op(s.node, thread, s.op_kind, nullptr);
        switch (d.role) {
            case Dyn::kStream:
            case Dyn::kBuffer:
            case Dyn::kCheck:
                if (v.dim != Dim::None || v.i < 0 || v.i >= static_cast<int64_t>(d.decl.count))
                    return full_op(s.node, thread, s.op_kind, nullptr);
                if (d.role == Dyn::kStream) op.stream = static_cast<int32_t>(d.decl.first + v.i);
                else if (d.role == Dyn::kBuffer) op.buffer = static_cast<int32_t>(d.decl.first + v.i);
                break;
            case Dyn::kDuration:
                if (v.dim != Dim::Time || v.i < 0) return full_op(s.node, thread, s.op_kind, nullptr);
                op.duration = Time::ps(v.i);
                break;
            case Dyn::kBytes:
                if (v.dim != Dim::Bytes || v.i < 0 || static_cast<uint64_t>(v.i) > t->bytes_limit)
                    return full_op(s.node, thread, s.op_kind, nullptr);
                op.bytes = static_cast<uint64_t>(v.i);
                break;
            case Dyn::kKey: break;
        }
    }
    auto& list = sc_.program.threads[thread].ops;
    list.push_back(emit_interned(op, s.node));
    for (Op node : t->nodes) {
        node.stream = op.stream;
        list.push_back(emit_interned(node, s.node));
    }
}

// Values of the kKey fields not seen before: lower the op in full, and keep it for these values.
void Lowerer::memo_miss(Stmt& s, int32_t thread, const Key& key) {
    std::vector<Rec> recs;
    const size_t first = sc_.program.ops.size();
    full_op(s.node, thread, s.op_kind, &recs);
    OpTemplate& t = *s.tpl;
    Key found{};
    int k = 0;
    bool same = recs.size() == t.dyns.size();
    for (size_t r = 0; same && r < recs.size(); ++r)
        if (t.dyns[r].role == Dyn::kKey) put_key(found, k++, recs[r].value);
    if (!same || found != key) {
        t.slow = true;  // not the values the template was built from: lower it in full from now on
        return;
    }
    if (t.memo.size() < kMemoEntries) t.memo.emplace(key, sc_.program.ops[first]);
}

// emit() for an op whose site (label, source position, loop depth) is already interned. The
// ops of one loop iteration share one slice of loop indices.
uint32_t Lowerer::emit_interned(Op op, const YAML::Node& where) {
    auto& pg = sc_.program;
    if (const size_t n = pg.ops.size(); n >= opts_.max_ops || (n & 1023) == 0 || (n & (n - 1)) == 0) check_caps(where);
    if (!loop_vals_.empty()) {
        if (iter_dirty_) {
            iter_slice_ = static_cast<uint32_t>(pg.iter_indices.size());
            for (int64_t v : loop_vals_) pg.iter_indices.push_back(static_cast<uint32_t>(v));
            iter_dirty_ = false;
        }
        op.iter_begin = iter_slice_;
    }
    pg.ops.push_back(op);
    return static_cast<uint32_t>(pg.ops.size() - 1);
}

// The caps on ops (--max-ops) and on memory (--max-memory), before one more op is emitted.
void Lowerer::check_caps(const YAML::Node& where) const {
    const size_t n = sc_.program.ops.size();
    if (n >= opts_.max_ops) fail_op_cap(where);
    if (((n & (n - 1)) == 0 || n % 1024 == 0) && opts_.max_memory &&  // cheap: every 1024 ops
        estimated_run_bytes(sc_.program, opts_.run_bytes_per_op) > opts_.max_memory)
        check_memory_cap(sc_.program, opts_.max_memory, opts_.run_bytes_per_op, loc(where));
}

uint32_t Lowerer::emit(Op op, Site& site, const YAML::Node& where, const std::string& label) {
    site.label = intern_name(label);
    site.loc = intern_loc(where);
    site.depth = static_cast<uint8_t>(loop_names_.size());
    op.site = intern_site(site);
    return emit_interned(op, where);
}

}  // namespace hetsim
