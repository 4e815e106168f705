// `hetsim validate`: prediction error against the committed GPU measurements.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "calibrate/accuracy.hpp"

namespace po = boost::program_options;

namespace hetsim::cli {

namespace {
void print_report(const calib::AccuracyReport& r, double max_median, double max_single, bool rows = true) {
    if (rows) {
        std::printf("%-42s %12s %12s %8s %8s %5s  %s\n", "scenario", "predicted", "measured", "error", "spread", "runs", "verdict");
        for (const auto& s : r.scenarios)
            std::printf("%-42s %9.3f ms %9.3f ms %+7.1f%% %7.1f%% %5d  %s\n", s.name.c_str(), s.predicted_ns / 1e6,
                        s.measured_ns / 1e6, 100 * s.error, 100 * s.spread, s.runs, s.pass ? "ok" : "FAIL");
    }
    std::printf("\n%zu scenarios: median |error| %.1f%%, p90 %.1f%%, max %.1f%% (limits: median %.0f%%, each %.0f%% or its spread)\n",
                r.scenarios.size(), 100 * r.median_abs, 100 * r.p90_abs, 100 * r.max_abs, max_median, max_single);
    if (r.stable)
        std::printf("%zu scenarios whose runs spread <= %.0f%%: median |error| %.1f%%, p90 %.1f%%, max %.1f%%; "
                    "the other %zu are judged against their own spread\n",
                    r.stable, 100 * calib::AccuracyReport::kStableSpread, 100 * r.stable_median_abs,
                    100 * r.stable_p90_abs, 100 * r.stable_max_abs, r.scenarios.size() - r.stable);
    if (rows && r.cupti_residue)
        std::printf("note: %zu of the %zu measured files made their uninstrumented runs in the process that had CUPTI attached "
                    "(hetsim-runner before 2026-12-02f), which stays slower: their graph scenarios read 6-27%% slow "
                    "(docs/model.md Rule 7)\n",
                    r.cupti_residue, r.files);
    if (rows && r.scratch_copies)
        std::printf("note: %zu of the %zu measured files are of scenarios with named pageable copies that the runner made on "
                    "its scratch buffer (hetsim-runner before 2026-12-03w): an upload after a download there re-read the "
                    "bytes the download had just written (validation/runner/README.md)\n",
                    r.scratch_copies, r.files);
}
}  // namespace

int validate_main(const std::vector<std::string>& args) {
    std::vector<std::string> dirs;
    std::string scenarios = "scenarios/validation";
    std::string base = "h200";
    double max_median = 5, max_single = 15;
    po::options_description d("validate options");
    d.add_options()("help,h", "show this help")
        ("scenarios", po::value(&scenarios)->default_value(scenarios), "folder of the scenario files")
        ("max-median", po::value(&max_median)->default_value(max_median), "largest allowed median |error|, percent")
        ("max-single", po::value(&max_single)->default_value(max_single),
         "largest allowed |error| of one scenario, percent (or its own run-to-run spread, if larger)")
        ("holdout-start", "leave-one-start-out: for each folder, recalibrate --base from the other folders' "
         "microbench.json and validate this folder's runs with it")
        ("base", po::value(&base)->default_value(base), "with --holdout-start: the shipped profile the folds recalibrate")
        ("dir", po::value(&dirs)->composing(), "measurement folder (with measured/); repeatable");
    po::positional_options_description pos;
    pos.add("dir", -1);
    po::variables_map vm;
    const char* usage = "usage: hetsim validate MEASUREMENT_DIR... [--scenarios DIR] [--holdout-start [--base PROFILE]]";
    try {
        po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
        po::notify(vm);
        reject_empty_values(vm, d);
    } catch (const po::error& e) {
        std::cerr << "hetsim: error: " << option_error(e, d) << " (" << usage << ")\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << usage << "\n\n" << d;
        return 0;
    }
    if (dirs.empty()) {
        std::cerr << "hetsim: error: no measurement folder given (" << usage << ")\n";
        return 2;
    }
    // A limit that no error can meet or that every error meets (NaN, a negative or an infinite
    // percentage) would make the verdict meaningless.
    for (auto [name, v] : {std::pair{"--max-median", max_median}, std::pair{"--max-single", max_single}})
        if (!std::isfinite(v) || v < 0) {
            char got[32];
            std::snprintf(got, sizeof got, "%g", v);
            throw InputError({name}, std::string("expected a percentage of at least 0, got '") + got + "'");
        }
    if (vm.count("holdout-start")) {
        calib::HoldoutReport h = calib::validate_holdout(dirs, scenarios, base, max_median / 100, max_single / 100);
        for (const auto& f : h.folds) {
            std::printf("held out %s: %s recalibrated from", f.start.c_str(), base.c_str());
            for (const auto& t : f.trained_on) std::printf(" %s", t.c_str());
            std::printf(" (%zu parameters fitted)\n", f.fitted);
            if (!f.not_held_out.empty()) {
                std::printf("  not held out (only this start's data fits them; here they keep %s's values):", base.c_str());
                for (const auto& k : f.not_held_out) std::printf(" %s", k.c_str());
                std::printf("\n");
            }
            print_report(f.report, max_median, max_single);
            std::printf("\n");
        }
        std::printf("all folds pooled (each scenario once per start):\n");
        print_report(h.overall, max_median, max_single, false);
        return h.overall.pass ? 0 : 1;
    }
    calib::AccuracyReport r = calib::validate_against(dirs, scenarios, max_median / 100, max_single / 100);
    print_report(r, max_median, max_single);
    return r.pass ? 0 : 1;
}

}  // namespace hetsim::cli
