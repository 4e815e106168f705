// The seed scenarios (scenarios/seeds/*.yaml) against the seed calculators
// (models/calculators.hpp), to the nanosecond; every scenario under scenarios/ loads, simulates
// and reports deterministically; golden JSON outputs of the seed scenarios
// (tests/golden/<name>.json, regenerated with HETSIM_UPDATE_GOLDEN=1 ./hetsim test).
#include <catch2/catch.hpp>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "frontend/scenario.hpp"
#include "models/calculators.hpp"
#include "report/analysis.hpp"
#include "report/json_report.hpp"
#include "sim/engine.hpp"

#ifndef HETSIM_CLI_PATH
#define HETSIM_CLI_PATH ""
#endif

namespace fs = std::filesystem;
using namespace hetsim;

namespace {

using Sets = std::vector<std::pair<std::string, std::string>>;

const fs::path kSource = HETSIM_SOURCE_DIR;

struct Run {
    Scenario sc;
    Timeline tl;
    report::Analysis an;

    const report::Resource* resource(const std::string& name) const {
        for (const auto& r : an.resources)
            if (r.name == name) return &r;
        return nullptr;
    }
    Time busy(const std::string& name) const {
        const report::Resource* r = resource(name);
        return r ? r->busy : Time{};
    }
    Time hidden(const std::string& name) const {
        const report::Resource* r = resource(name);
        return r ? r->hidden : Time{};
    }
    // End of the last phase of any op on host thread `thread` (its path's finish time).
    Time thread_end(const std::string& thread) const {
        Time end;
        for (uint32_t i = 0; i < sc.program.ops.size(); ++i) {
            int32_t t = sc.program.ops[i].thread;
            if (t >= 0 && sc.program.threads[static_cast<size_t>(t)].name == thread) end = max(end, tl.ops[i].end());
        }
        return end;
    }
    uint64_t copy_bytes() const {
        uint64_t b = 0;
        for (uint32_t i = 0; i < sc.program.ops.size(); ++i)
            if (sc.program.ops[i].kind == OpKind::Memcpy) b += sc.program.ops[i].bytes;
        return b;
    }
};

Run run_file(const fs::path& path, const Sets& sets = {}) {
    LoadOptions o;
    o.sets = sets;
    Run r{load_scenario(path.string(), o), {}, {}};
    r.tl = simulate(r.sc.program, r.sc.profile);
    r.an = report::analyze(r.sc.program, r.tl);
    return r;
}

Run run_seed(const std::string& name, const Sets& sets = {}) {
    return run_file(kSource / "scenarios" / "seeds" / (name + ".yaml"), sets);
}

// A calculator's milliseconds as an exact time, rounded to the nanosecond: the calculators work
// in doubles (8.1 ms is 8.0999999999999996 ms), hetsim in integer picoseconds.
Time ms(double v) { return Time::ns(std::llround(v * 1e6)); }

std::string show(Time t) {
    std::ostringstream o;
    o << report::format_ns(t) << " ns";
    return o.str();
}

// Checks a hetsim time against a calculator's milliseconds, to the nanosecond.
#define CHECK_MS(hetsim_time, calc_ms)                                                         \
    do {                                                                                       \
        const Time got_ = (hetsim_time);                                                       \
        const Time want_ = ms(calc_ms);                                                        \
        INFO(#hetsim_time " = " << show(got_) << ", calculator " #calc_ms " = " << (calc_ms) \
                                << " ms = " << show(want_));                                   \
        CHECK(got_ == want_);                                                                  \
    } while (0)

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<fs::path> yaml_files(const fs::path& dir, bool recursive) {
    std::vector<fs::path> out;
    if (!fs::exists(dir)) return out;
    auto add = [&](const fs::directory_entry& e) {
        if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path());
    };
    if (recursive)
        for (const auto& e : fs::recursive_directory_iterator(dir)) add(e);
    else
        for (const auto& e : fs::directory_iterator(dir)) add(e);
    std::sort(out.begin(), out.end());
    return out;
}

std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Runs a shell command; returns its stdout and sets `status` to its exit code.
std::string capture(const std::string& cmd, int& status) {
    std::string out;
    FILE* f = popen(cmd.c_str(), "r");
    if (!f) {
        status = -1;
        return out;
    }
    std::array<char, 65536> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) out.append(buf.data(), n);
    int rc = pclose(f);
    status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return out;
}

// The first line where two texts differ, for a readable failure.
std::string first_difference(const std::string& a, const std::string& b) {
    std::istringstream sa(a), sb(b);
    std::string la, lb;
    for (int line = 1;; ++line) {
        bool ea = !std::getline(sa, la), eb = !std::getline(sb, lb);
        if (ea && eb) return "texts differ only in line endings";
        if (ea || eb || la != lb)
            return "line " + std::to_string(line) + ":\n  golden:  " + (ea ? "<end of file>" : la) +
                   "\n  current: " + (eb ? "<end of output>" : lb);
    }
}

std::string json_of(const Run& r) { return report::dump_json(report::to_json(r.sc.program, r.tl, r.an)); }

}  // namespace

// --- Q1 stage_placement ----------------------------------------------------------------------

TEST_CASE("seeds: stage placement, small and large stage, as timelines", "[seeds]") {
    struct Case {
        const char* file;
        double cpu_ms, gpu_ms;
        const char* seed_choice;  // the seed page's assert
    };
    for (const Case& c : {Case{"stage_small", 2.0, 0.4, "cpu"}, Case{"stage_large", 100.0, 8.0, "gpu"}}) {
        SECTION(c.file) {
            const calc::StagePlacement want = calc::stage_placement(c.cpu_ms, c.gpu_ms, 64e6, 64e6, 16.0, 0.1);
            REQUIRE(want.shorter == c.seed_choice);

            const Run gpu = run_seed(c.file, {{"path", "gpu"}});
            const Run cpu = run_seed(c.file, {{"path", "cpu"}});
            const Run both = run_seed(c.file);

            // Transfer: the two copies on the copy engines, fixed overhead included.
            CHECK_MS(gpu.busy("copy:h2d") + gpu.busy("copy:d2h"), want.transfer_ms);
            CHECK_MS(gpu.busy("copy:h2d") + gpu.busy("copy:d2h"), 8.1);
            CHECK(gpu.copy_bytes() == 128'000'000u);
            CHECK_MS(gpu.busy("sm"), want.gpu_compute_ms);
            // Each path alone: its end-to-end time is the calculator's path time.
            CHECK_MS(gpu.an.end_to_end, want.gpu_path_ms);
            CHECK_MS(cpu.an.end_to_end, want.cpu_path_ms);
            // Both side by side: each thread finishes at its path's time.
            CHECK_MS(both.thread_end("gpu"), want.gpu_path_ms);
            CHECK_MS(both.thread_end("cpu"), want.cpu_path_ms);
            CHECK_MS(both.an.end_to_end, std::max(want.gpu_path_ms, want.cpu_path_ms));
            // The choice.
            const Time g = gpu.an.end_to_end, h = cpu.an.end_to_end;
            const std::string shorter = g < h ? "gpu" : h < g ? "cpu" : "equal";
            CHECK(shorter == want.shorter);
        }
    }
}

// --- Q2 overlap_timeline ---------------------------------------------------------------------

TEST_CASE("seeds: overlap timeline, full / dependency-limited / serial", "[seeds]") {
    struct Case {
        const char* file;
        double dependency_ms;
        double seed_hidden_ms;  // the seed page's asserts
    };
    for (const Case& c : {Case{"overlap_full", 0.0, 8.0}, Case{"overlap_dependency", 5.0, 3.0},
                          Case{"overlap_serial", 8.0, 0.0}}) {
        SECTION(c.file) {
            const calc::OverlapTimeline want = calc::overlap_timeline(8.0, 20.0, c.dependency_ms);
            REQUIRE(want.hidden_ms == c.seed_hidden_ms);
            const Run r = run_seed(c.file);
            CHECK_MS(r.an.metrics.serial, want.serial_ms);
            CHECK_MS(r.an.metrics.elapsed, want.elapsed_ms);
            CHECK_MS(r.an.metrics.hidden, want.hidden_ms);
            CHECK_MS(r.an.metrics.hidden, c.seed_hidden_ms);
            // The hidden time is copy time under the compute.
            CHECK_MS(r.busy("copy:h2d"), 8.0);
            CHECK_MS(r.hidden("copy:h2d"), want.hidden_ms);
        }
    }
}

TEST_CASE("seeds: overlap timeline, other dependency prefixes via --set", "[seeds]") {
    for (double d : {0.0, 0.5, 2.5, 5.0, 7.25, 8.0}) {
        std::ostringstream v;
        v << d << "ms";
        SECTION("dependency=" + v.str()) {
            const calc::OverlapTimeline want = calc::overlap_timeline(8.0, 20.0, d);
            for (const char* file : {"overlap_full", "overlap_dependency", "overlap_serial"}) {
                INFO(file);
                const Run r = run_seed(file, {{"dependency", v.str()}});
                CHECK_MS(r.an.metrics.serial, want.serial_ms);
                CHECK_MS(r.an.metrics.elapsed, want.elapsed_ms);
                CHECK_MS(r.an.metrics.hidden, want.hidden_ms);
            }
        }
    }
    // A compute shorter than the rest of the copy: the copy bounds the elapsed time.
    const calc::OverlapTimeline want = calc::overlap_timeline(8.0, 2.0, 1.0);
    const Run r = run_seed("overlap_dependency", {{"dependency", "1ms"}, {"compute_time", "2ms"}});
    CHECK_MS(r.an.metrics.elapsed, want.elapsed_ms);
    CHECK_MS(r.an.metrics.hidden, want.hidden_ms);
}

// --- Q3 offload_ledger -----------------------------------------------------------------------

TEST_CASE("seeds: offload ledger, 4 GB at 32 GB/s, 75% hidden", "[seeds]") {
    const calc::OffloadLedger want = calc::offload_ledger(4.0, 32.0, 1, 0.75);
    REQUIRE(want.transfer_ms == 250.0);
    REQUIRE(want.estimated_exposed_ms == 62.5);
    const Run r = run_seed("offload");

    // Volume: 4 GB out and 4 GB back.
    CHECK(static_cast<double>(r.copy_bytes()) == want.transfer_gb_per_step * 1e9);
    // Transfer time: both copy engines.
    const Time transfer = r.busy("copy:d2h") + r.busy("copy:h2d");
    CHECK_MS(transfer, want.transfer_ms);
    // Exposed = end-to-end minus the compute alone (the kernels run one after the other) ...
    const Time compute = r.busy("sm");
    CHECK_MS(compute, 197.5);
    CHECK_MS(r.an.end_to_end - compute, want.estimated_exposed_ms);
    // ... = the transfer not hidden under other work ...
    const Time hidden = r.hidden("copy:d2h") + r.hidden("copy:h2d");
    CHECK_MS(transfer - hidden, want.estimated_exposed_ms);
    // ... at the calculator's overlap ratio.
    CHECK(static_cast<double>(hidden.ps()) / static_cast<double>(transfer.ps()) == 0.75);
    // The step's own overlap evidence agrees: serial - elapsed is the hidden transfer.
    CHECK_MS(r.an.metrics.hidden, want.transfer_ms - want.estimated_exposed_ms);

    // The two ends of the ratio: nothing hidden, everything hidden.
    const Run none = run_seed("offload", {{"fwd_bwd", "0ms"}});
    CHECK_MS(none.an.end_to_end - none.busy("sm"), calc::offload_ledger(4.0, 32.0, 1, 0.0).estimated_exposed_ms);
    const Run all = run_seed("offload", {{"fwd_bwd", "250ms"}});
    CHECK_MS(all.an.end_to_end - all.busy("sm"), calc::offload_ledger(4.0, 32.0, 1, 1.0).estimated_exposed_ms);
}

// --- Q4 parallelism_evidence -----------------------------------------------------------------

TEST_CASE("seeds: parallelism evidence 30 / 20 / 18 / 1", "[seeds]") {
    const calc::ParallelismEvidence want = calc::parallelism_evidence(30.0, 20.0, 18.0, 1.0);
    const Run r = run_seed("evidence");
    const report::Metrics& m = r.an.metrics;
    CHECK_MS(m.serial, 30.0);
    CHECK_MS(m.elapsed, 20.0);
    CHECK_MS(m.gpu_active_union, 18.0);
    CHECK_MS(m.exposed_sync, 1.0);
    CHECK_MS(m.hidden, want.elapsed_saved_ms);
    // Ratios of the same exact quantities, each a correctly rounded division: equal as doubles.
    CHECK(m.speedup == want.speedup);
    CHECK(m.gpu_active_fraction == want.active_time_fraction);
    CHECK(m.exposed_sync_fraction == want.exposed_sync_fraction);
    CHECK(m.gpu_active_union + m.exposed_sync <= m.elapsed);
}

// --- every scenario --------------------------------------------------------------------------

TEST_CASE("seeds: every scenario loads, simulates and reports deterministically", "[seeds]") {
    const std::vector<fs::path> files = yaml_files(kSource / "scenarios", true);
    REQUIRE(!files.empty());
    for (const fs::path& f : files) {
        INFO(f.string());
        std::string a, b;
        REQUIRE_NOTHROW(a = json_of(run_file(f)));
        REQUIRE_NOTHROW(b = json_of(run_file(f)));
        CHECK(a == b);
    }
}

TEST_CASE("seeds: the seed scenarios' param variants run", "[seeds]") {
    const std::vector<std::pair<std::string, Sets>> variants = {
        {"stage_small", {{"path", "cpu"}}},       {"stage_small", {{"path", "gpu"}}},
        {"stage_large", {{"path", "cpu"}}},       {"stage_large", {{"path", "gpu"}}},
        {"sync_vs_async", {{"mode", "sync"}}},    {"sync_vs_async", {{"mode", "async"}}},
        {"pinned_vs_pageable", {{"memory", "pinned"}}}, {"pinned_vs_pageable", {{"memory", "pageable"}}},
        {"pipeline_3stream", {{"variant", "as_written"}}}, {"pipeline_3stream", {{"variant", "fixed"}}},
        {"unified_memory", {{"prefetch", "1"}}},  {"unified_memory", {{"prefetch", "0"}}},
        {"double_buffer", {{"n", "1"}}},          {"cpu_gpu_split", {{"steps", "1"}}},
    };
    for (const auto& [file, sets] : variants) {
        INFO(file << " --set " << sets[0].first << "=" << sets[0].second);
        std::string a, b;
        REQUIRE_NOTHROW(a = json_of(run_seed(file, sets)));
        REQUIRE_NOTHROW(b = json_of(run_seed(file, sets)));
        CHECK(a == b);
    }
    // What the variants are there to show.
    CHECK(run_seed("sync_vs_async", {{"mode", "async"}}).an.end_to_end <
          run_seed("sync_vs_async", {{"mode", "sync"}}).an.end_to_end);
    CHECK(run_seed("pinned_vs_pageable", {{"memory", "pinned"}}).an.end_to_end <
          run_seed("pinned_vs_pageable", {{"memory", "pageable"}}).an.end_to_end);
    CHECK(run_seed("unified_memory", {{"prefetch", "1"}}).an.end_to_end <
          run_seed("unified_memory", {{"prefetch", "0"}}).an.end_to_end);
    CHECK(run_seed("pipeline_3stream", {{"variant", "fixed"}}).an.end_to_end <
          run_seed("pipeline_3stream", {{"variant", "as_written"}}).an.end_to_end);
    // The seed's pipeline as written lets preprocess start before its input copy has ended.
    for (const char* v : {"as_written", "fixed"}) {
        const Run r = run_seed("pipeline_3stream", {{"variant", v}});
        bool race = false;
        for (uint32_t i = 0; i < r.sc.program.ops.size(); ++i) {
            const std::string name = r.sc.program.op_name(i);
            if (name.rfind("preprocess[", 0) != 0) continue;
            const std::string copy = "h2d" + name.substr(std::string("preprocess").size());
            for (uint32_t j = 0; j < r.sc.program.ops.size(); ++j)
                if (r.sc.program.op_name(j) == copy && r.tl.ops[i].gpu_start < r.tl.ops[j].gpu_end) race = true;
        }
        INFO("variant " << v);
        CHECK(race == (std::string(v) == "as_written"));
    }
}

// --- golden outputs --------------------------------------------------------------------------

TEST_CASE("seeds: golden outputs", "[seeds][golden]") {
    const std::string cli = HETSIM_CLI_PATH;
    REQUIRE(!cli.empty());
    const bool update = [] {
        const char* e = std::getenv("HETSIM_UPDATE_GOLDEN");
        return e && std::string(e) == "1";
    }();
    const fs::path golden_dir = kSource / "tests" / "golden";
    const std::vector<fs::path> files = yaml_files(kSource / "scenarios" / "seeds", false);
    REQUIRE(!files.empty());
    for (const fs::path& f : files) {
        // The output of `hetsim run scenarios/seeds/<name>.yaml --format json` from the repository
        // root (the path is part of the output).
        const std::string rel = "scenarios/seeds/" + f.filename().string();
        int status = 0;
        const std::string current =
            capture("cd " + quote(kSource.string()) + " && " + quote(cli) + " run " + quote(rel) + " --format json", status);
        INFO(rel);
        REQUIRE(status == 0);
        REQUIRE(!current.empty());
        const fs::path golden = golden_dir / (f.stem().string() + ".json");
        if (update) {
            fs::create_directories(golden_dir);
            std::ofstream(golden, std::ios::binary) << current;
            WARN("rewrote " << golden.string());
            continue;
        }
        const std::string how = "regenerate with HETSIM_UPDATE_GOLDEN=1 ./hetsim test (or HETSIM_UPDATE_GOLDEN=1 "
                                "hetsim-tests \"seeds: golden outputs\") and review the diff";
        if (!fs::exists(golden)) {
            FAIL_CHECK("no golden file " << golden.string() << "; " << how);
            continue;
        }
        const std::string want = read_file(golden);
        if (current != want)
            FAIL_CHECK("the output of hetsim run " << rel << " --format json differs from " << golden.string()
                                                   << " at " << first_difference(want, current) << "\n" << how);
    }
}
