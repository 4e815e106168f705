// One self-contained HTML page per run (hetsim run --report) or comparison (hetsim compare
// --report): inline CSS, an inline SVG timeline (report/svg_timeline: a row per host thread,
// stream and engine, the critical path on top and outlined) and a little inline JS for the
// tooltips; no network access, no external file, so it opens offline. The page's script marks
// <body data-rendered="ok"> (and fills #render-status) once it has set up the drawing, or
// data-rendered="error" with the message when a script error happens.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "report/analysis.hpp"
#include "report/compare.hpp"
#include "report/suggestions.hpp"
#include "core/program.hpp"
#include "core/timeline.hpp"

namespace hetsim::report {

// A section given by the caller, shown after the overlap metrics, in order: room for reports
// that need more than the timeline. `html` is inserted as is; `id` names the <section>.
struct HtmlSection {
    std::string id, title, html;
};

struct HtmlRun {
    std::string scenario_name;  // the scenario's `name:`
    std::vector<HtmlSection> extra;
    const Suggestions* suggestions = nullptr;  // the simulated suggestions table, when computed
};

// The run report: headline figures, the timeline, why the GPU idles (a bar per cause), the
// suggestions table (when given), the critical path by segment, the resource table, the overlap
// metrics (with their definitions), extra sections, the warnings.
void write_html_report(std::ostream& os, const Program& p, const Timeline& t, const Analysis& a, const HtmlRun& run);

// Simulated against measured: the end-to-end error and its basis, both timelines on one time
// axis (each with its critical path), the metrics side by side, the per-op errors (largest
// first, up to 200), the warnings of both.
void write_html_comparison(std::ostream& os, const Program& p, const Timeline& sim, const Timeline& meas,
                           const Comparison& c, const std::string& scenario_name, const std::string& scenario_file,
                           const std::string& measured_file, const std::vector<HtmlSection>& extra = {});

}  // namespace hetsim::report
