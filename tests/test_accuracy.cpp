// Prediction error against the committed H200 measurements (validation/measurements/h200):
// every validation scenario measured on the GPU is simulated with the shipped h200 profile
// and compared with its measured uninstrumented end-to-end median, pooled over machine starts.
#include <catch2/catch.hpp>

#include <set>

#include "calibrate/accuracy.hpp"

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
