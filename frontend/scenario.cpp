#include "frontend/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "frontend/lowerer.hpp"
#include "frontend/profile_loader.hpp"

namespace hetsim {

namespace {
// "file:line:col" (or "file" when the line is unknown), as messages name a place.
std::string place(const SourceLoc& l) {
    return l.line > 0 ? l.file + ":" + std::to_string(l.line) + ":" + std::to_string(l.col) : l.file;
}

// yaml-cpp throws on some misuse of nodes (a subscript of a scalar); report it as bad input.
Scenario lower(const YAML::Node& root, const std::string& file, const LoadOptions& opts, std::string text) {
    try {
        return Lowerer(file, opts, std::move(text)).run(root);
    } catch (const YAML::Exception& e) {
        throw InputError(e.mark.line >= 0 ? SourceLoc{file, e.mark.line + 1, e.mark.column + 1} : SourceLoc{file},
                         "unexpected YAML structure: " + e.msg);
    }
}
// `knobs: {buffers: [1, 2, 3, 4], nstreams: 1..8}`: params the file declares as design knobs and
// the values to try for each (a list, or an integer range START..END or START..END+STEP).
constexpr size_t kMaxKnobValues = 64;
std::vector<Knob> parse_knobs(const YAML::Node& n, const std::string& file, const std::vector<std::string>& params) {
    if (!n.IsMap()) fail(n, file, "'knobs' must map params to the values to try, such as {buffers: [1, 2, 3], nstreams: 1..8}, got " + a_node_type(n));
    check_keys(n, file, params, "knobs (each knob is a param declared under 'params')");  // did-you-mean, duplicates
    std::vector<Knob> out;
    for (auto it = n.begin(); it != n.end(); ++it) {
        const std::string name = it->first.Scalar();
        const YAML::Node v = it->second;
        Knob k{name, {}, loc_of(it->first, file)};
        if (v.IsSequence()) {
            for (const YAML::Node& x : v) {
                if (!x.IsScalar() || x.Scalar().empty()) fail(x, file, "knob '" + name + "': each value must be a plain value such as 2 or 8MiB, got " + a_node_type(x));
                k.values.push_back(x.Scalar());
            }
        } else if (v.IsScalar()) {
            const std::string t = v.Scalar();
            const size_t dots = t.find("..");
            long long lo = 0, hi = 0, step = 1;
            char extra = 0;
            const std::string spec = dots == std::string::npos ? "" : t.substr(0, dots) + " " + t.substr(dots + 2);
            const int got = dots == std::string::npos ? 0 : std::sscanf(spec.c_str(), "%lld %lld+%lld%c", &lo, &hi, &step, &extra);
            if (got < 2 || got > 3 || step <= 0 || hi < lo)
                fail(v, file, "knob '" + name + "': expected a list of values or an integer range such as 1..8 or 1..16+4, got '" + t + "'");
            for (long long x = lo; x <= hi && k.values.size() <= kMaxKnobValues; x += step) k.values.push_back(std::to_string(x));
        } else {
            fail(v, file, "knob '" + name + "': expected a list of values or a range such as 1..8, got " + a_node_type(v));
        }
        if (k.values.empty()) fail(v, file, "knob '" + name + "' has no values to try");
        if (k.values.size() > kMaxKnobValues)
            fail(v, file, "knob '" + name + "' has more than " + std::to_string(kMaxKnobValues) + " values; give fewer (a sweep, `hetsim sweep --vary`, takes more)");
        out.push_back(std::move(k));
    }
    return out;
}

}  // namespace

Scenario load_scenario(const std::string& path, const LoadOptions& opts) {
    std::string text;
    YAML::Node root = load_yaml_file(path, &text, opts.max_memory);
    return lower(root, path, opts, std::move(text));
}

Scenario load_scenario_text(const std::string& yaml, const std::string& file, const LoadOptions& opts) {
    YAML::Node root = load_yaml_text(yaml, file, opts.max_memory);
    return lower(root, file, opts, yaml);
}

Scenario load_scenario_node(const YAML::Node& root, const std::string& yaml, const std::string& file,
                            const LoadOptions& opts) {
    return lower(root, file, opts, yaml);
}

Scenario Lowerer::run(const YAML::Node& root) {
    check_keys(root, file_, {"name", "description", "hardware", "params", "options", "buffers", "streams", "events",
                             "graphs", "threads", "tasks", "queues", "flags", "measure", "knobs"},
               "scenario");
    sc_.program.source = file_;
    for (const char* text_key : {"name", "description"})
        if (YAML::Node t = root[text_key]; t && !t.IsScalar() && !t.IsNull())
            fail_at(t, std::string("'") + text_key + "' must be text, got " + a_node_type(t));
    sc_.name = root["name"] && root["name"].IsScalar() ? root["name"].Scalar() : file_;
    // An empty section (`events:` with nothing under it) declares nothing.
    auto section = [&](const char* key) {
        YAML::Node n = root[key];
        return n && !n.IsNull() ? n : YAML::Node(YAML::NodeType::Undefined);
    };
    parse_params(section("params"));
    if (YAML::Node k = section("knobs")) {
        std::vector<std::string> names;
        for (const auto& q : params_) names.push_back(q.first);
        sc_.knobs = parse_knobs(k, file_, names);
    }
    parse_hardware(root["hardware"]);
    if (YAML::Node o = section("options")) parse_options(o);
    // The legacy default stream always exists as stream 0.
    sc_.program.streams.push_back(Stream{"default", StreamKind::Legacy, 0, -1});
    streams_["default"] = NamedDecl{0, 1};
    streams_["legacy"] = NamedDecl{0, 1};
    if (YAML::Node b = section("buffers")) parse_buffers(b);
    if (YAML::Node s = section("streams")) parse_streams(s);
    if (YAML::Node e = section("events")) parse_events(e);
    // Queues and flags before graphs: a graph's host_func may set a flag.
    if (YAML::Node q = section("queues")) parse_queues(q);
    if (YAML::Node f = section("flags")) parse_flags(f);
    if (YAML::Node g = section("graphs")) parse_graphs(g);
    if (YAML::Node m = section("measure")) parse_measure(m);
    YAML::Node threads = root["threads"], tasks = root["tasks"];
    if (threads && tasks) fail_at(tasks, "a scenario has either 'threads' or 'tasks', not both");
    if (!threads && !tasks) fail_at(root, "scenario has no work: add 'threads' (op lists) or 'tasks' (a graph)");
    if (threads) {
        declare_threads(threads);
        count_before_expanding();
        lower_threads();
    } else {
        if (measure_node_) fail_at(measure_node_, "'measure' applies to the threads form; write the work as 'threads' to repeat it");
        lower_tasks(tasks);
    }
    check_program(threads ? threads : tasks);
    return std::move(sc_);
}

// ---------------------------------------------------------------- declarations

void Lowerer::parse_params(const YAML::Node& n) {
    if (n) {
        if (!n.IsMap()) fail_at(n, "'params' must be a mapping of names to values such as {n: 8, size: 64MiB}, got " + a_node_type(n));
        check_keys(n, file_, [&] {
            std::vector<std::string> k;
            for (auto it = n.begin(); it != n.end(); ++it) k.push_back(it->first.Scalar());
            return k;
        }(), "params");
        for (auto it = n.begin(); it != n.end(); ++it) {
            std::string name = need_name(it->first, "param name");
            if (!it->second.IsScalar())
                fail_at(it->second, "param '" + name + "' must be a single value such as 8 or 64MiB, got " + a_node_type(it->second));
            params_[name] = Param{it->second.Scalar(), it->second, ""};
        }
    }
    for (const auto& [key, value] : opts_.sets) {
        if (key.rfind("hardware.", 0) == 0) continue;
        auto it = params_.find(key);
        if (it == params_.end()) {
            std::vector<std::string> names;
            for (const auto& p : params_) names.push_back(p.first);
            std::string near = did_you_mean(key, names);
            std::string known;
            for (const auto& k : names) known += (known.empty() ? "" : ", ") + k;
            throw InputError({"--set " + key + "=" + value},
                             "the scenario " + file_ + " has no param '" + key + "'" +
                                 (!near.empty() ? "; did you mean '" + near + "'?"
                                  : names.empty() ? " (it declares no params)" : " (its params: " + known + ")"));
        }
        it->second.text = value;
        it->second.set_arg = "--set " + key + "=" + value;
    }
}

void Lowerer::parse_hardware(const YAML::Node& n) {
    std::string profile = "h200";
    YAML::Node profile_node;  // the scalar that names the profile, when the file names one
    bool zero = false;
    std::vector<std::pair<std::string, YAML::Node>> overrides;
    if (n) {
        if (n.IsScalar()) {
            profile = need_name(n, "hardware profile");
            profile_node = n;
        } else if (n.IsMap()) {
            // Flat (copy.h2d.bandwidth) and nested (copy: {h2d: {bandwidth: ..}}) keys name the same
            // parameter; each may be given once.
            std::vector<std::string> seen;
            auto once = [&](const YAML::Node& key_node, const std::string& key) {
                if (std::find(seen.begin(), seen.end(), key) != seen.end())
                    fail_at(key_node, "duplicate key '" + key + "' in hardware; give each parameter once");
                seen.push_back(key);
            };
            for (auto it = n.begin(); it != n.end(); ++it) {
                std::string key = need_name(it->first, "hardware key");
                if (key == "profile") {
                    once(it->first, key);
                    profile = need_name(it->second, "hardware profile");
                    profile_node = it->second;
                } else if (key == "base") {
                    fail_at(it->first, "'base' belongs in a profile file; in a scenario's hardware mapping the profile is "
                                       "'profile', as in hardware: {profile: h200, gpu.hw_queues: 16}");
                } else if (key == "zero_latency") {
                    once(it->first, key);
                    zero = need_bool(it->second, "zero_latency");
                } else if (it->second.IsMap()) {
                    // Nested form: copy: {h2d: {bandwidth: 16GB/s}} == copy.h2d.bandwidth.
                    std::vector<std::pair<std::string, YAML::Node>> stack{{key, it->second}};
                    while (!stack.empty()) {
                        auto [prefix, node] = stack.back();
                        stack.pop_back();
                        for (auto jt = node.begin(); jt != node.end(); ++jt) {
                            std::string k = prefix + "." + need_name(jt->first, "hardware key");
                            if (jt->second.IsMap()) {
                                stack.push_back({k, jt->second});
                            } else {
                                once(jt->first, k);
                                overrides.push_back({k, jt->second});
                            }
                        }
                    }
                } else {
                    once(it->first, key);
                    overrides.push_back({key, it->second});
                }
            }
        } else {
            fail_at(n, "'hardware' must be a profile name or a mapping with 'profile' and parameter overrides");
        }
    }
    {
        const SourceLoc at = profile_node ? loc_of(profile_node, file_) : n ? loc_of(n, file_) : SourceLoc{file_};
        LoadedProfile lp;
        try {
            lp = load_profile_sources(profile, at);
        } catch (const InputError& e) {
            // A profile named by a param set on the command line (hardware: "${gpu}"): when the
            // name itself is refused (not a mistake inside the profile file), the --set argument is at fault.
            const SourceLoc& w = e.where();
            std::string arg = profile_node ? set_arg_of(profile_node.Scalar()) : "";
            if (arg.empty() || w.file != at.file || w.line != at.line || w.col != at.col) throw;
            throw InputError(SourceLoc{arg}, e.message() + " (used at " + place(at) + ")");
        }
        sc_.profile = std::move(lp.profile);
        for (const ProfileFile& f : lp.files) sc_.profile_files.push_back(f.path);
    }
    // zero_latency first, so that explicit overrides (a fixed cost, say) still apply after it.
    for (const auto& [key, value] : opts_.sets)
        if (key == "hardware.zero_latency") {
            if (value != "true" && value != "false")
                throw InputError({"--set " + key + "=" + value}, "hardware.zero_latency must be true or false, got '" + value + "'");
            zero = value == "true";
        }
    if (zero) zero_latencies(sc_.profile);
    for (const auto& [key, node] : overrides) {
        if (!node.IsScalar())
            fail_at(node, "hardware parameter '" + key + "' must be a single value such as 16GB/s, got " + a_node_type(node));
        try {
            set_profile_param(sc_.profile, key, substitute(node, node.Scalar()), loc_of(node, file_));
        } catch (const InputError& e) {
            // A value that is just a param set on the command line: the --set argument is at fault.
            std::string arg = set_arg_of(node.Scalar());
            if (arg.empty()) throw;
            throw InputError(SourceLoc{arg}, e.message() + " (used at " + place(loc_of(node, file_)) + ")");
        }
    }
    for (const auto& [key, value] : opts_.sets)
        if (key.rfind("hardware.", 0) == 0 && key != "hardware.zero_latency")
            set_profile_param(sc_.profile, key.substr(9), value, SourceLoc{"--set " + key + "=" + value});
}

void Lowerer::parse_options(const YAML::Node& n) {
    if (!n.IsMap()) fail_at(n, "'options' must be a mapping");
    check_keys(n, file_, {"default_stream", "sync", "cold_start", "max_connections"}, "options");
    if (YAML::Node d = n["sync"]) {
        std::string v = need_name(d, "sync");
        if (v == "spin") sc_.program.blocking_sync = false;
        else if (v == "blocking") sc_.program.blocking_sync = true;
        else fail_enum(d, "sync must be 'spin' (the default: syncs spin) or 'blocking' (cudaDeviceScheduleBlockingSync), got '" + v + "'");
    }
    if (YAML::Node d = n["cold_start"]) sc_.program.cold_start = need_bool(d, "cold_start");
    if (YAML::Node d = n["max_connections"])
        sc_.program.max_connections = static_cast<uint32_t>(
            need_int(d, "max_connections", 1, 32, " (CUDA_DEVICE_MAX_CONNECTIONS takes 1 to 32)"));
    if (YAML::Node d = n["default_stream"]) {
        std::string v = need_name(d, "default_stream");
        if (v == "legacy") default_per_thread_ = false;
        else if (v == "per_thread") default_per_thread_ = true;
        else fail_enum(d, "default_stream must be 'legacy' or 'per_thread', got '" + v + "'");
    }
}

// "s[1]" is element 1 of the array s: a declared name with brackets would be a second one.
void no_brackets(const Lowerer& l, const YAML::Node& key, const std::string& name, const char* what) {
    if (name.find_first_of("[]") == std::string::npos) return;
    if (std::string(what) == "graph")  // graphs have no arrays
        l.fail_at(key, "graph name '" + name + "' contains '[' or ']', which index arrays; choose a plain name");
    l.fail_at(key, std::string(what) + " name '" + name + "' contains '[' or ']', which index arrays; declare an array with " +
                       "'count' (" + what + " s with count: 4 gives s[0] .. s[3]) or choose a plain name");
}

void Lowerer::parse_buffers(const YAML::Node& n) {
    if (!n.IsMap()) fail_at(n, "'buffers' must map buffer names to {kind, size}");
    uint64_t managed_total = 0, device_total = 0, host_total = 0;
    for (auto it = n.begin(); it != n.end(); ++it) {
        std::string name = need_name(it->first, "buffer name");
        no_brackets(*this, it->first, name, "buffer");
        if (buffers_.count(name)) fail_at(it->first, "duplicate buffer '" + name + "'; each buffer name may be declared once");
        const YAML::Node b = it->second;  // a copy: it->second is a member of a temporary
        if (!b.IsMap()) fail_at(b, "buffer '" + name + "' must be a mapping such as {kind: device, size: 64MiB}, got " + a_node_type(b));
        check_keys(b, file_, {"kind", "size", "count", "resident"}, "buffer '" + name + "'");
        if (!b["kind"]) fail_at(b, "buffer '" + name + "' needs a 'kind' (pinned, pageable, device or managed)");
        if (!b["size"]) fail_at(b, "buffer '" + name + "' needs a 'size' such as 64MiB");
        std::string kind = need_name(b["kind"], "buffer kind");
        MemKind mk;
        if (kind == "pinned") mk = MemKind::Pinned;
        else if (kind == "pageable") mk = MemKind::Pageable;
        else if (kind == "device") mk = MemKind::Device;
        else if (kind == "managed") mk = MemKind::Managed;
        else {
            std::string near = did_you_mean(kind, {"pinned", "pageable", "device", "managed"});
            fail_enum(b["kind"], "unknown buffer kind '" + kind + "' (pinned, pageable, device or managed)" +
                                   (near.empty() ? "" : "; did you mean '" + near + "'?"));
        }
        uint64_t size = need_bytes(b["size"], "buffer size");
        if (size == 0) fail_at(b["size"], "buffer '" + name + "' has size 0; give it a positive size such as 64MiB");
        uint32_t count = b["count"] ? static_cast<uint32_t>(need_int(b["count"], "buffer count", 1, 1 << 20)) : 1;
        check_declaration_caps(sc_.program, 0, count, opts_.max_ops, opts_.max_memory, opts_.run_bytes_per_op,
                               loc(b["count"] ? b["count"] : it->first));
        bool on_device = false;
        if (YAML::Node r = b["resident"]) {
            if (mk != MemKind::Managed) fail_at(r, "'resident' applies only to managed buffers");
            std::string where = need_name(r, "resident");
            if (where != "host" && where != "device") fail_enum(r, "'resident' must be 'host' or 'device', got '" + where + "'");
            on_device = where == "device";
        }
        if (mk == MemKind::Device) {
            uint64_t bytes = 0;
            if (__builtin_mul_overflow(size, uint64_t{count}, &bytes) || __builtin_add_overflow(device_total, bytes, &device_total))
                device_total = UINT64_MAX;
            if (device_total > sc_.profile.device_memory)
                fail_at(b["size"], "device buffers total " + format_bytes(device_total) + ", more than the device's " +
                                       format_bytes(sc_.profile.device_memory) + " (device.memory); shrink them to fit");
        }
        if (mk == MemKind::Pinned || mk == MemKind::Pageable) {
            // No profile knows the host's memory, but no host process can address more than
            // 128 TiB (x86-64 and AArch64 user space with 48-bit virtual addresses).
            constexpr uint64_t kHostAddressable = uint64_t{128} << 40;
            uint64_t bytes = 0;
            if (__builtin_mul_overflow(size, uint64_t{count}, &bytes) || __builtin_add_overflow(host_total, bytes, &host_total))
                host_total = UINT64_MAX;
            if (host_total > kHostAddressable)
                fail_at(b["size"], "host (pinned and pageable) buffers total " + format_bytes(host_total) +
                                       ", more than the 128 TiB a host process can address; shrink them to fit");
        }
        if (mk == MemKind::Managed) {
            uint64_t bytes = 0;
            if (__builtin_mul_overflow(size, uint64_t{count}, &bytes) || __builtin_add_overflow(managed_total, bytes, &managed_total))
                managed_total = UINT64_MAX;
            if (managed_total > sc_.profile.device_memory)
                fail_at(b["size"], "managed buffers total " + format_bytes(managed_total) + ", more than the device's " +
                                       format_bytes(sc_.profile.device_memory) +
                                       "; shrink them to fit (oversubscribing managed memory is not modelled)");
        }
        buffers_[name] = NamedDecl{static_cast<uint32_t>(sc_.program.buffers.size()), count};
        for (uint32_t k = 0; k < count; ++k)
            sc_.program.buffers.push_back(
                Buffer{count > 1 ? name + "[" + std::to_string(k) + "]" : name, mk, size, on_device});
    }
}

void Lowerer::parse_streams(const YAML::Node& n) {
    auto add = [&](const YAML::Node& key_node, const std::string& name, const YAML::Node& spec) {
        no_brackets(*this, key_node, name, "stream");
        if (streams_.count(name) || name == "per_thread")
            fail_at(key_node, "stream '" + name + "' is already defined" +
                                  (name == "default" || name == "legacy" || name == "per_thread" ? " (a built-in name)" : "") +
                                  "; choose another name");
        Stream s{name, StreamKind::Blocking, 0, -1};
        if (spec && !spec.IsNull()) {
            if (!spec.IsMap()) fail_at(spec, "stream '" + name + "' must be a mapping such as {kind: non_blocking, priority: -1}");
            check_keys(spec, file_, {"kind", "priority", "count"}, "stream '" + name + "'");
            if (YAML::Node k = spec["kind"]) {
                std::string kind = need_name(k, "stream kind");
                if (kind == "blocking") s.kind = StreamKind::Blocking;
                else if (kind == "non_blocking") s.kind = StreamKind::NonBlocking;
                else fail_enum(k, "stream kind must be 'blocking' or 'non_blocking', got '" + kind + "'");
            }
            if (YAML::Node p = spec["priority"]) s.priority = static_cast<int>(need_int(p, "stream priority", -5, 0));
        }
        uint32_t count = spec && spec.IsMap() && spec["count"] ? static_cast<uint32_t>(need_int(spec["count"], "stream count", 1, 4096)) : 1;
        check_declaration_caps(sc_.program, count, 0, opts_.max_ops, opts_.max_memory, opts_.run_bytes_per_op,
                               loc(spec && spec.IsMap() && spec["count"] ? spec["count"] : key_node));
        streams_[name] = NamedDecl{static_cast<uint32_t>(sc_.program.streams.size()), count};
        for (uint32_t k = 0; k < count; ++k) {
            if (count > 1) s.name = name + "[" + std::to_string(k) + "]";
            sc_.program.streams.push_back(s);
        }
    };
    if (n.IsSequence()) {
        for (const auto& e : n) add(e, need_name(e, "stream name"), YAML::Node());
    } else if (n.IsMap()) {
        for (auto it = n.begin(); it != n.end(); ++it) add(it->first, need_name(it->first, "stream name"), it->second);
    } else {
        fail_at(n, "'streams' must be a list of names or a mapping of names to {kind, priority}");
    }
}

void Lowerer::parse_events(const YAML::Node& n) {
    auto add = [&](const YAML::Node& key_node, const YAML::Node& spec) {
        std::string name = need_name(key_node, "event name");
        no_brackets(*this, key_node, name, "event");
        if (events_.count(name)) fail_at(key_node, "duplicate event '" + name + "'; each event name may be declared once");
        if (spec && !spec.IsNull()) {
            if (!spec.IsMap()) fail_at(spec, "event '" + name + "' options must be a mapping");
            check_keys(spec, file_, {"timing", "blocking_sync", "count"}, "event '" + name + "'");
            for (const char* flag : {"timing", "blocking_sync"})
                if (spec[flag]) need_bool(spec[flag], flag);
        }
        uint32_t count = spec && spec.IsMap() && spec["count"] ? static_cast<uint32_t>(need_int(spec["count"], "event count", 1, 1 << 20)) : 1;
        check_declaration_caps(sc_.program, 0, count, opts_.max_ops, opts_.max_memory, opts_.run_bytes_per_op,
                               loc(spec && spec.IsMap() && spec["count"] ? spec["count"] : key_node));
        events_[name] = NamedDecl{static_cast<uint32_t>(sc_.program.events.size()), count};
        bool blocking = spec && spec.IsMap() && spec["blocking_sync"] && need_bool(spec["blocking_sync"], "blocking_sync");
        for (uint32_t k = 0; k < count; ++k)
            sc_.program.events.push_back(Event{count > 1 ? name + "[" + std::to_string(k) + "]" : name, blocking});
    };
    if (n.IsSequence()) {
        for (const auto& e : n) add(e, YAML::Node());
    } else if (n.IsMap()) {
        for (auto it = n.begin(); it != n.end(); ++it) add(it->first, it->second);
    } else {
        fail_at(n, "'events' must be a list of event names");
    }
}

// ---------------------------------------------------------------- values

// yaml-cpp marks an empty value (`duration:` with nothing after it) at the next token, often on a
// later line. Place it after the ':' or '-' that introduced it instead, skipping blank and comment lines.
SourceLoc Lowerer::loc(const YAML::Node& n) const {
    SourceLoc l = loc_of(n, file_);
    YAML::Mark m = n.Mark();
    if (!n.IsNull() || source_.empty() || m.pos <= 0 || static_cast<size_t>(m.pos) > source_.size()) return l;
    size_t end = static_cast<size_t>(m.pos);  // scan the text before the mark, line by line, backwards
    int line = m.line;                          // 0-based line of `end`
    for (int guard = 0; guard < 1000; ++guard) {
        size_t bol = end == 0 ? std::string::npos : source_.rfind('\n', end - 1);
        bol = bol == std::string::npos ? 0 : bol + 1;
        std::string text = source_.substr(bol, end - bol);
        size_t hash = text.find(" #");
        if (hash != std::string::npos) text.resize(hash);
        if (!text.empty() && text[0] == '#') text.clear();
        while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.pop_back();
        if (!text.empty()) {
            if (text.back() != ':' && text.back() != '-') return l;
            return SourceLoc{file_, line + 1, static_cast<int>(text.size()) + 1};
        }
        if (bol == 0) return l;
        end = bol - 1;  // the '\n' ending the previous line
        --line;
    }
    return l;
}

std::string Lowerer::undefined_param(const std::string& name) const {
    std::vector<std::string> names;
    for (const auto& q : params_) names.push_back(q.first);
    std::string near = did_you_mean(name, names);
    return "undefined param '${" + name + "}'" +
           (!near.empty() ? "; did you mean '${" + near + "}'?"
            : names.empty() ? " (the scenario declares no params; add it under 'params')" : " (declare it under 'params')");
}

void Lowerer::enter_param(const SourceLoc& at, const std::string& name) const {
    auto it = std::find(param_stack_.begin(), param_stack_.end(), name);
    if (it == param_stack_.end()) {
        param_stack_.push_back(name);
        return;
    }
    if (it + 1 == param_stack_.end()) throw InputError(at, "param '" + name + "' refers to itself; give it a value");
    std::string chain;
    for (; it != param_stack_.end(); ++it) chain += *it + " -> ";
    throw InputError(at, "params refer to each other in a cycle: " + chain + name + "; give one of them a value");
}

// The text of param `name` with its own ${...} substituted, checking for cycles.
std::string Lowerer::param_text(const SourceLoc& at, const std::string& name, const Param& p) const {
    enter_param(at, name);
    std::string out = substitute_at(param_loc(p), p.text);
    param_stack_.pop_back();
    return out;
}

Value Lowerer::param_value(const SourceLoc& at, const std::string& name, const Param& p) const {
    if (auto it = param_values_.find(name); it != param_values_.end()) return it->second;
    enter_param(at, name);
    bool outer = loop_var_used_;
    loop_var_used_ = false;
    Value v = p.set_arg.empty() ? eval_text(p.node, p.text) : eval_at(param_loc(p), 0, p.text);
    param_stack_.pop_back();
    if (!loop_var_used_) param_values_.emplace(name, v);  // params are fixed unless they name a loop variable
    loop_var_used_ = outer || loop_var_used_;
    return v;
}

std::string Lowerer::substitute(const YAML::Node& n, const std::string& text) const {
    return substitute_at(loc_of(n, file_), text);
}

// The most text ${...} substitution may make of one value.
constexpr size_t kMaxSubstitution = size_t{1} << 20;

std::string Lowerer::substitute_at(const SourceLoc& at, const std::string& text) const {
    if (text.find("${") == std::string::npos) return text;
    std::string out;
    size_t i = 0;
    for (;;) {
        size_t p = text.find("${", i);
        if (p == std::string::npos) return out + text.substr(i);
        out += text.substr(i, p - i);
        size_t e = text.find('}', p);
        if (e == std::string::npos) throw InputError(at, "unterminated '${' in '" + text + "'; write ${name}");
        std::string name = text.substr(p + 2, e - p - 2);
        if (name.empty()) throw InputError(at, "empty '${}' in '" + text + "'; write ${name} with the name of a param");
        auto it = params_.find(name);
        if (it == params_.end()) {
            // '${n * 2}': a shell or template habit. ${...} holds one name; expressions are
            // written bare ('n * 2', 'size / chunks'), where the value's own unit applies.
            if (name.find_first_of("+*/%()<>=!") != std::string::npos)
                throw InputError(at, "'${" + name + "}' is not a param name: ${...} holds one name; write an "
                                     "expression without it, as in 'duration: n * 3us' or 'bytes: size / chunks'");
            throw InputError(at, undefined_param(name));
        }
        out += param_text(at, name, it->second);
        // Params made of ${...} of params double per level: '${a} + ${a}' thirty deep is
        // gigabytes. Bare names ('a + a') are evaluated once each.
        if (out.size() > kMaxSubstitution)
            throw InputError(at, "'${" + name + "}' substitutes more than " + std::to_string(kMaxSubstitution >> 20) +
                                     " MiB of text into this value (params whose text repeats ${...} of others double "
                                     "per level); use params by name in expressions, as in 'a + a', not '${a} + ${a}'");
        i = e + 1;
    }
}

// The 1-based column where `raw` (the node's text) starts in the source line, when it can be
// found there: a plain or quoted scalar on one line. 0 when unknown.
int Lowerer::text_column(const YAML::Node& n, const std::string& raw) const {
    YAML::Mark m = n.Mark();
    if (source_.empty() || m.line < 0 || m.pos < 0 || static_cast<size_t>(m.pos) >= source_.size()) return 0;
    size_t pos = static_cast<size_t>(m.pos);
    if (source_[pos] == '"' || source_[pos] == '\'') ++pos;
    size_t eol = source_.find('\n', pos);
    if (eol == std::string::npos) eol = source_.size();
    if (raw.size() > eol - pos || source_.compare(pos, raw.size(), raw) != 0) return 0;
    return m.column + 1 + static_cast<int>(pos - static_cast<size_t>(m.pos));
}

Value Lowerer::eval_text(const YAML::Node& n, const std::string& raw) const {
    return eval_at(loc_of(n, file_), text_column(n, raw), raw);
}

Value Lowerer::eval_at(const SourceLoc& at, int text_col, const std::string& raw) const {
    std::string text = substitute_at(at, raw);
    NameLookup lookup = [&](const std::string& name) -> std::optional<Value> {
        for (size_t k = loop_names_.size(); k-- > 0;)
            if (loop_names_[k] == name) {
                loop_var_used_ = true;
                return Value::integer(loop_vals_[k]);
            }
        auto p = params_.find(name);
        if (p != params_.end()) return param_value(at, name, p->second);
        return std::nullopt;
    };
    try {
        return eval_expr(text, lookup);
    } catch (const ExprError& e) {
        SourceLoc l = at;
        std::string msg = e.what();
        if (!e.unknown_name.empty()) {
            std::vector<std::string> names;
            for (const auto& lv : loop_names_) names.push_back(lv);
            for (const auto& q : params_) names.push_back(q.first);
            std::string near = did_you_mean(e.unknown_name, names);
            msg += near.empty() ? " (not a loop variable or param; a value needs a unit such as 2ms or 64MiB)"
                                : "; did you mean '" + near + "'?";
        }
        if (text == raw && text_col > 0) l.col = text_col + static_cast<int>(e.offset);
        // A name the file itself spells is the file's fault, whatever --set gave the others.
        bool file_name = !e.unknown_name.empty() && text == raw;
        if (std::string arg = at.file == file_ && !file_name ? set_arg_of(raw) : ""; !arg.empty())
            throw InputError(SourceLoc{arg}, msg + (msg.find("'" + raw + "'") != std::string::npos ? " (used at " : " (used as '" + raw + "' at ") +
                                                 place(l) + ")");
        if (text != raw) msg += " (after substituting params into '" + raw + "')";
        throw InputError(l, msg);
    }
}

Value Lowerer::eval(const YAML::Node& n, const char* what) const {
    if (!n.IsScalar()) fail_at(n, std::string(what) + " must be a single value, got " + a_node_type(n));
    size_t key = static_cast<size_t>(n.Mark().pos);
    if (auto it = constants_.find(key); it != constants_.end()) return it->second;
    bool outer = loop_var_used_;
    loop_var_used_ = false;
    // Inside loops, a value that depends on a loop variable runs its compiled code; anything that
    // fails there (or does not compile) is evaluated in full, which gives the canonical message.
    const ExprCode* code = loop_names_.empty() ? nullptr : code_at(n, substitute(n, n.Scalar()));
    Value v;
    if (code && code->vars && run_expr(*code, loop_vals_.data(), v)) loop_var_used_ = true;
    else v = eval_text(n, n.Scalar());
    if (!loop_var_used_ && n.Mark().pos >= 0) constants_.emplace(key, v);
    if (loop_var_used_ && recs_) record(false, n, code, v, NamedDecl{});
    loop_var_used_ = outer || loop_var_used_;
    return v;
}

void Lowerer::record(bool index, const YAML::Node& n, const ExprCode* code, const Value& v, const NamedDecl& d) const {
    recs_->push_back(Rec{index, n, code, v, d});
}

std::optional<ExprCode> Lowerer::compile(const std::string& text) const {
    std::vector<std::string> params;
    return compile_in(text, loop_names_, params);
}

// Names resolve as eval_at's lookup does: loop variables (innermost first), then params, whose
// text is compiled in the same scope and inlined (`params`: those being compiled, for cycles).
std::optional<ExprCode> Lowerer::compile_in(const std::string& text, const std::vector<std::string>& scope,
                                            std::vector<std::string>& params) const {
    NameCompiler names = [&](const std::string& name) -> std::optional<CompiledName> {
        for (size_t k = scope.size(); k-- > 0;)
            if (scope[k] == name) return CompiledName{static_cast<int>(k), {}};
        auto p = params_.find(name);
        if (p == params_.end() || params.size() > 64 || std::find(params.begin(), params.end(), name) != params.end())
            return std::nullopt;
        const size_t stack = param_stack_.size();
        std::string body;
        try {
            body = substitute_at(param_loc(p->second), p->second.text);
        } catch (const InputError&) {
            param_stack_.resize(stack);
            return std::nullopt;
        }
        params.push_back(name);
        std::optional<ExprCode> c = compile_in(body, scope, params);
        params.pop_back();
        if (!c) return std::nullopt;
        return CompiledName{-1, std::move(*c)};
    };
    return compile_expr(text, names);
}

const ExprCode* Lowerer::code_at(const YAML::Node& n, const std::string& text) const {
    if (n.Mark().pos < 0 || text.find("${") != std::string::npos) return nullptr;
    CachedCode& c = codes_[static_cast<size_t>(n.Mark().pos)];
    if (!c.done || c.text != text || c.scope != loop_names_) {
        c.done = true;
        c.text = text;
        c.scope = loop_names_;
        c.code = compile(text);
    }
    return c.code ? &*c.code : nullptr;
}

Lowerer::MapFields& Lowerer::fields_of(const YAML::Node& map) const {
    size_t key = static_cast<size_t>(map.Mark().pos);
    auto [it, inserted] = maps_.try_emplace(key);
    if (inserted)
        for (auto f = map.begin(); f != map.end(); ++f)
            if (f->first.IsScalar()) it->second.fields.emplace_back(f->first.Scalar(), f->second);
    return it->second;
}

YAML::Node Lowerer::field(const YAML::Node& map, const char* key) const {
    if (!map.IsMap() || map.Mark().pos < 0) return map[key];
    for (const auto& [k, v] : fields_of(map).fields)
        if (k == key) return v;
    return undefined_;  // one node for every absent key: building a fresh one allocates
}

std::string Lowerer::shown(const YAML::Node& n) const {
    std::string raw = n.Scalar(), text = substitute(n, raw);
    return "'" + raw + "'" + (text != raw ? " (= '" + text + "')" : "");
}

std::string Lowerer::set_arg_of(const std::string& raw, bool bare) const {
    std::vector<std::string> seen;
    return set_arg_in(raw, seen, bare);
}

// The names `text` uses, as the expression lexer reads them: a name starts with a letter or '_'
// (a number's unit, as in 16MiB or 2GB/s, is not one); `${name}` gives its name too. Each param
// among them (a loop variable hides a param of its name) that came from --set gives its argument;
// a param from the file is followed into its own text. The first such argument, or "".
// `bare` false: only `${name}` counts (a name such as an enum value is not substituted).
std::string Lowerer::set_arg_in(const std::string& text, std::vector<std::string>& seen, bool bare) const {
    auto alpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
    auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t i = 0; i < text.size();) {
        char c = text[i];
        if (std::isdigit(static_cast<unsigned char>(c))) {  // a number and its unit
            while (i < text.size() && (alnum(text[i]) || text[i] == '.' || text[i] == '/')) ++i;
            continue;
        }
        if (!alpha(c)) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < text.size() && alnum(text[j])) ++j;
        std::string name = text.substr(i, j - i);
        bool braced = i >= 2 && text.compare(i - 2, 2, "${") == 0;
        i = j;
        if (!bare && !braced) continue;
        if (!braced && std::find(loop_names_.begin(), loop_names_.end(), name) != loop_names_.end()) continue;
        if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
        auto it = params_.find(name);
        if (it == params_.end()) continue;
        if (!it->second.set_arg.empty()) return it->second.set_arg;
        seen.push_back(name);
        if (std::string arg = set_arg_in(it->second.text, seen, bare); !arg.empty()) return arg;
    }
    return "";
}

void Lowerer::fail_enum(const YAML::Node& n, const std::string& what) const {
    std::string raw = n.IsScalar() ? n.Scalar() : "";
    if (std::string arg = set_arg_of(raw, false); !arg.empty())
        throw InputError(SourceLoc{arg}, what + " (used at " + place(loc(n)) + ")");
    if (params_.count(raw) && raw.find_first_of(" ${}") == std::string::npos)
        fail_at(n, what + "; to use param '" + raw + "' here, write ${" + raw + "}");
    fail_at(n, what);
}

void Lowerer::fail_value(const YAML::Node& n, const std::string& what) const {
    if (n.IsScalar())
        if (std::string arg = set_arg_of(n.Scalar()); !arg.empty())
            throw InputError(SourceLoc{arg}, what + " (used at " + place(loc(n)) + ")");
    fail_at(n, what);
}

static std::string kind_of(const Value& v) {
    return v.dim == Dim::None ? " (no unit)" : std::string(" (a ") + to_string(v.dim) + ")";
}

Time Lowerer::need_time(const YAML::Node& n, const char* what) const {
    if (!n.IsScalar()) fail_at(n, std::string(what) + " must be a time with a unit such as 2ms or 1.5us, got " + a_node_type(n));
    Value v = eval(n, what);
    if (v.dim != Dim::Time)
        fail_value(n, std::string(what) + " must be a time with a unit such as 2ms or 1.5us, got " + shown(n) + kind_of(v));
    if (v.i < 0) fail_value(n, std::string(what) + " must not be negative, got " + v.describe());
    return Time::ps(v.i);
}

uint64_t Lowerer::need_bytes(const YAML::Node& n, const char* what) const {
    if (!n.IsScalar()) fail_at(n, std::string(what) + " must be a size with a unit such as 64MiB or 4KB, got " + a_node_type(n));
    Value v = eval(n, what);
    if (v.dim != Dim::Bytes)
        fail_value(n, std::string(what) + " must be a size with a unit such as 64MiB or 4KB, got " + shown(n) + kind_of(v));
    if (v.i < 0) fail_value(n, std::string(what) + " must not be negative, got " + v.describe());
    return static_cast<uint64_t>(v.i);
}

int64_t Lowerer::need_int(const YAML::Node& n, const char* what, int64_t lo, int64_t hi, const std::string& hint,
                          const std::optional<std::string>& below_hint) const {
    if (!n.IsScalar()) fail_at(n, std::string(what) + " must be a whole number, got " + a_node_type(n));
    Value v = eval(n, what);
    if (v.dim != Dim::None)
        fail_value(n, std::string(what) + " must be a whole number without a unit, got " + shown(n) + kind_of(v));
    std::string range = "between " + std::to_string(lo) + " and " + std::to_string(hi);
    if (!v.integral) {
        if (std::isfinite(v.d) && std::floor(v.d) == v.d && std::fabs(v.d) >= 9.2e18)  // whole, but beyond 64 bits
            fail_value(n, std::string(what) + " must be " + range + ", got " + shown(n) + hint);
        fail_value(n, std::string(what) + " must be a whole number, got " + shown(n) +
                          (n.Scalar() != v.describe() ? ", which is " + v.describe() : ""));
    }
    if (v.i < lo || v.i > hi)
        fail_value(n, std::string(what) + " must be " + range + ", got " + std::to_string(v.i) + (v.i < lo ? below_hint.value_or(hint) : hint));
    return v.i;
}

double Lowerer::need_real(const YAML::Node& n, const char* what) const {
    if (!n.IsScalar()) fail_at(n, std::string(what) + " must be a plain number, got " + a_node_type(n));
    Value v = eval(n, what);
    if (v.dim != Dim::None) fail_value(n, std::string(what) + " must be a plain number without a unit, got " + shown(n) + kind_of(v));
    double d = v.as_double();
    if (!(d >= 0) || d > 1e30) fail_value(n, std::string(what) + " must be a number between 0 and 1e30, got " + shown(n));
    return d;
}

bool Lowerer::need_bool(const YAML::Node& n, const char* what) const {
    if (n.IsScalar()) {
        std::string s = substitute(n, n.Scalar());
        if (s == "true") return true;
        if (s == "false") return false;
        fail_value(n, std::string(what) + " must be true or false, got " + shown(n));
    }
    fail_at(n, std::string(what) + " must be true or false, got " + a_node_type(n));
}

std::string Lowerer::need_name(const YAML::Node& n, const char* what) const {
    if (!n.IsScalar()) fail_at(n, std::string(what) + " must be a name, got " + a_node_type(n));
    if (n.Scalar().empty()) fail_at(n, std::string(what) + " must be a name, got an empty string");
    return substitute(n, n.Scalar());
}

// ---------------------------------------------------------------- references

namespace {
// Splits "name[expr]" into name and index expression ("" when there is none).
std::pair<std::string, std::string> split_index(const std::string& s) {
    size_t b = s.find('[');
    if (b == std::string::npos || s.back() != ']') return {s, ""};
    return {s.substr(0, b), s.substr(b + 1, s.size() - b - 2)};
}

template <class Map>
std::vector<std::string> keys_of(const Map& m) {
    std::vector<std::string> v;
    for (const auto& kv : m) v.push_back(kv.first);
    std::sort(v.begin(), v.end());
    return v;
}
}  // namespace

int32_t Lowerer::resolve(const YAML::Node& n, const std::string& text, const std::unordered_map<std::string, NamedDecl>& decls,
                         const char* what) const {
    auto [name, index] = split_index(text);
    auto it = decls.find(name);
    if (it == decls.end()) {
        std::vector<std::string> known = keys_of(decls);
        std::string near = did_you_mean(name, known);
        std::string list;
        for (size_t k = 0; k < known.size() && k < 8; ++k) list += (k ? ", " : "") + known[k];
        if (known.size() > 8) list += ", ...";
        fail_at(n, std::string("undefined ") + what + " '" + name + "'" +
                       (!near.empty()  ? "; did you mean '" + near + "'?"
                        : list.empty() ? std::string(" (declare it under '") + what + "s')"
                                       : std::string(" (declared: ") + list + "; declare it under '" + what + "s')"));
    }
    const NamedDecl& d = it->second;
    if (index.empty()) {
        if (d.count > 1)
            fail_at(n, std::string(what) + " '" + name + "' is an array of " + std::to_string(d.count) + "; index it as " + name + "[i]");
        return static_cast<int32_t>(d.first);
    }
    if (d.count == 1) fail_at(n, std::string(what) + " '" + name + "' is not an array; drop the index");
    bool outer = loop_var_used_;
    loop_var_used_ = false;
    // Array indices inside loops (`s[c % n]`) run their compiled code; anything that fails there
    // is evaluated in full, which gives the same value or the canonical message.
    Value v;
    const ExprCode* code = code_at(n, index);
    if (code && run_expr(*code, loop_vals_.data(), v)) {
        loop_var_used_ = code->vars != 0;
    } else {
        // The index's column: after the '[' when the text is the node's own (no ${} substituted).
        int col = text == n.Scalar() ? text_column(n, text) : 0;
        v = eval_at(loc_of(n, file_), col > 0 ? col + static_cast<int>(text.find('[')) + 1 : 0, index);
    }
    if (loop_var_used_ && recs_) record(true, n, code, v, d);
    loop_var_used_ = outer || loop_var_used_;
    if (v.dim != Dim::None || !v.integral) fail_at(n, std::string(what) + " index must be a whole number in '" + text + "'");
    if (v.i < 0 || v.i >= static_cast<int64_t>(d.count))
        fail_at(n, std::string(what) + " index " + std::to_string(v.i) + " is out of range for '" + name + "' (0.." +
                       std::to_string(d.count - 1) + ")");
    return static_cast<int32_t>(d.first + v.i);
}

int32_t Lowerer::stream_ref(const YAML::Node& n, int32_t thread) const {
    std::string name = need_name(n, "stream");
    if (name == "per_thread") {
        if (thread < 0) fail_at(n, "'per_thread' names the calling host thread's stream; tasks need a named stream");
        return const_cast<Lowerer*>(this)->per_thread_stream(thread);
    }
    return resolve(n, name, streams_, "stream");
}

int32_t Lowerer::event_ref(const YAML::Node& n) const { return resolve(n, need_name(n, "event"), events_, "event"); }

int32_t Lowerer::buffer_ref(const YAML::Node& n) const { return resolve(n, need_name(n, "buffer"), buffers_, "buffer"); }
int32_t Lowerer::graph_ref(const YAML::Node& n) const { return resolve(n, need_name(n, "graph"), graphs_, "graph"); }

int32_t Lowerer::per_thread_stream(int32_t thread) {
    if (per_thread_[thread] < 0) {
        per_thread_[thread] = static_cast<int32_t>(sc_.program.streams.size());
        sc_.program.streams.push_back(
            Stream{"per_thread:" + sc_.program.threads[thread].name, StreamKind::PerThread, 0, thread});
    }
    return per_thread_[thread];
}

uint32_t Lowerer::intern_name(const std::string& s) {
    auto [it, inserted] = name_ids_.try_emplace(s, static_cast<uint32_t>(sc_.program.names.size()));
    if (inserted) sc_.program.names.push_back(s);
    return it->second;
}

size_t Lowerer::SiteHash::operator()(const Site& s) const {
    // Each field folded in through a full 64-bit finaliser (libstdc++'s std::hash<uint64_t> is the
    // identity, and shift-xor combining left the label's bits out of the low bits, so that the
    // distinct labels of a graph's nodes ("k[0]", "k[1]", ...) shared buckets).
    auto fmix = [](uint64_t x) {
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ULL;
        return x ^ (x >> 33);
    };
    uint64_t h = fmix((uint64_t{s.label} << 32) | s.loc);
    auto mix = [&](uint64_t v) { h = fmix(h ^ (v + 0x9e3779b97f4a7c15ULL)); };
    mix((uint64_t{s.depth} << 48) | (uint64_t{s.uses_count} << 32) | s.uses_begin);
    mix((uint64_t{s.shape.grid} << 32) | s.shape.block);
    mix((uint64_t{s.shape.regs_per_thread} << 32) | s.shape.smem_per_block);
    mix(std::hash<double>()(s.flops));
    mix((uint64_t{s.rows} << 32) ^ s.spitch ^ (s.dpitch << 17));
    return static_cast<size_t>(h);
}

uint32_t Lowerer::intern_site(const Site& s) {
    auto [it, inserted] = site_ids_.try_emplace(s, static_cast<uint32_t>(sc_.program.sites.size()));
    if (inserted) sc_.program.sites.push_back(s);
    return it->second;
}

uint32_t Lowerer::intern_loc(const YAML::Node& n) {
    SourceLoc l = loc_of(n, file_);
    auto [it, inserted] = loc_ids_.try_emplace({l.line, l.col}, static_cast<uint32_t>(sc_.program.locs.size()));
    if (inserted) sc_.program.locs.push_back(l);
    return it->second;
}

}  // namespace hetsim
