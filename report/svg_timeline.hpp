// Hand-written SVG of one or more timelines of the same program, one above the other on a
// shared time axis: one row per lane (host threads, then streams; the same rows in every
// section), one <rect class="op ..."> per phase coloured by kind, a legend and a title.
// Deterministic: the same input gives the same bytes.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "core/timeline.hpp"

namespace hetsim::report {

struct SvgSection {
    std::string label;  // e.g. "Simulated"
    const Timeline* timeline = nullptr;
};

void write_svg_timelines(std::ostream& os, const Program& p, const std::vector<SvgSection>& sections,
                         const std::string& title);

// Text and attribute escaping for XML: & < > " ' (and control characters dropped).
std::string xml_escape(const std::string& s);

}  // namespace hetsim::report
