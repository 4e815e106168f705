// Machine-readable report: scenario, resources, overlap metrics, critical path and one entry
// per op. The same schema is what a measured timeline (validation/) is read back from.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "report/analysis.hpp"
#include "report/suggestions.hpp"

namespace hetsim::report {

// A time as a JSON number of nanoseconds: an integer when whole, else exact to 3 decimals
// (printed in shortest form, so 1500 ps is 1.5).
nlohmann::json ns_value(Time t);

// The overlap metrics as the "metrics" object of a report (also used by `hetsim compare`).
nlohmann::json metrics_json(const Metrics& m);

// Keys: scenario, end_to_end_ns, resources, metrics, idle, critical_path {steps, share}, ops,
// warnings, and with `sug` suggestions (a list, best first), suggestions_skipped (why none) and
// suggestions_failed (changes whose run failed, with the error).
// idle: {<lane>: {idle_ns, causes: [{cause, ns, what}]}} for "gpu" and each engine used, the
// causes largest first, their integer ns summing to idle_ns. Readers ignore keys they do not know.
// Each op: name, kind, lane/start_ns/end_ns (GPU phase if any, else host phase), host_lane,
// host_start_ns, host_end_ns, host_cause, gpu_lane (stream), gpu_start_ns, gpu_end_ns, gpu_cause,
// engine, sync_wait_ns, bytes; keys of an absent phase are left out.
nlohmann::json to_json(const Program& p, const Timeline& t, const Analysis& a, const Suggestions* sug = nullptr);

// The "idle" object alone, and the "suggestions" list alone.
nlohmann::json idle_json(const IdleReport& idle);
nlohmann::json suggestions_json(const Suggestions& s);

// 2-space indentation, no trailing newline (like json::dump); object keys sorted, so the
// output is deterministic.
std::string dump_json(const nlohmann::json& j);

// Reads the "ops" of a to_json() document (e.g. a measured run) back into a Timeline; ops are
// matched by index and must agree in count (and name/kind where given). Throws
// std::runtime_error naming the op and key on any mismatch or malformed value.
Timeline timeline_from_json(const nlohmann::json& j, const Program& p);

}  // namespace hetsim::report
