// The human-readable report: end-to-end time, resources, the overlap evidence,
// the critical path and any warnings of the run.
#pragma once
#include <ostream>

#include "report/analysis.hpp"

namespace hetsim::report {

// Deterministic text: the same (Program, Timeline) prints byte-identical output.
void write_summary(std::ostream& os, const Program& p, const Timeline& t, const Analysis& a);

}  // namespace hetsim::report
