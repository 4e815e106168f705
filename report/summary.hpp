// The human-readable report: end-to-end time, resources, the overlap evidence, why the GPU
// idles, the critical path, the simulated suggestions and any warnings of the run.
#pragma once
#include <ostream>

#include "report/analysis.hpp"
#include "report/suggestions.hpp"

namespace hetsim::report {

// Deterministic text: the same (Program, Timeline) prints byte-identical output.
// With `sug`, the simulated suggestions follow the critical path.
void write_summary(std::ostream& os, const Program& p, const Timeline& t, const Analysis& a, const Suggestions* sug = nullptr);

}  // namespace hetsim::report
