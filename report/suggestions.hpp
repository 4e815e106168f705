// Simulated suggestions: changes hetsim applied to the scenario itself and simulated end to end
// (sweep/suggest computes them; the report writers print them). Data only.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/time.hpp"

namespace hetsim::report {

struct Suggestion {
    std::string change;     // "buffers=2", "buffer h_buf pinned instead of pageable", "options.sync: blocking", ...
    std::string kind;       // "pinned", "sync", "max_connections", "knob", "combination"
    Time end_to_end;        // simulated end to end with the change
    double delta_pct = 0;   // (end_to_end - baseline) / baseline * 100, rounded to 0.01
    // How to make the change by hand: `--set name=value` overrides, and edits of the file (a
    // dotted path such as buffers.h_buf.kind or options.sync, and the value to write there).
    std::vector<std::pair<std::string, std::string>> sets, edits;
};

// A change worth listing among those that shorten the run: by at least 0.05% of the baseline
// (a change that saves less prints as -0.0% and is noise, not a suggestion).
inline bool shortens(Time end_to_end, Time baseline) {
    return end_to_end < baseline && static_cast<double>((baseline - end_to_end).ps()) >= 0.0005 * static_cast<double>(baseline.ps());
}

struct Suggestions {
    Time baseline;                 // the scenario's own end to end
    std::vector<Suggestion> list;  // every simulated change, best (lowest end to end) first
    std::string skipped;           // why none were simulated ("" when they were)
    std::vector<std::string> failed;  // changes whose run failed, with the error: not suggested
};

}  // namespace hetsim::report
