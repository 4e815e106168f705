#include "report/svg_timeline.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "report/analysis.hpp"

namespace hetsim::report {
namespace {

constexpr double kWidth = 1200, kLeft = 200, kRight = 30;
constexpr double kPlotW = kWidth - kLeft - kRight;
constexpr double kAxisY = 66, kTop = 80, kHeader = 20, kRow = 20, kBar = 14, kGap = 14;

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
        case OpKind::Memcpy: case OpKind::Memset: return op.sync ? kSync : kCall;
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

struct Lanes {
    std::map<int32_t, int> host, stream;  // thread / stream index (INT_MAX: unknown) -> row
    std::vector<std::string> labels;
};

int32_t key(int32_t i, size_t n) { return i >= 0 && static_cast<size_t>(i) < n ? i : INT_MAX; }

Lanes find_lanes(const Program& p, const std::vector<SvgSection>& sections) {
    std::set<int32_t> th, st;
    for (const SvgSection& s : sections) {
        if (!s.timeline) continue;
        for (size_t i = 0; i < p.ops.size() && i < s.timeline->ops.size(); ++i) {
            const OpRecord& r = s.timeline->ops[i];
            if (r.has_host()) th.insert(key(p.ops[i].thread, p.threads.size()));
            if (r.has_gpu()) st.insert(key(p.ops[i].stream, p.streams.size()));
        }
    }
    Lanes l;
    for (int32_t t : th) {
        l.host[t] = static_cast<int>(l.labels.size());
        l.labels.push_back(host_lane(p, t == INT_MAX ? kNone : t));
    }
    for (int32_t s : st) {
        l.stream[s] = static_cast<int>(l.labels.size());
        l.labels.push_back(stream_lane(p, s == INT_MAX ? kNone : s));
    }
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

void write_svg_timelines(std::ostream& os, const Program& p, const std::vector<SvgSection>& sections,
                         const std::string& title) {
    const Lanes lanes = find_lanes(p, sections);
    int64_t span = 1000;  // at least 1 ns
    for (const SvgSection& s : sections) {
        if (!s.timeline) continue;
        span = std::max(span, s.timeline->end_to_end.ps());
        for (const OpRecord& r : s.timeline->ops) span = std::max(span, r.end().ps());
    }
    auto x_of = [&](Time t) { return kLeft + kPlotW * static_cast<double>(t.ps()) / static_cast<double>(span); };
    const double section_h = kHeader + kRow * static_cast<double>(lanes.labels.size());
    const double bottom = kTop + static_cast<double>(sections.size()) * (section_h + kGap);
    const double height = bottom + 40;

    os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
       << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fmt(kWidth) << "\" height=\"" << fmt(height)
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
            const double y = y0 + kHeader + kRow * static_cast<double>(r);
            os << "<rect class=\"lane\" x=\"" << fmt(kLeft) << "\" y=\"" << fmt(y) << "\" width=\"" << fmt(kPlotW)
               << "\" height=\"" << fmt(kRow) << "\" fill=\"" << (r % 2 ? "#ffffff" : "#f4f4f4") << "\"/>\n"
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

    // Ops: one rect per phase.
    for (size_t s = 0; s < sections.size(); ++s) {
        const Timeline* t = sections[s].timeline;
        if (!t) continue;
        const double y0 = kTop + static_cast<double>(s) * (section_h + kGap) + kHeader + (kRow - kBar) / 2;
        os << "<g class=\"ops\">\n";
        for (uint32_t i = 0; i < p.ops.size() && i < t->ops.size(); ++i) {
            const Op& op = p.ops[i];
            const OpRecord& r = t->ops[i];
            const Cat g = gpu_cat(op);
            auto rect = [&](const char* phase, int row, Cat c, Time a, Time b, const std::string& lane) {
                const double x = x_of(a), w = std::max(x_of(b) - x, 0.5);
                os << "<rect class=\"op " << phase << " " << kCatClass[c] << "\" x=\"" << fmt(x) << "\" y=\""
                   << fmt(y0 + kRow * row) << "\" width=\"" << fmt(w) << "\" height=\"" << fmt(kBar) << "\" "
                   << fill(c, g) << "><title>" << xml_escape(p.op_name(i)) << " (" << to_string(op.kind) << ", "
                   << phase << ") " << xml_escape(lane) << ": " << format_time(a) << " .. " << format_time(b)
                   << "</title></rect>\n";
            };
            if (r.has_host())
                rect("host", lanes.host.at(key(op.thread, p.threads.size())), host_cat(op), r.host_start, r.host_end,
                     host_lane(p, op.thread));
            if (r.has_gpu())
                rect("gpu", lanes.stream.at(key(op.stream, p.streams.size())), g, r.gpu_start, r.gpu_end,
                     stream_lane(p, op.stream));
        }
        os << "</g>\n";
    }

    // Legend.
    os << "<g class=\"legend\">\n";
    for (int c = 0; c < kCats; ++c) {
        const double x = 10 + 145.0 * c, y = bottom + 10;
        os << "<rect class=\"swatch\" x=\"" << fmt(x) << "\" y=\"" << fmt(y) << "\" width=\"12\" height=\"12\" "
           << fill(static_cast<Cat>(c), kKernel) << "/>\n"
           << "<text x=\"" << fmt(x + 17) << "\" y=\"" << fmt(y + 10) << "\">" << kCatLabel[c] << "</text>\n";
    }
    os << "</g>\n</svg>\n";
}

}  // namespace hetsim::report
