#include "report/summary.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace hetsim::report {
namespace {

constexpr size_t kMaxPathLines = 12;
constexpr size_t kMaxPathOps = 4;  // ops named per segment line; "and N more" after them

std::string pad(std::string s, size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s;
}

std::string percent(double f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", f * 100.0);
    return buf;
}

double ratio_of(Time a, Time b) { return b.ps() > 0 ? static_cast<double>(a.ps()) / static_cast<double>(b.ps()) : 0.0; }

std::string fixed3(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

void write_resources(std::ostream& os, const Analysis& a) {
    size_t wn = 4, wk = 4;
    for (const Resource& r : a.resources) {
        wn = std::max(wn, r.name.size());
        wk = std::max(wk, r.kind.size());
    }
    os << "resources:\n";
    os << "  " << pad("name", wn) << "  " << pad("kind", wk) << "  " << pad("busy", 14) << pad("util", 9)
       << "hidden\n";
    for (const Resource& r : a.resources)
        os << "  " << pad(r.name, wn) << "  " << pad(r.kind, wk) << "  " << pad(format_time(r.busy), 14)
           << pad(percent(r.utilization), 9) << format_time(r.hidden) << "\n";
}

void write_evidence(std::ostream& os, const Analysis& a) {
    const Metrics& m = a.metrics;
    os << "overlap evidence (same work, done serially vs as simulated):\n";
    os << "  serial work:        " << format_time(m.serial) << "\n";
    os << "  elapsed:            " << format_time(m.elapsed) << "\n";
    os << "  speedup:            " << fixed3(m.speedup) << "x\n";
    os << "  any work running:   " << format_time(m.busy_union) << " (" << percent(ratio_of(m.busy_union, m.elapsed))
       << " of elapsed)\n";
    os << "  hidden by overlap:  " << format_time(m.hidden) << " (serial work - any work running)\n";
    os << "  exposed sync wait:  " << format_time(m.exposed_sync) << " (" << percent(m.exposed_sync_fraction)
       << " of elapsed; some host thread blocked on the GPU)\n";
    os << "  GPU active union:   " << format_time(m.gpu_active_union) << " (" << percent(m.gpu_active_fraction)
       << " of elapsed; time coverage, not hardware utilisation)\n";
}

void write_critical_path(std::ostream& os, const Program& p, const Analysis& a) {
    const auto& path = a.critical_path;
    std::vector<PathSegment> segs = path_segments(a);
    os << "critical path (" << path.size() << (path.size() == 1 ? " step, " : " steps, ") << segs.size()
       << (segs.size() == 1 ? " segment):\n" : " segments):\n");
    size_t wl = 4;
    for (size_t i = 0; i < segs.size() && i < kMaxPathLines; ++i) wl = std::max(wl, a.resources[segs[i].resource].name.size());
    for (size_t i = 0; i < segs.size() && i < kMaxPathLines; ++i) {
        const PathSegment& s = segs[i];
        size_t n = s.last - s.first + 1;
        // Every op of the segment, or the first few of a long one and how many more.
        os << "  " << pad(a.resources[s.resource].name, wl) << "  " << format_time(s.start) << " - " << format_time(s.end)
           << "  " << n << (n == 1 ? " op: " : " ops: ") << segment_ops_text(p, a, s, kMaxPathOps) << "\n";
    }
    if (segs.size() > kMaxPathLines) os << "  ... " << segs.size() - kMaxPathLines << " more segments\n";
    if (a.critical_share.empty()) return;
    os << "critical path share:\n";
    size_t wk = 4;
    for (const KindShare& k : a.critical_share) wk = std::max(wk, k.kind.size());
    for (const KindShare& k : a.critical_share)
        os << "  " << pad(k.kind, wk) << "  " << pad(percent(k.share), 8) << format_time(k.time) << "\n";
}

constexpr size_t kMaxIdleCauses = 5;  // causes printed per lane; the rest summed in one line
constexpr size_t kMaxSuggestions = 8;

void write_idle(std::ostream& os, const Analysis& a) {
    os << "why the GPU idles (each idle gap split by what the GPU work after it waited for):\n";
    for (const IdleLane& l : a.idle.lanes) {
        os << "  " << idle_lane_words(l.name) << ": idle " << format_time(l.idle) << " ("
           << percent(ratio_of(l.idle, a.end_to_end)) << " of elapsed)" << (l.causes.empty() ? "\n" : "\n");
        Time rest;
        size_t more = 0;
        for (size_t k = 0; k < l.causes.size(); ++k) {
            const IdleCause& c = l.causes[k];
            if (k >= kMaxIdleCauses) {
                rest += c.time;
                ++more;
                continue;
            }
            os << "    " << pad(format_time(c.time), 12) << pad(percent(ratio_of(c.time, l.idle)), 7) << " " << idle_cause_text(c)
               << "\n";
        }
        if (more)
            os << "    " << pad(format_time(rest), 12) << pad(percent(ratio_of(rest, l.idle)), 7) << " " << more
               << (more == 1 ? " more cause\n" : " more causes\n");
    }
}

std::string signed_percent(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", v);
    return buf;
}

void write_suggestions(std::ostream& os, const Suggestions& s) {
    os << "suggestions (each simulated end to end; baseline " << format_time(s.baseline) << "):\n";
    if (!s.skipped.empty()) {
        os << "  none simulated: " << s.skipped << "\n";
        return;
    }
    size_t shown = 0, worse = 0;
    for (const Suggestion& g : s.list) {
        if (!shortens(g.end_to_end, s.baseline)) {
            ++worse;
            continue;
        }
        if (shown++ >= kMaxSuggestions) continue;
        os << "  try " << g.change << ": " << format_time(g.end_to_end) << " (" << signed_percent(g.delta_pct) << ")\n";
    }
    if (shown > kMaxSuggestions) os << "  ... " << shown - kMaxSuggestions << " more that help (--format json lists them)\n";
    if (shown == 0) os << "  none of the " << s.list.size() << " changes tried shortens the run\n";
    else if (worse) os << "  (" << worse << (worse == 1 ? " other change tried does not help)\n" : " other changes tried do not help)\n");
    for (const std::string& f : s.failed) os << "  could not simulate " << f << "\n";
}

}  // namespace

void write_summary(std::ostream& os, const Program& p, const Timeline& t, const Analysis& a, const Suggestions* sug) {
    os << "scenario: " << (p.source.empty() ? std::string("<input>") : p.source) << "\n";
    os << "end-to-end: " << format_time(a.measured);
    if (a.warmup)
        os << " (the measured iteration: the last of " << a.warmup + 1 << ", after " << a.warmup << " warm-up; all iterations "
           << format_time(a.end_to_end) << ")";
    os << "\n\n";
    write_resources(os, a);
    os << "\n";
    write_evidence(os, a);
    os << "\n";
    write_idle(os, a);
    os << "\n";
    write_critical_path(os, p, a);
    if (sug) {
        os << "\n";
        write_suggestions(os, *sug);
    }
    if (!t.warnings.empty()) os << "\n";
    for (const std::string& w : t.warnings) os << "warning: " << w << "\n";
}

}  // namespace hetsim::report
