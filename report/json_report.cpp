#include "report/json_report.hpp"

#include <cmath>
#include <stdexcept>

namespace hetsim::report {
namespace {

using nlohmann::json;

json cause_json(const Cause& c) {
    json j = {{"kind", to_string(c.kind)}};
    if (c.op >= 0) {
        j["op"] = c.op;
        j["phase"] = phase_name(c.phase);
    }
    return j;
}

json op_json(const Program& p, const Timeline& t, uint32_t i) {
    const Op& op = p.ops[i];
    const OpRecord& r = t.ops[i];
    json j = {{"name", p.op_name(i)}, {"kind", to_string(op.kind)}, {"sync_wait_ns", ns_value(r.sync_wait)}};
    if (op.bytes_or_0() != 0) j["bytes"] = op.bytes;
    if (r.has_host()) {
        j["host_lane"] = host_lane(p, op.thread);
        j["host_start_ns"] = ns_value(r.host_start);
        j["host_end_ns"] = ns_value(r.host_end);
        j["host_cause"] = cause_json(r.host_cause);
    }
    if (r.has_gpu()) {
        j["gpu_lane"] = stream_lane(p, op.stream);
        j["gpu_start_ns"] = ns_value(r.gpu_start);
        j["gpu_end_ns"] = ns_value(r.gpu_end);
        j["gpu_cause"] = cause_json(r.gpu_cause);
        j["engine"] = r.engine == Engine::None ? "none" : engine_lane(r.engine);
        j["lane"] = j["gpu_lane"];
        j["start_ns"] = j["gpu_start_ns"];
        j["end_ns"] = j["gpu_end_ns"];
    } else if (r.has_host()) {
        j["lane"] = j["host_lane"];
        j["start_ns"] = j["host_start_ns"];
        j["end_ns"] = j["host_end_ns"];
    }
    return j;
}

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("timeline JSON: " + what); }

Time read_ns(const json& o, const char* key, const std::string& ctx) {
    const json& v = o.at(key);
    if (v.is_number_integer()) return Time::ps(v.get<int64_t>() * 1000);
    if (v.is_number_float()) {
        double d = v.get<double>();
        if (!std::isfinite(d)) fail(ctx + ": \"" + key + "\" is not finite");
        return Time::ps(std::llround(d * 1000.0));
    }
    fail(ctx + ": \"" + key + "\" must be a number of nanoseconds");
}

// Reads a phase given by two keys; both or neither must be present.
bool read_phase(const json& o, const char* k0, const char* k1, Time& a, Time& b, const std::string& ctx) {
    bool h0 = o.contains(k0), h1 = o.contains(k1);
    if (h0 != h1) fail(ctx + ": \"" + (h0 ? k0 : k1) + "\" given without \"" + (h0 ? k1 : k0) + "\"");
    if (!h0) return false;
    a = read_ns(o, k0, ctx);
    b = read_ns(o, k1, ctx);
    if (b < a) fail(ctx + ": \"" + k1 + "\" is before \"" + k0 + "\"");
    return true;
}

Cause read_cause(const json& o, const char* key, const std::string& ctx) {
    Cause c;
    if (!o.contains(key)) return c;
    const json& v = o.at(key);
    if (!v.is_object() || !v.contains("kind") || !v["kind"].is_string()) fail(ctx + ": \"" + key + "\" needs a kind");
    std::string kind = v["kind"].get<std::string>();
    bool found = false;
    for (int k = 0; k <= static_cast<int>(CauseKind::GraphExec) && !found; ++k)
        if (kind == to_string(static_cast<CauseKind>(k))) { c.kind = static_cast<CauseKind>(k); found = true; }
    if (!found) fail(ctx + ": unknown cause kind \"" + kind + "\"");
    if (v.contains("op")) {
        if (!v["op"].is_number_integer()) fail(ctx + ": cause op must be an integer");
        c.op = v["op"].get<int32_t>();
        c.phase = v.value("phase", std::string("host")) == "gpu" ? Phase::Gpu : Phase::Host;
    }
    return c;
}

Engine read_engine(const json& o, const std::string& ctx) {
    if (!o.contains("engine")) return Engine::None;
    if (!o["engine"].is_string()) fail(ctx + ": \"engine\" must be a string");
    std::string e = o["engine"].get<std::string>();
    if (e == "none") return Engine::None;
    for (Engine x : {Engine::H2D, Engine::D2H, Engine::Compute, Engine::DeviceCopy})
        if (e == engine_lane(x)) return x;
    fail(ctx + ": unknown engine \"" + e + "\"");
}

}  // namespace

json ns_value(Time t) {
    if (t.ps() % 1000 == 0) return t.ps() / 1000;
    return static_cast<double>(t.ps()) / 1000.0;
}

json metrics_json(const Metrics& m) {
    return {{"serial_ns", ns_value(m.serial)},
            {"elapsed_ns", ns_value(m.elapsed)},
            {"speedup", m.speedup},
            {"busy_union_ns", ns_value(m.busy_union)},
            {"hidden_ns", ns_value(m.hidden)},
            {"exposed_sync_ns", ns_value(m.exposed_sync)},
            {"gpu_active_union_ns", ns_value(m.gpu_active_union)},
            {"gpu_active_fraction", m.gpu_active_fraction},
            {"exposed_sync_fraction", m.exposed_sync_fraction}};
}

json idle_json(const IdleReport& idle) {
    json out = json::object();
    for (const IdleLane& l : idle.lanes) {
        json causes = json::array();
        for (const IdleCause& c : l.causes) causes.push_back({{"cause", c.cause}, {"ns", c.ns}, {"what", c.what}});
        out[l.name] = {{"idle_ns", l.idle_ns}, {"causes", std::move(causes)}};
    }
    return out;
}

json suggestions_json(const Suggestions& s) {
    json out = json::array();
    for (const Suggestion& g : s.list) {
        json sets = json::array(), edits = json::object();
        for (const auto& [k, v] : g.sets) sets.push_back(k + "=" + v);
        for (const auto& [k, v] : g.edits) edits[k] = v;
        out.push_back({{"change", g.change}, {"kind", g.kind}, {"end_to_end_ns", ns_value(g.end_to_end)}, {"delta_pct", g.delta_pct},
                       {"sets", std::move(sets)}, {"edits", std::move(edits)}});
    }
    return out;
}

json to_json(const Program& p, const Timeline& t, const Analysis& a, const Suggestions* sug) {
    json j;
    j["scenario"] = p.source;
    j["end_to_end_ns"] = ns_value(a.measured);
    if (a.warmup) {  // measure: {warmup: K}: end_to_end_ns is the last iteration's
        j["warmup"] = a.warmup;
        j["all_iterations_ns"] = ns_value(a.end_to_end);
    }

    json res = json::array();
    for (const Resource& r : a.resources)
        res.push_back({{"name", r.name}, {"kind", r.kind}, {"busy_ns", ns_value(r.busy)},
                       {"utilization", r.utilization}, {"hidden_ns", ns_value(r.hidden)}});
    j["resources"] = std::move(res);

    j["metrics"] = metrics_json(a.metrics);
    j["idle"] = idle_json(a.idle);
    if (sug) {
        j["suggestions"] = suggestions_json(*sug);
        if (!sug->skipped.empty()) j["suggestions_skipped"] = sug->skipped;
        if (!sug->failed.empty()) j["suggestions_failed"] = sug->failed;
    }

    json steps = json::array();
    for (const CriticalStep& s : a.critical_path)
        steps.push_back({{"op", s.op},
                         {"name", s.op < p.ops.size() ? p.op_name(s.op) : std::string()},
                         {"phase", phase_name(s.phase)},
                         {"lane", a.lane(s)},
                         {"kind", a.kind(s)},
                         {"start_ns", ns_value(s.start)},
                         {"end_ns", ns_value(s.end)},
                         {"cause", to_string(s.cause)}});
    json share = json::object();
    for (const KindShare& k : a.critical_share) share[k.kind] = k.share;
    j["critical_path"] = {{"steps", std::move(steps)}, {"share", std::move(share)}};

    json ops = json::array();
    for (uint32_t i = 0; i < p.ops.size() && i < t.ops.size(); ++i) ops.push_back(op_json(p, t, i));
    j["ops"] = std::move(ops);
    j["warnings"] = t.warnings;
    return j;
}

// Invalid UTF-8 (a name from a --set value, say) becomes U+FFFD instead of a type_error.
std::string dump_json(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

Timeline timeline_from_json(const json& j, const Program& p) {
    if (!j.is_object() || !j.contains("ops") || !j["ops"].is_array()) fail("expected an object with an \"ops\" array");
    const json& ops = j["ops"];
    if (ops.size() != p.ops.size())
        fail("has " + std::to_string(ops.size()) + " ops but the program has " + std::to_string(p.ops.size()));
    Timeline t;
    t.ops.resize(p.ops.size());
    Time latest;
    for (uint32_t i = 0; i < p.ops.size(); ++i) {
        const json& o = ops[i];
        std::string ctx = "op " + std::to_string(i) + " (" + p.op_name(i) + ")";
        if (!o.is_object()) fail(ctx + ": expected an object");
        if (o.contains("name") && o["name"] != p.op_name(i))
            fail(ctx + ": name " + o["name"].dump() + " does not match the program");
        if (o.contains("kind") && o["kind"] != to_string(p.ops[i].kind))
            fail(ctx + ": kind " + o["kind"].dump() + " does not match the program's " + to_string(p.ops[i].kind));
        OpRecord& r = t.ops[i];
        if (read_phase(o, "host_start_ns", "host_end_ns", r.host_start, r.host_end, ctx)) {
            r.host_cause = read_cause(o, "host_cause", ctx);
            latest = max(latest, r.host_end);
        }
        if (read_phase(o, "gpu_start_ns", "gpu_end_ns", r.gpu_start, r.gpu_end, ctx)) {
            r.gpu_cause = read_cause(o, "gpu_cause", ctx);
            r.engine = read_engine(o, ctx);
            latest = max(latest, r.gpu_end);
        }
        if (o.contains("sync_wait_ns")) r.sync_wait = read_ns(o, "sync_wait_ns", ctx);
    }
    t.end_to_end = j.contains("end_to_end_ns") ? read_ns(j, "end_to_end_ns", "document") : latest;
    if (j.contains("warnings")) {
        if (!j["warnings"].is_array()) fail("\"warnings\" must be an array of strings");
        for (const json& w : j["warnings"]) {
            if (!w.is_string()) fail("\"warnings\" must be an array of strings");
            t.warnings.push_back(w.get<std::string>());
        }
    }
    return t;
}

}  // namespace hetsim::report
