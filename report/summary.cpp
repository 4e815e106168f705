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

}  // namespace

void write_summary(std::ostream& os, const Program& p, const Timeline& t, const Analysis& a) {
    os << "scenario: " << (p.source.empty() ? std::string("<input>") : p.source) << "\n";
    os << "end-to-end: " << format_time(a.end_to_end) << "\n\n";
    write_resources(os, a);
    os << "\n";
    write_evidence(os, a);
    os << "\n";
    write_critical_path(os, p, a);
    if (!t.warnings.empty()) os << "\n";
    for (const std::string& w : t.warnings) os << "warning: " << w << "\n";
}

}  // namespace hetsim::report
