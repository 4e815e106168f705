// The bad-input catalogue: every tests/bad/NN_name.yaml is one kind of mistake, and its sibling
// NN_name.expected holds the one line `hetsim run` must print on stderr (exit code 2). Also the
// command-line errors of `hetsim run` (--set, --format, missing files).
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

struct CliResult {
    int exit_code = -1;  // 128 + signal when the CLI was killed by a signal
    std::string err;     // everything the CLI wrote to stderr
};

// Runs `hetsim <args>` in the repository root; stdout is discarded, stderr captured.
CliResult run_cli(const std::string& args) {
    // `timeout` (where present) turns a hang into a failure instead of a stuck test run.
    std::string cli = "'" HETSIM_CLI_PATH "' " + args;
    std::string cmd = "cd '" HETSIM_SOURCE_DIR "' && { if command -v timeout >/dev/null 2>&1; then timeout 60 " + cli +
                      "; else " + cli + "; fi; } 2>&1 >/dev/null";
    CliResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.err.append(buf, n);
    int status = pclose(p);
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
    return r;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

size_t line_count(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// Stems (NN_name) of the files in tests/bad with extension `ext`; not recursive (tests/bad/profiles
// holds the bad profiles the scenarios refer to).
std::set<std::string> stems(const std::string& ext) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(fs::path(HETSIM_SOURCE_DIR) / "tests" / "bad"))
        if (e.is_regular_file() && e.path().extension() == ext) out.insert(e.path().stem().string());
    return out;
}

// Checks one bad invocation: exit code 2 and exactly one line on stderr, equal to `expected`.
void check_one_line_error(const CliResult& r, const std::string& expected) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK(!r.err.empty());
    CHECK(r.err.back() == '\n');
    CHECK(r.err == expected + "\n");
}

}  // namespace

TEST_CASE("bad input: catalogue", "[bad]") {
    const std::set<std::string> yamls = stems(".yaml"), expecteds = stems(".expected");

    SECTION("every .yaml has an .expected and vice versa, and there are at least 30") {
        CHECK(yamls.size() >= 30);
        for (const auto& y : yamls) {
            INFO("tests/bad/" << y << ".yaml");
            CHECK(expecteds.count(y) == 1);
        }
        for (const auto& e : expecteds) {
            INFO("tests/bad/" << e << ".expected");
            CHECK(yamls.count(e) == 1);
        }
    }

    for (const auto& y : yamls) {
        DYNAMIC_SECTION("tests/bad/" << y << ".yaml") {
            fs::path expected_path = fs::path(HETSIM_SOURCE_DIR) / "tests" / "bad" / (y + ".expected");
            REQUIRE(fs::exists(expected_path));
            std::string expected = read_file(expected_path);
            REQUIRE(line_count(expected) == 1);  // one line, ending in a newline
            expected.pop_back();
            CliResult r = run_cli("run tests/bad/" + y + ".yaml");
            check_one_line_error(r, expected);
        }
    }
}

TEST_CASE("bad input: command-line errors", "[bad]") {
    // A valid scenario with one param, written outside the catalogue (which holds only bad files).
    fs::path dir = fs::temp_directory_path() / ("hetsim-bad-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string file = (dir / "params.yaml").string();
    {
        std::ofstream out(file);
        out << "params:\n"
               "  chunks: 4\n"
               "threads:\n"
               "  main:\n"
               "    - repeat: chunks\n"
               "      do:\n"
               "        - host: step\n"
               "          duration: 1us\n";
    }
    const std::string run = "run '" + file + "' ";

    SECTION("the scenario itself is fine") {
        CliResult r = run_cli(run);
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.err.empty());
    }
    SECTION("--set of a param the scenario does not declare") {
        check_one_line_error(run_cli(run + "--set chunkz=8"),
                             "--set chunkz=8: error: the scenario " + file + " has no param 'chunkz'; did you mean 'chunks'?");
        check_one_line_error(run_cli(run + "--set size=8"),
                             "--set size=8: error: the scenario " + file + " has no param 'size' (its params: chunks)");
    }
    SECTION("malformed --set") {
        check_one_line_error(run_cli(run + "--set chunks"),
                             "--set chunks: error: expected name=value, e.g. --set chunks=8 or --set "
                             "hardware.copy.h2d.bandwidth=32GB/s");
        check_one_line_error(run_cli(run + "--set =8"),
                             "--set =8: error: expected name=value, e.g. --set chunks=8 or --set "
                             "hardware.copy.h2d.bandwidth=32GB/s");
    }
    SECTION("--set value that is not valid where the param is used") {
        check_one_line_error(run_cli(run + "--set chunks=many"),
                             "--set chunks=many: error: unknown name 'many' in 'many' (not a loop variable or param; a "
                             "value needs a unit such as 2ms or 64MiB)");
        check_one_line_error(run_cli(run + "--set chunks=2ms"),
                             file + ":5:15: error: repeat count must be a whole number without a unit, got 'chunks' (a time)");
    }
    SECTION("--set of hardware parameters") {
        check_one_line_error(run_cli(run + "--set hardware.copy.h2d.bandwith=32GB/s"),
                             "--set hardware.copy.h2d.bandwith: error: unknown hardware parameter 'copy.h2d.bandwith'; did "
                             "you mean 'copy.h2d.bandwidth'?");
        check_one_line_error(run_cli(run + "--set hardware.copy.h2d.bandwidth=0GB/s"),
                             "--set hardware.copy.h2d.bandwidth: error: hardware parameter 'copy.h2d.bandwidth' must be "
                             "positive, got '0GB/s'");
        check_one_line_error(run_cli(run + "--set hardware.zero_latency=maybe"),
                             "--set hardware.zero_latency: error: hardware.zero_latency must be true or false, got 'maybe'");
    }
    SECTION("bad --format") {
        check_one_line_error(run_cli(run + "--format xml"), "--format: error: expected text or json, got 'xml'");
    }
    SECTION("missing file, directory") {
        check_one_line_error(run_cli("run tests/bad/does_not_exist.yaml"), "tests/bad/does_not_exist.yaml: error: no such file");
        check_one_line_error(run_cli("run tests/bad"), "tests/bad: error: is a directory, not a YAML file");
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
}
