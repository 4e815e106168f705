// `hetsim run` and `hetsim graph`: load a scenario, simulate, report.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/outputs.hpp"
#include "report/output_file.hpp"
#include "frontend/expr.hpp"
#include "frontend/limits.hpp"
#include "frontend/profile_loader.hpp"
#include "frontend/scenario.hpp"
#include "report/analysis.hpp"
#include "report/chrome_trace.hpp"
#include "report/csv_report.hpp"
#include "report/html_report.hpp"
#include "report/json_report.hpp"
#include "core/program_json.hpp"
#include "report/summary.hpp"
#include "report/svg_timeline.hpp"
#include "sim/engine.hpp"
#include "sim/graph.hpp"
#include "sweep/suggest.hpp"
#include "frontend/yaml_util.hpp"

namespace po = boost::program_options;

namespace hetsim::cli {

namespace {

struct Common {
    std::string file;
    std::vector<std::string> sets;
    std::string max_ops = "20000000";
    std::string max_memory;  // empty: default_max_memory()
};

void add_common(po::options_description& d, Common& c) {
    d.add_options()
        ("set", po::value(&c.sets)->composing(), "override a param (name=value) or a profile parameter (hardware.key=value); repeatable")
        ("max-ops", po::value(&c.max_ops)->default_value(c.max_ops), "cap on ops after loop expansion")
        ("max-memory", po::value(&c.max_memory), "cap on the run's estimated memory, e.g. 8GiB (default: 3/4 of this machine's memory; 0: none)");
}

// Parses options; returns -1 to go on, or an exit code (help printed, or a usage error).
int parse(const std::vector<std::string>& args, po::options_description& visible, Common& c, const char* usage,
          po::variables_map& vm) {
    po::options_description all;
    all.add(visible).add_options()("file", po::value(&c.file));
    po::positional_options_description pos;
    pos.add("file", 1);
    try {
        po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
        po::notify(vm);
        reject_empty_values(vm, visible);
    } catch (const po::error& e) {
        std::cerr << "hetsim: error: " << option_error(e, all) << " (" << usage << "; --help lists the options)\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << usage << "\n" << visible;
        return 0;
    }
    if (c.file.empty()) {
        std::cerr << "hetsim: error: no scenario file given (" << usage << ")\n";
        return 2;
    }
    return -1;
}

LoadOptions load_options(const Common& c) {
    return cli::load_options(c.sets, parse_count("--max-ops", c.max_ops, 1, kMaxOpsLimit), c.max_memory);
}

}  // namespace

uint64_t parse_count(const std::string& option, const std::string& text, uint64_t lo, uint64_t hi) {
    const std::string want = "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" + text + "'";
    if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) throw InputError({option}, want);
    const uint64_t v = std::stoull(text);
    if (v < lo || v > hi) throw InputError({option}, want);
    return v;
}

LoadOptions load_options(const std::vector<std::string>& sets, uint64_t max_ops, const std::string& max_memory) {
    LoadOptions o;
    o.max_ops = max_ops;
    o.max_memory = parse_max_memory(max_memory);
    o.sets = parse_set_args(sets, "e.g. --set chunks=8 or --set hardware.copy.h2d.bandwidth=32GB/s");
    return o;
}

std::vector<std::pair<std::string, std::string>> parse_set_args(const std::vector<std::string>& sets, const std::string& example) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& s : sets) {
        auto eq = s.find('=');
        if (eq == std::string::npos || eq == 0) throw InputError({"--set " + s}, "expected name=value, " + example);
        for (const auto& [name, value] : out)  // a second value would win without a word
            if (name == s.substr(0, eq))
                throw InputError({"--set " + s}, "'" + name + "' is already set by --set " + name + "=" + value + "; give each name once");
        out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    }
    return out;
}

int run_main(const std::vector<std::string>& args) {
    Common c;
    std::string format = "text", trace, csv, json_out, time_limit, svg, html;
    bool no_suggest = false;
    sweep::SuggestOptions sopt;
    std::string suggest_budget = std::to_string(sopt.budget), suggest_max_ops = std::to_string(sopt.max_ops);
    po::options_description d("run options");
    d.add_options()("help,h", "show this help")
        ("format", po::value(&format)->default_value("text"), "text or json (printed to stdout)")
        ("trace", po::value(&trace), "write a Chrome trace (open it in Perfetto) to this file")
        ("csv", po::value(&csv), "write one CSV row per op to this file")
        ("json", po::value(&json_out), "write the JSON report to this file")
        ("svg", po::value(&svg), "write the timeline as SVG: a row per host thread, stream and engine, the critical path marked")
        ("report", po::value(&html), "write a self-contained HTML report (timeline with tooltips, critical path, resources, metrics, warnings)")
        ("time-limit", po::value(&time_limit), "stop with an error past this simulated time, e.g. 10s")
        ("no-suggest", po::bool_switch(&no_suggest), "skip the simulated suggestions (pinned buffers, sync mode, hardware queues, knobs)")
        ("suggest-budget", po::value(&suggest_budget)->default_value(suggest_budget), "at most this many simulated runs for the suggestions (fewer for a large program: about 2*10^7 ops simulated in all)")
        ("suggest-max-ops", po::value(&suggest_max_ops)->default_value(suggest_max_ops), "skip the suggestions for a program of more ops than this");
    add_common(d, c);
    po::variables_map vm;
    if (int rc = parse(args, d, c, "usage: hetsim run FILE [options]", vm); rc >= 0) return rc;
    if (format != "text" && format != "json") throw InputError({"--format"}, "expected text or json, got '" + format + "'");
    // Whole numbers, not boost's unsigned parse (which reads -1 as 2^64 - 1).
    sopt.budget = static_cast<decltype(sopt.budget)>(parse_count("--suggest-budget", suggest_budget, 0, 1'000'000));
    sopt.max_ops = static_cast<decltype(sopt.max_ops)>(parse_count("--suggest-max-ops", suggest_max_ops, 0, kMaxOpsLimit));
    EngineOptions eo;
    if (!time_limit.empty()) {
        Value v;
        try {
            v = parse_literal(time_limit);
        } catch (const std::exception&) {
            // Not a literal (a sign, a typo): say what is wanted, not parse_literal's "expected a number".
            throw InputError({"--time-limit"}, "expected a positive time such as 10s, got '" + time_limit + "'");
        }
        if (v.dim != Dim::Time || v.i <= 0) throw InputError({"--time-limit"}, "expected a positive time such as 10s, got '" + time_limit + "'");
        eo.time_limit = Time::ps(v.i);
    }
    // Every output is checked before any work: never an input, a second output or a non-regular file.
    Outputs outs;
    outs.input(c.file, "the scenario");
    outs.declare("--trace", trace);
    outs.declare("--csv", csv);
    outs.declare("--json", json_out);
    outs.declare("--svg", svg);
    outs.declare("--report", html);
    LoadOptions lo = load_options(c);
    // The memory cap's estimate: the run itself and what each output holds until all are written.
    lo.run_bytes_per_op = run_bytes_per_op(format == "json" || !json_out.empty(), !trace.empty(), !csv.empty());
    Scenario sc = load_scenario(c.file, lo);
    for (const std::string& f : sc.profile_files) outs.input(f, "a profile file");
    Timeline tl = simulate(sc.program, sc.profile, eo);
    report::Analysis an = report::analyze(sc.program, tl);
    // Suggestions, each simulated: the changes re-lower the scenario's text and run it again.
    report::Suggestions sug;
    if (!no_suggest) {
        const std::string text = read_yaml_text(c.file);  // parsed once already: the suggestions parse it once more
        // Each suggestion's run comes on top of this one (its program, timeline and analysis are
        // held) and of the suggestions' own YAML tree: skipped, and said, past the cap.
        const uint64_t need = estimated_run_bytes(sc.program, lo.run_bytes_per_op) + estimated_run_bytes(sc.program, kRunBytesPerOp) +
                              estimated_tree_bytes(text.size());
        if (lo.max_memory && sc.program.ops.size() <= sopt.max_ops && need > lo.max_memory) {
            sug.baseline = an.measured;
            sug.skipped = "with them the run would need about " + bytes_text(need) + ", more than the cap of " + bytes_text(lo.max_memory) +
                          " (--max-memory; each suggestion re-lowers and re-simulates the scenario beside this run)";
        } else {
            std::vector<uint32_t> critical;
            for (const report::CriticalStep& s : an.critical_path) critical.push_back(s.op);
            sug = sweep::suggest(text, c.file, lo, eo, sc, critical, an.measured, sopt);
        }
    }
    const report::Suggestions* sp = no_suggest ? nullptr : &sug;
    std::string json_text;
    if (format == "json" || !json_out.empty()) json_text = report::dump_json(report::to_json(sc.program, tl, an, sp));
    // Files first, all written or none; then stdout.
    if (!trace.empty())
        outs.set("--trace", report::to_string_with([&](std::ostream& o) { report::write_chrome_trace(o, sc.program, tl); }));
    if (!csv.empty()) outs.set("--csv", report::to_string_with([&](std::ostream& o) { report::write_csv(o, sc.program, tl); }));
    if (!json_out.empty()) outs.set("--json", json_text + "\n");
    if (!svg.empty()) {
        report::SvgOptions so;
        so.engine_lanes = true;
        const std::string title = sc.name + ": end to end " + report::format_time(an.end_to_end);
        outs.set("--svg", report::to_string_with([&](std::ostream& o) {
            report::write_svg_timelines(o, sc.program, {{"Simulated", &tl, &an}}, title, so);
        }));
    }
    if (!html.empty())
        outs.set("--report", report::to_string_with([&](std::ostream& o) {
            report::write_html_report(o, sc.program, tl, an, report::HtmlRun{sc.name, {}, sp});
        }));
    outs.commit();
    if (outs.stdout_taken()) return 0;  // an output went to stdout: nothing else there
    if (format == "json") std::cout << json_text << "\n";
    else report::write_summary(std::cout, sc.program, tl, an, sp);
    return 0;
}

int graph_main(const std::vector<std::string>& args) {
    Common c;
    std::string out;
    // --help says how to draw it: Graphviz's dot is not part of hetsim.
    po::options_description d(
        "Draw the graph with Graphviz: hetsim graph FILE | dot -Tsvg > graph.svg\n"
        "(Debian package graphviz; the ./hetsim launcher installs it with its other packages)\n\n"
        "graph options");
    d.add_options()("help,h", "show this help")("output,o", po::value(&out), "write the DOT graph to this file instead of stdout");
    add_common(d, c);
    po::variables_map vm;
    if (int rc = parse(args, d, c, "usage: hetsim graph FILE [options]", vm); rc >= 0) return rc;
    Outputs outs;
    outs.input(c.file, "the scenario");
    outs.declare("-o", out.empty() ? "-" : out);
    Scenario sc = load_scenario(c.file, load_options(c));
    for (const std::string& f : sc.profile_files) outs.input(f, "a profile file");
    DepGraph g = build_graph(sc.program);
    outs.set("-o", report::to_string_with([&](std::ostream& o) { write_dot(o, sc.program, g); }));
    outs.commit();
    return 0;
}

int lower_main(const std::vector<std::string>& args) {
    Common c;
    std::string out;
    po::options_description d("lower options");
    d.add_options()("help,h", "show this help")("output,o", po::value(&out), "write the program to this file instead of stdout");
    add_common(d, c);
    po::variables_map vm;
    if (int rc = parse(args, d, c, "usage: hetsim lower FILE [-o program.json] [options]", vm); rc >= 0) return rc;
    LoadOptions lo = load_options(c);
    lo.run_bytes_per_op = kLowerBytesPerOp;
    Outputs outs;
    outs.input(c.file, "the scenario");
    outs.declare("-o", out.empty() ? "-" : out);
    Scenario sc = load_scenario(c.file, lo);
    for (const std::string& f : sc.profile_files) outs.input(f, "a profile file");
    outs.set("-o", report::dump_json(program_to_json(sc.program, sc.name)) + "\n");
    outs.commit();
    return 0;
}

namespace {

// A profile file's path as the user would type it: relative to the working directory when inside it.
std::string shown_path(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path rel = fs::proximate(path, ec);
    return ec || rel.empty() || *rel.begin() == ".." ? path : rel.string();
}

void print_declarations() {
    std::cout << "hardware-profile parameters: set them in a profile, under 'hardware:' in a scenario, or with\n"
                 "--set hardware.<key>=<value> ('hardware.zero_latency=true' zeroes every [latency]). A profile with\n"
                 "'base: NAME' starts from that profile and gives only what differs; one without 'base:' gives\n"
                 "every parameter marked 'required'. A value outside its range is an error; upper bounds only\n"
                 "stop absurd inputs and sit far above what a GPU of the next decade needs (the note says how far).\n"
                 "`hetsim params PROFILE` prints a profile's values and where each comes from.\n\n";
    for (const auto& d : param_decls()) {
        std::string dflt = d.default_value ? std::string("default ") + d.default_value : "required";
        std::string range = range_text(d) + (d.range_note ? std::string(" (") + d.range_note + ")" : "");
        std::printf("  %-32s %-10s %-13s %s\n", d.key, kind_text(d), dflt.c_str(), range.c_str());
        std::printf("      %s%s\n", d.description, d.latency ? " [latency]" : "");
    }
}

void print_profile(const std::string& name) {
    LoadedProfile lp = load_profile_sources(name, SourceLoc{name});
    std::cout << "profile " << lp.profile.name << " (" << shown_path(lp.files[0].path) << ")";
    for (size_t k = 1; k < lp.files.size(); ++k)
        std::cout << (k == 1 ? ", base " : ", its base ") << lp.files[k].name << " (" << shown_path(lp.files[k].path) << ")";
    std::cout << "\n\n";
    const auto& decls = param_decls();
    for (size_t k = 0; k < decls.size(); ++k) {
        int o = lp.origin[k];
        std::string from = o < 0 ? "default" : o == 0 ? "this file" : "base " + lp.files[static_cast<size_t>(o)].name;
        std::printf("  %-32s %-20s %s\n", decls[k].key, value_text(lp.profile, decls[k]).c_str(), from.c_str());
    }
}

}  // namespace

int params_main(const std::vector<std::string>& args) {
    const char* usage = "usage: hetsim params [PROFILE]  (PROFILE: a shipped profile such as h200, or the path of a profile file)";
    if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
        std::cout << usage << "\n";
        return 0;
    }
    if (args.size() > 1 || (!args.empty() && !args[0].empty() && args[0][0] == '-')) {
        std::cerr << "hetsim: error: 'params' takes at most one profile (" << usage << ")\n";
        return 2;
    }
    if (args.empty()) print_declarations();
    else print_profile(args[0]);
    return 0;
}

}  // namespace hetsim::cli
