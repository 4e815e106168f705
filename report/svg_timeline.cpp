#include "report/svg_timeline.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace hetsim::report {
namespace {

constexpr double kWidth = 1200, kLeft = 200, kRight = 30;
constexpr double kPlotW = kWidth - kLeft - kRight;
constexpr double kAxisY = 66, kTop = 80, kHeader = 20, kRow = 20, kBar = 14, kGap = 14;
constexpr int kMaxSubRows = 4;  // concurrent work on one engine: at most this many sub-rows

// What a phase is drawn as; also the legend order.
enum Cat { kKernel, kH2D, kD2H, kDevCopy, kMarker, kHostWork, kSync, kCall, kCats };
const char* const kCatClass[kCats] = {"kernel", "h2d", "d2h", "device_copy", "marker", "host_work", "sync", "call"};
const char* const kCatLabel[kCats] = {"kernel",       "copy h2d",  "copy d2h",           "device copy / memset",
                                      "event marker", "host work", "sync wait (hatched)", "API call (lighter)"};
const char* const kCatColour[kCats] = {"#4e79a7", "#59a14f", "#f28e2b", "#b07aa1",
                                       "#e15759", "#9c755f", "#c44e52", "#4e79a7"};

Cat gpu_cat(const Op& op) {
    switch (op.kind) {
        case OpKind::Kernel: return kKernel;
        case OpKind::Memcpy: return op.dir == CopyDir::D2D ? kDevCopy : op.dir == CopyDir::H2D ? kH2D : kD2H;
        case OpKind::Memset: return kDevCopy;
        case OpKind::Prefetch: return op.to_device ? kH2D : kD2H;
        case OpKind::EventRecord: case OpKind::StreamWaitEvent: return kMarker;
        default: return kHostWork;
    }
}

// A host phase: host work, a blocking wait (sync calls, blocking copies/memsets), or the API
// call of asynchronous GPU work (drawn in its GPU colour, lighter).
Cat host_cat(const Op& op) {
    switch (op.kind) {
        case OpKind::HostWork: return kHostWork;
        case OpKind::EventSync: case OpKind::StreamSync: case OpKind::DeviceSync: return kSync;
        case OpKind::Memcpy: case OpKind::Memset: return sync_call_waits(op) ? kSync : kCall;
        default: return kCall;
    }
}

std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}

// Fill attributes of a phase of category `c` drawn for op kind `gpu`.
std::string fill(Cat c, Cat gpu) {
    if (c == kSync) return "fill=\"url(#hatch)\" stroke=\"" + std::string(kCatColour[kSync]) + "\" stroke-width=\"0.5\"";
    const char* edge = "\" stroke=\"#ffffff\" stroke-width=\"0.5\"";  // separates back-to-back ops
    if (c == kCall) return "fill=\"" + std::string(kCatColour[gpu]) + "\" fill-opacity=\"0.45" + edge;
    return "fill=\"" + std::string(kCatColour[c]) + edge;
}

int32_t key(int32_t i, size_t n) { return i >= 0 && static_cast<size_t>(i) < n ? i : INT_MAX; }

constexpr int kEngines = 4;  // Engine::H2D .. Engine::DeviceCopy

// Rows of the drawing: the critical-path row (when any section has an analysis), host threads,
// streams, engines. An engine row holds up to kMaxSubRows sub-rows of concurrent work.
struct Lanes {
    bool critical = false;
    std::map<int32_t, int> host, stream;  // thread / stream index (INT_MAX: unknown) -> row
    int engine[kEngines] = {-1, -1, -1, -1};
    std::vector<std::string> labels;
    std::vector<int> sub;                 // sub-rows of each row
    std::vector<double> y;                // offset of each row from the section's first row
    double height = 0;
};

// Sub-row of each op's engine phase: first sub-row free at its start, ops by start time (ties:
// op index); past kMaxSubRows the last one. -1 for ops without engine work.
std::vector<int> engine_rows(const Program& p, const Timeline& t, int rows_used[kEngines]) {
    const size_t n = std::min(p.ops.size(), t.ops.size());
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < n; ++i)
        if (t.ops[i].has_gpu() && t.ops[i].engine != Engine::None) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return t.ops[a].gpu_start < t.ops[b].gpu_start; });
    std::vector<int> row(n, -1);
    std::vector<Time> ends[kEngines];
    for (uint32_t i : order) {
        const OpRecord& r = t.ops[i];
        std::vector<Time>& e = ends[static_cast<int>(r.engine)];
        size_t k = 0;
        while (k < e.size() && e[k] > r.gpu_start) ++k;
        if (k == e.size() && k < kMaxSubRows) e.emplace_back();
        k = std::min(k, e.size() - 1);
        e[k] = max(e[k], r.gpu_end);
        row[i] = static_cast<int>(k);
    }
    for (int k = 0; k < kEngines; ++k) rows_used[k] = std::max(rows_used[k], static_cast<int>(ends[k].size()));
    return row;
}

Lanes find_lanes(const Program& p, const std::vector<SvgSection>& sections, const SvgOptions& opt,
                 std::vector<std::vector<int>>& sub_rows) {
    std::set<int32_t> th, st;
    int eng_rows[kEngines] = {0, 0, 0, 0};
    Lanes l;
    for (const SvgSection& s : sections) {
        sub_rows.emplace_back();
        if (!s.timeline) continue;
        if (s.analysis) l.critical = true;
        for (size_t i = 0; i < p.ops.size() && i < s.timeline->ops.size(); ++i) {
            const OpRecord& r = s.timeline->ops[i];
            if (r.has_host()) th.insert(key(p.ops[i].thread, p.threads.size()));
            if (r.has_gpu()) st.insert(key(p.ops[i].stream, p.streams.size()));
        }
        if (opt.engine_lanes) sub_rows.back() = engine_rows(p, *s.timeline, eng_rows);
    }
    auto add = [&](const std::string& label, int sub) {
        l.labels.push_back(label);
        l.sub.push_back(sub);
        l.y.push_back(l.height);
        l.height += kRow * sub;
        return static_cast<int>(l.labels.size()) - 1;
    };
    if (l.critical) add("critical path", 1);
    for (int32_t t : th) l.host[t] = add(host_lane(p, t == INT_MAX ? kNone : t), 1);
    for (int32_t s : st) l.stream[s] = add(stream_lane(p, s == INT_MAX ? kNone : s), 1);
    for (int e = 0; e < kEngines; ++e)
        if (eng_rows[e] > 0) l.engine[e] = add(engine_lane(static_cast<Engine>(e)), eng_rows[e]);
    return l;
}

// Tick step (1, 2 or 5 times a power of ten, in ps) for about 8 intervals; `pow10` gets the power.
int64_t tick_step(int64_t span, int& pow10) {
    int64_t base = 1;
    pow10 = 0;
    while (true) {
        for (int64_t d : {1, 2, 5})
            if (d * base * 8 >= span) return d * base;
        base *= 10;
        ++pow10;
    }
}

// `v` ps in `unit` ps (a power of ten, 10^unit_digits) with `decimals` decimals, exact.
std::string tick_label(int64_t v, int64_t unit, int unit_digits, int decimals) {
    std::string s = std::to_string(v / unit);
    if (decimals > 0) {
        std::string frac = std::to_string(v % unit);
        frac.insert(0, static_cast<size_t>(unit_digits) - frac.size(), '0');
        s.append(1, '.').append(frac, 0, static_cast<size_t>(decimals));
    }
    return s;
}

size_t count_phases(const Program& p, const std::vector<SvgSection>& sections, bool engines) {
    size_t n = 0;
    for (const SvgSection& s : sections) {
        if (!s.timeline) continue;
        for (size_t i = 0; i < p.ops.size() && i < s.timeline->ops.size(); ++i) {
            const OpRecord& r = s.timeline->ops[i];
            n += (r.has_host() ? 1 : 0) + (r.has_gpu() ? 1 : 0) + (engines && r.has_gpu() && r.engine != Engine::None ? 1 : 0);
        }
    }
    return n;
}

constexpr int kColumns = static_cast<int>(kPlotW);
using Cover = std::array<double, kCats>;  // busy ps of one pixel column, by category

// Adds [a, b) of category c to the pixel columns of `row` (kColumns entries).
void add_cover(Cover* row, int64_t span, Cat c, Time a, Time b) {
    const double ps_per_col = static_cast<double>(span) / kColumns;
    const int c0 = std::clamp(static_cast<int>(static_cast<double>(a.ps()) / ps_per_col), 0, kColumns - 1);
    const int c1 = std::clamp(static_cast<int>(static_cast<double>(b.ps()) / ps_per_col), 0, kColumns - 1);
    for (int col = c0; col <= c1; ++col) {
        const double lo = std::max(static_cast<double>(a.ps()), col * ps_per_col);
        const double hi = std::min(static_cast<double>(b.ps()), (col + 1) * ps_per_col);
        if (hi > lo) row[col][c] += hi - lo;
    }
}

// One rect per run of busy columns whose main category is the same, shaded by the busy share.
void emit_cover(std::ostream& os, const Cover* row, int64_t span, double y, double h, const std::string& label) {
    const double ps_per_col = static_cast<double>(span) / kColumns;
    auto total = [](const Cover& cv) {
        double b = 0;
        for (double v : cv) b += v;
        return b;
    };
    auto main_cat = [](const Cover& cv) { return static_cast<int>(std::max_element(cv.begin(), cv.end()) - cv.begin()); };
    int col = 0;
    while (col < kColumns) {
        const double busy = total(row[col]);
        if (busy <= 0) { ++col; continue; }
        const int c = main_cat(row[col]);
        int end = col + 1;
        double sum = busy;
        while (end < kColumns && total(row[end]) > 0 && main_cat(row[end]) == c) sum += total(row[end++]);
        const double share = std::min(1.0, sum / (ps_per_col * (end - col)));
        os << "<rect class=\"busy " << kCatClass[c] << "\" x=\"" << fmt(kLeft + col) << "\" y=\"" << fmt(y) << "\" width=\""
           << fmt(end - col) << "\" height=\"" << fmt(h) << "\" fill=\"" << kCatColour[c] << "\" fill-opacity=\""
           << fmt(0.3 + 0.7 * share) << "\"><title>" << xml_escape(label) << ": "
           << format_time(Time::ps(static_cast<int64_t>(col * ps_per_col))) << " .. "
           << format_time(Time::ps(static_cast<int64_t>(end * ps_per_col))) << ", busy " << fmt(100 * share) << "% (mostly "
           << kCatLabel[c] << ")</title></rect>\n";
        col = end;
    }
}

}  // namespace

std::string xml_escape(const std::string& s) {
    std::string o;
    o.reserve(s.size());
    for (char ch : s) {
        switch (ch) {
            case '&': o += "&amp;"; break;
            case '<': o += "&lt;"; break;
            case '>': o += "&gt;"; break;
            case '"': o += "&quot;"; break;
            case '\'': o += "&apos;"; break;
            default:
                if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t' || ch == '\n') o += ch;
        }
    }
    return o;
}

std::string phase_cause_text(const Program& p, const Cause& c) {
    std::string s = to_string(c.kind);
    if (c.op >= 0 && static_cast<size_t>(c.op) < p.ops.size())
        s.append(" after ").append(p.op_name(static_cast<uint32_t>(c.op))).append(" (").append(phase_name(c.phase)).append(")");
    return s;
}

void write_svg_timelines(std::ostream& os, const Program& p, const std::vector<SvgSection>& sections,
                         const std::string& title, const SvgOptions& opt) {
    std::vector<std::vector<int>> sub_rows;  // per section: each op's engine sub-row
    const Lanes lanes = find_lanes(p, sections, opt, sub_rows);
    const bool dense = count_phases(p, sections, opt.engine_lanes) > opt.max_phase_rects;
    int64_t span = 1000;  // at least 1 ns
    for (const SvgSection& s : sections) {
        if (!s.timeline) continue;
        span = std::max(span, s.timeline->end_to_end.ps());
        for (const OpRecord& r : s.timeline->ops) span = std::max(span, r.end().ps());
    }
    auto x_of = [&](Time t) { return kLeft + kPlotW * static_cast<double>(t.ps()) / static_cast<double>(span); };
    const double section_h = kHeader + lanes.height;
    const double bottom = kTop + static_cast<double>(sections.size()) * (section_h + kGap);
    const double legend_rows = lanes.critical ? 2 : 1;
    const double height = bottom + 20 + 20 * legend_rows;

    if (opt.xml_declaration) os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fmt(kWidth) << "\" height=\"" << fmt(height)
       << "\" viewBox=\"0 0 " << fmt(kWidth) << " " << fmt(height) << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
       << "<title>" << xml_escape(title) << "</title>\n"
       << "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f6dada\"/><line x1=\"0\" y1=\"0\" "
          "x2=\"0\" y2=\"6\" stroke=\""
       << kCatColour[kSync] << "\" stroke-width=\"2\"/></pattern></defs>\n"
       << "<rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
       << "<text class=\"title\" x=\"10\" y=\"26\" font-size=\"15\" font-weight=\"bold\">" << xml_escape(title)
       << "</text>\n";

    // Lane backgrounds and labels, per section.
    for (size_t s = 0; s < sections.size(); ++s) {
        const double y0 = kTop + static_cast<double>(s) * (section_h + kGap);
        os << "<g class=\"section\">\n<text x=\"10\" y=\"" << fmt(y0 + 14) << "\" font-size=\"13\" font-weight=\"bold\">"
           << xml_escape(sections[s].label) << "</text>\n";
        for (size_t r = 0; r < lanes.labels.size(); ++r) {
            const double y = y0 + kHeader + lanes.y[r];
            os << "<rect class=\"lane\" x=\"" << fmt(kLeft) << "\" y=\"" << fmt(y) << "\" width=\"" << fmt(kPlotW)
               << "\" height=\"" << fmt(kRow * lanes.sub[r]) << "\" fill=\"" << (r % 2 ? "#ffffff" : "#f4f4f4") << "\"/>\n"
               << "<text x=\"" << fmt(kLeft - 8) << "\" y=\"" << fmt(y + 14) << "\" text-anchor=\"end\">"
               << xml_escape(lanes.labels[r]) << "</text>\n";
        }
        os << "</g>\n";
    }

    // The shared time axis: ticks and labels on top, grid lines through every section.
    int pow10 = 0;
    const int64_t step = tick_step(span, pow10);
    int unit_digits = span >= 1'000'000'000'000 ? 12 : span >= 1'000'000'000 ? 9 : span >= 1'000'000 ? 6 : 3;
    int64_t unit = 1;
    for (int i = 0; i < unit_digits; ++i) unit *= 10;
    const char* unit_name = unit_digits == 12 ? "s" : unit_digits == 9 ? "ms" : unit_digits == 6 ? "us" : "ns";
    const int decimals = std::max(0, unit_digits - pow10);
    os << "<g class=\"axis\" stroke-width=\"1\">\n"
       << "<text x=\"" << fmt(kLeft - 8) << "\" y=\"" << fmt(kAxisY - 8) << "\" text-anchor=\"end\">time (" << unit_name
       << ")</text>\n"
       << "<line x1=\"" << fmt(kLeft) << "\" y1=\"" << fmt(kAxisY) << "\" x2=\"" << fmt(kLeft + kPlotW) << "\" y2=\""
       << fmt(kAxisY) << "\" stroke=\"#333333\"/>\n";
    for (int64_t v = 0; v <= span; v += step) {
        const double x = x_of(Time::ps(v));
        os << "<line x1=\"" << fmt(x) << "\" y1=\"" << fmt(kAxisY - 4) << "\" x2=\"" << fmt(x) << "\" y2=\"" << fmt(bottom - kGap)
           << "\" stroke=\"#cccccc\"/>\n"
           << "<text x=\"" << fmt(x) << "\" y=\"" << fmt(kAxisY - 8) << "\" text-anchor=\"middle\">"
           << tick_label(v, unit, unit_digits, decimals) << "</text>\n";
    }
    os << "</g>\n";

    // Ops: one rect per phase (and one more on its engine's row), or in a dense drawing the
    // busy share of each pixel column per lane.
    for (size_t s = 0; s < sections.size(); ++s) {
        const Timeline* t = sections[s].timeline;
        if (!t) continue;
        const double y0 = kTop + static_cast<double>(s) * (section_h + kGap) + kHeader;
        const double pad = (kRow - kBar) / 2;
        std::vector<Cover> cover;  // dense: busy ps per (row, column) and category
        if (dense) cover.assign(lanes.labels.size() * kColumns, Cover{});
        os << "<g class=\"ops\">\n";
        for (uint32_t i = 0; i < p.ops.size() && i < t->ops.size(); ++i) {
            const Op& op = p.ops[i];
            const OpRecord& r = t->ops[i];
            const Cat g = gpu_cat(op);
            auto rect = [&](const char* phase, int row, int sub, Cat c, Time a, Time b, const std::string& lane, const Cause& cause) {
                if (dense) {
                    add_cover(&cover[static_cast<size_t>(row) * kColumns], span, c, a, b);
                    return;
                }
                const double x = x_of(a), w = std::max(x_of(b) - x, 0.5);
                os << "<rect class=\"op " << phase << " " << kCatClass[c] << "\" x=\"" << fmt(x) << "\" y=\""
                   << fmt(y0 + lanes.y[static_cast<size_t>(row)] + kRow * sub + pad) << "\" width=\"" << fmt(w) << "\" height=\""
                   << fmt(kBar) << "\" " << fill(c, g) << "><title>" << xml_escape(p.op_name(i)) << " (" << to_string(op.kind)
                   << ", " << phase << ") " << xml_escape(lane) << ": " << format_time(a) << " .. " << format_time(b) << " ("
                   << format_time(b - a) << "); cause: " << xml_escape(phase_cause_text(p, cause)) << "</title></rect>\n";
            };
            if (r.has_host())
                rect("host", lanes.host.at(key(op.thread, p.threads.size())), 0, host_cat(op), r.host_start, r.host_end,
                     host_lane(p, op.thread), r.host_cause);
            if (r.has_gpu()) {
                rect("gpu", lanes.stream.at(key(op.stream, p.streams.size())), 0, g, r.gpu_start, r.gpu_end,
                     stream_lane(p, op.stream), r.gpu_cause);
                if (opt.engine_lanes && r.engine != Engine::None)
                    rect("gpu", lanes.engine[static_cast<int>(r.engine)], sub_rows[s][i], g, r.gpu_start, r.gpu_end,
                         engine_lane(r.engine), r.gpu_cause);
            }
        }
        if (dense)
            for (size_t row = 0; row < lanes.labels.size(); ++row)
                emit_cover(os, &cover[row * kColumns], span, y0 + lanes.y[row] + pad, kRow * lanes.sub[row] - 2 * pad, lanes.labels[row]);
        os << "</g>\n";

        // The critical path: its steps on the top row, and each outlined on the row it ran on.
        if (const Analysis* a = sections[s].analysis) {
            os << "<g class=\"critical\">\n";
            const bool dense_path = dense || a->critical_path.size() > opt.max_phase_rects / 2;
            std::vector<Cover> path_cover(dense_path ? kColumns : 0);
            for (const CriticalStep& st : a->critical_path) {
                if (dense_path) {
                    if (st.op < p.ops.size())
                        add_cover(path_cover.data(), span, st.phase == Phase::Host ? host_cat(p.ops[st.op]) : gpu_cat(p.ops[st.op]),
                                  st.start, st.end);
                    continue;
                }
                if (st.op >= p.ops.size()) continue;
                const Op& op = p.ops[st.op];
                const OpRecord& r = t->ops[st.op];
                const Cat c = st.phase == Phase::Host ? host_cat(op) : gpu_cat(op);
                int row = -1;
                if (st.phase == Phase::Host) row = lanes.host.at(key(op.thread, p.threads.size()));
                else if (opt.engine_lanes && r.engine != Engine::None) row = lanes.engine[static_cast<int>(r.engine)];
                else row = lanes.stream.at(key(op.stream, p.streams.size()));
                const int sub = st.phase == Phase::Gpu && opt.engine_lanes && r.engine != Engine::None ? sub_rows[s][st.op] : 0;
                const double x = x_of(st.start), w = std::max(x_of(st.end) - x, 0.5);
                const std::string tip = xml_escape(p.op_name(st.op)) + " (" + to_string(op.kind) + ", " + phase_name(st.phase) +
                                        ") " + xml_escape(a->lane(st)) + ": on the critical path " + format_time(st.start) +
                                        " .. " + format_time(st.end) + " (" + format_time(st.end - st.start) +
                                        "); cause: " + to_string(st.cause);
                os << "<rect class=\"crit-outline\" x=\"" << fmt(x) << "\" y=\""
                       << fmt(y0 + lanes.y[static_cast<size_t>(row)] + kRow * sub + pad - 1) << "\" width=\"" << fmt(w)
                       << "\" height=\"" << fmt(kBar + 2) << "\" fill=\"none\" stroke=\"#111111\" stroke-width=\"1.5\"/>\n";
                os << "<rect class=\"op crit " << kCatClass[c] << "\" x=\"" << fmt(x) << "\" y=\"" << fmt(y0 + pad) << "\" width=\""
                   << fmt(w) << "\" height=\"" << fmt(kBar) << "\" " << fill(c, gpu_cat(op)) << "><title>" << tip
                   << "</title></rect>\n";
            }
            if (dense_path) emit_cover(os, path_cover.data(), span, y0 + pad, kBar, "critical path");
            os << "</g>\n";
        }
    }

    // Legend.
    os << "<g class=\"legend\">\n";
    for (int c = 0; c < kCats; ++c) {
        const double x = 10 + 145.0 * c, y = bottom + 10;
        os << "<rect class=\"swatch\" x=\"" << fmt(x) << "\" y=\"" << fmt(y) << "\" width=\"12\" height=\"12\" "
           << fill(static_cast<Cat>(c), kKernel) << "/>\n"
           << "<text x=\"" << fmt(x + 17) << "\" y=\"" << fmt(y + 10) << "\">" << kCatLabel[c] << "</text>\n";
    }
    if (lanes.critical)
        os << "<rect class=\"crit-swatch\" x=\"10\" y=\"" << fmt(bottom + 30) << "\" width=\"12\" height=\"12\" fill=\"none\" "
           << "stroke=\"#111111\" stroke-width=\"1.5\"/>\n<text x=\"27\" y=\"" << fmt(bottom + 40)
           << "\">on the critical path (outlined; the top row shows its steps, each from its last dependency's end)</text>\n";
    if (dense)
        os << "<text x=\"" << fmt(lanes.critical ? 600 : 10) << "\" y=\"" << fmt(bottom + (lanes.critical ? 40 : 30))
           << "\">too many ops to draw one by one: each lane shows its busy share per pixel column</text>\n";
    os << "</g>\n</svg>\n";
}

}  // namespace hetsim::report
