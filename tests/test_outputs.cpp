// Safe outputs: every output file is written to a temporary name and renamed, so a run that
// fails (bad input, deadlock or time cap, an unwritable target) never truncates or half-writes
// an existing file and leaves no temporary behind.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

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
    CHECK(r.err == missing + ": error: cannot write output file (--csv): No such file or directory\n");
    r = cli("run scenarios/examples/chunked_pipeline.yaml --csv '" + d.path.string() + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.err == d.path.string() + ": error: cannot write output file (--csv): Is a directory\n");
    CHECK(fs::is_directory(d.path));
    fs::remove(d.path / "o.csv");
    d.check_kept({});  // no temporaries left by the failed writes
}

// cli/outputs.hpp: no output path can destroy an input or a file that is not a regular one, and
// the outputs of one command are written all or none.
namespace {
const std::string kScenario =
    "name: outputs\n"
    "streams: [s]\n"
    "threads:\n"
    "  main:\n"
    "    - {kernel: k, stream: s, duration: 10us}\n"
    "    - stream_sync: s\n";

struct Inputs : Dir {
    std::string scenario;  // quoted
    explicit Inputs(const std::string& name) : Dir(name) {
        std::ofstream(path / "s.yaml") << kScenario;
        scenario = std::string("'").append((path / "s.yaml").string()).append("'");  // not operator+: GCC 12 -Wrestrict false positive
    }
    std::string q(const std::string& name) const { return std::string("'").append((path / name).string()).append("'"); }
    void scenario_kept() const { CHECK(slurp(path / "s.yaml") == kScenario); }
};

void refused(const Cli& r, const std::string& what) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(what) != std::string::npos);
}
}  // namespace

TEST_CASE("outputs: an output that names an input of the command is refused, the input kept") {
    Inputs d("input");
    const std::string s = d.scenario, sp = (d.path / "s.yaml").string();
    for (const char* opt : {"--trace", "--csv", "--json", "--svg", "--report"})
        refused(cli("run " + s + " " + opt + " " + s), sp + ": error: cannot write output file (" + opt +
                                                           "): it is the scenario this command reads; writing it would destroy the input");
    refused(cli("graph " + s + " -o " + s), "(-o): it is the scenario this command reads");
    refused(cli("lower " + s + " -o " + s), "(-o): it is the scenario this command reads");
    refused(cli("sweep " + s + " --vary hardware.sm.count=66,132 -o " + s), "(-o): it is the scenario this command reads");
    // By another name: a hard link, a path with ./ in it.
    fs::create_hard_link(d.path / "s.yaml", d.path / "hard.yaml");
    refused(cli("run " + s + " --json " + d.q("hard.yaml")), "it is the scenario this command reads (" + sp + ")");
    refused(cli("run " + s + " --json '" + (d.path / "." / "s.yaml").string() + "'"), "it is the scenario this command reads");
    d.scenario_kept();
    CHECK(slurp(d.path / "hard.yaml") == kScenario);

    // compare: the measured timeline; calibrate: a microbenchmark file (the base profile may be replaced).
    fs::copy_file("tests/bad/measured/04_truncated.json", d.path / "m.json");
    const std::string m_before = slurp(d.path / "m.json");
    refused(cli("compare tests/bad/measured/scenario.yaml " + d.q("m.json") + " --trace " + d.q("m.json")),
            "(--trace): it is the measured timeline this command reads");
    CHECK(slurp(d.path / "m.json") == m_before);
    fs::copy_file("tests/bad/microbench/12_string_for_number.json", d.path / "mb.json");
    const std::string mb_before = slurp(d.path / "mb.json");
    refused(cli("calibrate " + d.q("mb.json") + " -o " + d.q("mb.json")), "(-o): it is a microbenchmark file this command reads");
    CHECK(slurp(d.path / "mb.json") == mb_before);

    // A profile file that the scenario reads.
    std::ofstream(d.path / "p.yaml") << "name: mine\nbase: h200\nparams:\n  sm.count: 66\n";
    std::ofstream(d.path / "with_profile.yaml") << "hardware: {profile: " << (d.path / "p.yaml").string() << "}\n" << kScenario.substr(kScenario.find("streams"));
    const std::string p_before = slurp(d.path / "p.yaml");
    refused(cli("run " + d.q("with_profile.yaml") + " --csv " + d.q("p.yaml")), "(--csv): it is a profile file this command reads");
    CHECK(slurp(d.path / "p.yaml") == p_before);
    // sweep: the plot was written over the profile, and -o --overwrite replaced it with the CSV
    // (the points after it then failed on a profile that was a CSV); also a profile only a
    // varied value names (hardware: ${gpu}), and the base of the scenario's profile.
    const std::string wp = d.q("with_profile.yaml");
    refused(cli("sweep " + wp + " --vary hardware.sm.count=66,132 -o " + d.q("o.csv") + " --plot " + d.q("p.yaml")),
            "(--plot): it is a profile file this command reads");
    refused(cli("sweep " + wp + " --vary hardware.sm.count=66,132 --overwrite -o " + d.q("p.yaml")), "(-o): it is a profile file this command reads");
    std::ofstream(d.path / "q.yaml") << "name: q\nbase: p.yaml\nparams:\n  sm.count: 33\n";
    std::ofstream(d.path / "by_param.yaml") << "params: {gpu: h200}\nhardware: ${gpu}\n" << kScenario.substr(kScenario.find("streams"));
    std::string by_param = "sweep " + d.q("by_param.yaml");
    by_param.append(" --vary 'gpu=h200,").append((d.path / "q.yaml").string()).append("' --overwrite -o ").append(d.q("p.yaml"));
    refused(cli(by_param), "(-o): it is a profile file this command reads");
    CHECK(slurp(d.path / "p.yaml") == p_before);
    CHECK(!fs::exists(d.path / "o.csv"));
    // import: the profile of --hardware (and its base) was overwritten by the scenario, which then
    // named itself as its hardware.
    refused(cli("import tests/import/traces/tiny.json --hardware " + d.q("p.yaml") + " -o " + d.q("p.yaml")),
            "(-o): it is a profile file this command reads");
    refused(cli("import tests/import/traces/tiny.json --hardware " + d.q("q.yaml") + " -o " + d.q("p.yaml")),
            "(-o): it is a profile file this command reads");
    CHECK(slurp(d.path / "p.yaml") == p_before);
}

TEST_CASE("outputs: symbolic links, FIFOs and device nodes are refused and left as they are") {
    Inputs d("special");
    const std::string s = d.scenario;
    std::ofstream(d.path / "target.csv") << "keep me\n";
    fs::create_symlink(d.path / "target.csv", d.path / "link.csv");
    refused(cli("run " + s + " --csv " + d.q("link.csv")), "(--csv): it is a symbolic link (to " + (d.path / "target.csv").string() +
                                                            "); hetsim replaces only regular files");
    CHECK(fs::is_symlink(d.path / "link.csv"));
    CHECK(slurp(d.path / "target.csv") == "keep me\n");
    // A link to the scenario: refused as a link (never followed).
    fs::create_symlink(d.path / "s.yaml", d.path / "to_input.yaml");
    refused(cli("run " + s + " --trace " + d.q("to_input.yaml")), "it is a symbolic link");
    d.scenario_kept();

    REQUIRE(::mkfifo((d.path / "fifo").c_str(), 0600) == 0);
    refused(cli("run " + s + " --json " + d.q("fifo")), "(--json): it is a FIFO; hetsim writes outputs only to regular files (or '-' for stdout)");
    CHECK(fs::is_fifo(d.path / "fifo"));
    refused(cli("run " + s + " --json /dev/null"), "/dev/null: error: cannot write output file (--json): it is a character device");
    CHECK(fs::is_character_file("/dev/null"));
    refused(cli("lower " + s + " -o /dev/full"), "it is a character device");
    CHECK(fs::is_character_file("/dev/full"));
}

TEST_CASE("outputs: one command's outputs are written all or none, two outputs may not share a file") {
    Inputs d("all");
    const std::string s = d.scenario;
    const std::string t = d.keep("t.json"), j = d.keep("r.json");
    // A target that passes the early checks as root but cannot be created: nothing is replaced.
    Cli r = cli("run " + s + " --trace " + t + " --json " + j + " --csv /proc/hetsim-no-such-file.csv");
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("/proc/hetsim-no-such-file.csv: error: cannot write output file", 0) == 0);
    CHECK(slurp(d.path / "t.json") == "keep me t.json\n");
    CHECK(slurp(d.path / "r.json") == "keep me r.json\n");
    refused(cli("run " + s + " --trace " + d.q("same.json") + " --json " + d.q("same.json")),
            "(--json): it is also the output of --trace; give each output its own file");
    CHECK(!fs::exists(d.path / "same.json"));
    refused(cli("run " + s + " --trace - --json -"), "--json -: error: stdout is already the output of --trace; only one output can be '-'");
    // The same command with good targets writes both.
    r = cli("run " + s + " --trace " + t + " --json " + j);
    CHECK(r.exit_code == 0);
    CHECK(slurp(d.path / "t.json").rfind("keep me", 0) == std::string::npos);
    CHECK(slurp(d.path / "r.json").find("\"end_to_end") != std::string::npos);
    for (const char* f : {"s.yaml", "t.json", "r.json"}) fs::remove(d.path / f);
    d.check_kept({});  // and no temporaries left
}

TEST_CASE("outputs: '-' is stdout, and the command then prints nothing else there") {
    Inputs d("stdout");
    Cli r = cli("run " + d.scenario + " --json -");
    CHECK(r.exit_code == 0);
    CHECK(r.out.rfind("{", 0) == 0);
    CHECK(r.out.find("end to end") == std::string::npos);  // no text summary mixed in
    r = cli("lower " + d.scenario + " -o -");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("\"ops\"") != std::string::npos);
    CHECK(!fs::exists("-"));
}
