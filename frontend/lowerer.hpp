// Internal: the state of one scenario's lowering, shared by scenario.cpp (declarations)
// and ops.cpp (op lists, loops, tasks).
#pragma once
#include <yaml-cpp/yaml.h>

#include <map>
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
    int64_t need_int(const YAML::Node& n, const char* what, int64_t lo, int64_t hi, const std::string& hint = "") const;
    double need_real(const YAML::Node& n, const char* what) const;
    bool need_bool(const YAML::Node& n, const char* what) const;
    std::string need_name(const YAML::Node& n, const char* what) const;
    // A map's value for `key` (an undefined Node when absent). yaml-cpp's operator[] builds a
    // stringstream per lookup; ops inside loops are looked up once per iteration, so each
    // map's fields are read once and kept here.
    YAML::Node field(const YAML::Node& map, const char* key) const;
    YAML::Node field(const YAML::Node& map, const std::string& key) const { return field(map, key.c_str()); }
    [[noreturn]] void fail_at(const YAML::Node& n, const std::string& what) const { throw InputError(loc(n), what); }
    // A bad value: reported at its `--set name=value` argument when the value is just that param
    // (`${name}` or `name`), naming where the file uses it; else as fail_at.
    [[noreturn]] void fail_value(const YAML::Node& n, const std::string& what) const;
    std::string set_arg_of(const std::string& raw) const;  // that argument, or ""
    SourceLoc loc(const YAML::Node& n) const;  // loc_of, but an empty value is placed after its key

    // --- references ---
    int32_t stream_ref(const YAML::Node& n, int32_t thread) const;
    int32_t event_ref(const YAML::Node& n) const;
    int32_t buffer_ref(const YAML::Node& n) const;
    int32_t graph_ref(const YAML::Node& n) const;
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

    void lower_list(const YAML::Node& list, int32_t thread);
    void lower_op(const YAML::Node& op, int32_t thread);
    void lower_checked_op(const YAML::Node& op, int32_t thread, const std::string& kind);
    // Interns the site of `op` (its label, `where`, the loop depth) and appends the op.
    uint32_t emit(Op op, Site& site, const YAML::Node& where, const std::string& label);
    void fill_op(Op& op, Site& site, const std::string& kind, const YAML::Node& n, int32_t thread, std::string& label,
                 bool task);
    void fill_copy(Op& op, const YAML::Node& n, bool memset);
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
    std::vector<std::pair<std::string, int64_t>> loop_vars_;           // innermost last
    std::unordered_map<std::string, NamedDecl> buffers_, streams_, events_, graphs_;
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
    // Positions of the scalars whose value depended on a loop variable, since last cleared.
    mutable std::vector<size_t> dyn_nodes_;
    // An op map lowered once: its Op, reused for later iterations when only its stream or its
    // duration depends on the loop variables (those two are evaluated again each time).
    struct OpTemplate {
        int state = 0;  // 0: not yet lowered, 1: reusable, 2: lower it in full every time
        int32_t thread = -1;
        Op op;
        bool dyn_stream = false, dyn_duration = false;  // that field is loop-dependent
        YAML::Node stream_node, duration_node;
    };
    std::unordered_map<size_t, OpTemplate> templates_;
    uint32_t emit_interned(Op op, const YAML::Node& where);
    void check_caps(const YAML::Node& where) const;
    // Compiled array indices (resolve): postfix code per node, see fast_index.
    struct IndexCode {
        enum Kind : uint8_t { kConst, kVar, kOp };
        struct Ins {
            Kind kind;
            int64_t value;     // constant, or the operator character
            std::string name;  // loop variable
        };
        std::string text;  // the index text the code was compiled from
        std::vector<Ins> prog;
        bool ok = true;
    };
    mutable std::unordered_map<size_t, IndexCode> index_code_;
    bool fast_index(const YAML::Node& n, const std::string& index, Value& out) const;
    const YAML::Node undefined_{YAML::NodeType::Undefined};
    uint64_t iterations_ = 0;  // loop iterations so far, capped by max_ops like the ops
};

}  // namespace hetsim
