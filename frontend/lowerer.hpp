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
    Lowerer(std::string file, const LoadOptions& opts) : file_(std::move(file)), opts_(opts) {}
    Scenario run(const YAML::Node& root);

    // --- values ---
    std::string substitute(const YAML::Node& n, const std::string& text) const;
    Value eval(const YAML::Node& n) const;
    Value eval_text(const YAML::Node& n, const std::string& text) const;
    Time need_time(const YAML::Node& n, const char* what) const;
    uint64_t need_bytes(const YAML::Node& n, const char* what) const;
    int64_t need_int(const YAML::Node& n, const char* what, int64_t lo, int64_t hi) const;
    double need_real(const YAML::Node& n, const char* what) const;
    bool need_bool(const YAML::Node& n, const char* what) const;
    std::string need_name(const YAML::Node& n, const char* what) const;
    [[noreturn]] void fail_at(const YAML::Node& n, const std::string& what) const { fail(n, file_, what); }

    // --- references ---
    int32_t stream_ref(const YAML::Node& n, int32_t thread) const;
    int32_t event_ref(const YAML::Node& n) const;
    int32_t buffer_ref(const YAML::Node& n) const;
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

    void lower_list(const YAML::Node& list, int32_t thread);
    void lower_op(const YAML::Node& op, int32_t thread);
    uint32_t emit(Op op, const YAML::Node& where, const std::string& label);
    void fill_op(Op& op, const std::string& kind, const YAML::Node& n, int32_t thread, std::string& label,
                 bool task);
    void fill_copy(Op& op, const YAML::Node& n, bool memset);
    void fill_kernel(Op& op, const YAML::Node& n);
    void check_kernel_fits(const Op& op, const YAML::Node& n) const;
    uint32_t intern_name(const std::string& s);
    uint32_t intern_loc(const YAML::Node& n);
    int32_t per_thread_stream(int32_t thread);

    std::string file_;
    LoadOptions opts_;
    Scenario sc_;
    std::map<std::string, std::pair<std::string, YAML::Node>> params_;  // name -> (text, node)
    std::vector<std::pair<std::string, int64_t>> loop_vars_;           // innermost last
    std::unordered_map<std::string, NamedDecl> buffers_, streams_, events_;
    std::unordered_map<std::string, int32_t> threads_;
    std::unordered_map<std::string, uint32_t> name_ids_;
    std::map<std::pair<int, int>, uint32_t> loc_ids_;
    std::vector<int32_t> per_thread_;  // per host thread: its per-thread default stream or -1
    bool default_per_thread_ = false;
    int depth_ = 0;
};

}  // namespace hetsim
