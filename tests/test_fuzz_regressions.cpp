// The fuzz targets' regression inputs (tests/fuzz/regressions/<target>/): every input a fuzz run
// found a bug with, run through the CLI command of its target. Each must end as bad input (exit
// 2, one line naming a place) or succeed (exit 0); never a crash, a hang or an internal error.
// Under `./hetsim test --sanitize` these run instrumented, as in the fuzz build.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "cli_util.hpp"

namespace fs = std::filesystem;

TEST_CASE("fuzz regressions: each found input is bad input or a good run, never a crash", "[bad][fuzz]") {
    const fs::path root = fs::path(HETSIM_SOURCE_DIR) / "tests" / "fuzz" / "regressions";
    const fs::path out = fs::temp_directory_path() / ("hetsim-fuzz-regression-" + std::to_string(::getpid()) + ".yaml");
    size_t n = 0;
    for (const char* target : {"scenario", "measured", "microbench", "import"}) {
        if (!fs::is_directory(root / target)) continue;
        for (const auto& e : fs::directory_iterator(root / target)) {
            if (!e.is_regular_file()) continue;
            const std::string f = "'" + e.path().string() + "'";
            const std::string t = target;
            const std::string cmd = t == "scenario" ? "run " + f + " --max-ops 10000 --time-limit 60s"
                                    : t == "measured" ? "compare tests/bad/measured/scenario.yaml " + f
                                    : t == "import"   ? "import " + f + " -o '" + out.string() + "'"
                                                      : "calibrate " + f + " -o '" + out.string() + "'";
            hetsim_test::Cli r = hetsim_test::cli(cmd);
            INFO(cmd << "\nstderr: " << r.err);
            CHECK((r.exit_code == 0 || r.exit_code == 2));
            if (r.exit_code == 2) CHECK(r.err.find(": error: ") != std::string::npos);
            ++n;
        }
    }
    std::error_code ec;
    fs::remove(out, ec);
    CHECK(n >= 1);
}
