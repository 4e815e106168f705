// `hetsim calibrate`: fit a hardware profile from hetsim-microbench samples (calibrate/calibration.hpp).
#include <boost/program_options.hpp>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/outputs.hpp"
#include "frontend/expr.hpp"
#include "frontend/limits.hpp"
#include "frontend/profile_loader.hpp"
#include "calibrate/calibration.hpp"
#include "core/error.hpp"

namespace po = boost::program_options;

namespace hetsim::cli {

namespace {

const char* kCalibrateUsage =
    "usage: hetsim calibrate MICROBENCH.json [MORE.json ...] [--base PROFILE] -o OUT.yaml\n"
    "Fits the hardware-profile parameters that the microbenchmarks inform (validation/microbench) from\n"
    "their raw samples, pooling the samples of every input, and writes a complete profile: the other\n"
    "parameters keep the base profile's value, source and status.";

std::string shell_word(const std::string& s) {
    if (s.empty()) return "''";
    bool plain = true;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string("_./=+:,@%-").find(c) != std::string::npos))
            plain = false;
    if (plain) return s;
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string change_text(const std::string& old_text, const std::string& new_text) {
    if (old_text == new_text) return "0%";
    try {
        const double a = parse_literal(old_text).as_double(), b = parse_literal(new_text).as_double();
        if (a == 0) return b == 0 ? "0%" : "new";
        char buf[32];
        std::snprintf(buf, sizeof buf, "%+.1f%%", (b - a) / a * 100.0);
        return buf;
    } catch (const std::exception&) {
        return "changed";
    }
}

}  // namespace

int calibrate_main(const std::vector<std::string>& args) {
    std::vector<std::string> inputs;
    std::string base = "h200", out, max_memory;
    po::options_description d("calibrate options");
    d.add_options()("help,h", "show this help")(
        "base", po::value(&base)->default_value(base),
        "profile whose values the parameters no benchmark informs keep (a shipped name or a path)")(
        "output,o", po::value(&out), "the profile to write (replaced atomically; may be the base itself)")(
        "max-memory", po::value(&max_memory), "cap on the memory reading each microbenchmark file may take, e.g. 8GiB (default: 3/4 of this machine's memory; 0: none)");
    po::options_description all;
    all.add(d).add_options()("input", po::value(&inputs)->composing());
    po::positional_options_description pos;
    pos.add("input", -1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
        po::notify(vm);
        reject_empty_values(vm, d);
    } catch (const po::error& e) {
        std::cerr << "hetsim: error: " << option_error(e, all) << " (hetsim calibrate MICROBENCH.json ... -o OUT.yaml; --help lists the options)\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << kCalibrateUsage << "\n\n" << d;
        return 0;
    }
    if (inputs.empty()) {
        std::cerr << "hetsim: error: no microbenchmark file given (hetsim calibrate MICROBENCH.json ... -o OUT.yaml)\n";
        return 2;
    }
    if (out.empty()) {
        std::cerr << "hetsim: error: no output file given; add -o OUT.yaml (it may be the base profile itself)\n";
        return 2;
    }

    // The output may be the base profile (it is read whole first): an update in place. It may not
    // be a microbenchmark file.
    Outputs outs;
    for (const auto& in : inputs) outs.input(in, "a microbenchmark file");
    outs.declare("-o", out);
    std::vector<calib::MicrobenchFile> files;
    const uint64_t cap = parse_max_memory(max_memory);
    for (const auto& in : inputs) files.push_back(calib::load_microbench(in, cap));
    // A shipped name ("h200") or a path, as load_profile resolves it.
    std::string base_path = base;
    if (base.find('/') == std::string::npos && base.find(".yaml") == std::string::npos) {
        load_profile(base, SourceLoc{"--base " + base});  // a helpful error for an unknown name
        base_path = profiles_dir() + "/" + base + ".yaml";
    }
    calib::BaseProfile bp = calib::read_base_profile(base_path);
    bp.path = base;  // as given: the header must not depend on where the checkout lives

    const calib::Calibration cal = calib::calibrate(files);
    std::string command = "hetsim calibrate";
    for (const auto& a : args) {
        command += ' ';
        command += shell_word(a);
    }
    const std::string text = calib::render_profile(bp, cal, files, command);
    outs.set("-o", text);
    outs.commit();
    if (outs.stdout_taken()) return 0;  // the profile went to stdout: nothing else there

    std::printf("%-28s %-16s %-16s %8s %10s %8s\n", "parameter", "old", "new", "change", "residual", "samples");
    std::string kept;
    for (const auto& e : bp.params) {
        const calib::Fitted* f = cal.find(e.key);
        if (!f) {
            kept += (kept.empty() ? "" : ", ") + e.key;
            continue;
        }
        std::printf("%-28s %-16s %-16s %8s %10s %8zu\n", e.key.c_str(), e.value.c_str(), f->value.c_str(),
                    change_text(e.value, f->value).c_str(), f->residual.empty() ? "-" : f->residual.c_str(), f->samples);
    }
    if (!kept.empty()) std::printf("\nkept from %s: %s\n", base.c_str(), kept.c_str());
    if (!cal.checks.empty()) {
        std::printf("\nchecks:\n");
        for (const auto& c : cal.checks) std::printf("  %s\n", c.c_str());
    }
    std::printf("\nwrote %s (%zu parameters fitted from %zu file%s)\n", out.c_str(), cal.params.size(), files.size(),
                files.size() == 1 ? "" : "s");
    return 0;
}

}  // namespace hetsim::cli
