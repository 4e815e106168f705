#include "calibrate/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "frontend/scenario.hpp"
#include "sim/engine.hpp"
#include "core/error.hpp"
#include "core/program_json.hpp"
#include "calibrate/calibration.hpp"
#include "models/profile.hpp"
#include "report/json_input.hpp"
#include "report/output_file.hpp"

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
// Median, p90 and max |error| (all, and over the scenarios of small spread) and the verdict.
void summarize(AccuracyReport& rep, double max_median) {
    std::vector<double> abs_errors;
    for (const auto& a : rep.scenarios) abs_errors.push_back(std::fabs(a.error));
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
}

// Sets an environment variable for the life of the object, then restores it.
class EnvGuard {
public:
    EnvGuard(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) had_ = true, old_ = old;
        ::setenv(name, value.c_str(), 1);
    }
    ~EnvGuard() {
        if (had_) ::setenv(name_, old_.c_str(), 1);
        else ::unsetenv(name_);
    }
    EnvGuard(const EnvGuard&) = delete;
    EnvGuard& operator=(const EnvGuard&) = delete;

private:
    const char* name_;
    bool had_ = false;
    std::string old_;
};

// Whether the runner that wrote a measured file made copies on the host buffers they name (from
// 2026-12-03w, metadata.emulation says so); the runners before made them on scratch.
bool names_host_buffers(const nlohmann::json& md) {
    const auto e = md.is_object() ? md.find("emulation") : md.end();
    if (!md.is_object() || e == md.end() || !e->is_array()) return false;
    for (const auto& x : *e)
        if (x.is_string() && x.get<std::string>().starts_with(kEmulationNamedHostBuffers)) return true;
    return false;
}

bool has_named_pageable_copy(const Program& p) {
    for (const Op& o : p.ops)
        if (o.kind == OpKind::Memcpy && o.buffer >= 0 && o.host_mem == MemKind::Pageable) return true;
    return false;
}
}  // namespace

AccuracyReport validate_against(const std::vector<std::string>& dirs, const std::string& scenario_dir, double max_median,
                                double max_single) {
    std::map<std::string, std::vector<double>> runs;
    std::map<std::string, int> starts;
    size_t files_read = 0, residue = 0;
    std::map<std::string, size_t> scratch_files;  // per scenario: files from a runner that ignored named host buffers
    for (const auto& d : dirs) {
        fs::path m = fs::path(d) / "measured";
        if (!fs::is_directory(m)) throw InputError({d}, "no measured/ folder of runner results here");
        // Scenario name -> its file: NAME.json as the runner writes it, or NAME.json.gz as it is
        // committed; both for one scenario would count its runs twice.
        std::map<std::string, fs::path> files;
        for (const auto& e : fs::directory_iterator(m)) {
            const std::string file = e.path().filename().string();
            std::string name;
            for (const char* ext : {".json", ".json.gz"})
                if (file.size() > std::strlen(ext) && file.ends_with(ext)) name = file.substr(0, file.size() - std::strlen(ext));
            if (name.empty()) continue;
            if (auto [it, fresh] = files.emplace(name, e.path()); !fresh)
                throw InputError({e.path().string()}, "scenario '" + name + "' is measured twice here (" +
                                                          it->second.filename().string() + " too); keep one of the two files");
        }
        for (const auto& [name, f] : files) {
            const nlohmann::json j = report::read_json_file(f.string(), "a measured timeline (hetsim-runner -o)");
            // Not value(): it throws a type error (an internal error) on an array or a "schema" of another type.
            const auto schema = j.is_object() ? j.find("schema") : j.end(), version = j.is_object() ? j.find("version") : j.end();
            if (!j.is_object() || schema == j.end() || *schema != "hetsim.measured" || version == j.end() || *version != 1)
                throw InputError({f.string()}, "not a hetsim.measured version 1 file");
            const auto runs_at = j.find("uninstrumented_end_to_end_ns");
            if (runs_at == j.end() || !runs_at->is_array() || runs_at->empty())
                throw InputError(report::json_file_loc(f.string(), "uninstrumented_end_to_end_ns"),
                                 "a measured timeline needs a non-empty list 'uninstrumented_end_to_end_ns' of run times");
            auto& v = runs[name];
            for (const auto& x : *runs_at) {
                if (!x.is_number() || !(x.get<double>() > 0))
                    throw InputError(report::json_file_loc(f.string(), "uninstrumented_end_to_end_ns"),
                                     "'uninstrumented_end_to_end_ns' holds run times in ns, each a positive number");
                v.push_back(x.get<double>());
            }
            ++starts[name];
            ++files_read;
            const auto md = j.find("metadata");
            if (md != j.end() && md->is_object() && md->contains("timing") && md->at("timing") == "cupti" && !md->contains("uninstrumented_process"))
                ++residue;
            if (!names_host_buffers(md == j.end() ? nlohmann::json() : *md)) ++scratch_files[name];
        }
    }
    AccuracyReport rep;
    rep.files = files_read;
    rep.cupti_residue = residue;
    std::vector<double> abs_errors;
    for (const auto& [name, v] : runs) {
        ScenarioAccuracy a;
        a.name = name;
        fs::path yaml = fs::path(scenario_dir) / (name + ".yaml");
        Scenario sc = load_scenario(yaml.string());
        if (const auto it = scratch_files.find(name); it != scratch_files.end() && has_named_pageable_copy(sc.program))
            rep.scratch_copies += it->second;
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
    summarize(rep, max_median);
    return rep;
}

HoldoutReport validate_holdout(const std::vector<std::string>& dirs, const std::string& scenario_dir,
                               const std::string& base_profile, double max_median, double max_single) {
    if (dirs.size() < 2)
        throw InputError({dirs.empty() ? std::string("--holdout-start") : dirs.front()},
                         "leave-one-start-out needs at least two machine starts (folders with microbench.json and measured/)");
    const std::string src_dir = profiles_dir();
    // A name, not a path: the fold's profile is written as <temporary folder>/<name>.yaml, and the
    // scenarios load it by that name ('../x' wrote a file outside it and the folds used the original).
    if (base_profile.empty() || base_profile.find_first_of("/\\") != std::string::npos || base_profile[0] == '.')
        throw InputError({"--base " + base_profile}, "expected the name of a shipped profile such as h200 (the folds "
                                                         "recalibrate hw/profiles/<name>.yaml), not a path: got '" + base_profile + "'");
    std::vector<MicrobenchFile> all;
    for (const auto& d : dirs) {
        const std::string mb = (fs::path(d) / "microbench.json").string();
        if (!fs::is_regular_file(mb)) throw InputError({d}, "no microbench.json here: each held-out start needs its microbenchmark run");
        all.push_back(load_microbench(mb));
    }
    const std::string base_path = (fs::path(src_dir) / (base_profile + ".yaml")).string();
    if (!fs::is_regular_file(base_path)) throw InputError({"--base " + base_profile}, "no shipped profile " + base_path);
    const BaseProfile base = read_base_profile(base_path);
    const Calibration full = calibrate(all);
    HoldoutReport out;
    for (size_t k = 0; k < dirs.size(); ++k) {
        HoldoutFold fold;
        fold.start = dirs[k];
        std::vector<MicrobenchFile> train;
        for (size_t j = 0; j < dirs.size(); ++j)
            if (j != k) train.push_back(all[j]), fold.trained_on.push_back(all[j].path);
        const Calibration cal = calibrate(train);
        fold.fitted = cal.params.size();
        for (const auto& p : full.params)
            if (!cal.find(p.key)) fold.not_held_out.push_back(p.key);
        // The fold's profile replaces the base in a private copy of the profiles folder, so that
        // scenarios naming it (and profiles based on it) load it as they load the shipped one.
        const fs::path tmp = fs::temp_directory_path() /
                             ("hetsim-holdout-" + std::to_string(::getpid()) + "-" + std::to_string(k));
        fs::remove_all(tmp);
        fs::create_directories(tmp);
        struct Cleanup {
            fs::path p;
            ~Cleanup() {
                std::error_code ec;
                fs::remove_all(p, ec);
            }
        } cleanup{tmp};
        for (const auto& e : fs::directory_iterator(src_dir))
            if (e.path().extension() == ".yaml") fs::copy_file(e.path(), tmp / e.path().filename());
        report::write_file_atomic((tmp / (base_profile + ".yaml")).string(),
                                  render_profile(base, cal, train, "hetsim validate --holdout-start (fold " + dirs[k] + ")"));
        {
            EnvGuard env("HETSIM_PROFILES", tmp.string());
            fold.report = validate_against({dirs[k]}, scenario_dir, max_median, max_single);
        }
        for (auto a : fold.report.scenarios) {
            a.name = fs::path(dirs[k]).filename().string() + " " + a.name;
            out.overall.scenarios.push_back(a);
        }
        out.folds.push_back(std::move(fold));
    }
    summarize(out.overall, max_median);
    return out;
}

}  // namespace hetsim::calib
