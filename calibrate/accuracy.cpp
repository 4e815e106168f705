#include "calibrate/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "frontend/scenario.hpp"
#include "sim/engine.hpp"
#include "core/error.hpp"

namespace hetsim::calib {

namespace fs = std::filesystem;

namespace {
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    double pos = q * static_cast<double>(v.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}
}  // namespace

AccuracyReport validate_against(const std::vector<std::string>& dirs, const std::string& scenario_dir, double max_median,
                                double max_single) {
    std::map<std::string, std::vector<double>> runs;
    std::map<std::string, int> starts;
    for (const auto& d : dirs) {
        fs::path m = fs::path(d) / "measured";
        if (!fs::is_directory(m)) throw InputError({d}, "no measured/ folder of runner results here");
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(m))
            if (e.path().extension() == ".json") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            std::ifstream in(f);
            nlohmann::json j;
            try {
                j = nlohmann::json::parse(in);
            } catch (const std::exception& e) {
                throw InputError({f.string()}, std::string("not JSON: ") + e.what());
            }
            if (j.value("schema", "") != "hetsim.measured" || j.value("version", 0) != 1)
                throw InputError({f.string()}, "not a hetsim.measured version 1 file");
            auto& v = runs[f.stem().string()];
            for (double x : j.at("uninstrumented_end_to_end_ns")) v.push_back(x);
            ++starts[f.stem().string()];
        }
    }
    AccuracyReport rep;
    std::vector<double> abs_errors;
    for (const auto& [name, v] : runs) {
        ScenarioAccuracy a;
        a.name = name;
        fs::path yaml = fs::path(scenario_dir) / (name + ".yaml");
        Scenario sc = load_scenario(yaml.string());
        const Timeline t = simulate(sc.program, sc.profile);
        a.predicted_ns = static_cast<double>((t.end_to_end - t.measured_from).ps()) / 1000.0;  // the measured iteration
        a.measured_ns = median(v);
        a.spread = (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) / a.measured_ns;
        a.error = (a.predicted_ns - a.measured_ns) / a.measured_ns;
        a.runs = static_cast<int>(v.size());
        a.starts = starts[name];
        a.pass = std::fabs(a.error) <= std::max(max_single, a.spread);
        abs_errors.push_back(std::fabs(a.error));
        rep.scenarios.push_back(a);
    }
    if (abs_errors.empty()) throw InputError({dirs.empty() ? std::string() : dirs.front()}, "no measured scenarios found");
    rep.median_abs = median(abs_errors);
    rep.p90_abs = quantile(abs_errors, 0.9);
    rep.max_abs = *std::max_element(abs_errors.begin(), abs_errors.end());
    std::vector<double> stable;
    for (const auto& a : rep.scenarios)
        if (a.spread <= AccuracyReport::kStableSpread) stable.push_back(std::fabs(a.error));
    rep.stable = stable.size();
    if (!stable.empty()) {
        rep.stable_median_abs = median(stable);
        rep.stable_p90_abs = quantile(stable, 0.9);
        rep.stable_max_abs = *std::max_element(stable.begin(), stable.end());
    }
    rep.pass = rep.median_abs <= max_median &&
               std::all_of(rep.scenarios.begin(), rep.scenarios.end(), [](const ScenarioAccuracy& s) { return s.pass; });
    return rep;
}

}  // namespace hetsim::calib
