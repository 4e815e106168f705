// Internal: the state of one scenario's lowering, shared by scenario.cpp (declarations, values)
// and ops.cpp (op lists, loops, tasks, the count before expanding).
//
// Loops are expanded from compiled statements (Stmt): each op map is lowered in full the first
// time it is reached, which runs every check in file order and records the values that depend on
// loop variables; later iterations evaluate those values from compiled expressions and append
// the op without reading the YAML again. Before any op list is expanded, a counting pass over the
// loop structure (CountStmt) gives the exact number of ops, so that a scenario over --max-ops is
// refused before anything is allocated and the program's vectors are reserved at their size.
#pragma once
#include <yaml-cpp/yaml.h>

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/expr.hpp"
#include "frontend/scenario.hpp"
#include "frontend/yaml_util.hpp"

namespace hetsim {

// A declared buffer, stream or event: one, or an array referenced as name[index].
struct NamedDecl {
    uint32_t first = 0;  // index into Program::buffers / streams / events
    uint32_t count = 1;  // >1: an array
};

class Lowerer {
public:
    // `source` is the file's text, used to point errors inside expressions at their column.
    Lowerer(std::string file, const LoadOptions& opts, std::string source = "")
        : file_(std::move(file)), opts_(opts), source_(std::move(source)) {}
    Scenario run(const YAML::Node& root);

    // --- values ---
    std::string substitute(const YAML::Node& n, const std::string& text) const;
    std::string substitute_at(const SourceLoc& at, const std::string& text) const;
    Value eval(const YAML::Node& n, const char* what) const;
    Value eval_text(const YAML::Node& n, const std::string& text) const;
    // Evaluates `raw` found at `at`; `text_col` is the column where `raw` starts in the file (0: unknown).
    Value eval_at(const SourceLoc& at, int text_col, const std::string& raw) const;
    std::string shown(const YAML::Node& n) const;  // 'raw' (= 'substituted') for messages
    Time need_time(const YAML::Node& n, const char* what) const;
    uint64_t need_bytes(const YAML::Node& n, const char* what) const;
    // `hint` follows the message when the value is out of [lo, hi].
    // `hint` ends the message of a value out of range; `below_hint`, when given, that of a value
    // below `lo` (a cap's hint says nothing to a negative count).
    int64_t need_int(const YAML::Node& n, const char* what, int64_t lo, int64_t hi, const std::string& hint = "",
                     const std::optional<std::string>& below_hint = std::nullopt) const;
    double need_real(const YAML::Node& n, const char* what) const;
    bool need_bool(const YAML::Node& n, const char* what) const;
    std::string need_name(const YAML::Node& n, const char* what) const;
    // A map's value for `key` (an undefined Node when absent). yaml-cpp's operator[] builds a
    // stringstream per lookup; ops inside loops are looked up once per iteration, so each
    // map's fields are read once and kept here.
    YAML::Node field(const YAML::Node& map, const char* key) const;
    YAML::Node field(const YAML::Node& map, const std::string& key) const { return field(map, key.c_str()); }
    [[noreturn]] void fail_at(const YAML::Node& n, const std::string& what) const { throw InputError(loc(n), what); }
    // A bad value: reported at its `--set name=value` argument when the value uses a param set
    // there (`${name}`, `name`, or `chunk * chunks`), naming where the file uses it; else as fail_at.
    [[noreturn]] void fail_value(const YAML::Node& n, const std::string& what) const;
    // The `--set` argument of a param that `raw` uses (`${name}`, or a name in an expression,
    // directly or through other params), or "".
    // `bare` false: only `${name}` (for names such as enum values, which are not expressions).
    std::string set_arg_of(const std::string& raw, bool bare = true) const;
    std::string set_arg_in(const std::string& text, std::vector<std::string>& seen, bool bare) const;
    // A bad enum value (`kind: ${mem}`): at the --set argument when a ${param} set there gave
    // it; a bare param name is told to write ${name}; else as fail_at.
    [[noreturn]] void fail_enum(const YAML::Node& n, const std::string& what) const;
    SourceLoc loc(const YAML::Node& n) const;  // loc_of, but an empty value is placed after its key

    // --- references ---
    int32_t stream_ref(const YAML::Node& n, int32_t thread) const;
    int32_t event_ref(const YAML::Node& n) const;
    int32_t buffer_ref(const YAML::Node& n) const;
    int32_t graph_ref(const YAML::Node& n) const;
    int32_t queue_ref(const YAML::Node& n) const;
    int32_t flag_ref(const YAML::Node& n) const;
    // A name with index expressions (`load[i - 1]`, `a[0][j]`): each bracket evaluated in the
    // current loop scope, giving "load[2]". Used for graph node ids and `after` entries.
    std::string indexed_name(const YAML::Node& n, const char* what) const;
    int32_t resolve(const YAML::Node& n, const std::string& text, const std::unordered_map<std::string, NamedDecl>& decls,
                    const char* what) const;

    // --- ops (ops.cpp) ---
    void lower_thread(const std::string& name, const YAML::Node& list);
    void lower_tasks(const YAML::Node& tasks);

private:
    void parse_hardware(const YAML::Node& n);
    void parse_params(const YAML::Node& n);
    void parse_buffers(const YAML::Node& n);
    void parse_streams(const YAML::Node& n);
    void parse_events(const YAML::Node& n);
    void parse_options(const YAML::Node& n);
    void parse_graphs(const YAML::Node& n);
    void emit_graph_launch(Op launch, Site& site, const YAML::Node& n, const std::string& label, int32_t thread);
    // Host hand-offs and steady state (issue 11; scenario.cpp, threads.cpp).
    void parse_queues(const YAML::Node& n);
    void parse_flags(const YAML::Node& n);
    void parse_measure(const YAML::Node& n);
    void declare_threads(const YAML::Node& threads);
    void lower_threads();
    void resolve_start_after();
    void graph_dag(const YAML::Node& body);  // the graph just declared: its ids and `after` lists
    // A `threads:` entry: one thread, or an array of `count` (map form).
    struct ThreadSpec {
        YAML::Node key;           // the thread's name in the file
        std::string name;
        uint32_t first = 0, count = 1;  // its threads in Program::threads
        std::string var;          // `var`: the index, a param while its threads are lowered
        YAML::Node var_node{YAML::NodeType::Undefined}, start_after{YAML::NodeType::Undefined}, ops{YAML::NodeType::Undefined};
    };
    std::vector<ThreadSpec> specs_;
    // (YAML::Node members are rebound with reset(): operator= would write through to the node.)
    // Sets (or, with k < 0, removes) the thread index param of `spec` and forgets the values
    // computed with the previous one.
    void set_thread_var(const ThreadSpec& spec, int64_t k);
    YAML::Node measure_node_{YAML::NodeType::Undefined};  // `measure:` (warm-up iterations: Program::warmup)
    uint32_t join_count_ = 1;  // the threads the join op just filled joins (an array: each)
    // The graph being declared: per node, its id and the `after` entries (names resolved).
    // A node's YAML `id` and `after` (for messages) are kept in dep_nodes_ by index, only when
    // the node has them: a YAML::Node, even an undefined one, allocates a memory holder, and a
    // graph of 10^5 nodes without ids paid two of them a node.
    struct NodeDeps {
        std::string id;
        int32_t id_node = -1, after_node = -1;  // in dep_nodes_, -1: none
        bool has_after = false;
        std::vector<std::pair<std::string, YAML::Node>> after;
    };
    std::vector<NodeDeps> node_deps_;
    std::vector<YAML::Node> dep_nodes_;

    // The body of a graph being declared (parse_graphs): lowered in full, op by op.
    void lower_list(const YAML::Node& list, int32_t thread);
    void lower_op(const YAML::Node& op, int32_t thread);
    void lower_checked_op(const YAML::Node& op, int32_t thread, const std::string& kind);
    // Interns the site of `op` (its label, `where`, the loop depth) and appends the op.
    uint32_t emit(Op op, Site& site, const YAML::Node& where, const std::string& label);
    void fill_op(Op& op, Site& site, const std::string& kind, const YAML::Node& n, int32_t thread, std::string& label,
                 bool task);
    void fill_copy(Op& op, const YAML::Node& n, bool memset, Site* pitched = nullptr);
    void fill_pitch(Op& op, Site& site, const YAML::Node& n);
    const Buffer* pitched_bufs_[2] = {nullptr, nullptr};  // a pitched copy's src and dst buffers, for fill_pitch
    void fill_kernel(Op& op, Site& site, const YAML::Node& n);
    void check_kernel_fits(const KernelShape& k, const YAML::Node& n) const;
    uint32_t intern_name(const std::string& s);
    uint32_t intern_loc(const YAML::Node& n);
    uint32_t intern_site(const Site& s);
    int32_t per_thread_stream(int32_t thread);

    struct Param {
        std::string text;
        YAML::Node node;
        std::string set_arg;  // "--set name=value" when the command line overrides it
    };
    SourceLoc param_loc(const Param& p) const { return p.set_arg.empty() ? loc_of(p.node, file_) : SourceLoc{p.set_arg}; }
    std::string param_text(const SourceLoc& at, const std::string& name, const Param& p) const;
    Value param_value(const SourceLoc& at, const std::string& name, const Param& p) const;
    void enter_param(const SourceLoc& at, const std::string& name) const;
    std::string undefined_param(const std::string& name) const;
    int text_column(const YAML::Node& n, const std::string& raw) const;

    std::string file_;
    LoadOptions opts_;
    std::string source_;
    Scenario sc_;
    std::map<std::string, Param> params_;
    mutable std::vector<std::string> param_stack_;  // params being expanded, to catch cycles
    // Loop variables, innermost last; compiled code reads the values by slot (outermost 0).
    std::vector<std::string> loop_names_;
    std::vector<int64_t> loop_vals_;
    std::unordered_map<std::string, NamedDecl> buffers_, streams_, events_, graphs_, queues_, flags_;
    std::unordered_map<std::string, NamedDecl> thread_decls_;  // by the name in the file: one thread or an array
    int32_t capturing_ = -1;  // lowering the body of this graph: ops become its nodes
    std::unordered_map<std::string, int32_t> threads_;
    std::unordered_map<std::string, uint32_t> name_ids_;
    std::map<std::pair<int, int>, uint32_t> loc_ids_;
    struct SiteHash {
        size_t operator()(const Site& s) const;
    };
    std::unordered_map<Site, uint32_t, SiteHash> site_ids_;
    // The slice of Program::iter_indices holding the current loop indices; dirty once a loop
    // variable changes, so that the ops of one iteration share one slice.
    uint32_t iter_slice_ = 0;
    bool iter_dirty_ = true;
    std::vector<int32_t> per_thread_;  // per host thread: its per-thread default stream or -1
    bool default_per_thread_ = false;
    int depth_ = 0;
    struct MapFields {
        std::vector<std::pair<std::string, YAML::Node>> fields;
        std::string kind;      // op kind, once found
        bool checked = false;  // keys validated
    };
    // Keyed by the map's position in the file: each op map is read and validated once.
    mutable std::unordered_map<size_t, MapFields> maps_;
    MapFields& fields_of(const YAML::Node& map) const;
    // Values that do not depend on a loop variable, by the position of their scalar.
    mutable std::unordered_map<size_t, Value> constants_;
    mutable bool loop_var_used_ = false;
    mutable std::unordered_map<std::string, Value> param_values_;  // evaluated params (no loop variable)
    uint32_t emit_interned(Op op, const YAML::Node& where);
    void check_caps(const YAML::Node& where) const;
    [[noreturn]] void fail_op_cap(const YAML::Node& where) const;
    [[noreturn]] void fail_iteration_cap(const YAML::Node& count) const;
    uint64_t iteration_cap() const { return opts_.max_ops > UINT64_MAX / 2 ? UINT64_MAX : 2 * opts_.max_ops; }

    // --- compiled expressions (scenario.cpp) ---
    // `text` compiled in the current loop scope (nullopt: it does not compile; evaluate it in full).
    std::optional<ExprCode> compile(const std::string& text) const;
    std::optional<ExprCode> compile_in(const std::string& text, const std::vector<std::string>& scope,
                                       std::vector<std::string>& params) const;
    struct CachedCode {
        bool done = false;
        std::string text;                // compiled from this text
        std::vector<std::string> scope;  // in this loop scope
        std::optional<ExprCode> code;
    };
    mutable std::unordered_map<size_t, CachedCode> codes_;  // by the position of the scalar
    const ExprCode* code_at(const YAML::Node& n, const std::string& text) const;

    // A value that depended on a loop variable, as eval() or resolve() found it while an op map
    // was lowered in full.
    struct Rec {
        bool index = false;  // an array index (resolve) or a value (eval)
        YAML::Node node;
        const ExprCode* code = nullptr;  // null: it does not compile
        Value value;
        NamedDecl decl;  // index: the array
    };
    mutable std::vector<Rec>* recs_ = nullptr;  // recording, when set
    void record(bool index, const YAML::Node& n, const ExprCode* code, const Value& v, const NamedDecl& d) const;
    struct Recording {  // records into `recs` while it lives
        const Lowerer& l;
        std::vector<Rec> recs;
        explicit Recording(const Lowerer& x) : l(x) { l.recs_ = &recs; }
        ~Recording() { l.recs_ = nullptr; }
        Recording(const Recording&) = delete;
        Recording& operator=(const Recording&) = delete;
    };
    mutable uint64_t copy_limit_ = UINT64_MAX;  // the bytes the last copy or memset lowered may move

    // --- compiled statements (ops.cpp) ---
    // A loop-dependent value of an op template: its code, and where its value goes.
    struct Dyn {
        enum Role : uint8_t {
            kKey,       // anything else: the op is looked up by these values (OpTemplate::memo)
            kStream,    // `stream: s[...]`: Op::stream
            kBuffer,    // a copy's src or dst that is its named host-side buffer: Op::buffer
            kCheck,     // a copy's other buffer, a memset's dst: only its range is checked
            kDuration,  // `duration` of host work, a callback or a fixed kernel: Op::duration
            kBytes,     // `bytes`: Op::bytes, at most OpTemplate::bytes_limit
        };
        Role role = kKey;
        ExprCode code;
        NamedDecl decl;  // index roles: the array
    };
    static constexpr int kMaxKeys = 4;
    using Key = std::array<uint64_t, 2 * kMaxKeys>;
    struct KeyHash {
        size_t operator()(const Key& k) const;
    };
    // An op map inside a loop, lowered in full once; later iterations evaluate its Dyns and
    // append the op. Any value that fails a check lowers the op in full again, which reports it.
    struct OpTemplate {
        bool slow = false;  // lower it in full every time
        Op op;              // as first lowered, its site interned
        std::vector<Dyn> dyns;  // in the order the full lowering evaluates them
        int keys = 0;           // kKey dyns
        uint64_t bytes_limit = UINT64_MAX;
        std::vector<Op> nodes;  // a graph launch: its nodes as the launch appends them
        std::unordered_map<Key, Op, KeyHash> memo;  // by the kKey values, when there are some
    };
    struct Stmt;
    struct Block {
        std::vector<Stmt> stmts;
        bool built = false;  // stmts compiled (on the list's first run)
    };
    struct Stmt {
        enum Kind : uint8_t { kOp, kRepeat, kIf } kind = kOp;
        YAML::Node node;
        std::string op_kind;  // the op's kind key
        // repeat and if: the count or the condition
        YAML::Node value_node;
        int state = 0;  // 0: constant `value`, 1: compiled `code`, 2: evaluate it in full every time
        Value value;
        ExprCode code;
        // repeat
        std::string var;
        YAML::Node body_node;
        bool empty = false;  // an empty body
        Block body;
        // if
        YAML::Node then_node, else_node;
        bool has_then = false, has_else = false;
        Block then_block, else_block;
        std::unique_ptr<OpTemplate> tpl;
    };
    void run_block(Block& b, const YAML::Node& list, int32_t thread);
    void run_stmt(Stmt& s, int32_t thread);
    void first_stmt(Stmt& s, const YAML::Node& n, int32_t thread);
    void first_op(Stmt& s, int32_t thread);
    void run_op(Stmt& s, int32_t thread);
    void memo_miss(Stmt& s, int32_t thread, const Key& key);
    void full_op(const YAML::Node& n, int32_t thread, const std::string& kind, std::vector<Rec>* recs);
    void set_value(Stmt& s, const std::vector<Rec>& recs, const Value& v) const;
    std::string checked_kind(const YAML::Node& n);
    // repeat: every check of the header, in file order (the count first); enters the loop's depth.
    struct RepeatHead {
        int64_t count;
        std::string var;
        YAML::Node body;
    };
    RepeatHead repeat_head(const YAML::Node& n, int64_t count);
    // A repeat block's loop variable (its `var`, default i): a plain name, not one of an enclosing
    // repeat, not a param.
    std::string loop_var(const YAML::Node& n);
    int64_t repeat_count(const YAML::Node& n);
    template <class Body>
    void run_loop(const YAML::Node& count_node, const std::string& var, int64_t count, bool empty, Body&& body);
    void if_checks(const YAML::Node& n) const;
    // The checks of an op list that does not run (unrun.cpp): kinds, keys, declared names.
    void check_unrun(const YAML::Node& list);
    void check_program(const YAML::Node& work);  // after lowering: ops exist, launched graphs are instantiated; each launch's executable
    bool if_taken(const YAML::Node& n, const Value& c) const;

    // --- the count before expanding (ops.cpp) ---
    struct CountStmt {
        enum Kind : uint8_t { kOp, kRepeat, kIf, kUnknown } kind = kUnknown;  // kUnknown: cannot be counted
        uint32_t emits = 1;   // op: the ops it appends (a graph launch: 1 + its nodes)
        YAML::Node node;      // op: its map; repeat: its count (where the caps are reported)
        ExprCode code;        // repeat: the count; if: the condition
        uint32_t vars = 0;    // loop slots the counts and conditions in this statement read
        bool empty_body = false;
        bool has_then = false, has_else = false;
        std::vector<CountStmt> body, other;  // repeat: body; if: then, else
    };
    struct Bounds {  // what the interned tables can grow to (the memory estimate's small terms)
        uint64_t names = 0, locs = 0, uses = 0;
    };
    CountStmt count_stmt(const YAML::Node& n, std::vector<std::string>& scope, Bounds& bounds);
    std::vector<CountStmt> count_list(const YAML::Node& list, std::vector<std::string>& scope, Bounds& bounds);
    struct Tally {
        uint64_t ops = 0, iterations = 0, entries = 0;  // entries: of Program::iter_indices
        bool dirty = true;                              // the next op starts a slice of loop indices
    };
    struct Over {
        bool ops = false;  // the op cap, or the iteration cap
        YAML::Node where;
    };
    bool count_block(const std::vector<CountStmt>& b, int depth, Tally& t, int64_t* vars, Over& over) const;
    void count_before_expanding();
    // Interned `uses` slices: equal lists share one.
    std::map<std::vector<uint32_t>, uint32_t> uses_ids_;
    const YAML::Node undefined_{YAML::NodeType::Undefined};
    uint64_t iterations_ = 0;  // loop iterations so far, capped by max_ops like the ops
};

// Shared by the frontend's files (defined in ops.cpp).
bool is_alloc(OpKind k);
// The keys an op map of `kind` may have, in the threads form or as a task.
std::vector<std::string> keys_for(const std::string& kind, bool task);
// The op kind of map `n` (its one key that names a kind); reports a map that has none or two.
std::string find_kind(const Lowerer& L, const YAML::Node& n);
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

// Refuses a declared name with '[' or ']' (they index arrays: "s[1]" is element 1 of s), as `what`.
void no_brackets(const Lowerer& l, const YAML::Node& key, const std::string& name, const char* what);

// " a -> b -> ... -> a" for a cycle of n names (name(k) the k-th, each waiting for the one
// before it): at most 20 shown, the first and last ten of a longer one, so that a cycle of
// 300,000 tasks is one short line.
template <class Name>
std::string cycle_text(size_t n, Name&& name) {
    constexpr size_t kShow = 20;
    std::string s;
    for (size_t k = 0; k < n; ++k) {
        if (n > kShow && k == kShow / 2) {
            s += " ... (" + std::to_string(n - kShow) + " more) ->";
            k = n - kShow / 2 - 1;
            continue;
        }
        s += " " + name(k) + " ->";
    }
    return s + " " + name(0);
}

}  // namespace hetsim
