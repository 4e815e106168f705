// A Kineto trace read back as the measured timeline of the scenario `hetsim import` made from it,
// for `hetsim compare workload.yaml TRACE.json`: every op of the program gets the interval the
// trace shows for it (the call or host work, and its GPU work), and each profiler step its
// measured and simulated length.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "core/timeline.hpp"
#include "frontend/limits.hpp"
#include "import/workload.hpp"

namespace hetsim::import {

struct MeasuredTrace {
    Timeline timeline;                    // parallel to the program's ops
    std::vector<int64_t> step_number;     // N of each ProfilerStep#N
    std::vector<Time> step_start;         // measured, from the window start
    std::vector<Time> step_length;        // measured
    std::vector<int32_t> step_first_op;   // the program op that starts each step (main thread); -1: none
};

// Matches the program's ops, thread by thread, to the workload the trace imports as (with the
// knobs at their imported values and the imported `steps`). Throws InputError naming the trace
// when they differ (another trace, other --set values) or the trace is bad input.
MeasuredTrace read_kineto_measured(const std::string& trace, const Program& p, const ImportOptions& opt = {},
                                    uint64_t max_memory = default_max_memory());

struct StepError {
    int64_t number = 0;
    Time measured, simulated;
    double error_pct = 0;
};

// Each step's simulated length: from its first op's host start to the next step's (the last step
// ends at the end to end time).
std::vector<StepError> step_errors(const MeasuredTrace& m, const Timeline& simulated);

}  // namespace hetsim::import
