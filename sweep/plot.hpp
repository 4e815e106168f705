// SVG plots of a sweep, and the crossovers between its lines.
//
// Line plot: end-to-end time (or the --y column) against the --x axis, one line per value of the --series axis (by
// default the --compare-param axis, else the first other axis). Where two lines cross, the
// crossover x is interpolated linearly between the two sweep values around it and marked.
// Heat map: end-to-end time over the --x and --series axes. With a --compare-param axis, each
// cell shows the faster variant and its time, and a thick line separates cells won by different
// variants (the crossover frontier).
// Axes that are neither x nor series are held at their first value (a note says so).
#pragma once
#include <string>
#include <vector>

#include "sweep/spec.hpp"

namespace hetsim::sweep {

struct PlotRequest {
    std::string x;       // an axis name; "" = the first --vary axis
    std::string series;  // an axis name; "" = the default above; "none" = one line
    bool heatmap = false;
    std::string y = "end_to_end_ns";  // the CSV column plotted (--y); *_ns columns are times
};

struct Crossover {
    std::string a, b;           // series labels: "path=cpu"
    double x = 0;               // base units (ps, bytes, bytes/s, or plain)
    std::string x_text;         // in the unit of the axis's values: "85.3333GB/s"
    std::string base_text;      // "85333333333.33333 B/s"
    std::string below, above;   // sweep values around it (equal when exactly on one)
    std::string faster_below;   // label of the series with the lower value below x (faster, for end_to_end_ns)
    bool exact = false;         // the two lines meet on a sweep value
    std::string metric = "end_to_end_ns";  // the column compared
};

struct PlotResult {
    std::string svg;
    std::vector<Crossover> crossovers;  // line plot only
    std::vector<std::string> notes;     // "holding nstreams=1 (its first value)"
};

// `values[p]` is point p's value of the column req.y (NaN when the point is not in the data:
// another shard). Throws InputError({"--x"} / {"--series"}, ...) for an unusable choice of axes.
// Lines are told apart by colour, dash pattern and marker shape, so lines that coincide stay
// visible; a heat map with a --compare-param axis marks the variant with the lower value.
PlotResult make_plot(const SweepDef& def, const std::vector<double>& values, const PlotRequest& req);

// The numeric columns --y accepts: every column after the varied values but busiest_resource
// (the metrics, util:*, idle:*), in the CSV's order.
std::vector<std::string> plot_columns(const SweepDef& def);

std::string describe(const Crossover& c, const std::string& x_name);  // one line, for the terminal

}  // namespace hetsim::sweep
