// Lowering of op lists (threads form) and task graphs (tasks form) into Program ops.
#include <algorithm>
#include <bit>
#include <cctype>

#include "frontend/lowerer.hpp"
#include "models/kernel_model.hpp"
#include "sim/graph.hpp"

namespace hetsim {

namespace {

// The names an op map may start with: the op table's spellings, then the two blocks.
const std::vector<std::string>& op_kinds() {
    static const std::vector<std::string> k = [] {
        std::vector<std::string> v;
        for (const OpSpelling& s : op_spellings()) v.push_back(s.yaml);
        v.push_back("repeat");
        v.push_back("if");
        return v;
    }();
    return k;
}

bool is_alloc(OpKind k) { return k >= OpKind::Malloc && k <= OpKind::FreeAsync; }

uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t sat_mul(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

std::vector<std::string> keys_for(const std::string& kind, bool task) {
    std::vector<std::string> k{kind, "name"};
    if (kind == "repeat") return {"repeat", "var", "do"};
    if (kind == "if") return {"if", "then", "else"};
    const OpSpelling* sp = find_spelling(kind);
    std::string_view keys = sp->keys;
    for (size_t pos = 0; pos < keys.size();) {
        size_t end = keys.find(' ', pos);
        if (end == std::string_view::npos) end = keys.size();
        if (end > pos) k.emplace_back(keys.substr(pos, end - pos));
        pos = end + 1;
    }
    if (task) {
        k.push_back("after");
        if (sp->kind == OpKind::HostWork) k.push_back("thread");
        else if (std::find(k.begin(), k.end(), "stream") == k.end()) k.push_back("stream");
    }
    return k;
}

}  // namespace

void Lowerer::lower_thread(const std::string& name, const YAML::Node& list) {
    int32_t thread = threads_.at(name);
    if (!list.IsSequence()) fail_at(list, "thread '" + name + "' must be a list of ops, got " + a_node_type(list));
    Block top;
    run_block(top, list, thread);
}

static std::string find_kind(const Lowerer& L, const YAML::Node& n) {
    if (!n.IsMap()) L.fail_at(n, "an op must be a mapping such as {kernel: name, stream: s}, got " + a_node_type(n));
    if (n.size() == 0) L.fail_at(n, "empty op; write an op such as {host: name, duration: 2ms}");
    std::string kind;
    for (auto it = n.begin(); it != n.end(); ++it) {
        if (!it->first.IsScalar()) L.fail_at(it->first, "op keys must be plain names, got " + a_node_type(it->first));
        std::string k = it->first.Scalar();
        // The same kind twice is a duplicate key, which check_keys reports.
        if (std::find(op_kinds().begin(), op_kinds().end(), k) != op_kinds().end() && k != kind) {
            if (!kind.empty()) L.fail_at(it->first, "op has two kinds, '" + kind + "' and '" + k + "'; split it into two ops");
            kind = k;
        }
    }
    if (kind.empty()) {
        std::string first = n.begin()->first.Scalar();
        std::string near = did_you_mean(first, op_kinds());
        std::string msg = "unknown op '" + first + "'";
        if (!near.empty()) msg += "; did you mean '" + near + "'?";
        else {
            msg += " (expected one of:";
            for (const auto& k : op_kinds()) msg += " " + k;
            msg += ")";
        }
        L.fail_at(n.begin()->first, msg);
    }
    return kind;
}

// The op's kind, with its keys checked; once per map (loop bodies are reached once per iteration).
std::string Lowerer::checked_kind(const YAML::Node& n) {
    MapFields* mf = n.IsMap() && n.Mark().pos >= 0 ? &fields_of(n) : nullptr;
    if (mf && mf->checked) return mf->kind;
    std::string k = find_kind(*this, n);
    check_keys(n, file_, keys_for(k, false), k + " op");
    if (mf) {
        mf->kind = k;
        mf->checked = true;
    }
    return k;
}

// ---------------------------------------------------------------- repeat and if

int64_t Lowerer::repeat_count(const YAML::Node& n) {
    return need_int(field(n, "repeat"), "repeat count", 0, static_cast<int64_t>(std::min<uint64_t>(opts_.max_ops, INT64_MAX)),
                    "; " + std::to_string(opts_.max_ops) +
                        " is the cap on ops (--max-ops): lower the count, or raise the cap with --max-ops if this is intended");
}

Lowerer::RepeatHead Lowerer::repeat_head(const YAML::Node& n, int64_t count) {
    std::string var = field(n, "var") ? need_name(field(n, "var"), "loop variable") : "i";
    if (!(std::isalpha(static_cast<unsigned char>(var[0])) || var[0] == '_') ||
        !std::all_of(var.begin(), var.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
        fail_at(field(n, "var"), "loop variable must be a plain name such as i or chunk, got '" + var + "'");
    for (const auto& lv : loop_names_)
        if (lv == var) fail_at(field(n, "var") ? field(n, "var") : n, "loop variable '" + var + "' is already used by an enclosing repeat; name this one with 'var'");
    if (params_.count(var)) fail_at(field(n, "var") ? field(n, "var") : n, "loop variable '" + var + "' shadows a param of the same name");
    if (!field(n, "do")) fail_at(n, "repeat needs a 'do' list of ops");
    if (!field(n, "do").IsSequence()) fail_at(field(n, "do"), "repeat's 'do' must be a list of ops, got " + a_node_type(field(n, "do")));
    if (++depth_ > 16) fail_at(n, "repeat blocks nest deeper than 16");
    return RepeatHead{count, var, field(n, "do")};
}

// The iterations of a repeat whose header passed (depth_ entered); `body` lowers one iteration.
template <class Body>
void Lowerer::run_loop(const YAML::Node& count_node, const std::string& var, int64_t count, bool empty, Body&& body) {
    loop_names_.push_back(var);
    loop_vals_.push_back(0);
    // Loops over empty or filtered bodies emit nothing; cap their iterations too (at twice
    // --max-ops, so that ordinary loop nests meet the op cap first), so no input expands unbounded.
    const uint64_t cap = iteration_cap();
    const uint64_t step = empty && count > 0 ? static_cast<uint64_t>(count) : 1;  // an empty body: all at once
    for (int64_t i = 0; i < count; i += static_cast<int64_t>(step)) {
        iterations_ = iterations_ > UINT64_MAX - step ? UINT64_MAX : iterations_ + step;
        if (iterations_ > cap) fail_iteration_cap(count_node);
        loop_vals_.back() = i;
        iter_dirty_ = true;
        body();
    }
    loop_names_.pop_back();
    loop_vals_.pop_back();
    iter_dirty_ = true;
    --depth_;
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

// ---------------------------------------------------------------- graph bodies

void Lowerer::lower_list(const YAML::Node& list, int32_t thread) {
    if (!list.IsSequence()) fail_at(list, "expected a list of ops, got " + a_node_type(list));
    for (const auto& op : list) lower_op(op, thread);
}

void Lowerer::lower_op(const YAML::Node& n, int32_t thread) { lower_checked_op(n, thread, checked_kind(n)); }

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
    for (int64_t v : loop_vals_) label += "[" + std::to_string(v) + "]";  // loops inside the graph
    op.stream = kNone;
    site.label = intern_name(label);
    site.loc = intern_loc(n);
    op.site = intern_site(site);
    Graph& g = sc_.program.graphs[capturing_];
    if (g.nodes.size() >= opts_.max_ops)
        fail_at(n, "graph '" + g.name + "' has more than " + std::to_string(opts_.max_ops) + " nodes; raise the cap with --max-ops");
    g.nodes.push_back(op);
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
        if (yes && s.has_then) run_block(s.then_block, s.then_node, thread);
        if (!yes && s.has_else) run_block(s.else_block, s.else_node, thread);
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
        if (graphs_.count(name)) fail_at(it->first, "duplicate graph '" + name + "'; each graph name may be declared once");
        if (!it->second.IsSequence() || it->second.size() == 0)
            fail_at(it->second, "graph '" + name + "' must be a non-empty list of ops such as [{kernel: k, duration: 5us}]");
        graphs_[name] = NamedDecl{static_cast<uint32_t>(sc_.program.graphs.size()), 1};
        sc_.program.graphs.emplace_back().name = name;
        capturing_ = static_cast<int32_t>(sc_.program.graphs.size() - 1);
        lower_list(it->second, kNone);
        capturing_ = -1;
        if (sc_.program.graphs.back().nodes.empty())
            fail_at(it->second, "graph '" + name + "' has no nodes (its loops or conditions emit no op)");
    }
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

void Lowerer::fill_op(Op& op, Site& site, const std::string& kind, const YAML::Node& n, int32_t thread, std::string& label,
                      bool task) {
    const YAML::Node head = field(n, kind);
    auto default_stream = [&]() -> int32_t {
        return default_per_thread_ && thread >= 0 ? per_thread_stream(thread) : 0;
    };
    auto stream_or_default = [&]() { return field(n, "stream") ? stream_ref(field(n, "stream"), thread) : default_stream(); };
    auto label_from_head = [&]() {
        if (head && (head.IsMap() || head.IsSequence()))
            fail_at(head, "the value of '" + kind + "' is the op's label, a name such as 'load'; got " + a_node_type(head));
        if (head && head.IsScalar() && !head.Scalar().empty()) label = substitute(head, head.Scalar());
        else label = kind;
    };
    if (kind == "host") {
        op.kind = OpKind::HostWork;
        label_from_head();
        if (!field(n, "duration")) fail_at(n, "host op '" + label + "' needs a 'duration' such as 2ms");
        op.duration = need_time(field(n, "duration"), "duration");
    } else if (kind == "kernel") {
        op.kind = OpKind::Kernel;
        label_from_head();
        op.stream = stream_or_default();
        fill_kernel(op, site, n);
    } else if (kind == "memcpy" || kind == "memcpy_async" || kind == "memset" || kind == "memset_async") {
        bool memset = kind.rfind("memset", 0) == 0;
        op.kind = memset ? OpKind::Memset : OpKind::Memcpy;
        op.sync = !task && kind.find("_async") == std::string::npos;
        label_from_head();
        op.stream = op.sync ? default_stream() : stream_or_default();
        fill_copy(op, n, memset);
    } else if (kind == "event_record" || kind == "stream_wait_event") {
        op.kind = kind == "event_record" ? OpKind::EventRecord : OpKind::StreamWaitEvent;
        op.event = event_ref(head);
        op.stream = stream_or_default();
        label = kind + ":" + sc_.program.events[op.event].name;
    } else if (kind == "event_sync") {
        op.kind = OpKind::EventSync;
        op.event = event_ref(head);
        label = "event_sync:" + sc_.program.events[op.event].name;
    } else if (kind == "stream_sync") {
        op.kind = OpKind::StreamSync;
        op.stream = stream_ref(head, thread);
        label = "stream_sync:" + sc_.program.streams[op.stream].name;
    } else if (kind == "device_sync") {
        op.kind = OpKind::DeviceSync;
        label = "device_sync";
    } else if (kind == "host_func") {
        op.kind = OpKind::HostFunc;
        label_from_head();
        op.stream = stream_or_default();
        if (!field(n, "duration")) fail_at(n, "host_func '" + label + "' needs a 'duration' (the callback's run time) such as 10us");
        op.duration = need_time(field(n, "duration"), "duration");
    } else if (kind == "graph_instantiate" || kind == "graph_launch") {
        op.kind = kind == "graph_instantiate" ? OpKind::GraphInstantiate : OpKind::GraphLaunch;
        op.graph = graph_ref(head);
        if (op.kind == OpKind::GraphLaunch) op.stream = stream_or_default();
        label = kind + ":" + sc_.program.graphs[op.graph].name;
    } else if (const OpSpelling* alloc = find_spelling(kind); alloc && is_alloc(alloc->kind)) {
        op.kind = alloc->kind;
        op.buffer = buffer_ref(head);
        const Buffer& b = sc_.program.buffers[op.buffer];
        bool host_side = kind == "malloc_host" || kind == "free_host" || kind == "host_register";
        if (host_side && b.kind != MemKind::Pinned)
            fail_at(head, kind + " makes pinned host memory; declare '" + b.name + "' with kind: pinned (it is " + to_string(b.kind) + ")");
        if (!host_side && b.kind != MemKind::Device)
            fail_at(head, kind + " allocates device memory; declare '" + b.name + "' with kind: device (it is " + to_string(b.kind) + ")");
        op.bytes = field(n, "bytes") ? need_bytes(field(n, "bytes"), "bytes") : b.bytes;
        if (op.kind == OpKind::MallocAsync || op.kind == OpKind::FreeAsync) op.stream = stream_or_default();
        label = kind + ":" + b.name;
    } else if (kind == "prefetch") {
        op.kind = OpKind::Prefetch;
        op.buffer = buffer_ref(head);
        const Buffer& b = sc_.program.buffers[op.buffer];
        if (b.kind != MemKind::Managed) fail_at(head, "prefetch needs a managed buffer; '" + b.name + "' is " + to_string(b.kind));
        op.stream = stream_or_default();
        op.bytes = field(n, "bytes") ? need_bytes(field(n, "bytes"), "bytes") : b.bytes;
        if (op.bytes > b.bytes)
            fail_at(field(n, "bytes"), "prefetch of " + std::to_string(op.bytes) + " bytes overruns buffer '" + b.name + "' of " +
                                    std::to_string(b.bytes) + " bytes; 'bytes' may be at most the buffer's size");
        std::string to = field(n, "to") ? need_name(field(n, "to"), "to") : "device";
        if (to != "device" && to != "host") fail_at(field(n, "to"), "prefetch 'to' must be 'device' or 'host', got '" + to + "'");
        op.to_device = to == "device";
        label = "prefetch:" + b.name;
    }
    if (YAML::Node nm = field(n, "name")) label = need_name(nm, "name");
    if (YAML::Node u = field(n, "uses")) {
        if (!u.IsSequence()) fail_at(u, "'uses' must be a list of managed buffers");
        site.uses_begin = static_cast<uint32_t>(sc_.program.uses.size());
        for (const auto& b : u) {
            int32_t id = buffer_ref(b);
            if (sc_.program.buffers[id].kind != MemKind::Managed)
                fail_at(b, "'uses' lists managed buffers whose residency matters; '" + sc_.program.buffers[id].name + "' is " +
                               to_string(sc_.program.buffers[id].kind));
            sc_.program.uses.push_back(static_cast<uint32_t>(id));
        }
        if (sc_.program.uses.size() - site.uses_begin > UINT16_MAX) fail_at(u, "'uses' lists more than 65535 buffers");
        site.uses_count = static_cast<uint16_t>(sc_.program.uses.size() - site.uses_begin);
        // Equal lists share one slice (an op lowered in full in many iterations lists the same buffers).
        auto& uses = sc_.program.uses;
        auto [it, fresh] = uses_ids_.try_emplace(std::vector<uint32_t>(uses.begin() + site.uses_begin, uses.end()), site.uses_begin);
        if (!fresh) {
            uses.resize(site.uses_begin);
            site.uses_begin = it->second;
        }
    }
}

void Lowerer::fill_copy(Op& op, const YAML::Node& n, bool memset) {
    const auto& bufs = sc_.program.buffers;
    auto host_side = [](MemKind k) { return k == MemKind::Pinned || k == MemKind::Pageable; };
    uint64_t limit = UINT64_MAX;
    const Buffer* limit_buf = nullptr;
    if (memset) {
        op.dir = CopyDir::D2D;
        op.host_mem = MemKind::Device;
        if (field(n, "dst")) {
            int32_t d = buffer_ref(field(n, "dst"));
            if (host_side(bufs[d].kind)) fail_at(field(n, "dst"), "memset writes device or managed memory; '" + bufs[d].name + "' is " + to_string(bufs[d].kind));
            limit = bufs[d].bytes;
            limit_buf = &bufs[d];
        }
    } else if (field(n, "src") || field(n, "dst")) {
        if (!field(n, "src") || !field(n, "dst")) fail_at(n, "a copy needs both 'src' and 'dst' buffers (or 'direction' and 'bytes')");
        if (field(n, "direction") || field(n, "memory")) fail_at(field(n, "direction") ? field(n, "direction") : field(n, "memory"), "with 'src' and 'dst' the direction and memory kind come from the buffers; drop 'direction'/'memory'");
        int32_t s = buffer_ref(field(n, "src")), d = buffer_ref(field(n, "dst"));
        const Buffer &sb = bufs[s], &db = bufs[d];
        bool sh = host_side(sb.kind), dh = host_side(db.kind);
        if (sh && dh) fail_at(n, "host-to-host copies ('" + sb.name + "' -> '" + db.name + "') are not CUDA copies; model them as host work");
        if (sb.kind == MemKind::Managed && db.kind == MemKind::Managed)
            fail_at(n, "copies between two managed buffers are not modelled; copy to or from a device buffer instead");
        if (sh || (sb.kind == MemKind::Managed && db.kind == MemKind::Device)) {
            op.dir = CopyDir::H2D;
            op.host_mem = sb.kind;
            op.buffer = s;
        } else if (dh || (db.kind == MemKind::Managed && sb.kind == MemKind::Device)) {
            op.dir = CopyDir::D2H;
            op.host_mem = db.kind;
            op.buffer = d;
        } else {
            op.dir = CopyDir::D2D;
            op.host_mem = MemKind::Device;
        }
        limit = std::min(sb.bytes, db.bytes);
        limit_buf = sb.bytes < db.bytes ? &sb : &db;
    } else {
        if (!field(n, "direction")) fail_at(n, "a copy needs 'src' and 'dst' buffers, or 'direction' (h2d, d2h, d2d) and 'bytes'");
        std::string dir = need_name(field(n, "direction"), "direction");
        if (dir == "h2d") op.dir = CopyDir::H2D;
        else if (dir == "d2h") op.dir = CopyDir::D2H;
        else if (dir == "d2d") op.dir = CopyDir::D2D;
        else fail_at(field(n, "direction"), "direction must be h2d, d2h or d2d, got '" + dir + "'");
        std::string mem = field(n, "memory") ? need_name(field(n, "memory"), "memory") : "pinned";
        if (mem == "pinned") op.host_mem = MemKind::Pinned;
        else if (mem == "pageable") op.host_mem = MemKind::Pageable;
        else if (mem == "managed") op.host_mem = MemKind::Managed;
        else fail_at(field(n, "memory"), "memory must be pinned, pageable or managed, got '" + mem + "'");
        if (op.dir == CopyDir::D2D) op.host_mem = MemKind::Device;
    }
    if (field(n, "bytes")) op.bytes = need_bytes(field(n, "bytes"), "bytes");
    else if (limit != UINT64_MAX) op.bytes = limit;
    else fail_at(n, std::string(memset ? "memset" : "copy") + " needs 'bytes' (a size such as 64MiB)");
    if (limit_buf && op.bytes > limit)
        fail_at(field(n, "bytes"), std::string(memset ? "memset" : "copy") + " of " + std::to_string(op.bytes) + " bytes overruns buffer '" +
                                limit_buf->name + "' of " + std::to_string(limit_buf->bytes) + " bytes; 'bytes' may be at most " +
                                std::to_string(limit) + " here");
    copy_limit_ = limit_buf ? limit : UINT64_MAX;  // an op template checks its loop-dependent bytes against it
}

void Lowerer::fill_kernel(Op& op, Site& site, const YAML::Node& n) {
    const HwProfile& p = sc_.profile;
    bool has_dur = bool(field(n, "duration")), has_roof = field(n, "flops") || field(n, "bytes");
    if (has_dur && has_roof) fail_at(field(n, "duration"), "a kernel takes either 'duration' or 'flops'/'bytes' (roofline), not both");
    if (!has_dur && !has_roof) fail_at(n, "kernel needs a 'duration', or 'flops' and/or 'bytes' for a roofline estimate");
    if (has_dur) op.duration = need_time(field(n, "duration"), "duration");
    if (field(n, "flops")) site.flops = need_real(field(n, "flops"), "flops");
    if (field(n, "bytes")) op.bytes = need_bytes(field(n, "bytes"), "bytes");
    site.shape.grid = field(n, "grid") ? static_cast<uint32_t>(need_int(field(n, "grid"), "grid", 1, INT32_MAX)) : static_cast<uint32_t>(p.sm_count);
    site.shape.block = field(n, "block") ? static_cast<uint32_t>(need_int(field(n, "block"), "block", 1, 1024)) : 256;
    site.shape.regs_per_thread = field(n, "registers") ? static_cast<uint32_t>(need_int(field(n, "registers"), "registers", 1, 255)) : 32;
    site.shape.smem_per_block = field(n, "shared_memory") ? static_cast<uint32_t>(std::min<uint64_t>(need_bytes(field(n, "shared_memory"), "shared_memory"), UINT32_MAX)) : 0;
    check_kernel_fits(site.shape, n);
}

void Lowerer::check_kernel_fits(const KernelShape& k, const YAML::Node& n) const {
    std::string why;
    if (blocks_per_sm(sc_.profile, k, &why) != 0) return;
    // Point at the value to change and say how far.
    const HwProfile& p = sc_.profile;
    auto at = [&](const char* key) { return n[key] ? n[key] : n; };
    if (k.block > p.sm_threads)
        fail_at(at("block"), "kernel cannot fit on an SM: " + why + "; use a block of at most " + std::to_string(p.sm_threads) + " threads");
    if (static_cast<uint64_t>(k.block) * k.regs_per_thread > p.sm_registers)
        fail_at(at(field(n, "registers") ? "registers" : "block"),
                "kernel cannot fit on an SM: " + why + "; with " + std::to_string(k.block) + " threads a block may use at most " +
                    std::to_string(p.sm_registers / k.block) + " registers per thread (lower 'registers' or 'block')");
    if (k.smem_per_block > p.sm_shared_memory)
        fail_at(at("shared_memory"), "kernel cannot fit on an SM: " + why + "; 'shared_memory' may be at most " +
                                         std::to_string(p.sm_shared_memory) + " bytes (" + format_bytes(p.sm_shared_memory) + ") per block");
    fail_at(n, "kernel cannot fit on an SM: " + why);
}

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
void Lowerer::count_before_expanding(const YAML::Node& threads) {
    Bounds bounds;
    std::vector<std::string> scope;
    std::vector<std::vector<CountStmt>> lists;
    for (auto it = threads.begin(); it != threads.end(); ++it) lists.push_back(count_list(it->second, scope, bounds));
    Tally t;
    t.iterations = iterations_;
    std::vector<uint64_t> per_thread;
    Over over;
    bool fits = true;
    int64_t vars[17] = {};
    try {
        for (const auto& list : lists) {
            const uint64_t before = t.ops;
            if (!count_block(list, 0, t, vars, over)) {
                fits = false;
                break;
            }
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
