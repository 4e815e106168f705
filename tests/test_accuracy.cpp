// Prediction error against the committed H200 measurements (validation/measurements/h200):
// every validation scenario measured on the GPU is simulated with the shipped h200 profile
// and compared with its measured uninstrumented end-to-end median, pooled over machine starts.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "calibrate/accuracy.hpp"
#include "core/error.hpp"

using namespace hetsim::calib;

TEST_CASE("accuracy: validation scenarios against the committed H200 measurements") {
    const std::string root = HETSIM_SOURCE_DIR;
    AccuracyReport r = validate_against({root + "/validation/measurements/h200/2026-11-30a",
                                         root + "/validation/measurements/h200/2026-11-30b",
                                         root + "/validation/measurements/h200/2026-11-30c",
                                         root + "/validation/measurements/h200/2026-11-30d"},
                                        root + "/scenarios/validation", 0.05, 0.15);
    REQUIRE(r.scenarios.size() >= 52);
    for (const auto& s : r.scenarios) {
        INFO(s.name);
        CHECK(s.starts >= 2);  // each scenario measured on at least two machine starts
        CHECK(s.runs >= 10);
    }
    CHECK(r.median_abs <= 0.05);
    // Issue #4's acceptance: median <= 3%; over the scenarios whose own spread is at most 5%,
    // p90 <= 6% and max <= 12% (the others are judged against their spread, below).
    CHECK(r.median_abs <= 0.03);
    CHECK(r.stable >= 30);
    CHECK(r.stable_p90_abs <= 0.06);
    CHECK(r.stable_max_abs <= 0.12);
    // Scenarios whose error passes both 15% and their own run-to-run spread. Each is a model
    // gap documented in docs/model.md ("Known limits"); the list must shrink, never grow.
    const std::set<std::string> known_gaps = {};
    for (const auto& s : r.scenarios) {
        INFO(s.name << ": predicted " << s.predicted_ns << " ns, measured " << s.measured_ns << " ns, error "
                    << 100 * s.error << "%, spread " << 100 * s.spread << "%");
        CHECK(s.pass != (known_gaps.count(s.name) == 1));
    }
}

TEST_CASE("accuracy: leave-one-start-out recalibrates from the other starts and validates the one left out") {
    const std::string root = HETSIM_SOURCE_DIR;
    const std::string c = root + "/validation/measurements/h200/2026-11-30c", d = root + "/validation/measurements/h200/2026-11-30d";
    HoldoutReport h = validate_holdout({c, d}, root + "/scenarios/validation");
    REQUIRE(h.folds.size() == 2);
    // Fold 0 holds out c and is fitted from d alone, fold 1 the other way round.
    CHECK(h.folds[0].start == c);
    REQUIRE(h.folds[0].trained_on.size() == 1);
    CHECK(h.folds[0].trained_on[0] == d + "/microbench.json");
    CHECK(h.folds[1].trained_on[0] == c + "/microbench.json");
    // c and d hold the same sections, but only d's pageable_sweep goes past 16 MiB warm, where
    // host.staging_cache is found: fitted from d, the fold of c has every parameter; fitted from
    // c, the fold of d keeps the base profile's host.staging_cache and says so. (Both find the
    // nearer cache level: from the 3rd copy on, c stages 1 MiB fastest and 2 MiB below halfway.)
    CHECK(h.folds[0].not_held_out.empty());
    CHECK(h.folds[1].not_held_out == std::vector<std::string>{"host.staging_cache"});
    CHECK(h.folds[0].fitted == h.folds[1].fitted + 1);
    CHECK(h.folds[1].fitted >= 50);
    // Each fold validates only its own start's runs (c and d each measured 01-52, 6 runs each).
    for (const auto& f : h.folds) {
        CHECK(f.report.scenarios.size() == 52);
        for (const auto& s : f.report.scenarios) CHECK(s.starts == 1);
    }
    CHECK(h.overall.scenarios.size() == 104);
    // The folds' profiles are not the shipped one: some prediction of c differs from what the
    // shipped profile predicts for it.
    AccuracyReport shipped = validate_against({c}, root + "/scenarios/validation");
    bool differs = false;
    for (size_t k = 0; k < shipped.scenarios.size(); ++k)
        differs = differs || shipped.scenarios[k].predicted_ns != h.folds[0].report.scenarios[k].predicted_ns;
    CHECK(differs);
    // The shipped profiles folder is not touched: after the folds the shipped profile predicts as before.
    AccuracyReport again = validate_against({c}, root + "/scenarios/validation");
    for (size_t k = 0; k < shipped.scenarios.size(); ++k) CHECK(again.scenarios[k].predicted_ns == shipped.scenarios[k].predicted_ns);
}

TEST_CASE("accuracy: counts the measured files whose uninstrumented runs shared a process with CUPTI") {
    const std::string root = HETSIM_SOURCE_DIR;
    // 2026-11-30c: the runner of then made its uninstrumented runs after the CUPTI ones, in one
    // process; 2026-12-02h: in a child process that never loaded CUPTI (metadata.uninstrumented_process).
    AccuracyReport old = validate_against({root + "/validation/measurements/h200/2026-11-30c"}, root + "/scenarios/validation");
    CHECK(old.files == 52);
    CHECK(old.cupti_residue == 52);
    AccuracyReport clean = validate_against({root + "/validation/measurements/h200/2026-12-02h"}, root + "/scenarios/validation");
    CHECK(clean.files == 114);
    CHECK(clean.cupti_residue == 0);
}

TEST_CASE("accuracy: counts the measured files whose named pageable copies the runner made on its scratch") {
    const std::string root = HETSIM_SOURCE_DIR;
    // 2026-12-03s: the runner of then made every pinned or pageable copy on its thread's scratch;
    // 17 of the 120 validation scenarios name a pageable host buffer in a copy (13, 15, 37, 51, 62,
    // 65, 66, 76, 87, 88, 89, 92, 93, 95, 99, 104, 112). 2026-12-03w: 15 of them, on the runner
    // that uses the named buffer.
    AccuracyReport old = validate_against({root + "/validation/measurements/h200/2026-12-03s"}, root + "/scenarios/validation");
    CHECK(old.files == 120);
    CHECK(old.scratch_copies == 17);
    AccuracyReport fixed = validate_against({root + "/validation/measurements/h200/2026-12-03w"}, root + "/scenarios/validation");
    CHECK(fixed.files == 15);
    CHECK(fixed.scratch_copies == 0);
}

TEST_CASE("accuracy: leave-one-start-out refuses one start and a start without its microbenchmarks") {
    const std::string root = HETSIM_SOURCE_DIR;
    const std::string c = root + "/validation/measurements/h200/2026-11-30c";
    CHECK_THROWS_WITH(validate_holdout({c}, root + "/scenarios/validation"), Catch::Contains("needs at least two machine starts"));
    CHECK_THROWS_WITH(validate_holdout({c, root + "/scenarios"}, root + "/scenarios/validation"),
                      Catch::Contains("no microbench.json here"));
}

TEST_CASE("accuracy: a measured file of another JSON shape is bad input, not an internal error") {
    // json::value() threw a type error on an array or a "schema" of another type: hetsim validate
    // said "internal error" (exit 3).
    namespace fs = std::filesystem;
    const std::string root = HETSIM_SOURCE_DIR;
    const fs::path dir = fs::temp_directory_path() / ("hetsim-accuracy-shape-" + std::to_string(::getpid()));
    fs::create_directories(dir / "measured");
    const fs::path f = dir / "measured" / "01_pipeline_1stream_small.json";
    for (const char* text : {"[]", "{\"schema\": 5, \"version\": 1}", "{\"schema\": \"hetsim.measured\", \"version\": \"1\"}"}) {
        INFO(text);
        std::ofstream(f) << text;
        try {
            validate_against({dir.string()}, root + "/scenarios/validation");
            FAIL("no error");
        } catch (const hetsim::InputError& e) {
            CHECK(std::string(e.what()) == f.string() + ": error: not a hetsim.measured version 1 file");
        }
    }
    fs::remove_all(dir);
}
