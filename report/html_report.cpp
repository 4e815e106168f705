#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "report/svg_timeline.hpp"

namespace hetsim::report {
namespace {

constexpr size_t kMaxSegmentRows = 200;
constexpr size_t kMaxErrorRows = 200;

std::string esc(const std::string& s) { return xml_escape(s); }

std::string percent(double f) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f%%", f * 100.0);
    return b;
}

std::string fixed(double v, const char* fmt) {
    char b[48];
    std::snprintf(b, sizeof b, fmt, v);
    return b;
}

double ratio(Time a, Time b) { return b.ps() > 0 ? static_cast<double>(a.ps()) / static_cast<double>(b.ps()) : 0.0; }

std::string signed_time(Time t) {
    std::string s(t > Time{} ? "+" : "");  // appends, not operator+: GCC 12 -Wrestrict false positive
    return s.append(format_time(t));
}

const char* const kStyle = R"CSS(
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0; color: #222; background: #fafafa; }
header { background: #263238; color: #fff; padding: 16px 24px; }
header h1 { margin: 0 0 4px 0; font-size: 22px; }
header .file { color: #b0bec5; font-size: 13px; }
main { padding: 8px 24px 40px 24px; max-width: 1280px; }
section { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; margin: 16px 0; padding: 12px 16px; }
h2 { font-size: 17px; margin: 4px 0 10px 0; }
.figures { display: flex; flex-wrap: wrap; gap: 12px; }
.figure { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 10px 14px; min-width: 150px; }
.figure .v { font-size: 22px; font-weight: 600; }
.figure .k { font-size: 12px; color: #607d8b; }
.timeline { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { background: #f5f5f5; font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.bar { display: inline-block; height: 10px; background: #4e79a7; vertical-align: middle; margin-right: 6px; }
.barbox { display: inline-block; width: 120px; background: #eceff1; vertical-align: middle; margin-right: 6px; }
.note { color: #607d8b; font-size: 12px; }
.warn { color: #b71c1c; }
.bad { color: #b71c1c; font-weight: 600; }
.ok { color: #1b5e20; font-weight: 600; }
#tip { position: fixed; pointer-events: none; background: #263238; color: #fff; font-size: 12px; padding: 6px 8px;
       border-radius: 4px; max-width: 520px; display: none; z-index: 10; white-space: pre-wrap; }
svg rect.op:hover, svg rect.busy:hover { stroke: #000; stroke-width: 1.5; }
footer { color: #90a4ae; font-size: 12px; padding: 0 24px 24px 24px; }
)CSS";

// Moves each SVG <title> into data-tip (so the browser's own tooltip does not double it) and
// shows it in #tip on hover; then marks the page drawn. Errors mark it too.
const char* const kScript = R"JS(
(function () {
  var status = document.getElementById('render-status');
  function fail(msg) {
    document.body.setAttribute('data-rendered', 'error');
    if (status) status.textContent = 'error: ' + msg;
  }
  window.addEventListener('error', function (e) { fail(e.message || 'script error'); });
  try {
    var tip = document.getElementById('tip');
    var shapes = document.querySelectorAll('svg.timeline-svg rect');
    var n = 0;
    for (var i = 0; i < shapes.length; i++) {
      var t = shapes[i].querySelector('title');
      if (!t) continue;
      shapes[i].setAttribute('data-tip', t.textContent);
      t.parentNode.removeChild(t);
      n++;
    }
    document.addEventListener('mousemove', function (e) {
      var el = e.target;
      var text = el && el.getAttribute ? el.getAttribute('data-tip') : null;
      if (!text) { tip.style.display = 'none'; return; }
      tip.textContent = text;
      tip.style.display = 'block';
      var x = e.clientX + 14, y = e.clientY + 14;
      if (x + tip.offsetWidth > window.innerWidth) x = e.clientX - tip.offsetWidth - 14;
      if (y + tip.offsetHeight > window.innerHeight) y = e.clientY - tip.offsetHeight - 14;
      tip.style.left = x + 'px';
      tip.style.top = y + 'px';
    });
    var svgs = document.querySelectorAll('svg.timeline-svg');
    var drawn = 0;
    for (var k = 0; k < svgs.length; k++) drawn += svgs[k].getBoundingClientRect().width > 0 ? 1 : 0;
    if (drawn !== svgs.length || svgs.length === 0) { fail('timeline not drawn'); return; }
    document.body.setAttribute('data-rendered', 'ok');
    if (status) status.textContent = 'drawn: ' + svgs.length + ' timeline(s), ' + n + ' shapes with tooltips';
  } catch (err) {
    fail(String(err && err.message || err));
  }
})();
)JS";

void open_page(std::ostream& os, const std::string& title, const std::string& heading, const std::string& sub) {
    os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       << "<title>" << esc(title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body data-rendered=\"no\">\n"
       << "<div id=\"tip\"></div>\n<header><h1>" << esc(heading) << "</h1><div class=\"file\">" << esc(sub)
       << "</div></header>\n<main>\n";
}

void close_page(std::ostream& os) {
    os << "</main>\n<footer>hetsim 0.1.0 &middot; a self-contained page: no network access, works offline &middot; "
          "<span id=\"render-status\">not drawn (scripts off?)</span></footer>\n<script>"
       << kScript << "</script>\n</body>\n</html>\n";
}

void figure(std::ostream& os, const std::string& value, const std::string& key) {
    os << "<div class=\"figure\"><div class=\"v\">" << esc(value) << "</div><div class=\"k\">" << esc(key) << "</div></div>\n";
}

std::string bar(double f) {
    const double w = std::clamp(f, 0.0, 1.0) * 120.0;
    return "<span class=\"barbox\"><span class=\"bar\" style=\"width:" + fixed(w, "%.1f") + "px\"></span></span>";
}

// The timeline SVG, embedded: its root gets the class the script looks for.
std::string timeline_svg(const Program& p, const std::vector<SvgSection>& sections, const std::string& title) {
    SvgOptions o;
    o.engine_lanes = true;
    o.xml_declaration = false;
    std::ostringstream out;
    write_svg_timelines(out, p, sections, title, o);
    std::string svg = out.str();
    const std::string root = "<svg ";
    const size_t at = svg.find(root);
    if (at != std::string::npos) svg.insert(at + root.size(), "class=\"timeline-svg\" ");
    return svg;
}

void write_resources(std::ostream& os, const Analysis& a) {
    os << "<section id=\"resources\"><h2>Resources</h2>\n<table>\n<tr><th>resource</th><th>kind</th><th class=\"n\">busy</th>"
          "<th>utilisation</th><th class=\"n\">hidden</th></tr>\n";
    for (const Resource& r : a.resources)
        os << "<tr><td>" << esc(r.name) << "</td><td>" << esc(r.kind) << "</td><td class=\"n\">" << format_time(r.busy)
           << "</td><td>" << bar(r.utilization) << percent(r.utilization) << "</td><td class=\"n\">" << format_time(r.hidden)
           << "</td></tr>\n";
    os << "</table>\n<p class=\"note\">Busy: the union of the resource's work (host threads: sync waits excluded). "
          "Hidden: the part of it during which work of another kind ran too.</p></section>\n";
}

void metric_row(std::ostream& os, const char* name, const std::string& value, const char* definition) {
    os << "<tr><td>" << name << "</td><td class=\"n\">" << esc(value) << "</td><td class=\"note\">" << definition << "</td></tr>\n";
}

void write_metrics(std::ostream& os, const Metrics& m) {
    os << "<section id=\"metrics\"><h2>Overlap metrics</h2>\n<table>\n<tr><th>metric</th><th class=\"n\">value</th>"
          "<th>definition</th></tr>\n";
    metric_row(os, "serial work", format_time(m.serial), "the sum of every op's own work: the same work done one thing at a time");
    metric_row(os, "elapsed", format_time(m.elapsed), "end to end");
    metric_row(os, "speedup", fixed(m.speedup, "%.3fx"), "serial work / elapsed");
    metric_row(os, "any work running", format_time(m.busy_union) + " (" + percent(ratio(m.busy_union, m.elapsed)) + ")",
               "the union of all work over every lane");
    metric_row(os, "hidden by overlap", format_time(m.hidden), "serial work - any work running: work done while other work ran");
    metric_row(os, "exposed sync wait", format_time(m.exposed_sync) + " (" + percent(m.exposed_sync_fraction) + ")",
               "time at least one host thread was blocked waiting for the GPU");
    metric_row(os, "GPU active union", format_time(m.gpu_active_union) + " (" + percent(m.gpu_active_fraction) + ")",
               "the union of all GPU phases: time coverage, not SM or bandwidth utilisation");
    os << "</table></section>\n";
}

void write_critical_path(std::ostream& os, const Program& p, const Analysis& a) {
    const std::vector<PathSegment> segs = path_segments(a);
    os << "<section id=\"critical-path\"><h2>Critical path</h2>\n<p>" << a.critical_path.size() << " steps in " << segs.size()
       << " segments; a step counts from its last dependency's end, so segments never overlap.</p>\n";
    if (!a.critical_share.empty()) {
        os << "<table>\n<tr><th>kind</th><th>share of end to end</th><th class=\"n\">time</th></tr>\n";
        for (const KindShare& k : a.critical_share)
            os << "<tr><td>" << esc(k.kind) << "</td><td>" << bar(k.share) << percent(k.share) << "</td><td class=\"n\">"
               << format_time(k.time) << "</td></tr>\n";
        os << "</table><br>\n";
    }
    os << "<table>\n<tr><th>lane</th><th class=\"n\">from</th><th class=\"n\">to</th><th class=\"n\">ops</th><th>which</th></tr>\n";
    for (size_t i = 0; i < segs.size() && i < kMaxSegmentRows; ++i) {
        const PathSegment& s = segs[i];
        os << "<tr><td>" << esc(a.resources[s.resource].name) << "</td><td class=\"n\">" << format_time(s.start)
           << "</td><td class=\"n\">" << format_time(s.end) << "</td><td class=\"n\">" << s.last - s.first + 1 << "</td><td>"
           << esc(segment_ops_text(p, a, s, 8)) << "</td></tr>\n";
    }
    os << "</table>\n";
    if (segs.size() > kMaxSegmentRows) os << "<p class=\"note\">... and " << segs.size() - kMaxSegmentRows << " more segments</p>\n";
    os << "</section>\n";
}

// Why the GPU idles: per lane, a bar per cause (its share of the lane's idle time).
void write_idle(std::ostream& os, const Analysis& a) {
    os << "<section id=\"idle\"><h2>Why the GPU idles</h2>\n<p class=\"note\">Each idle gap split by what the GPU work "
          "after it waited for, followed back through the recorded causes; the causes sum to the idle time.</p>\n";
    for (const IdleLane& l : a.idle.lanes) {
        os << "<h3 style=\"font-size:14px\">" << esc(idle_lane_words(l.name)) << ": idle " << format_time(l.idle) << " ("
           << percent(ratio(l.idle, a.end_to_end)) << " of end to end)</h3>\n";
        if (l.causes.empty()) continue;
        os << "<table class=\"idle-chart\">\n<tr><th>cause</th><th>share of idle time</th><th class=\"n\">time</th></tr>\n";
        for (size_t k = 0; k < l.causes.size() && k < kMaxSegmentRows; ++k) {
            const IdleCause& c = l.causes[k];
            const double f = ratio(c.time, l.idle);
            os << "<tr><td>" << esc(idle_cause_text(c)) << "</td><td>" << bar(f) << percent(f) << "</td><td class=\"n\">"
               << format_time(c.time) << "</td></tr>\n";
        }
        os << "</table>\n";
    }
    os << "</section>\n";
}

void write_suggestions(std::ostream& os, const Suggestions& s) {
    os << "<section id=\"suggestions\"><h2>Suggestions, each simulated</h2>\n<p class=\"note\">Changes hetsim applied to the "
          "scenario and simulated end to end (baseline " << format_time(s.baseline) << "), best first.</p>\n";
    if (!s.skipped.empty()) {
        os << "<p>none simulated: " << esc(s.skipped) << "</p></section>\n";
        return;
    }
    os << "<table>\n<tr><th>change</th><th class=\"n\">end to end</th><th class=\"n\">change</th></tr>\n";
    for (const Suggestion& g : s.list)
        os << "<tr><td>" << esc(g.change) << "</td><td class=\"n\">" << format_time(g.end_to_end) << "</td><td class=\"n "
           << (shortens(g.end_to_end, s.baseline) ? "ok" : g.end_to_end > s.baseline ? "bad" : "") << "\">" << fixed(g.delta_pct, "%+.1f%%")
           << "</td></tr>\n";
    os << "</table></section>\n";
}

void write_extra(std::ostream& os, const std::vector<HtmlSection>& extra) {
    for (const HtmlSection& s : extra)
        os << "<section id=\"" << esc(s.id) << "\"><h2>" << esc(s.title) << "</h2>\n" << s.html << "\n</section>\n";
}

void write_warnings(std::ostream& os, const std::vector<std::pair<std::string, const std::vector<std::string>*>>& lists) {
    os << "<section id=\"warnings\"><h2>Warnings</h2>\n";
    size_t n = 0;
    for (const auto& [who, list] : lists) {
        if (list->empty()) continue;
        os << "<ul>\n";
        for (const std::string& w : *list) os << "<li class=\"warn\">" << (who.empty() ? "" : esc(who) + ": ") << esc(w) << "</li>\n";
        os << "</ul>\n";
        n += list->size();
    }
    if (n == 0) os << "<p class=\"note\">none</p>\n";
    os << "</section>\n";
}

}  // namespace

void write_html_report(std::ostream& os, const Program& p, const Timeline& t, const Analysis& a, const HtmlRun& run) {
    const std::string name = run.scenario_name.empty() ? (p.source.empty() ? std::string("scenario") : p.source) : run.scenario_name;
    open_page(os, name + ": hetsim report", name, p.source.empty() ? std::string("<input>") : p.source);
    const Metrics& m = a.metrics;
    os << "<section id=\"summary\"><div class=\"figures\">\n";
    figure(os, format_time(a.end_to_end), "end to end");
    figure(os, percent(m.gpu_active_fraction), "GPU active (time coverage)");
    figure(os, fixed(m.speedup, "%.2fx"), "speedup over serial work");
    figure(os, percent(m.exposed_sync_fraction), "exposed sync wait");
    figure(os, std::to_string(p.ops.size()), "ops");
    os << "</div></section>\n";
    os << "<section id=\"timeline\"><h2>Timeline</h2>\n<p class=\"note\">Hover a shape for its op: name, kind, lane, start, "
          "end, duration and cause. Outlined: on the critical path.</p>\n<div class=\"timeline\">"
       << timeline_svg(p, {{"Simulated", &t, &a}}, name + ": end to end " + format_time(a.end_to_end)) << "</div></section>\n";
    // The answers first: why the GPU idles and what to change, then the evidence.
    write_idle(os, a);
    if (run.suggestions) write_suggestions(os, *run.suggestions);
    write_critical_path(os, p, a);
    write_resources(os, a);
    write_metrics(os, m);
    write_extra(os, run.extra);
    write_warnings(os, {{"", &t.warnings}});
    close_page(os);
}

void write_html_comparison(std::ostream& os, const Program& p, const Timeline& sim, const Timeline& meas, const Comparison& c,
                           const std::string& scenario_name, const std::string& scenario_file,
                           const std::string& measured_file, const std::vector<HtmlSection>& extra) {
    const std::string name = scenario_name.empty() ? scenario_file : scenario_name;
    open_page(os, name + ": simulated vs measured", name + ": simulated vs measured", scenario_file + " vs " + measured_file);
    os << "<section id=\"summary\"><div class=\"figures\">\n";
    figure(os, format_time(c.simulated), "simulated end to end");
    figure(os, format_time(c.measured), c.measured_runs ? "measured (uninstrumented median)" : "measured (instrumented)");
    figure(os, signed_time(c.error), "error");
    figure(os, fixed(c.error_pct, "%+.2f%%"), "error, percent");
    os << "</div><p>Measured: " << esc(measured_basis(c));
    if (c.measured_runs)
        os << "; the metrics, the timeline and the per-op errors are of the instrumented run, " << format_time(c.instrumented);
    os << ".</p></section>\n";
    os << "<section id=\"timeline\"><h2>Timelines</h2>\n<p class=\"note\">Both on one time axis; hover a shape for its op. "
          "Outlined: on each timeline's critical path.</p>\n<div class=\"timeline\">"
       << timeline_svg(p, {{"Simulated", &sim, &c.sim}, {"Measured", &meas, &c.meas}}, name + ": " + comparison_headline(c))
       << "</div></section>\n";

    const Metrics& s = c.sim.metrics;
    const Metrics& m = c.meas.metrics;
    os << "<section id=\"metrics\"><h2>Overlap metrics</h2>\n<table>\n<tr><th>metric</th><th class=\"n\">simulated</th>"
          "<th class=\"n\">measured</th><th class=\"n\">sim - measured</th></tr>\n";
    auto row = [&](const char* k, Time a, Time b) {
        os << "<tr><td>" << k << "</td><td class=\"n\">" << format_time(a) << "</td><td class=\"n\">" << format_time(b)
           << "</td><td class=\"n\">" << signed_time(a - b) << "</td></tr>\n";
    };
    row("serial work", s.serial, m.serial);
    row("elapsed", s.elapsed, m.elapsed);
    os << "<tr><td>speedup</td><td class=\"n\">" << fixed(s.speedup, "%.3fx") << "</td><td class=\"n\">" << fixed(m.speedup, "%.3fx")
       << "</td><td class=\"n\">" << fixed(s.speedup - m.speedup, "%+.3fx") << "</td></tr>\n";
    row("any work running", s.busy_union, m.busy_union);
    row("hidden by overlap", s.hidden, m.hidden);
    row("exposed sync wait *", s.exposed_sync, m.exposed_sync);
    row("GPU active union", s.gpu_active_union, m.gpu_active_union);
    os << "</table>\n<p class=\"note\">* measured: estimated; the whole host phase of a blocking call counts as waiting.</p>"
          "</section>\n";

    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < c.ops.size(); ++i)
        if (c.ops[i].compared) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return std::llabs(c.ops[a].end_error.ps()) > std::llabs(c.ops[b].end_error.ps());
    });
    os << "<section id=\"op-errors\"><h2>Per-op errors</h2>\n<p>" << order.size() << " of " << c.ops.size()
       << " ops compared (simulated - measured), largest |end error| first" << (order.size() > kMaxErrorRows ? "; the first 200" : "")
       << ".</p>\n<table>\n<tr><th class=\"n\">op</th><th>name</th><th>kind</th><th>phase</th><th>lane</th>"
          "<th class=\"n\">measured start</th><th class=\"n\">measured end</th><th class=\"n\">simulated start</th>"
          "<th class=\"n\">simulated end</th><th class=\"n\">start error</th><th class=\"n\">end error</th></tr>\n";
    for (size_t k = 0; k < order.size() && k < kMaxErrorRows; ++k) {
        const OpError& e = c.ops[order[k]];
        os << "<tr><td class=\"n\">" << e.op << "</td><td>" << esc(p.op_name(e.op)) << "</td><td>" << to_string(p.ops[e.op].kind)
           << "</td><td>" << phase_name(e.phase) << "</td><td>" << esc(e.lane) << "</td><td class=\"n\">" << format_time(e.meas_start)
           << "</td><td class=\"n\">" << format_time(e.meas_end) << "</td><td class=\"n\">" << format_time(e.sim_start)
           << "</td><td class=\"n\">" << format_time(e.sim_end) << "</td><td class=\"n\">" << signed_time(e.start_error)
           << "</td><td class=\"n\">" << signed_time(e.end_error) << "</td></tr>\n";
    }
    os << "</table></section>\n";
    if (!c.host_unobserved.empty()) {
        // Host calls against the median uninstrumented run's host stamps (no profiler attached).
        std::vector<uint32_t> h(c.host_unobserved.size());
        for (uint32_t k = 0; k < h.size(); ++k) h[k] = k;
        std::stable_sort(h.begin(), h.end(), [&](uint32_t a, uint32_t b) {
            return std::llabs(c.host_unobserved[a].duration_error.ps()) > std::llabs(c.host_unobserved[b].duration_error.ps());
        });
        os << "<section id=\"host-unobserved\"><h2>Host calls without a profiler</h2>\n<p>" << h.size()
           << " host phases against the median uninstrumented run's host stamps (the instrumented run's calls carry the "
              "profiler's cost), largest |length error| first"
           << (h.size() > kMaxErrorRows ? "; the first 200" : "")
           << ".</p>\n<table>\n<tr><th class=\"n\">op</th><th>name</th><th>kind</th><th>lane</th><th class=\"n\">measured start</th>"
              "<th class=\"n\">measured length</th><th class=\"n\">simulated start</th><th class=\"n\">simulated length</th>"
              "<th class=\"n\">length error</th></tr>\n";
        for (size_t k = 0; k < h.size() && k < kMaxErrorRows; ++k) {
            const OpError& e = c.host_unobserved[h[k]];
            os << "<tr><td class=\"n\">" << e.op << "</td><td>" << esc(p.op_name(e.op)) << "</td><td>" << to_string(p.ops[e.op].kind)
               << "</td><td>" << esc(e.lane) << "</td><td class=\"n\">" << format_time(e.meas_start) << "</td><td class=\"n\">"
               << format_time(e.meas_end - e.meas_start) << "</td><td class=\"n\">" << format_time(e.sim_start)
               << "</td><td class=\"n\">" << format_time(e.sim_end - e.sim_start) << "</td><td class=\"n\">"
               << signed_time(e.duration_error) << "</td></tr>\n";
        }
        os << "</table></section>\n";
    }
    write_extra(os, extra);
    write_warnings(os, {{"simulated", &sim.warnings}, {"measured", &meas.warnings}});
    close_page(os);
}

}  // namespace hetsim::report
