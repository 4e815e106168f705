// Safe outputs: every output file is written to a temporary name and renamed, so a run that
// fails (bad input, deadlock or time cap, an unwritable target) never truncates or half-writes
// an existing file and leaves no temporary behind.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_util.hpp"

using namespace hetsim_test;
namespace fs = std::filesystem;

namespace {

struct Dir {
    fs::path path;
    explicit Dir(const std::string& name) : path(fs::temp_directory_path() / ("hetsim-outputs-" + name + "-" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~Dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    // Creates `name` holding "keep me <name>\n"; returns its quoted path.
    std::string keep(const std::string& name) const {
        std::ofstream(path / name) << "keep me " << name << "\n";
        return std::string("'").append((path / name).string()).append("'");  // not operator+: GCC 12 -Wrestrict false positive
    }
    void check_kept(const std::vector<std::string>& names) const {
        for (const auto& n : names) {
            INFO(n);
            CHECK(slurp(path / n) == "keep me " + n + "\n");
        }
        size_t files = 0;
        for (const auto& e : fs::directory_iterator(path)) {
            INFO("left in the output folder: " << e.path().filename().string());
            CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
            ++files;
        }
        CHECK(files == names.size());
    }
};

void check_failed(const Cli& r) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') >= 1);
}

}  // namespace

TEST_CASE("outputs: a run that fails while simulating leaves --trace, --csv and --json untouched") {
    Dir d("sim");
    Cli r = cli("run scenarios/examples/chunked_pipeline.yaml --time-limit 1ms --trace " + d.keep("t.json") + " --csv " +
                d.keep("o.csv") + " --json " + d.keep("r.json"));
    check_failed(r);
    CHECK(r.err.find("simulated time passed the limit") != std::string::npos);
    d.check_kept({"t.json", "o.csv", "r.json"});
}

TEST_CASE("outputs: bad input leaves the outputs of run, graph, lower, compare and calibrate untouched") {
    Dir d("bad");
    check_failed(cli("run tests/bad/03_unknown_key.yaml --json " + d.keep("r.json") + " --csv " + d.keep("o.csv")));
    check_failed(cli("graph tests/bad/34_task_cycle.yaml -o " + d.keep("g.dot")));
    check_failed(cli("lower tests/bad/21_undefined_stream.yaml -o " + d.keep("p.json")));
    check_failed(cli("compare tests/bad/measured/scenario.yaml tests/bad/measured/04_truncated.json --svg " + d.keep("c.svg") +
                     " --trace " + d.keep("c.json")));
    check_failed(cli("calibrate tests/bad/microbench/12_string_for_number.json -o " + d.keep("profile.yaml")));
    d.check_kept({"r.json", "o.csv", "g.dot", "p.json", "c.svg", "c.json", "profile.yaml"});
}

TEST_CASE("outputs: a good run replaces the file whole, an unwritable target is one error line") {
    Dir d("good");
    const std::string csv = d.keep("o.csv");
    Cli r = cli("run scenarios/examples/chunked_pipeline.yaml --csv " + csv);
    REQUIRE(r.exit_code == 0);
    const std::string text = slurp(d.path / "o.csv");
    CHECK(text.rfind("keep me", 0) == std::string::npos);
    CHECK(!text.empty());
    CHECK(text.back() == '\n');

    const std::string missing = (d.path / "no" / "such" / "dir" / "o.csv").string();
    r = cli("run scenarios/examples/chunked_pipeline.yaml --csv '" + missing + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.err == missing + ": error: cannot write output file: No such file or directory\n");
    r = cli("run scenarios/examples/chunked_pipeline.yaml --csv '" + d.path.string() + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("cannot write output file") != std::string::npos);
    CHECK(fs::is_directory(d.path));
    fs::remove(d.path / "o.csv");
    d.check_kept({});  // no temporaries left by the failed writes
}
