#include "report/compare.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "report/json_input.hpp"
#include "report/json_report.hpp"
#include "core/error.hpp"

namespace hetsim::report {
namespace {

using nlohmann::json;

constexpr const char* kSchema = "hetsim.measured";
constexpr int kVersion = 1;
constexpr const char* kSyncNote =
    "measured exposed sync is an estimate: the runner does not split a blocking call into call cost and wait, so "
    "the whole host phase of a stream/event/device sync or a blocking copy/memset counts as waiting";

class Reader {
public:
    Reader(const std::string& file, const std::string& text) : file_(file), text_(text) {}
    // `at`: where in the document the problem is (line:col when the text is known).
    [[noreturn]] void fail(const std::string& what, const JsonPath& at = {}) const {
        throw InputError(text_.empty() ? SourceLoc{file_, 0, 0} : json_loc(file_, text_, at), what);
    }

    Time ns(const json& o, const char* key, const std::string& ctx, JsonPath at) const {
        at.emplace_back(std::string(key));
        return ns_of(o.at(key), ctx + ": \"" + key + "\"", at);
    }
    // `v` at `at`, named `what` in messages.
    Time ns_of(const json& v, const std::string& what, const JsonPath& at) const {
        int64_t ps = 0;
        if (v.is_number_integer()) {
            int64_t n = v.get<int64_t>();
            if (n > INT64_MAX / 1000 || n < INT64_MIN / 1000) fail(what + " is " + v.dump() + ", out of range; expected nanoseconds from 0 to 9e15", at);
            ps = n * 1000;
        } else if (v.is_number_float()) {
            double d = v.get<double>();
            if (!std::isfinite(d) || std::fabs(d) > 9e15) fail(what + " is " + v.dump() + ", out of range; expected nanoseconds from 0 to 9e15", at);
            ps = std::llround(d * 1000.0);
        } else {
            fail(what + " must be a number of nanoseconds, got " + v.dump(), at);
        }
        if (ps < 0) fail(what + " is negative (time zero is when the host threads are released)", at);
        return Time::ps(ps);
    }

    // A phase given by two keys: both or neither.
    bool phase(const json& o, const char* k0, const char* k1, Time& a, Time& b, const std::string& ctx, const JsonPath& at) const {
        bool h0 = o.contains(k0), h1 = o.contains(k1);
        if (h0 != h1) fail(ctx + ": \"" + (h0 ? k0 : k1) + "\" given without \"" + (h0 ? k1 : k0) + "\"; give both or neither", at);
        if (!h0) return false;
        a = ns(o, k0, ctx, at);
        b = ns(o, k1, ctx, at);
        if (b < a) {
            JsonPath at1 = at;
            at1.emplace_back(std::string(k1));
            fail(ctx + ": \"" + k1 + "\" is before \"" + k0 + "\"; a phase ends at or after its start", at1);
        }
        return true;
    }

private:
    std::string file_;
    const std::string& text_;
};

Engine infer_engine(const Op& op) {
    switch (op.kind) {
        case OpKind::Kernel: return Engine::Compute;
        case OpKind::Memset: return Engine::DeviceCopy;
        case OpKind::Memcpy:
            return op.dir == CopyDir::D2D ? Engine::DeviceCopy : op.dir == CopyDir::H2D ? Engine::H2D : Engine::D2H;
        case OpKind::Prefetch: return op.to_device ? Engine::H2D : Engine::D2H;
        default: return Engine::None;
    }
}

bool blocking(const Op& op) {
    switch (op.kind) {
        case OpKind::EventSync: case OpKind::StreamSync: case OpKind::DeviceSync: return true;
        case OpKind::Memcpy: return sync_call_waits(op) && op.host_mem != MemKind::Pageable;
        default: return false;
    }
}

json op_error_json(const Program& p, const OpError& e) {
    json j = {{"index", e.op}, {"name", p.op_name(e.op)}, {"kind", to_string(p.ops[e.op].kind)}};
    if (!e.compared) {
        j["phase"] = "none";
        return j;
    }
    j["phase"] = phase_name(e.phase);
    j["lane"] = e.lane;
    j["measured_start_ns"] = ns_value(e.meas_start);
    j["measured_end_ns"] = ns_value(e.meas_end);
    j["simulated_start_ns"] = ns_value(e.sim_start);
    j["simulated_end_ns"] = ns_value(e.sim_end);
    j["start_error_ns"] = ns_value(e.start_error);
    j["end_error_ns"] = ns_value(e.end_error);
    j["duration_error_ns"] = ns_value(e.duration_error);
    return j;
}

std::string signed_time(Time t) {
    std::string s(t > Time{} ? "+" : "");  // appends, not operator+: GCC 12 -Wrestrict false positive
    return s.append(format_time(t));
}

std::string pct(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%+.2f%%", v);
    return b;
}

std::string fixed(double v, const char* fmt) {
    char b[32];
    std::snprintf(b, sizeof b, fmt, v);
    return b;
}

// Columns padded to their widest cell; columns from `right_from` on are right-aligned.
void write_table(std::ostream& os, const std::vector<std::vector<std::string>>& rows, size_t right_from) {
    std::vector<size_t> w;
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); ++i) {
            if (w.size() <= i) w.push_back(0);
            w[i] = std::max(w[i], r[i].size());
        }
    for (const auto& r : rows) {
        std::string line;
        for (size_t i = 0; i < r.size(); ++i) {
            std::string pad(w[i] - r[i].size(), ' ');
            line.append(i == 0 ? "  " : "   ").append(i >= right_from ? pad + r[i] : r[i] + pad);
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        os << line << "\n";
    }
}

}  // namespace

Timeline measured_timeline_from_json(const json& j, const Program& p, const std::string& file, const std::string& text) {
    Reader rd(file, text);
    using P = JsonPath;
    if (!j.is_object())
        rd.fail(std::string("expected a measured timeline (a JSON object with \"schema\": \"hetsim.measured\"), got ") +
                (j.is_null() ? "null" : j.type_name()));
    if (!j.contains("schema"))
        rd.fail("no \"schema\" key: expected a measured timeline from hetsim-runner (\"schema\": \"hetsim.measured\")");
    if (j["schema"] != kSchema)
        rd.fail("schema is " + j["schema"].dump() + ", expected \"" + kSchema + "\" (a measured timeline from hetsim-runner)",
                P{"schema"});
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int64_t>() != kVersion)
        rd.fail("measured timeline version " + (j.contains("version") ? j["version"].dump() : std::string("(missing)")) +
                    " is not supported; this hetsim reads version " + std::to_string(kVersion),
                j.contains("version") ? P{"version"} : P{});
    if (!j.contains("ops") || !j["ops"].is_array())
        rd.fail(std::string("expected an \"ops\" array of measured ops, ") +
                    (j.contains("ops") ? std::string("got ") + (j["ops"].is_null() ? "null" : j["ops"].type_name()) : "found none"),
                j.contains("ops") ? P{"ops"} : P{});
    const json& ops = j["ops"];
    if (ops.size() != p.ops.size())
        rd.fail("the measured timeline has " + std::to_string(ops.size()) + " ops but the scenario lowers to " +
                    std::to_string(p.ops.size()) + " (measured from another scenario, or with other --set values?)",
                P{"ops"});
    Timeline t;
    t.ops.resize(p.ops.size());
    std::vector<bool> seen(p.ops.size(), false);
    Time latest;
    for (size_t k = 0; k < ops.size(); ++k) {
        const json& o = ops[k];
        const P here{"ops", k};
        std::string at = "ops[" + std::to_string(k) + "]";
        if (!o.is_object()) rd.fail(at + ": expected an object with \"index\" and \"name\", got " + (o.is_null() ? "null" : o.type_name()), here);
        if (!o.contains("index") || !o["index"].is_number_integer())
            rd.fail(at + ": needs an integer \"index\" (the op's position in the lowered program), got " +
                        (o.contains("index") ? o["index"].dump() : std::string("none")),
                    o.contains("index") ? P{"ops", k, "index"} : here);
        int64_t idx = o["index"].get<int64_t>();
        if (idx < 0 || static_cast<uint64_t>(idx) >= p.ops.size())
            rd.fail(at + ": index " + std::to_string(idx) + " is out of range (the scenario has " +
                        std::to_string(p.ops.size()) + " ops, 0 to " + std::to_string(p.ops.size() - 1) + ")",
                    P{"ops", k, "index"});
        const uint32_t i = static_cast<uint32_t>(idx);
        if (seen[i]) rd.fail(at + ": op index " + std::to_string(i) + " appears twice; each op is measured once", P{"ops", k, "index"});
        seen[i] = true;
        std::string ctx = "op " + std::to_string(i) + " (" + p.op_name(i) + ")";
        if (!o.contains("name") || o["name"] != p.op_name(i))
            rd.fail("op " + std::to_string(i) + ": measured name " + (o.contains("name") ? o["name"].dump() : "(missing)") +
                        " does not match the scenario's \"" + p.op_name(i) + "\"",
                    o.contains("name") ? P{"ops", k, "name"} : here);
        if (o.contains("kind") && o["kind"] != to_string(p.ops[i].kind))
            rd.fail(ctx + ": measured kind " + o["kind"].dump() + " does not match the scenario's " + to_string(p.ops[i].kind),
                    P{"ops", k, "kind"});
        OpRecord& r = t.ops[i];
        if (rd.phase(o, "host_start_ns", "host_end_ns", r.host_start, r.host_end, ctx, here)) {
            if (blocking(p.ops[i])) r.sync_wait = r.host_end - r.host_start;
            latest = max(latest, r.host_end);
        }
        if (rd.phase(o, "gpu_start_ns", "gpu_end_ns", r.gpu_start, r.gpu_end, ctx, here)) {
            r.engine = infer_engine(p.ops[i]);
            latest = max(latest, r.gpu_end);
        }
    }
    // Steady state: the runner's end to end is the window of the measured iteration, from the
    // release of the last barrier ("measured_from_ns"); the timeline's is from time zero.
    if (j.contains("measured_from_ns")) {
        if (!p.warmup)
            rd.fail("\"measured_from_ns\" marks a measured iteration, but the scenario has no warm-up iterations", P{"measured_from_ns"});
        t.measured_from = rd.ns(j, "measured_from_ns", "the document", P{});
        if (t.measured_from > latest)
            rd.fail("\"measured_from_ns\" " + std::to_string(t.measured_from.ps() / 1000) + " is after the end of every measured op (" +
                        std::to_string((latest.ps() + 999) / 1000) + " ns); the measured iteration starts before its ops end",
                    P{"measured_from_ns"});
    } else if (p.warmup) {
        rd.fail("the scenario has " + std::to_string(p.warmup) +
                " warm-up iterations, but the measured timeline has no \"measured_from_ns\" (measured by an older hetsim-runner?)");
    }
    if (j.contains("end_to_end_ns")) {
        const Time e2e = rd.ns(j, "end_to_end_ns", "the document", P{});
        if (e2e.ps() > INT64_MAX - t.measured_from.ps())
            rd.fail("\"measured_from_ns\" + \"end_to_end_ns\" passes 9.2e15 ns (about 107 days), the longest time hetsim holds",
                    P{"end_to_end_ns"});
        t.end_to_end = t.measured_from + e2e;
    } else {
        t.end_to_end = latest;
    }
    if (t.end_to_end == Time{} && !p.ops.empty())
        rd.fail("the measured end to end time is 0; expected the runner's \"end_to_end_ns\" or op phases that end after 0",
                j.contains("end_to_end_ns") ? P{"end_to_end_ns"} : P{});
    if (t.end_to_end < latest)
        rd.fail("\"end_to_end_ns\" " + std::to_string(t.end_to_end.ps() / 1000) + " is earlier than the end of the measured ops (" +
                    std::to_string((latest.ps() + 999) / 1000) + " ns); end to end spans every op",
                P{"end_to_end_ns"});
    if (j.contains("warnings") && j["warnings"].is_array())
        for (const json& w : j["warnings"])
            if (w.is_string()) t.warnings.push_back(w.get<std::string>());
    return t;
}

std::vector<Time> measured_uninstrumented_runs(const json& j, const std::string& file, const std::string& text) {
    std::vector<Time> out;
    const char* key = "uninstrumented_end_to_end_ns";
    if (!j.is_object() || !j.contains(key)) return out;
    Reader rd(file, text);
    const json& v = j[key];
    if (!v.is_array()) rd.fail(std::string("\"") + key + "\" must be an array of nanoseconds, got " + v.dump(), JsonPath{key});
    for (size_t k = 0; k < v.size(); ++k) {
        const std::string what = std::string(key) + "[" + std::to_string(k) + "]";
        out.push_back(rd.ns_of(v[k], what, JsonPath{key, k}));
        if (out.back() == Time{}) rd.fail(what + " is 0; a run's end to end time is a positive number of nanoseconds", JsonPath{key, k});
    }
    return out;
}

Timeline measured_unobserved_host(const json& j, const Program& p, const std::string& file, const std::string& text) {
    Timeline t;
    const char* key = "uninstrumented_ops";
    if (!j.is_object() || !j.contains(key)) return t;
    Reader rd(file, text);
    using P = JsonPath;
    const json& v = j[key];
    if (!v.is_array()) rd.fail(std::string("\"") + key + "\" must be an array of per-op host stamps, got " + v.dump(), P{key});
    t.ops.resize(p.ops.size());
    std::vector<bool> seen(p.ops.size(), false);
    for (size_t k = 0; k < v.size(); ++k) {
        const json& o = v[k];
        const P here{key, k};
        const std::string at = std::string(key) + "[" + std::to_string(k) + "]";
        if (!o.is_object() || !o.contains("index") || !o["index"].is_number_integer())
            rd.fail(at + ": expected an object with an integer \"index\"", here);
        const int64_t idx = o["index"].get<int64_t>();
        if (idx < 0 || static_cast<uint64_t>(idx) >= p.ops.size())
            rd.fail(at + ": index " + std::to_string(idx) + " is out of range (the scenario has " + std::to_string(p.ops.size()) + " ops)",
                    P{key, k, "index"});
        const uint32_t i = static_cast<uint32_t>(idx);
        if (seen[i]) rd.fail(at + ": op index " + std::to_string(i) + " appears twice", P{key, k, "index"});
        seen[i] = true;
        OpRecord& r = t.ops[i];
        rd.phase(o, "host_start_ns", "host_end_ns", r.host_start, r.host_end, "uninstrumented op " + std::to_string(i), here);
        t.end_to_end = max(t.end_to_end, r.host_end);
    }
    if (j.contains("uninstrumented_measured_from_ns")) t.measured_from = rd.ns(j, "uninstrumented_measured_from_ns", "the document", P{});
    return t;
}

Timeline read_measured_timeline(const std::string& file, const Program& p) { return read_measured(file, p).timeline; }

Measured read_measured(const std::string& file, const Program& p, uint64_t max_memory) {
    std::string text;
    json j = read_json_file(file, "a measured timeline: the JSON that hetsim-runner writes, \"schema\": \"hetsim.measured\"", &text,
                            max_memory);
    Measured m;
    m.timeline = measured_timeline_from_json(j, p, file, text);
    m.uninstrumented = measured_uninstrumented_runs(j, file, text);
    m.unobserved = measured_unobserved_host(j, p, file, text);
    return m;
}

namespace {
// Op `i` compared on one phase: simulated [ss, se) against measured [ms, me).
OpError op_error(const Program& p, uint32_t i, Phase phase, Time ss, Time se, Time ms, Time me) {
    OpError e;
    e.op = i;
    e.compared = true;
    e.phase = phase;
    e.lane = phase == Phase::Gpu ? stream_lane(p, p.ops[i].stream) : host_lane(p, p.ops[i].thread);
    e.sim_start = ss, e.sim_end = se, e.meas_start = ms, e.meas_end = me;
    e.start_error = ss - ms;
    e.end_error = se - me;
    e.duration_error = (se - ss) - (me - ms);
    return e;
}
}  // namespace

Comparison compare_timelines(const Program& p, const Timeline& sim, const Timeline& meas, size_t top,
                             const std::vector<Time>& uninstrumented, const Timeline* unobserved) {
    Comparison c;
    // End to end: of the measured iteration (Timeline::measured_from, 0 without warm-up iterations).
    c.simulated = sim.end_to_end - sim.measured_from;
    c.instrumented = meas.end_to_end - meas.measured_from;
    c.measured = c.instrumented;
    if (!uninstrumented.empty()) {
        std::vector<int64_t> v;
        for (Time t : uninstrumented) v.push_back(t.ps());
        std::sort(v.begin(), v.end());
        const size_t n = v.size();
        c.measured = Time::ps(n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2);
        c.measured_runs = n;
    }
    c.error = c.simulated - c.measured;
    c.error_pct = c.measured.ps() != 0
                      ? 100.0 * static_cast<double>(c.error.ps()) / static_cast<double>(c.measured.ps())
                      : 0.0;
    c.sim = analyze(p, sim);
    c.meas = analyze(p, meas);
    const size_t n = std::min({p.ops.size(), sim.ops.size(), meas.ops.size()});
    for (uint32_t i = 0; i < n; ++i) {
        const OpRecord& s = sim.ops[i];
        const OpRecord& m = meas.ops[i];
        if (s.has_gpu() && m.has_gpu()) c.ops.push_back(op_error(p, i, Phase::Gpu, s.gpu_start, s.gpu_end, m.gpu_start, m.gpu_end));
        else if (s.has_host() && m.has_host())
            c.ops.push_back(op_error(p, i, Phase::Host, s.host_start, s.host_end, m.host_start, m.host_end));
        else {
            OpError e;
            e.op = i;
            c.ops.push_back(std::move(e));
        }
    }
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < c.ops.size(); ++i)
        if (c.ops[i].compared) order.push_back(i);
    std::vector<uint32_t> by_duration = order;
    auto mag = [&](uint32_t i) { return std::abs(c.ops[i].end_error.ps()); };
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return mag(a) > mag(b); });
    if (order.size() > top) order.resize(top);
    c.largest = std::move(order);
    auto dmag = [&](uint32_t i) { return std::abs(c.ops[i].duration_error.ps()); };
    std::stable_sort(by_duration.begin(), by_duration.end(), [&](uint32_t a, uint32_t b) { return dmag(a) > dmag(b); });
    if (by_duration.size() > top) by_duration.resize(top);
    c.largest_duration = std::move(by_duration);
    if (unobserved) {
        const size_t m = std::min({p.ops.size(), sim.ops.size(), unobserved->ops.size()});
        for (uint32_t i = 0; i < m; ++i) {
            const OpRecord& s = sim.ops[i];
            const OpRecord& u = unobserved->ops[i];
            if (s.has_host() && u.has_host())
                c.host_unobserved.push_back(op_error(p, i, Phase::Host, s.host_start, s.host_end, u.host_start, u.host_end));
        }
        std::vector<uint32_t> h(c.host_unobserved.size());
        for (uint32_t k = 0; k < h.size(); ++k) h[k] = k;
        auto hmag = [&](uint32_t k) { return std::abs(c.host_unobserved[k].duration_error.ps()); };
        std::stable_sort(h.begin(), h.end(), [&](uint32_t a, uint32_t b) { return hmag(a) > hmag(b); });
        if (h.size() > top) h.resize(top);
        c.largest_host_unobserved = std::move(h);
    }
    return c;
}

json comparison_to_json(const Program& p, const Comparison& c, const std::string& scenario, const std::string& measured_file) {
    json j;
    j["scenario"] = scenario;
    j["measured_file"] = measured_file;
    j["end_to_end"] = {{"simulated_ns", ns_value(c.simulated)},
                       {"measured_ns", ns_value(c.measured)},
                       {"measured_basis", c.measured_runs ? "uninstrumented_median" : "instrumented"},
                       {"measured_runs", c.measured_runs},
                       {"instrumented_ns", ns_value(c.instrumented)},
                       {"error_ns", ns_value(c.error)},
                       {"error_pct", c.error_pct}};
    j["metrics"] = {{"simulated", metrics_json(c.sim.metrics)}, {"measured", metrics_json(c.meas.metrics)}};
    json ops = json::array(), largest = json::array(), largest_duration = json::array();
    for (const OpError& e : c.ops) ops.push_back(op_error_json(p, e));
    for (uint32_t i : c.largest) largest.push_back(op_error_json(p, c.ops[i]));
    j["ops"] = std::move(ops);
    j["largest"] = std::move(largest);
    for (uint32_t i : c.largest_duration) largest_duration.push_back(op_error_json(p, c.ops[i]));
    j["largest_duration"] = std::move(largest_duration);
    if (!c.host_unobserved.empty()) {
        json hu = json::array(), hl = json::array();
        for (const OpError& e : c.host_unobserved) hu.push_back(op_error_json(p, e));
        for (uint32_t k : c.largest_host_unobserved) hl.push_back(op_error_json(p, c.host_unobserved[k]));
        j["host_unobserved"] = std::move(hu);
        j["largest_host_unobserved"] = std::move(hl);
    }
    j["notes"] = json::array({kSyncNote});
    return j;
}

std::string measured_basis(const Comparison& c) {
    if (c.measured_runs == 0) return "the instrumented run (the file has no uninstrumented runs)";
    return c.measured_runs == 1 ? std::string("the one uninstrumented run")
                                : "the median of " + std::to_string(c.measured_runs) + " uninstrumented runs";
}

std::string comparison_headline(const Comparison& c) {
    return "simulated " + format_time(c.simulated) + " vs measured " + format_time(c.measured) +
           (c.measured_runs ? " (uninstrumented median)" : " (instrumented)") + ": error " + signed_time(c.error) + " (" +
           pct(c.error_pct) + ")";
}

void write_comparison_text(std::ostream& os, const Program& p, const Comparison& c, const std::string& scenario,
                           const std::string& measured_file) {
    os << "compare: " << scenario << " (simulated) vs " << measured_file << " (measured)\n\n";
    os << "end to end: " << comparison_headline(c) << "\n";
    os << "  measured: " << measured_basis(c);
    if (c.measured_runs) os << "; the metrics and per-op times below are of the instrumented run, " << format_time(c.instrumented);
    os << "\n\n";

    const Metrics& s = c.sim.metrics;
    const Metrics& m = c.meas.metrics;
    auto trow = [](const char* name, Time a, Time b) {
        return std::vector<std::string>{name, format_time(a), format_time(b), signed_time(a - b)};
    };
    std::vector<std::vector<std::string>> rows = {
        {"metric", "simulated", "measured", "sim - measured"},
        trow("serial work", s.serial, m.serial),
        trow("elapsed", s.elapsed, m.elapsed),
        {"speedup", fixed(s.speedup, "%.3fx"), fixed(m.speedup, "%.3fx"), fixed(s.speedup - m.speedup, "%+.3fx")},
        trow("any work running", s.busy_union, m.busy_union),
        trow("hidden by overlap", s.hidden, m.hidden),
        trow("exposed sync wait *", s.exposed_sync, m.exposed_sync),
        trow("GPU active union", s.gpu_active_union, m.gpu_active_union),
        {"GPU active fraction", fixed(s.gpu_active_fraction, "%.3f"), fixed(m.gpu_active_fraction, "%.3f"),
         fixed(s.gpu_active_fraction - m.gpu_active_fraction, "%+.3f")},
    };
    write_table(os, rows, 1);
    os << "  * measured: estimated; the whole host phase of a blocking call (stream/event/device sync,\n"
          "    blocking copy or memset) counts as waiting\n\n";

    size_t compared = 0;
    for (const OpError& e : c.ops) compared += e.compared ? 1 : 0;
    os << "largest per-op errors (simulated - measured, by |end error|): " << c.largest.size() << " of " << compared
       << " compared ops";
    if (compared != c.ops.size()) os << " (" << c.ops.size() - compared << " ops have no phase in both timelines)";
    os << "\n";
    if (c.largest.empty()) return;
    std::vector<std::vector<std::string>> t = {{"op", "name", "kind", "phase", "lane", "meas start", "meas end",
                                                "sim start", "sim end", "start error", "end error"}};
    for (uint32_t i : c.largest) {
        const OpError& e = c.ops[i];
        t.push_back({std::to_string(e.op), p.op_name(e.op), to_string(p.ops[e.op].kind), phase_name(e.phase), e.lane,
                     format_time(e.meas_start), format_time(e.meas_end), format_time(e.sim_start),
                     format_time(e.sim_end), signed_time(e.start_error), signed_time(e.end_error)});
    }
    write_table(os, t, 5);

    // An end error is mostly the delay an op inherited from those before it; the op's own length
    // says where the model's cost of one op is off.
    os << "\nlargest per-op duration errors (the op's own phase length, simulated - measured): "
       << c.largest_duration.size() << " of " << compared << " compared ops\n";
    std::vector<std::vector<std::string>> d = {{"op", "name", "kind", "phase", "lane", "meas length", "sim length",
                                                "length error", "error %"}};
    for (uint32_t i : c.largest_duration) {
        const OpError& e = c.ops[i];
        const Time meas = e.meas_end - e.meas_start;
        d.push_back({std::to_string(e.op), p.op_name(e.op), to_string(p.ops[e.op].kind), phase_name(e.phase), e.lane,
                     format_time(meas), format_time(e.sim_end - e.sim_start), signed_time(e.duration_error),
                     meas > Time{} ? fixed(100.0 * static_cast<double>(e.duration_error.ps()) / static_cast<double>(meas.ps()), "%+.1f%%")
                                   : std::string("-")});
    }
    write_table(os, d, 5);

    // The instrumented run's host calls carry the profiler's cost; the uninstrumented run's host
    // stamps are the calls as the program makes them unobserved.
    if (c.host_unobserved.empty()) return;
    os << "\nlargest host-call length errors against the median uninstrumented run (no profiler attached): "
       << c.largest_host_unobserved.size() << " of " << c.host_unobserved.size() << " host phases\n";
    std::vector<std::vector<std::string>> h = {{"op", "name", "kind", "lane", "meas start", "meas length", "sim start", "sim length",
                                                "length error", "error %"}};
    for (uint32_t k : c.largest_host_unobserved) {
        const OpError& e = c.host_unobserved[k];
        const Time meas = e.meas_end - e.meas_start;
        h.push_back({std::to_string(e.op), p.op_name(e.op), to_string(p.ops[e.op].kind), e.lane, format_time(e.meas_start),
                     format_time(meas), format_time(e.sim_start), format_time(e.sim_end - e.sim_start), signed_time(e.duration_error),
                     meas > Time{} ? fixed(100.0 * static_cast<double>(e.duration_error.ps()) / static_cast<double>(meas.ps()), "%+.1f%%")
                                   : std::string("-")});
    }
    write_table(os, h, 4);
}

}  // namespace hetsim::report
