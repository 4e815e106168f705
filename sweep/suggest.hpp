// Suggestions, each simulated: the remedies hetsim can apply to a scenario itself, each lowered
// and simulated end to end like a separate `hetsim run` of the changed scenario:
//   - pinned instead of pageable, for each pageable buffer a copy on the critical path reads or
//     writes (the buffer's `kind:` edited to pinned);
//   - blocking-sync scheduling instead of spinning, or spinning instead (options.sync);
//   - CUDA_DEVICE_MAX_CONNECTIONS=32 (options.max_connections) where streams share fewer queues;
//   - every value of every design knob the file declares (`knobs:`), one at a time (as
//     `--set knob=value`), then the best combination of the knobs: every combination when they
//     fit in what is left of the budget, else a descent from the best single values, one knob
//     at a time; and the best combination together with every other change that helped.
// Nothing is suggested that was not simulated: a change whose run fails is dropped (and listed
// in Suggestions::failed with its error).
// Cost: at most `budget` runs in all, and at most max(4, ops_budget / ops) (about 2*10^7 ops
// simulated, a few seconds); none for a program above `max_ops` ops.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "frontend/scenario.hpp"
#include "report/suggestions.hpp"
#include "sim/engine.hpp"

namespace hetsim::sweep {

struct SuggestOptions {
    uint64_t budget = 64;         // simulated runs at most, single changes and combinations together
    uint64_t max_ops = 1'000'000; // skip the suggestions for a larger program (each run re-lowers it)
    uint64_t ops_budget = 20'000'000;  // and fewer runs for a large one: about this many ops simulated in all (4 runs at least)
};

// `scenario_text` is the file's text, `file` its path (messages), `lo` the run's load options
// (its --set list; each suggestion adds to it), `base` and `base_end` the scenario as run.
report::Suggestions suggest(const std::string& scenario_text, const std::string& file, const LoadOptions& lo,
                            const EngineOptions& eo, const Scenario& base, const std::vector<uint32_t>& critical_ops,
                            Time base_end, const SuggestOptions& opts = {});

// How a suggestion is applied: the --set list it adds, and the YAML edits (dotted path, value).
struct Change {
    std::string text;  // report::Suggestion::change
    std::string kind;
    std::vector<std::pair<std::string, std::string>> sets, edits;
};
// The end to end of the scenario with `c` applied (throws what load/simulate throw).
Time simulate_change(const std::string& scenario_text, const std::string& file, const LoadOptions& lo, const EngineOptions& eo,
                     const Change& c);

}  // namespace hetsim::sweep
