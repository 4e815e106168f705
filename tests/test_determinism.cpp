// Determinism: every shipped scenario gives the same JSON report, byte for byte, in two separate
// runs of the CLI; a sweep's CSV does not depend on the number of workers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_util.hpp"

using namespace hetsim_test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> shipped_scenarios() {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(HETSIM_SOURCE_DIR) / "scenarios"))
        if (e.is_regular_file() && e.path().extension() == ".yaml")
            out.push_back(fs::relative(e.path(), HETSIM_SOURCE_DIR).string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("determinism: every shipped scenario's JSON report is byte-identical across runs") {
    const std::vector<std::string> files = shipped_scenarios();
    REQUIRE(files.size() >= 60);
    for (const auto& f : files) {
        INFO(f);
        Cli a = cli("run '" + f + "' --format json");
        Cli b = cli("run '" + f + "' --format json");
        REQUIRE(a.exit_code == 0);
        REQUIRE(b.exit_code == 0);
        CHECK(a.out.size() > 100);
        CHECK(a.out == b.out);
        CHECK(a.err == b.err);
    }
}

TEST_CASE("determinism: a sweep's CSV is the same for -j 1, -j 3 and -j 8 (more workers than points per core)") {
    fs::path dir = fs::temp_directory_path() / ("hetsim-determinism-sweep-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string sweep = "sweep scenarios/sweeps/overlap_chunks.yaml --vary chunk=1MiB..64MiB*2 --vary nstreams=1..3";
    std::string csv[3];
    const int jobs[3] = {1, 3, 8};
    for (int k = 0; k < 3; ++k) {
        const fs::path out = dir / std::string("j").append(std::to_string(jobs[k])).append(".csv");  // not operator+: GCC 12 -Wrestrict false positive
        Cli r = cli(sweep + " -j " + std::to_string(jobs[k]) + " -o '" + out.string() + "'");
        REQUIRE(r.exit_code == 0);
        csv[k] = slurp(out);
    }
    CHECK(std::count(csv[0].begin(), csv[0].end(), '\n') >= 19);  // header (and comments) + 7 x 3 points
    CHECK(csv[0] == csv[1]);
    CHECK(csv[0] == csv[2]);
    fs::remove_all(dir);
}
