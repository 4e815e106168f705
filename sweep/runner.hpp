// Runs sweep points in parallel: worker threads take point indices from a shared atomic counter,
// each point is loaded, simulated and analysed on its own, and its CSV row is handed back to the
// calling thread, which stores it by point index. Results do not depend on the number of workers.
//
// Loading dominates the cost of a point (lowering the ops), so each worker keeps the last few
// lowered scenarios, keyed by everything that can change the lowered program: the scenario params
// and the hardware parameters the lowering reads (sm.*, device.memory, zero_latency, and any key
// not known to be timing-only). Points that differ only in timing parameters (host.*, copy.*,
// gpu.*, hbm.*, kernel.*, um.*) reuse the program and get those values set on a copy of the
// profile, exactly as `--set` would set them (they are applied last either way).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sweep/spec.hpp"

namespace hetsim::sweep {

// True for hardware keys (without "hardware.") that only the engine reads, never the lowering.
bool timing_only_key(const std::string& key);

struct RunConfig {
    unsigned jobs = 1;
    uint64_t stop_after = 0;                   // compute at most this many points (0: all); testing
    bool cache = true;                         // reuse lowered programs across timing-only changes
    const std::atomic<bool>* cancel = nullptr; // stop taking new points when set (a signal)
    // Called on the calling thread about ten times a second: points finished so far in this run.
    std::function<void(uint64_t computed)> tick;
    // Called on the calling thread when new rows arrived and the last checkpoint is `interval`
    // old; the interval grows to 20x the time the checkpoint took, so that rewriting a large
    // file never takes more than a few percent of the run.
    std::function<void()> checkpoint;
    std::chrono::milliseconds interval{1000};
};

struct PointError {
    uint64_t point = 0;
    std::string message;  // the error as the CLI prints it (one line)
    int exit_code = 2;    // 2 bad input or deadlock, 3 internal
};

struct RunOutcome {
    uint64_t computed = 0;
    bool stopped = false;              // --stop-after or cancel: some points were not run
    std::optional<PointError> error;   // the failing point with the lowest index
};

// Computes the points in `todo`; stores each row (no newline) into rows[point].
RunOutcome run_points(const SweepDef& def, const std::string& scenario_text, const std::vector<uint64_t>& todo,
                      std::vector<std::string>& rows, const RunConfig& cfg);

// Loads, simulates and analyses one point (no cache): its row. Throws what load/simulate throw.
std::string compute_point(const SweepDef& def, const std::string& scenario_text, uint64_t point);

}  // namespace hetsim::sweep
