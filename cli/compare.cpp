// `hetsim compare`: simulate a scenario and compare it with a measured timeline from
// hetsim-runner, per op and end to end; optional two-timeline Chrome trace and SVG.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/outputs.hpp"
#include "frontend/scenario.hpp"
#include "import/kineto_trace.hpp"
#include "import/measured.hpp"
#include "report/chrome_trace.hpp"
#include "report/compare.hpp"
#include "report/html_report.hpp"
#include "report/json_report.hpp"
#include "report/output_file.hpp"
#include "report/svg_timeline.hpp"
#include "sim/engine.hpp"
#include "core/error.hpp"

namespace po = boost::program_options;

namespace hetsim::cli {

namespace {

const char* kCompareUsage = "usage: hetsim compare SCENARIO.yaml MEASURED.json [options]  (MEASURED: hetsim-runner output, or the PyTorch profiler trace SCENARIO was imported from)";

struct CompareArgs {
    std::string scenario, measured, format = "text", trace, svg, html, max_memory;
    std::vector<std::string> sets;
    std::string max_ops = "20000000";
    double max_error = -1;  // < 0: no check
    int top = 10;
};

nlohmann::json steps_json(const std::vector<import::StepError>& steps) {
    nlohmann::json a = nlohmann::json::array();
    for (const import::StepError& e : steps)
        a.push_back({{"step", e.number}, {"measured_ns", report::ns_value(e.measured)}, {"simulated_ns", report::ns_value(e.simulated)},
                     {"error_pct", e.error_pct}});
    return a;
}

void write_steps_text(std::ostream& os, const std::vector<import::StepError>& steps) {
    os << "\nper profiler step (simulated: from the step's first op on main to the next step's):\n";
    for (const import::StepError& e : steps) {
        char line[160];
        std::snprintf(line, sizeof line, "  ProfilerStep#%lld   measured %s   simulated %s   error %+.2f%%\n", static_cast<long long>(e.number),
                      report::format_time(e.measured).c_str(), report::format_time(e.simulated).c_str(), e.error_pct);
        os << line;
    }
}

}  // namespace

int compare_main(const std::vector<std::string>& args) {
    CompareArgs a;
    po::options_description d("compare options");
    d.add_options()("help,h", "show this help")
        ("set", po::value(&a.sets)->composing(), "override a param (name=value) or a profile parameter (hardware.key=value); repeatable")
        ("max-ops", po::value(&a.max_ops)->default_value(a.max_ops), "cap on ops after loop expansion")
        ("max-memory", po::value(&a.max_memory), "cap on the run's estimated memory, e.g. 8GiB (default: 3/4 of this machine's memory; 0: none)")
        ("max-error", po::value<double>(), "exit 1 when |end-to-end error| exceeds this many percent (against the median of the uninstrumented runs, as hetsim validate judges, where the file has them)")
        ("trace", po::value(&a.trace), "write a Chrome trace with both timelines (simulated pids 1/2, measured 3/4)")
        ("svg", po::value(&a.svg), "write an SVG of both timelines on one time axis")
        ("report", po::value(&a.html), "write a self-contained HTML report: both timelines, metrics side by side, per-op errors")
        ("format", po::value(&a.format)->default_value("text"), "text or json (printed to stdout)")
        ("top", po::value(&a.top)->default_value(a.top), "how many of the largest per-op errors to list");
    po::options_description all;
    all.add(d).add_options()("scenario", po::value(&a.scenario))("measured", po::value(&a.measured));
    po::positional_options_description pos;
    pos.add("scenario", 1).add("measured", 1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
        po::notify(vm);
        reject_empty_values(vm, d);
    } catch (const po::error& e) {
        std::cerr << "hetsim: error: " << option_error(e, all) << " (" << kCompareUsage << "; --help lists the options)\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << kCompareUsage << "\n"
                  << "exit status: 0 ok, 1 end-to-end error above --max-error, 2 bad input\n"
                  << d;
        return 0;
    }
    if (a.scenario.empty() || a.measured.empty()) {
        std::cerr << "hetsim: error: " << (a.scenario.empty() ? "no scenario file given" : "no measured timeline given")
                  << "\n" << kCompareUsage << "\n" << d;
        return 2;
    }
    if (a.format != "text" && a.format != "json") throw InputError({"--format"}, "expected text or json, got '" + a.format + "'");
    if (a.top < 0) throw InputError({"--top"}, "expected a count >= 0, got " + std::to_string(a.top));
    if (vm.count("max-error")) {
        a.max_error = vm["max-error"].as<double>();
        if (!std::isfinite(a.max_error) || a.max_error < 0)
            throw InputError({"--max-error"}, "expected a percentage >= 0");
    }

    Outputs outs;
    outs.input(a.scenario, "the scenario");
    outs.input(a.measured, "the measured timeline");
    outs.declare("--trace", a.trace);
    outs.declare("--svg", a.svg);
    outs.declare("--report", a.html);
    LoadOptions lo = load_options(a.sets, parse_count("--max-ops", a.max_ops, 1, kMaxOpsLimit), a.max_memory);
    lo.run_bytes_per_op = kJsonRunBytesPerOp;  // the measured timeline is a JSON document of every op
    Scenario sc = load_scenario(a.scenario, lo);
    for (const std::string& f : sc.profile_files) outs.input(f, "a profile file");
    // A PyTorch profiler (Kineto) trace is read as the measured timeline of the scenario
    // `hetsim import` made from it, with per-step errors (import/measured.hpp).
    const bool kineto = import::looks_like_kineto(a.measured);
    import::MeasuredTrace kt;
    report::Measured m;
    if (kineto) {
        kt = import::read_kineto_measured(a.measured, sc.program, {}, lo.max_memory);
        m.timeline = kt.timeline;
    } else {
        m = report::read_measured(a.measured, sc.program, lo.max_memory);
    }
    const Timeline& measured = m.timeline;
    Timeline simulated = simulate(sc.program, sc.profile);
    const std::vector<import::StepError> steps = kineto ? import::step_errors(kt, simulated) : std::vector<import::StepError>{};
    report::Comparison c =
        report::compare_timelines(sc.program, simulated, measured, static_cast<size_t>(a.top), m.uninstrumented, &m.unobserved);

    // Files first, all written or none; then stdout.
    if (!a.trace.empty())
        outs.set("--trace", report::to_string_with([&](std::ostream& o) {
            report::write_chrome_trace_multi(o, sc.program,
                                             {{&simulated, "Simulated host", "Simulated GPU"},
                                              {&measured, "Measured host", "Measured GPU"}});
        }));
    if (!a.svg.empty()) {
        std::string title = sc.name + ": " + report::comparison_headline(c);
        outs.set("--svg", report::to_string_with([&](std::ostream& o) {
            report::write_svg_timelines(o, sc.program, {{"Simulated", &simulated}, {"Measured", &measured}}, title);
        }));
    }
    if (!a.html.empty())
        outs.set("--report", report::to_string_with([&](std::ostream& o) {
            report::write_html_comparison(o, sc.program, simulated, measured, c, sc.name, a.scenario, a.measured);
        }));
    outs.commit();
    if (outs.stdout_taken()) {
    } else if (a.format == "json") {
        nlohmann::json j = report::comparison_to_json(sc.program, c, a.scenario, a.measured);
        if (kineto) j["steps"] = steps_json(steps);
        std::cout << report::dump_json(j) << "\n";
    } else {
        report::write_comparison_text(std::cout, sc.program, c, a.scenario, a.measured);
        if (kineto) write_steps_text(std::cout, steps);
    }

    if (a.max_error >= 0 && std::fabs(c.error_pct) > a.max_error) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "hetsim: end-to-end error %.2f%% exceeds --max-error %g%%", std::fabs(c.error_pct),
                      a.max_error);
        std::cerr << msg << " (measured: " << report::measured_basis(c) << ")\n";
        return 1;
    }
    return 0;
}

}  // namespace hetsim::cli
