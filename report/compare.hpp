// Simulated vs measured: reads a measured timeline (hetsim-runner's "hetsim.measured" JSON) into
// a Timeline of the same Program, and compares the two per op and end to end, with the
// parallelism evidence of both side by side. Used by `hetsim compare`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/limits.hpp"
#include "report/analysis.hpp"

namespace hetsim::report {

// Reads a measured timeline ("schema": "hetsim.measured", "version": 1) of program `p`. Ops are
// matched by "index" (each exactly once) and their "name" (and "kind", where given) must agree
// with the program; keys the runner adds (thread, stream, issue_*_ns, metadata) are ignored.
// Engines are inferred from the op kind (the runner records none). Sync waits are an estimate:
// the whole host phase of a blocking call (stream/event/device sync, blocking copy or memset
// from non-pageable memory) counts as waiting. end_to_end is "end_to_end_ns" when present,
// else the latest phase end. Throws hetsim::InputError{file, ...} on any mismatch; with the
// document's `text`, at the line and column of the offending value.
Timeline measured_timeline_from_json(const nlohmann::json& j, const Program& p, const std::string& file,
                                     const std::string& text = {});

// The end-to-end times of the runs without instrumentation ("uninstrumented_end_to_end_ns",
// nanoseconds; the runner times them with CUPTI off), empty when the document has none.
// CUPTI makes the instrumented run (the one timed op by op) 0.1-4.5 ms longer, so the
// end-to-end error is judged on these. InputError at the key when it is not an array of
// non-negative numbers.
std::vector<Time> measured_uninstrumented_runs(const nlohmann::json& j, const std::string& file,
                                               const std::string& text = {});

// Reads and parses `file`, then measured_timeline_from_json. InputError (file:line:col) when it
// cannot be read, is empty or is not JSON.
Timeline read_measured_timeline(const std::string& file, const Program& p);

// The median uninstrumented run's host stamps ("uninstrumented_ops": per op that has them,
// "index", "host_start_ns"/"host_end_ns"; the runner writes them since 2026-12-02): a timeline
// with host phases only, as the program ran with no profiler attached. Empty (no ops) when the
// document has none. InputError at the offending value (index out of range or repeated, a phase
// that ends before it starts, not nanoseconds).
Timeline measured_unobserved_host(const nlohmann::json& j, const Program& p, const std::string& file,
                                  const std::string& text = {});

struct Measured {
    Timeline timeline;                 // the instrumented run, op by op
    std::vector<Time> uninstrumented;  // end-to-end times of the uninstrumented runs
    Timeline unobserved;               // host phases of the median uninstrumented run (may have no ops)
};
// read_measured_timeline and measured_uninstrumented_runs of one file.
Measured read_measured(const std::string& file, const Program& p, uint64_t max_memory = default_max_memory());

// One op compared: on the GPU phase when both timelines have one, else on the host phase when
// both have one, else not compared (phase == "none").
struct OpError {
    uint32_t op = 0;
    bool compared = false;
    Phase phase = Phase::Host;
    std::string lane;                 // stream lane (GPU phase) or host lane
    Time sim_start, sim_end, meas_start, meas_end;
    Time start_error, end_error;      // simulated - measured
    Time duration_error;              // (sim_end - sim_start) - (meas_end - meas_start): the op's own
                                      // length, apart from the delay it inherited from ops before it
};

struct Comparison {
    Time simulated, measured;  // end to end; measured: see measured_runs
    Time instrumented;         // end to end of the measured timeline (the instrumented run)
    size_t measured_runs = 0;  // > 0: `measured` is the median of this many uninstrumented runs;
                               // 0: there were none, `measured` is the instrumented run's
    Time error;                // simulated - measured
    double error_pct = 0;      // 100 * error / measured (0 when measured is 0)
    Analysis sim, meas;
    std::vector<OpError> ops;      // one per op, in op order
    std::vector<uint32_t> largest; // indices into ops: compared ops by |end error| (desc), ties by op index
    std::vector<uint32_t> largest_duration; // the same by |duration error| (desc), ties by op index
    // Host calls against the median uninstrumented run's host stamps (no profiler attached: the
    // instrumented run's host calls are longer), one per op with a host phase in both; the
    // largest by |duration error| (desc), ties by op index. Empty without such stamps.
    std::vector<OpError> host_unobserved;
    std::vector<uint32_t> largest_host_unobserved;  // indices into host_unobserved
};

// With `uninstrumented` runs, the end-to-end error is against their median (as `hetsim
// validate` judges); without, against the measured timeline's end to end.
Comparison compare_timelines(const Program& p, const Timeline& sim, const Timeline& meas, size_t top,
                             const std::vector<Time>& uninstrumented = {}, const Timeline* unobserved = nullptr);

// "the median of 5 uninstrumented runs" / "the instrumented run (the file has no uninstrumented runs)"
std::string measured_basis(const Comparison& c);

// {scenario, measured_file, end_to_end: {simulated_ns, measured_ns, error_ns, error_pct,
//  measured_basis ("uninstrumented_median" or "instrumented"), measured_runs, instrumented_ns},
//  metrics: {simulated: {...}, measured: {...}}, ops: [...], largest: [...], largest_duration: [...], host_unobserved: [...] and
//  largest_host_unobserved: [...] (only with host stamps of an uninstrumented run), notes: [...]}.
nlohmann::json comparison_to_json(const Program& p, const Comparison& c, const std::string& scenario,
                                  const std::string& measured_file);

// The readable report: end to end, metrics side by side, the largest per-op errors (of the end,
// then of the op's own length).
void write_comparison_text(std::ostream& os, const Program& p, const Comparison& c, const std::string& scenario,
                           const std::string& measured_file);

// "simulated 1.234 ms vs measured 1.300 ms (uninstrumented median): error -66.000 us (-5.08%)"
std::string comparison_headline(const Comparison& c);

}  // namespace hetsim::report
