// Hand-written SVG of one or more timelines of the same program, one above the other on a
// shared time axis: one row per lane (host threads, then streams, then, when asked, the copy
// engines, the SMs and device copies; the same rows in every section), one <rect class="op ...">
// per phase coloured by kind with a tooltip (<title>: name, kind, phase, lane, start, end,
// duration, cause), a legend and a title. A section given its Analysis also shows its critical
// path: a row of its steps on top, and each step outlined where it ran. Deterministic: the same
// input gives the same bytes.
#pragma once
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "core/timeline.hpp"
#include "report/analysis.hpp"

namespace hetsim::report {

struct SvgSection {
    std::string label;  // e.g. "Simulated"
    const Timeline* timeline = nullptr;
    const Analysis* analysis = nullptr;  // set: draw its critical path
};

struct SvgOptions {
    bool engine_lanes = false;  // rows for copy:h2d, copy:d2h, sm, device_copy (concurrent work in sub-rows)
    bool xml_declaration = true;  // false to embed the <svg> in an HTML page
    // Past this many phases in all, each lane is drawn as the share of each pixel column it
    // was busy (by kind), one rect per run of columns, instead of a rect per phase.
    size_t max_phase_rects = 40000;
};

void write_svg_timelines(std::ostream& os, const Program& p, const std::vector<SvgSection>& sections,
                         const std::string& title, const SvgOptions& options = {});

// Text and attribute escaping for XML: & < > " ' (and control characters dropped).
std::string xml_escape(const std::string& s);

// "stream order after h2d[1] (gpu)", "start": why a phase started, for tooltips.
std::string phase_cause_text(const Program& p, const Cause& c);

}  // namespace hetsim::report
