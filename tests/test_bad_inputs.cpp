// The bad-input catalogue: every file in it is one kind of mistake, and its sibling NN_name.expected
// holds the one line the command must print on stderr (exit code 2):
//   tests/bad/NN_name.yaml              scenarios (and, through them, tests/bad/profiles/): hetsim run FILE
//   tests/bad/measured/NN_name.json     measured timelines: hetsim compare tests/bad/measured/scenario.yaml FILE
//   tests/bad/microbench/NN_name.json   microbenchmark samples: hetsim calibrate FILE -o OUT (OUT never written)
//   tests/bad/programs/NN_name.json     lowered programs: the program reader (core/program_json.hpp), which both
//                                       hetsim and hetsim-runner use; the runner prints the line after
//                                       "hetsim-runner: " and exits 2 (validation/runner/check_bad.cmake)
//   tests/bad/import/NN_name.json       profiler traces: hetsim import FILE -o OUT (OUT never written)
// Also the command-line errors of `hetsim run` (--set, --format, missing files).
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cli_util.hpp"
#include "core/error.hpp"
#include "core/program_json.hpp"

namespace fs = std::filesystem;

namespace {

struct CliResult {
    int exit_code = -1;  // 128 + signal when the CLI was killed by a signal
    std::string err;     // everything the CLI wrote to stderr
};

// Runs `hetsim <args>` in the repository root; stdout is discarded, stderr captured.
CliResult run_cli(const std::string& args) {
    hetsim_test::Cli c = hetsim_test::cli(args);  // tests/cli_util.hpp: a timeout turns a hang into a failure
    CliResult r;
    r.exit_code = c.exit_code;
    r.err = c.err;
    return r;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

size_t line_count(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// Stems (NN_name) of the files in tests/bad/`sub` with extension `ext`; not recursive.
std::set<std::string> stems(const std::string& sub, const std::string& ext) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(fs::path(HETSIM_SOURCE_DIR) / "tests" / "bad" / sub))
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

namespace {

// One part of the catalogue: the files tests/bad/<sub>/*<ext> and how each is run.
struct Part {
    std::string sub, ext;  // "" for tests/bad itself
    size_t at_least;       // the part must keep this many kinds of mistake
    std::string (*command)(const std::string& file, const std::string& out);
};

const Part kParts[] = {
    {"", ".yaml", 60, [](const std::string& f, const std::string&) { return "run " + f; }},
    {"measured", ".json", 25,
     [](const std::string& f, const std::string&) { return "compare tests/bad/measured/scenario.yaml " + f; }},
    {"microbench", ".json", 12,
     [](const std::string& f, const std::string& out) { return "calibrate " + f + " -o '" + out + "'"; }},
    {"import", ".json", 15, [](const std::string& f, const std::string& out) { return "import " + f + " -o '" + out + "'"; }},
};

}  // namespace

TEST_CASE("bad input: catalogue", "[bad]") {
    // Where calibrate would write: it must never be created by a bad input.
    const fs::path out = fs::temp_directory_path() / ("hetsim-bad-out-" + std::to_string(::getpid()) + ".yaml");
    size_t total = 0;
    for (const Part& part : kParts) {
        const fs::path dir = fs::path("tests") / "bad" / part.sub;
        const std::set<std::string> inputs = stems(part.sub, part.ext), expecteds = stems(part.sub, ".expected");
        total += inputs.size();

        DYNAMIC_SECTION(dir.string() << ": every " << part.ext << " has an .expected and vice versa") {
            CHECK(inputs.size() >= part.at_least);
            for (const auto& y : inputs) {
                INFO((dir / (y + part.ext)).string());
                CHECK(expecteds.count(y) == 1);
            }
            for (const auto& e : expecteds) {
                INFO((dir / (e + ".expected")).string());
                CHECK(inputs.count(e) == 1);
            }
        }

        for (const auto& y : inputs) {
            const std::string file = (dir / (y + part.ext)).string();
            DYNAMIC_SECTION(file) {
                fs::path expected_path = fs::path(HETSIM_SOURCE_DIR) / dir / (y + ".expected");
                REQUIRE(fs::exists(expected_path));
                std::string expected = read_file(expected_path);
                // NN_name.exit, where present, holds the exit code; 0 marks an input that looks
                // wrong but is valid (its .expected is empty: nothing on stderr).
                const fs::path exit_path = fs::path(HETSIM_SOURCE_DIR) / dir / (y + ".exit");
                const int exit_code = fs::exists(exit_path) ? std::stoi(read_file(exit_path)) : 2;
                fs::remove(out);
                CliResult r = run_cli(part.command(file, out.string()));
                if (exit_code == 0) {
                    INFO("stderr: " << r.err);
                    CHECK(expected.empty());
                    CHECK(r.exit_code == 0);
                    CHECK(r.err.empty());
                    continue;
                }
                REQUIRE(exit_code == 2);
                REQUIRE(line_count(expected) == 1);  // one line, ending in a newline
                expected.pop_back();
                // Every message names the file it is about and says "error:".
                CHECK(expected.find(": error: ") != std::string::npos);
                check_one_line_error(r, expected);
                CHECK(!fs::exists(out));
            }
        }
    }
    CHECK(total >= 100);
    fs::remove(out);
}

TEST_CASE("bad input: lowered programs", "[bad]") {
    // No command of hetsim reads a lowered program; the reader is called as the runner calls it.
    const std::set<std::string> inputs = stems("programs", ".json"), expecteds = stems("programs", ".expected");
    CHECK(inputs.size() >= 40);
    CHECK(inputs == expecteds);
    for (const auto& y : inputs) {
        const std::string file = "tests/bad/programs/" + y + ".json";
        DYNAMIC_SECTION(file) {
            std::string expected = read_file(fs::path(HETSIM_SOURCE_DIR) / "tests" / "bad" / "programs" / (y + ".expected"));
            REQUIRE(line_count(expected) == 1);
            expected.pop_back();
            CHECK(expected.rfind(file + ":", 0) == 0);
            CHECK(expected.find(": error: ") != std::string::npos);
            try {
                hetsim::program_from_text(read_file(fs::path(HETSIM_SOURCE_DIR) / file), file);
                FAIL("no error for " << file);
            } catch (const hetsim::InputError& e) {
                CHECK(std::string(e.what()) == expected);
            }
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
    SECTION("negative or non-finite limits") {
        // boost read -1 as 2^64 - 1, and NaN or a negative percentage made every verdict fail silently.
        check_one_line_error(run_cli(run + "--suggest-budget -1"), "--suggest-budget: error: expected a whole number from 0 to 1000000, got '-1'");
        check_one_line_error(run_cli(run + "--suggest-max-ops -1"),
                             "--suggest-max-ops: error: expected a whole number from 0 to 1099511627776, got '-1'");
        check_one_line_error(run_cli("validate tests/bad --max-median nan"), "--max-median: error: expected a percentage of at least 0, got 'nan'");
        check_one_line_error(run_cli("validate tests/bad --max-median -5"), "--max-median: error: expected a percentage of at least 0, got '-5'");
        check_one_line_error(run_cli("validate tests/bad --max-single inf"), "--max-single: error: expected a percentage of at least 0, got 'inf'");
    }
    SECTION("validate --holdout-start --base that is a path") {
        // The fold's profile was written to <temporary folder>/../victim/h200.yaml, over a file
        // outside the folder (left there), and the folds validated with the unchanged profile.
        for (const std::string base : {"../victim/h200", "/tmp/h200", ".h200"})
            check_one_line_error(run_cli("validate --holdout-start tests/bad tests/bad --base '" + base + "'"),
                                 "--base " + base + ": error: expected the name of a shipped profile such as h200 (the folds recalibrate "
                                 "hw/profiles/<name>.yaml), not a path: got '" + base + "'");
    }
    SECTION("an option given an empty value") {
        // Each was taken as the option left out: --trace "" wrote no trace, -o "" wrote to stdout,
        // --time-limit "" ran without one, --shard "" ran every point, all with exit 0.
        const std::string empty = ": error: the value is empty; give one, or leave the option out for its default";
        check_one_line_error(run_cli(run + "--trace ''"), "--trace" + empty);
        check_one_line_error(run_cli(run + "--time-limit ''"), "--time-limit" + empty);
        check_one_line_error(run_cli(run + "--max-memory ''"), "--max-memory" + empty);
        check_one_line_error(run_cli("lower " + file + " -o ''"), "-o" + empty);
        check_one_line_error(run_cli("graph " + file + " --output ''"), "-o" + empty);
        check_one_line_error(run_cli("sweep " + file + " --vary chunks=1,2 --shard ''"), "--shard" + empty);
        check_one_line_error(run_cli("sweep " + file + " --vary chunks=1,2 -j ''"), "-j" + empty);
        check_one_line_error(run_cli("compare " + file + " tests/bad/measured/01_empty.json --svg ''"), "--svg" + empty);
        check_one_line_error(run_cli("import tests/import/traces/tiny.json --hardware ''"), "--hardware" + empty);
        check_one_line_error(run_cli("calibrate tests/bad/microbench/01_empty.json --base '' -o /tmp/x.yaml"), "--base" + empty);
        check_one_line_error(run_cli("validate tests/bad --scenarios ''"), "--scenarios" + empty);
        check_one_line_error(run_cli("sweep-merge -o '' tests/bad/x.csv"), "-o" + empty);
        // A list option's items are checked by its own parser.
        check_one_line_error(run_cli(run + "--set ''"),
                             "--set : error: expected name=value, e.g. --set chunks=8 or --set hardware.copy.h2d.bandwidth=32GB/s");
    }
    SECTION("the same name set twice") {
        // Which value won was not said.
        check_one_line_error(run_cli(run + "--set chunks=1 --set chunks=5"),
                             "--set chunks=5: error: 'chunks' is already set by --set chunks=1; give each name once");
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
        // A value that does not fit where the param is used: the --set argument is at fault, and
        // the message says where the file uses it.
        check_one_line_error(run_cli(run + "--set chunks=2ms"),
                             "--set chunks=2ms: error: repeat count must be a whole number without a unit, got 'chunks' (a "
                             "time) (used at " + file + ":5:15)");
    }
    SECTION("--set value substituted as ${name}, in ops and in hardware overrides") {
        const std::string subst = (dir / "subst.yaml").string();
        {
            std::ofstream out(subst);
            out << "params: {dur: 1us, bw: 16GB/s}\n"
                   "hardware:\n"
                   "  profile: h200\n"
                   "  copy.h2d.bandwidth: ${bw}\n"
                   "threads:\n"
                   "  main:\n"
                   "    - host: step\n"
                   "      duration: ${dur}\n";
        }
        const std::string run2 = "run '" + subst + "' ";
        CliResult ok = run_cli(run2);
        CHECK(ok.exit_code == 0);
        check_one_line_error(run_cli(run2 + "--set dur=5"),
                             "--set dur=5: error: duration must be a time with a unit such as 2ms or 1.5us, got '${dur}' (= "
                             "'5') (no unit) (used at " + subst + ":8:17)");
        check_one_line_error(run_cli(run2 + "--set dur=abc"),
                             "--set dur=abc: error: unknown name 'abc' in 'abc'; did you mean 'bw'? (used as '${dur}' at " +
                                 subst + ":8:17)");
        check_one_line_error(run_cli(run2 + "--set bw=0GB/s"),
                             "--set bw=0GB/s: error: hardware parameter 'copy.h2d.bandwidth' must be positive, got '0GB/s' "
                             "(allowed: 0 < x <= 100TB/s) (used at " + subst + ":4:23)");
        CHECK(run_cli(run2 + "--set dur=2ms --set bw=32GB/s").exit_code == 0);
    }
    SECTION("--set value that names the hardware profile through ${name}") {
        // The message named the file's line as if the file were wrong.
        const std::string hw = (dir / "hw.yaml").string(), hw2 = (dir / "hw2.yaml").string();
        {
            std::ofstream out(hw);
            out << "params: {gpu: h200}\n"
                   "hardware: \"${gpu}\"\n"
                   "threads:\n"
                   "  main:\n"
                   "    - host: step\n"
                   "      duration: 1us\n";
            std::ofstream out2(hw2);
            out2 << "params: {gpu: h200}\n"
                    "hardware:\n"
                    "  profile: ${gpu}\n"
                    "threads:\n"
                    "  main:\n"
                    "    - host: step\n"
                    "      duration: 1us\n";
        }
        CHECK(run_cli("run '" + hw + "'").exit_code == 0);
        CHECK(run_cli("run '" + hw2 + "' --set gpu=h100-sxm").exit_code == 0);
        const std::string shipped = "(shipped: a100-pcie, gh200, h100-pcie, h100-sxm, h200; or give the path of a profile file)";
        check_one_line_error(run_cli("run '" + hw + "' --set gpu=h2000"),
                             "--set gpu=h2000: error: unknown hardware profile 'h2000'; did you mean 'h200'? " + shipped +
                                 " (used at " + hw + ":2:11)");
        check_one_line_error(run_cli("run '" + hw2 + "' --set gpu=nosuch"),
                             "--set gpu=nosuch: error: unknown hardware profile 'nosuch' " + shipped + " (used at " + hw2 + ":3:12)");
    }
    SECTION("--set value used by name in an expression, or as an enum value through ${name}") {
        const std::string pipe = (dir / "pipe.yaml").string();
        {
            std::ofstream out(pipe);
            out << "params: {chunk: 16MiB, chunks: 4, nstreams: 2, mem: pinned, total: chunk * chunks}\n"
                   "buffers:\n"
                   "  h:\n"
                   "    kind: ${mem}\n"
                   "    size: chunk * chunks\n"
                   "  d: {kind: device, size: total}\n"
                   "streams:\n"
                   "  s: {count: 2}\n"
                   "threads:\n"
                   "  main:\n"
                   "    - repeat: chunks\n"
                   "      var: c\n"
                   "      do:\n"
                   "        - kernel: k\n"
                   "          stream: s[c % nstreams]\n"
                   "          duration: 1us\n";
        }
        const std::string run3 = "run '" + pipe + "' ";
        CliResult ok = run_cli(run3);
        INFO("stderr: " << ok.err);
        CHECK(ok.exit_code == 0);
        check_one_line_error(run_cli(run3 + "--set chunk=16"),
                             "--set chunk=16: error: buffer size must be a size with a unit such as 64MiB or 4KB, got 'chunk * "
                             "chunks' (no unit) (used at " + pipe + ":5:11)");
        check_one_line_error(run_cli(run3 + "--set chunk=16ms"),
                             "--set chunk=16ms: error: buffer size must be a size with a unit such as 64MiB or 4KB, got 'chunk * "
                             "chunks' (a time) (used at " + pipe + ":5:11)");
        check_one_line_error(run_cli(run3 + "--set mem=pinnned"),
                             "--set mem=pinnned: error: unknown buffer kind 'pinnned' (pinned, pageable, device or managed); did "
                             "you mean 'pinned'? (used at " + pipe + ":4:11)");
        check_one_line_error(run_cli(run3 + "--set nstreams=0"),
                             "--set nstreams=0: error: division by zero in 'c % nstreams' (used at " + pipe + ":15:23)");
        // Through a param of the file: total is chunk * chunks.
        check_one_line_error(run_cli(run3 + "--set chunks=2ms"),
                             "--set chunks=2ms: error: cannot multiply a size by a time (used as 'chunk * chunks' at " + pipe + ":5:17)");
        // A name the file misspells stays the file's fault, whatever --set gave the others.
        const std::string typo = (dir / "typo.yaml").string();
        std::ofstream(typo) << "params: {chunk: 16MiB, chunks: 4}\n"
                               "buffers:\n"
                               "  h: {kind: pinned, size: chunk * chunkz}\n"
                               "threads:\n"
                               "  main:\n"
                               "    - {host: step, duration: 1us}\n";
        check_one_line_error(run_cli("run '" + typo + "' --set chunk=8MiB"),
                             typo + ":3:35: error: unknown name 'chunkz' in 'chunk * chunkz'; did you mean 'chunk'?");
        // A bare param name as an enum value is not substituted: the message says to write ${name}.
        const std::string bare = (dir / "bare.yaml").string();
        std::ofstream(bare) << "params: {mem: pinned}\n"
                               "buffers:\n"
                               "  h: {kind: mem, size: 1MiB}\n"
                               "threads:\n"
                               "  main:\n"
                               "    - {host: step, duration: 1us}\n";
        check_one_line_error(run_cli("run '" + bare + "'"),
                             bare + ":3:13: error: unknown buffer kind 'mem' (pinned, pageable, device or managed); to use param "
                                    "'mem' here, write ${mem}");
    }
    SECTION("--set of hardware parameters: the message names the argument") {
        check_one_line_error(run_cli(run + "--set hardware.copy.h2d.bandwith=32GB/s"),
                             "--set hardware.copy.h2d.bandwith=32GB/s: error: unknown hardware parameter 'copy.h2d.bandwith'; "
                             "did you mean 'copy.h2d.bandwidth'?");
        check_one_line_error(run_cli(run + "--set hardware.copy.h2d.bandwidth=0GB/s"),
                             "--set hardware.copy.h2d.bandwidth=0GB/s: error: hardware parameter 'copy.h2d.bandwidth' must be "
                             "positive, got '0GB/s' (allowed: 0 < x <= 100TB/s)");
        // A negative value is told the range it must be in, not "expected a number" (a profile file's the same: tests/bad/78).
        check_one_line_error(run_cli(run + "--set hardware.copy.h2d.bandwidth=-5GB/s"),
                             "--set hardware.copy.h2d.bandwidth=-5GB/s: error: hardware parameter 'copy.h2d.bandwidth' must be "
                             "positive, got '-5GB/s' (allowed: 0 < x <= 100TB/s)");
        check_one_line_error(run_cli(run + "--set hardware.gpu.hw_queues=-3"),
                             "--set hardware.gpu.hw_queues=-3: error: hardware parameter 'gpu.hw_queues' must be at least 1, "
                             "got '-3' (allowed: 1 <= x <= 32)");
        check_one_line_error(run_cli(run + "--set hardware.zero_latency=maybe"),
                             "--set hardware.zero_latency=maybe: error: hardware.zero_latency must be true or false, got 'maybe'");
    }
    SECTION("--set of a hardware parameter out of its range") {
        check_one_line_error(run_cli(run + "--set hardware.gpu.hw_queues=0"),
                             "--set hardware.gpu.hw_queues=0: error: hardware parameter 'gpu.hw_queues' must be at least 1, "
                             "got '0' (allowed: 1 <= x <= 32)");
        check_one_line_error(run_cli(run + "--set hardware.gpu.launch_queue_depth=0"),
                             "--set hardware.gpu.launch_queue_depth=0: error: hardware parameter 'gpu.launch_queue_depth' must "
                             "be at least 1, got '0' (allowed: 1 <= x <= 1048576)");
        check_one_line_error(run_cli(run + "--set hardware.sm.count=1e12"),
                             "--set hardware.sm.count=1e12: error: hardware parameter 'sm.count' must be at most 1024, got "
                             "'1e12' (allowed: 1 <= x <= 1024)");
        check_one_line_error(run_cli(run + "--set hardware.copy.h2d.fixed=5GB/s"),
                             "--set hardware.copy.h2d.fixed=5GB/s: error: hardware parameter 'copy.h2d.fixed' must be a time "
                             "such as 2.5us, got '5GB/s'");
    }
    SECTION("--vary of a hardware parameter out of its range") {
        check_one_line_error(run_cli("sweep '" + file + "' --vary hardware.gpu.hw_queues=8,64 -o '" + (dir / "s.csv").string() + "'"),
                             "--vary hardware.gpu.hw_queues=64: error: hardware parameter 'gpu.hw_queues' must be at most 32, "
                             "got '64' (allowed: 1 <= x <= 32)");
        CHECK(!fs::exists(dir / "s.csv"));
    }
    SECTION("counts that must be whole numbers of at least 1: boost would read -5 as 2^64 - 5") {
        check_one_line_error(run_cli(run + "--max-ops -5"), "--max-ops: error: expected a whole number from 1 to 1099511627776, got '-5'");
        check_one_line_error(run_cli(run + "--max-ops 0"), "--max-ops: error: expected a whole number from 1 to 1099511627776, got '0'");
        check_one_line_error(run_cli(run + "--max-ops 1e6"), "--max-ops: error: expected a whole number from 1 to 1099511627776, got '1e6'");
        check_one_line_error(run_cli("sweep '" + file + "' --vary chunks=1,2 -j -1"), "-j: error: expected a whole number from 1 to 4096, got '-1'");
        check_one_line_error(run_cli("sweep '" + file + "' --vary chunks=1,2 -j 0"), "-j: error: expected a whole number from 1 to 4096, got '0'");
        check_one_line_error(run_cli("compare tests/bad/measured/scenario.yaml tests/bad/measured/01_empty.json --max-ops -1"),
                             "--max-ops: error: expected a whole number from 1 to 1099511627776, got '-1'");
    }
    SECTION("declared streams, events and buffers count against --max-ops") {
        const std::string many = (dir / "many.yaml").string();
        std::ofstream(many) << "events:\n  e: {count: 600}\n  f: {count: 600}\nthreads:\n  main:\n    - {host: step, duration: 1us}\n";
        check_one_line_error(run_cli("run '" + many + "' --max-ops 1000"),
                             many + ":3:14: error: the scenario declares more than 1000 streams, events and buffers in all (array "
                                    "elements each count; the cap is --max-ops); declare fewer, or raise the cap with --max-ops if this is intended");
        CHECK(run_cli("run '" + many + "' --max-ops 1300").exit_code == 0);
    }
    SECTION("sweep ranges: three dots") {
        check_one_line_error(run_cli("sweep '" + file + "' --vary chunks=1...8"),
                             "--vary chunks=1...8: error: '1...8' has more than two dots; a range is START..END, e.g. 1..8");
    }
    SECTION("--time-limit that is negative or not a time says what it wants") {
        check_one_line_error(run_cli(run + "--time-limit -1s"), "--time-limit: error: expected a positive time such as 10s, got '-1s'");
        check_one_line_error(run_cli(run + "--time-limit soon"), "--time-limit: error: expected a positive time such as 10s, got 'soon'");
    }
    SECTION("--time-limit below a nanosecond is said as given") {
        CliResult r = run_cli(run + "--time-limit 1ps");
        check_one_line_error(r, "hetsim: error: simulated time passed the limit of 1 ps; raise it with --time-limit");
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

TEST_CASE("bad input: a device or a FIFO as an input file is refused at once, not read without end", "[bad]") {
    const std::string why = "/dev/zero: error: is not a regular file (a device, FIFO or socket), which could be read without end; ";
    check_one_line_error(run_cli("run /dev/zero"), why + "give the path of a YAML file");
    check_one_line_error(run_cli("import /dev/zero"),
                         why + "it should be a file: a PyTorch profiler trace (torch.profiler export_chrome_trace: Kineto JSON with \"traceEvents\")");
    check_one_line_error(run_cli("compare scenarios/seeds/double_buffer.yaml /dev/zero"),
                         why + "it should be a file: a measured timeline: the JSON that hetsim-runner writes, \"schema\": \"hetsim.measured\"");
    check_one_line_error(run_cli("sweep-merge /dev/zero"), why + "give the path of a CSV that hetsim sweep wrote");
    // A FIFO nobody writes to would block the read forever.
    fs::path fifo = fs::temp_directory_path() / ("hetsim-bad-fifo-" + std::to_string(::getpid()));
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    check_one_line_error(run_cli("run '" + fifo.string() + "'"),
                         fifo.string() + ": error: is not a regular file (a device, FIFO or socket), which could be read without end; give the path of a YAML file");
    fs::remove(fifo);
}

TEST_CASE("bad input: a message that echoes a huge input keeps its start and its advice, on one short line", "[bad]") {
    fs::path file = fs::temp_directory_path() / ("hetsim-bad-long-" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(file) << "threads:\n  main:\n    - host: x\n      duration: 0." << std::string(20000, '0') << "1s\n";
    const CliResult r = run_cli("run '" + file.string() + "'");
    INFO("stderr: " << r.err.substr(0, 300));
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.size() < 2000);
    CHECK(r.err.rfind(file.string() + ":4:17: error: '0.000", 0) == 0);
    CHECK(r.err.find(" bytes left out ...] ") != std::string::npos);
    CHECK(r.err.find("1s' has too many decimal places (no value is finer than 1ps or 1B)\n") != std::string::npos);
    fs::remove(file);
}
