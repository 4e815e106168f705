#include "sweep/plot.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "sweep/table.hpp"
#include "core/error.hpp"

namespace hetsim::sweep {
namespace {

const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
constexpr double kW = 860, kH = 520, kL = 90, kR = 190, kT = 50, kB = 70;  // canvas and margins

std::string num(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string esc(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '<') o += "&lt;";
        else if (c == '>') o += "&gt;";
        else if (c == '&') o += "&amp;";
        else if (c == '"') o += "&quot;";
        else o += c;
    }
    return o;
}

struct NumAxis {
    std::vector<double> v;
    std::string dim, unit;
};

NumAxis numeric_axis(const Axis& a) {
    NumAxis n;
    for (const std::string& t : a.values) {
        double x;
        std::string dim, unit;
        if (!numeric_value(t, &x, &dim, &unit))
            throw InputError({"--x " + a.name}, "the value '" + t + "' of " + a.name + " is not a number; plot against a numeric axis");
        if (!n.v.empty() && dim != n.dim)
            throw InputError({"--x " + a.name}, "the values of " + a.name + " mix a " + n.dim + " and a " + dim);
        if (n.v.empty()) n.dim = dim, n.unit = unit;
        n.v.push_back(x);
    }
    return n;
}

// Fixed notation, shortest digits that read back the same: "10125000000", "85333333333.33333".
std::string plain_number(double v) {
    char buf[400];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
    return std::string(buf, r.ptr);
}

const char* base_unit(const std::string& dim) {
    return dim == "time" ? " ps" : dim == "size" ? " B" : dim == "bandwidth" ? " B/s" : "";
}

struct TimeUnit {
    double div;
    std::string name;   // "ms"; "" for a plain number
    std::string label;  // the axis title: "end-to-end time (ms)", "gpu_active_fraction"
};
// Times in nanoseconds: the *_ns columns and the idle:* ones (idle:gpu, idle:sm:waiting_on_host).
bool is_time_column(const std::string& y) {
    return (y.size() > 3 && y.compare(y.size() - 3, 3, "_ns") == 0) || y.rfind("idle:", 0) == 0;
}
std::string what_of(const std::string& y) { return y == "end_to_end_ns" ? "end-to-end time" : y; }
// The scale of the plotted column: times (*_ns, idle:*) in an automatic unit, other columns as they are.
TimeUnit time_unit(double max_v, const std::string& y) {
    if (!is_time_column(y)) return {1, "", y};
    TimeUnit u = max_v >= 1e9 ? TimeUnit{1e9, "s", ""} : max_v >= 1e6 ? TimeUnit{1e6, "ms", ""} : max_v >= 1e3 ? TimeUnit{1e3, "us", ""} : TimeUnit{1, "ns", ""};
    u.label = what_of(y) + " (" + u.name + ")";
    return u;
}
std::string with_unit(double v, const TimeUnit& u) { return u.name.empty() ? num(v) : num(v) + " " + u.name; }

// What tells the lines apart besides colour: a dash pattern and a marker shape per line, and
// lines drawn wider and markers larger first, so that a line that coincides with a later one
// still shows around it.
const char* const kDashes[] = {"", "8 4", "2 3", "10 3 2 3", "5 2", "1 4"};
void marker(std::ostringstream& o, size_t s, double x, double y, const char* color) {
    const double r = std::max(2.5, 6.0 - 0.6 * static_cast<double>(s % 6));
    switch (s % 6) {
        case 0: o << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r) << "\" fill=\"" << color << "\"/>"; break;
        case 1: o << "<rect x=\"" << num(x - r) << "\" y=\"" << num(y - r) << "\" width=\"" << num(2 * r) << "\" height=\"" << num(2 * r)
                  << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\"/>"; break;
        case 2: o << "<polygon points=\"" << num(x) << "," << num(y - r) << " " << num(x + r) << "," << num(y + r) << " " << num(x - r) << ","
                  << num(y + r) << "\" fill=\"" << color << "\"/>"; break;
        case 3: o << "<polygon points=\"" << num(x) << "," << num(y - r) << " " << num(x + r) << "," << num(y) << " " << num(x) << ","
                  << num(y + r) << " " << num(x - r) << "," << num(y) << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\"/>"; break;
        case 4: o << "<path d=\"M" << num(x - r) << "," << num(y - r) << "L" << num(x + r) << "," << num(y + r) << "M" << num(x - r) << ","
                  << num(y + r) << "L" << num(x + r) << "," << num(y - r) << "\" stroke=\"" << color << "\" stroke-width=\"2\"/>"; break;
        default: o << "<path d=\"M" << num(x - r) << "," << num(y) << "L" << num(x + r) << "," << num(y) << "M" << num(x) << "," << num(y - r)
                   << "L" << num(x) << "," << num(y + r) << "\" stroke=\"" << color << "\" stroke-width=\"2\"/>"; break;
    }
    o << "\n";
}

std::vector<double> nice_ticks(double lo, double hi) {
    double span = hi - lo > 0 ? hi - lo : 1, raw = span / 5, mag = std::pow(10, std::floor(std::log10(raw)));
    double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    std::vector<double> t;
    // Up to the first tick at or above hi, so that the top tick bounds the data.
    for (double v = std::ceil(lo / step) * step; t.empty() || t.back() < hi - step * 1e-9; v += step) t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
    return t;
}

struct Choice {
    int x = -1, series = -1, variant = -1;
    std::vector<std::string> notes;
};

Choice choose_axes(const SweepDef& def, const PlotRequest& req) {
    Choice c;
    auto names = [&] {
        std::string s;
        for (const Axis& a : def.axes) s += (s.empty() ? "" : ", ") + a.name;
        return s;
    };
    int compare = def.has_compare ? static_cast<int>(def.axes.size()) - 1 : -1;
    c.x = req.x.empty() ? 0 : def.axis_index(req.x);
    if (c.x < 0) throw InputError({"--x " + req.x}, "'" + req.x + "' is not varied in this sweep (varied: " + names() + ")");
    if (req.series == "none") {
        c.series = -1;
    } else if (!req.series.empty()) {
        c.series = def.axis_index(req.series);
        if (c.series < 0) throw InputError({"--series " + req.series}, "'" + req.series + "' is not varied in this sweep (varied: " + names() + ")");
        if (c.series == c.x) throw InputError({"--series " + req.series}, "the series axis must differ from the x axis");
    } else if (compare >= 0 && compare != c.x && !req.heatmap) {
        c.series = compare;
    } else {
        for (int i = 0; i < static_cast<int>(def.axes.size()) && c.series < 0; ++i)
            if (i != c.x && (i != compare || !req.heatmap)) c.series = i;
    }
    if (req.heatmap && c.series < 0) throw InputError({"--heatmap"}, "a heat map needs two varied axes (--x and --series)");
    if (req.heatmap && compare >= 0 && compare != c.x && compare != c.series) c.variant = compare;
    auto zipped = [&](int i) { return def.zip && i >= 0 && i != compare; };
    if (zipped(c.x) && zipped(c.series))
        throw InputError({"--series " + def.axes[static_cast<size_t>(c.series)].name},
                         "with --zip, " + def.axes[static_cast<size_t>(c.series)].name + " moves together with " +
                             def.axes[static_cast<size_t>(c.x)].name + "; use --compare-param for the series");
    for (int i = 0; i < static_cast<int>(def.axes.size()); ++i)
        if (i != c.x && i != c.series && i != c.variant && !(zipped(i) && zipped(c.x)) && def.axes[static_cast<size_t>(i)].values.size() > 1)
            c.notes.push_back("holding " + def.axes[static_cast<size_t>(i)].name + "=" + def.axes[static_cast<size_t>(i)].values[0] +
                              " (its first value) in the plot");
    return c;
}

bool in_slice(const SweepDef& def, const std::vector<size_t>& co, const Choice& ch) {
    int compare = def.has_compare ? static_cast<int>(def.axes.size()) - 1 : -1;
    for (int i = 0; i < static_cast<int>(co.size()); ++i) {
        if (i == ch.x || i == ch.series || i == ch.variant) continue;
        if (def.zip && i != compare && ch.x != compare) continue;  // zipped with x: moves with it
        if (co[static_cast<size_t>(i)] != 0) return false;
    }
    return true;
}

void svg_open(std::ostringstream& o, const std::string& title) {
    o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH << "\" viewBox=\"0 0 " << kW << ' ' << kH
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kW / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" << esc(title) << "</text>\n";
}

std::vector<Crossover> find_crossovers(const std::vector<double>& xs, const std::vector<size_t>& order,
                                       const std::vector<std::vector<double>>& y, const std::vector<std::string>& labels,
                                       const Axis& xa, const NumAxis& nx) {
    std::vector<Crossover> out;
    for (size_t a = 0; a < y.size(); ++a)
        for (size_t b = a + 1; b < y.size(); ++b) {
            bool have_prev = false, zero_between = false;
            size_t prev = 0, first_zero = 0;
            double dprev = 0;
            for (size_t k : order) {
                if (std::isnan(y[a][k]) || std::isnan(y[b][k])) continue;
                double d = y[a][k] - y[b][k];
                if (d == 0) {
                    if (!zero_between) first_zero = k;
                    zero_between = true;
                    continue;
                }
                if (have_prev && (d < 0) != (dprev < 0)) {
                    Crossover c;
                    c.a = labels[a];
                    c.b = labels[b];
                    c.exact = zero_between;
                    c.x = zero_between ? xs[first_zero] : xs[prev] + (xs[k] - xs[prev]) * dprev / (dprev - d);
                    c.below = xa.values[zero_between ? first_zero : prev];
                    c.above = xa.values[zero_between ? first_zero : k];
                    c.faster_below = dprev < 0 ? labels[a] : labels[b];
                    c.x_text = format_in_unit(c.x, nx.unit);
                    c.base_text = plain_number(c.x) + base_unit(nx.dim);
                    out.push_back(c);
                }
                have_prev = true;
                zero_between = false;
                prev = k;
                dprev = d;
            }
        }
    return out;
}

PlotResult line_plot(const SweepDef& def, const std::vector<double>& e2e, const Choice& ch, const std::string& ycol) {
    const Axis& xa = def.axes[static_cast<size_t>(ch.x)];
    NumAxis nx = numeric_axis(xa);
    size_t ns = ch.series < 0 ? 1 : def.axes[static_cast<size_t>(ch.series)].values.size();
    std::vector<std::vector<double>> y(ns, std::vector<double>(xa.values.size(), NAN));
    std::vector<std::string> labels(ns, "end-to-end");
    if (ch.series >= 0)
        for (size_t s = 0; s < ns; ++s) labels[s] = def.axes[static_cast<size_t>(ch.series)].name + "=" + def.axes[static_cast<size_t>(ch.series)].values[s];
    double ymax = 0;
    for (uint64_t p = 0; p < e2e.size(); ++p) {
        if (std::isnan(e2e[p])) continue;
        std::vector<size_t> co = def.coords(p);
        if (!in_slice(def, co, ch)) continue;
        y[ch.series < 0 ? 0 : co[static_cast<size_t>(ch.series)]][co[static_cast<size_t>(ch.x)]] = e2e[p];
        ymax = std::max(ymax, e2e[p]);
    }
    std::vector<size_t> order(xa.values.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return nx.v[i] < nx.v[j]; });
    double xmin = nx.v[order.front()], xmax = nx.v[order.back()];
    bool logx = xmin > 0 && (xa.log_scale || xmax / xmin >= 100);
    auto fx = [&](double v) {
        double t = xmax == xmin ? 0.5 : logx ? std::log(v / xmin) / std::log(xmax / xmin) : (v - xmin) / (xmax - xmin);
        return kL + t * (kW - kL - kR);
    };
    TimeUnit tu = time_unit(ymax, ycol);
    std::vector<double> yt = nice_ticks(0, ymax / tu.div * 1.02);
    double ytop = yt.back() > 0 ? yt.back() : 1;
    auto fy = [&](double ns_v) { return kH - kB - (ns_v / tu.div) / ytop * (kH - kT - kB); };

    PlotResult r;
    r.notes = ch.notes;
    // Crossovers between the --compare-param variants, or between the two lines of a two-value series.
    bool variants = def.has_compare && ch.series == static_cast<int>(def.axes.size()) - 1;
    if (ns == 2 || (variants && ns >= 2 && ns <= 8)) r.crossovers = find_crossovers(nx.v, order, y, labels, xa, nx);
    for (Crossover& c : r.crossovers) c.metric = ycol;
    std::ostringstream o;
    svg_open(o, def.scenario + ": " + what_of(ycol) + " vs " + xa.name);
    o << "<g stroke=\"#ddd\">\n";
    for (double t : yt) o << "<line x1=\"" << kL << "\" x2=\"" << kW - kR << "\" y1=\"" << num(fy(t * tu.div)) << "\" y2=\"" << num(fy(t * tu.div)) << "\"/>\n";
    o << "</g>\n<g text-anchor=\"end\">\n";
    for (double t : yt) o << "<text x=\"" << kL - 6 << "\" y=\"" << num(fy(t * tu.div) + 4) << "\">" << num(t) << "</text>\n";
    size_t every = (xa.values.size() + 11) / 12;
    o << "</g>\n<g text-anchor=\"middle\">\n";
    for (size_t i = 0; i < order.size(); i += every)
        o << "<text x=\"" << num(fx(nx.v[order[i]])) << "\" y=\"" << kH - kB + 18 << "\">" << esc(xa.values[order[i]]) << "</text>\n";
    o << "</g>\n<line x1=\"" << kL << "\" y1=\"" << kH - kB << "\" x2=\"" << kW - kR << "\" y2=\"" << kH - kB << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << kL << "\" y1=\"" << kT << "\" x2=\"" << kL << "\" y2=\"" << kH - kB << "\" stroke=\"black\"/>\n"
      << "<text x=\"" << (kL + kW - kR) / 2 << "\" y=\"" << kH - 24 << "\" text-anchor=\"middle\">" << esc(xa.name) << (logx ? " (log scale)" : "")
      << "</text>\n<text transform=\"translate(22," << (kT + kH - kB) / 2 << ") rotate(-90)\" text-anchor=\"middle\">" << esc(tu.label)
      << "</text>\n";
    for (size_t s = 0; s < ns; ++s) {
        const char* color = kColors[s % 8];
        const double width = std::max(1.5, 3.5 - 0.4 * static_cast<double>(s % 6));
        const char* dash = kDashes[s % 6];
        std::string dash_attr = *dash ? std::string(" stroke-dasharray=\"") + dash + "\"" : "";
        std::string pts;
        for (size_t k : order)
            if (!std::isnan(y[s][k])) pts += num(fx(nx.v[k])) + "," + num(fy(y[s][k])) + " ";
        o << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"" << num(width) << "\"" << dash_attr
          << " points=\"" << pts << "\"/>\n";
        for (size_t k : order)
            if (!std::isnan(y[s][k])) marker(o, s, fx(nx.v[k]), fy(y[s][k]), color);
        double ly = kT + 10 + 20.0 * static_cast<double>(s);
        o << "<line x1=\"" << kW - kR + 10 << "\" x2=\"" << kW - kR + 44 << "\" y1=\"" << ly << "\" y2=\"" << ly << "\" stroke=\"" << color
          << "\" stroke-width=\"" << num(width) << "\"" << dash_attr << "/>";
        marker(o, s, kW - kR + 27, ly, color);
        o << "<text x=\"" << kW - kR + 50 << "\" y=\"" << ly + 4 << "\">" << esc(labels[s]) << "</text>\n";
    }
    for (const Crossover& c : r.crossovers) {
        size_t a = static_cast<size_t>(std::find(labels.begin(), labels.end(), c.a) - labels.begin());
        // y at the crossover: line a interpolated between its neighbouring sweep values.
        double yc = NAN;
        for (size_t i = 0; i + 1 < order.size(); ++i) {
            double x0 = nx.v[order[i]], x1 = nx.v[order[i + 1]], y0 = y[a][order[i]], y1 = y[a][order[i + 1]];
            if (c.x >= x0 && c.x <= x1 && !std::isnan(y0) && !std::isnan(y1)) yc = x1 == x0 ? y0 : y0 + (y1 - y0) * (c.x - x0) / (x1 - x0);
        }
        if (std::isnan(yc)) continue;
        o << "<line x1=\"" << num(fx(c.x)) << "\" x2=\"" << num(fx(c.x)) << "\" y1=\"" << kT << "\" y2=\"" << kH - kB
          << "\" stroke=\"black\" stroke-dasharray=\"4 3\"/>\n<circle cx=\"" << num(fx(c.x)) << "\" cy=\"" << num(fy(yc))
          << "\" r=\"6\" fill=\"none\" stroke=\"black\" stroke-width=\"2\"/>\n<text x=\"" << num(fx(c.x) + 5) << "\" y=\"" << kT + 12
          << "\">crossover " << esc(c.x_text) << "</text>\n";
    }
    o << "</svg>\n";
    r.svg = o.str();
    return r;
}

// Viridis-like ramp, t in [0, 1].
std::string ramp(double t) {
    static const double c[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    t = std::clamp(t, 0.0, 1.0) * 4;
    int i = std::min(3, static_cast<int>(t));
    double f = t - i;
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(c[i][0] + (c[i + 1][0] - c[i][0]) * f),
                  static_cast<int>(c[i][1] + (c[i + 1][1] - c[i][1]) * f), static_cast<int>(c[i][2] + (c[i + 1][2] - c[i][2]) * f));
    return buf;
}

PlotResult heat_map(const SweepDef& def, const std::vector<double>& e2e, const Choice& ch, const std::string& ycol) {
    const Axis& xa = def.axes[static_cast<size_t>(ch.x)];
    const Axis& ya = def.axes[static_cast<size_t>(ch.series)];
    size_t nx = xa.values.size(), ny = ya.values.size();
    std::vector<double> cell(nx * ny, NAN);
    std::vector<int> winner(nx * ny, -1);
    for (uint64_t p = 0; p < e2e.size(); ++p) {
        if (std::isnan(e2e[p])) continue;
        std::vector<size_t> co = def.coords(p);
        if (!in_slice(def, co, ch)) continue;
        size_t k = co[static_cast<size_t>(ch.series)] * nx + co[static_cast<size_t>(ch.x)];
        if (std::isnan(cell[k]) || e2e[p] < cell[k]) {
            cell[k] = e2e[p];
            winner[k] = ch.variant < 0 ? -1 : static_cast<int>(co[static_cast<size_t>(ch.variant)]);
        }
    }
    double lo = INFINITY, hi = 0;
    for (double v : cell)
        if (!std::isnan(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    TimeUnit tu = time_unit(hi, ycol);
    double cw = (kW - kL - kR) / static_cast<double>(nx), chh = (kH - kT - kB) / static_cast<double>(ny);
    auto cx = [&](size_t i) { return kL + cw * static_cast<double>(i); };
    auto cy = [&](size_t j) { return kH - kB - chh * static_cast<double>(j + 1); };  // first value at the bottom
    PlotResult r;
    r.notes = ch.notes;
    std::ostringstream o;
    const bool e2e_col = ycol == "end_to_end_ns";
    std::string what = ch.variant < 0 ? what_of(ycol)
                       : e2e_col     ? "faster " + def.axes[static_cast<size_t>(ch.variant)].name + " and its time"
                                     : def.axes[static_cast<size_t>(ch.variant)].name + " with the lower " + ycol + " and its value";
    svg_open(o, def.scenario + ": " + what);
    bool labels = nx <= 16 && ny <= 24;
    size_t best = 0;
    for (size_t k = 0; k < cell.size(); ++k)
        if (!std::isnan(cell[k]) && (std::isnan(cell[best]) || cell[k] < cell[best])) best = k;
    for (size_t j = 0; j < ny; ++j)
        for (size_t i = 0; i < nx; ++i) {
            double v = cell[j * nx + i];
            double t = std::isnan(v) || hi == lo ? 0.5 : (v - lo) / (hi - lo);
            o << "<rect x=\"" << num(cx(i)) << "\" y=\"" << num(cy(j)) << "\" width=\"" << num(cw) << "\" height=\"" << num(chh) << "\" fill=\""
              << (std::isnan(v) ? "#eee" : ramp(t)) << "\"><title>" << esc(xa.name + "=" + xa.values[i] + " " + ya.name + "=" + ya.values[j])
              << ": " << (std::isnan(v) ? "no data" : with_unit(v / tu.div, tu)) << "</title></rect>\n";
            if (labels && !std::isnan(v)) {
                std::string text = num(v / tu.div);
                if (winner[j * nx + i] >= 0) text = def.axes[static_cast<size_t>(ch.variant)].values[static_cast<size_t>(winner[j * nx + i])] + " " + text;
                o << "<text x=\"" << num(cx(i) + cw / 2) << "\" y=\"" << num(cy(j) + chh / 2 + 4) << "\" text-anchor=\"middle\" font-size=\"10\" fill=\""
                  << (t > 0.6 ? "black" : "white") << "\">" << esc(text) << "</text>\n";
            }
        }
    // The frontier between cells won by different variants.
    for (size_t j = 0; j < ny; ++j)
        for (size_t i = 0; i < nx; ++i) {
            int w = winner[j * nx + i];
            if (w < 0) continue;
            if (i + 1 < nx && winner[j * nx + i + 1] >= 0 && winner[j * nx + i + 1] != w)
                o << "<line x1=\"" << num(cx(i + 1)) << "\" x2=\"" << num(cx(i + 1)) << "\" y1=\"" << num(cy(j)) << "\" y2=\"" << num(cy(j) + chh)
                  << "\" stroke=\"red\" stroke-width=\"3\"/>\n";
            if (j + 1 < ny && winner[(j + 1) * nx + i] >= 0 && winner[(j + 1) * nx + i] != w)
                o << "<line x1=\"" << num(cx(i)) << "\" x2=\"" << num(cx(i) + cw) << "\" y1=\"" << num(cy(j)) << "\" y2=\"" << num(cy(j))
                  << "\" stroke=\"red\" stroke-width=\"3\"/>\n";
        }
    if (!std::isnan(cell[best]))
        o << "<rect x=\"" << num(cx(best % nx)) << "\" y=\"" << num(cy(best / nx)) << "\" width=\"" << num(cw) << "\" height=\"" << num(chh)
          << "\" fill=\"none\" stroke=\"black\" stroke-width=\"3\"><title>" << (e2e_col ? "fastest" : "lowest") << "</title></rect>\n";
    size_t every_x = (nx + 11) / 12, every_y = (ny + 15) / 16;
    for (size_t i = 0; i < nx; i += every_x)
        o << "<text x=\"" << num(cx(i) + cw / 2) << "\" y=\"" << kH - kB + 18 << "\" text-anchor=\"middle\">" << esc(xa.values[i]) << "</text>\n";
    for (size_t j = 0; j < ny; j += every_y)
        o << "<text x=\"" << kL - 6 << "\" y=\"" << num(cy(j) + chh / 2 + 4) << "\" text-anchor=\"end\">" << esc(ya.values[j]) << "</text>\n";
    o << "<text x=\"" << (kL + kW - kR) / 2 << "\" y=\"" << kH - 24 << "\" text-anchor=\"middle\">" << esc(xa.name) << "</text>\n"
      << "<text transform=\"translate(18," << (kT + kH - kB) / 2 << ") rotate(-90)\" text-anchor=\"middle\">" << esc(ya.name) << "</text>\n";
    double seg = (kH - kT - kB) / 11;
    for (int s = 0; s <= 10; ++s) {  // the colour bar, fastest at the bottom
        double t = s / 10.0, top = kH - kB - seg * (s + 1);
        o << "<rect x=\"" << kW - kR + 20 << "\" y=\"" << num(top) << "\" width=\"18\" height=\"" << num(seg + 0.5) << "\" fill=\"" << ramp(t) << "\"/>\n";
        if (s % 5 == 0 && hi >= lo)
            o << "<text x=\"" << kW - kR + 44 << "\" y=\"" << num(top + seg / 2 + 4) << "\">" << esc(with_unit((lo + t * (hi - lo)) / tu.div, tu)) << "</text>\n";
    }
    o << "</svg>\n";
    r.svg = o.str();
    return r;
}

}  // namespace

PlotResult make_plot(const SweepDef& def, const std::vector<double>& values, const PlotRequest& req) {
    const std::vector<std::string> cols = plot_columns(def);
    if (std::find(cols.begin(), cols.end(), req.y) == cols.end()) {
        std::string list;
        for (const std::string& c : cols) list += (list.empty() ? "" : ", ") + c;
        throw InputError({"--y " + req.y}, "not a numeric column of the sweep CSV; one of: " + list);
    }
    Choice ch = choose_axes(def, req);
    return req.heatmap ? heat_map(def, values, ch, req.y) : line_plot(def, values, ch, req.y);
}

std::vector<std::string> plot_columns(const SweepDef& def) {
    std::vector<std::string> c;
    for (const std::string& m : metric_columns())
        if (m != "busiest_resource") c.push_back(m);
    for (const std::string& u : utilization_columns(def)) c.push_back(u);
    for (const std::string& i : idle_columns()) c.push_back(i);
    return c;
}

std::string describe(const Crossover& c, const std::string& x_name) {
    std::string where = c.exact ? "equal at " + c.below : "between " + c.below + " and " + c.above + ", interpolated";
    std::string other = c.faster_below == c.a ? c.b : c.a;
    const std::string what = c.metric == "end_to_end_ns" ? " is faster below, " : " has the lower " + c.metric + " below, ";
    return "crossover: " + c.a + " vs " + c.b + " at " + x_name + " = " + c.x_text + " (" + c.base_text + "; " + where + "): " +
           c.faster_below + what + other + " above";
}

}  // namespace hetsim::sweep
