// Tests of models/calculators.hpp (the seed page's four calculators) and of `hetsim calc`.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/calculators.hpp"
#include "cli_util.hpp"

#ifndef HETSIM_CLI_PATH
#define HETSIM_CLI_PATH ""
#endif

using namespace hetsim::calc;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

// --- the seed page's asserts ---------------------------------------------------------------

TEST_CASE("calc: stage placement reproduces the seed examples", "[calc]") {
    const StagePlacement small = stage_placement(2.0, 0.4, 64e6, 64e6, 16.0, 0.1);
    const StagePlacement large = stage_placement(100.0, 8.0, 64e6, 64e6, 16.0, 0.1);
    CHECK(small.transfer_ms == Approx(8.1));
    CHECK(small.shorter == "cpu");
    CHECK(large.shorter == "gpu");

    CHECK(small.cpu_path_ms == 2.0);
    CHECK(small.gpu_compute_ms == 0.4);
    CHECK(small.gpu_path_ms == Approx(8.5));
    CHECK(large.transfer_ms == Approx(8.1));
    CHECK(large.gpu_path_ms == Approx(16.1));
}

TEST_CASE("calc: stage placement defaults and ties", "[calc]") {
    // fixed_ms defaults to 0: 16e9 bytes at 16 GB/s take 1000 ms.
    CHECK(stage_placement(5.0, 1.0, 8e9, 8e9, 16.0).transfer_ms == 1000.0);
    // GPU path 2 + 8 equals the CPU path exactly.
    CHECK(stage_placement(10.0, 2.0, 0.0, 0.0, 1.0, 8.0).shorter == "equal");
}

TEST_CASE("calc: overlap timeline reproduces the seed examples", "[calc]") {
    const OverlapTimeline full = overlap_timeline(8.0, 20.0);
    CHECK(full.hidden_ms == 8.0);
    CHECK(full.serial_ms == 28.0);
    CHECK(full.elapsed_ms == 20.0);
    const OverlapTimeline dep = overlap_timeline(8.0, 20.0, 5.0);
    CHECK(dep.hidden_ms == 3.0);
    CHECK(dep.elapsed_ms == 25.0);
    CHECK(overlap_timeline(8.0, 20.0, 8.0).hidden_ms == 0);
    // Copy longer than compute: hidden time is bounded by the compute.
    CHECK(overlap_timeline(20.0, 8.0).hidden_ms == 8.0);
}

TEST_CASE("calc: offload ledger reproduces the seed example", "[calc]") {
    const OffloadLedger ledger = offload_ledger(4.0, 32.0, 1, 0.75);
    CHECK(ledger.offloaded_state_gb == 4.0);
    CHECK(ledger.transfer_gb_per_step == 8.0);
    CHECK(ledger.transfer_ms == 250.0);
    CHECK(ledger.estimated_exposed_ms == 62.5);
    // Defaults: one round trip, nothing hidden.
    const OffloadLedger plain = offload_ledger(4.0, 32.0);
    CHECK(plain.transfer_ms == 250.0);
    CHECK(plain.estimated_exposed_ms == 250.0);
    CHECK(offload_ledger(4.0, 32.0, 0).transfer_gb_per_step == 0.0);
    CHECK(offload_ledger(4.0, 32.0, 3).transfer_gb_per_step == 24.0);
}

TEST_CASE("calc: parallelism evidence reproduces the seed examples", "[calc]") {
    const ParallelismEvidence shorter = parallelism_evidence(30.0, 20.0, 18.0, 1.0);
    const ParallelismEvidence longer = parallelism_evidence(30.0, 32.0, 18.0, 8.0);
    CHECK(shorter.elapsed_saved_ms == 10.0);
    CHECK(longer.elapsed_saved_ms == -2.0);
    CHECK(shorter.speedup == Approx(1.5));
    CHECK(shorter.active_time_fraction == Approx(0.9));
    CHECK(shorter.exposed_sync_fraction == Approx(0.05));
    CHECK(longer.speedup == Approx(0.9375));
    CHECK(longer.active_time_fraction == Approx(0.5625));
    CHECK(longer.exposed_sync_fraction == Approx(0.25));
}

// --- validation ----------------------------------------------------------------------------

TEST_CASE("calc: CalcError is a std::invalid_argument", "[calc]") {
    CHECK_THROWS_AS(stage_placement(-1, 0, 0, 0, 1), CalcError);
    CHECK_THROWS_AS(stage_placement(-1, 0, 0, 0, 1), std::invalid_argument);
}

TEST_CASE("calc: stage placement rejects invalid inputs", "[calc]") {
    CHECK_THROWS_WITH(stage_placement(2, 0.4, 64e6, 64e6, 0, 0.1),
                      Equals("bandwidth_gbps must be a finite positive number in GB/s, got 0"));
    CHECK_THROWS_WITH(stage_placement(2, 0.4, 64e6, 64e6, -16), Contains("bandwidth_gbps") && Contains("got -16"));
    CHECK_THROWS_WITH(stage_placement(2, 0.4, 64e6, 64e6, kNaN), Contains("bandwidth_gbps") && Contains("got nan"));
    CHECK_THROWS_WITH(stage_placement(2, 0.4, 64e6, 64e6, kInf), Contains("bandwidth_gbps") && Contains("got inf"));

    CHECK_THROWS_WITH(stage_placement(-2, 0.4, 64e6, 64e6, 16),
                      Equals("cpu_ms must be a finite non-negative number in ms, got -2"));
    CHECK_THROWS_WITH(stage_placement(2, -0.4, 64e6, 64e6, 16), Contains("gpu_ms") && Contains("got -0.4"));
    CHECK_THROWS_WITH(stage_placement(2, 0.4, -1, 64e6, 16),
                      Equals("input_bytes must be a finite non-negative number of bytes, got -1"));
    CHECK_THROWS_WITH(stage_placement(2, 0.4, 64e6, kInf, 16), Contains("output_bytes") && Contains("got inf"));
    CHECK_THROWS_WITH(stage_placement(2, 0.4, 64e6, 64e6, 16, -0.1), Contains("fixed_ms") && Contains("got -0.1"));
    CHECK_THROWS_WITH(stage_placement(kNaN, 0.4, 64e6, 64e6, 16), Contains("cpu_ms") && Contains("got nan"));
    // Inputs that overflow a result.
    CHECK_THROWS_WITH(stage_placement(1, 1, 1e308, 1e308, 1e-300), Contains("too large"));
}

TEST_CASE("calc: overlap timeline rejects invalid inputs", "[calc]") {
    CHECK_THROWS_WITH(overlap_timeline(-8, 20), Equals("copy_ms must be a finite non-negative number in ms, got -8"));
    CHECK_THROWS_WITH(overlap_timeline(8, -20), Contains("compute_ms") && Contains("got -20"));
    CHECK_THROWS_WITH(overlap_timeline(8, 20, -1), Contains("dependency_ms") && Contains("non-negative"));
    CHECK_THROWS_WITH(overlap_timeline(kNaN, 20), Contains("copy_ms") && Contains("got nan"));
    CHECK_THROWS_WITH(overlap_timeline(8, kInf), Contains("compute_ms") && Contains("got inf"));
    CHECK_THROWS_WITH(overlap_timeline(8, 20, 9),
                      Contains("dependency_ms must not exceed copy_ms") &&
                          Contains("got dependency_ms 9 > copy_ms 8"));
    CHECK_NOTHROW(overlap_timeline(8, 20, 8));
    CHECK_NOTHROW(overlap_timeline(0, 0, 0));
}

TEST_CASE("calc: offload ledger rejects invalid inputs", "[calc]") {
    CHECK_THROWS_WITH(offload_ledger(-4, 32), Equals("state_gb must be a finite non-negative number in GB, got -4"));
    CHECK_THROWS_WITH(offload_ledger(kNaN, 32), Contains("state_gb") && Contains("got nan"));
    CHECK_THROWS_WITH(offload_ledger(4, 0), Equals("bandwidth_gbps must be a finite positive number in GB/s, got 0"));
    CHECK_THROWS_WITH(offload_ledger(4, -kInf), Contains("bandwidth_gbps") && Contains("got -inf"));
    CHECK_THROWS_WITH(offload_ledger(4, 32, -1),
                      Contains("round_trips must be a non-negative integer") && Contains("got -1"));
    CHECK_THROWS_WITH(offload_ledger(4, 32, 1, 1.5),
                      Contains("overlap_ratio must be a finite number in [0, 1]") && Contains("got 1.5"));
    CHECK_THROWS_WITH(offload_ledger(4, 32, 1, -0.25), Contains("overlap_ratio") && Contains("got -0.25"));
    CHECK_THROWS_WITH(offload_ledger(4, 32, 1, kNaN), Contains("overlap_ratio") && Contains("got nan"));
    CHECK(offload_ledger(4, 32, 1, 0.0).estimated_exposed_ms == 250.0);
    CHECK(offload_ledger(4, 32, 1, 1.0).estimated_exposed_ms == 0.0);
}

TEST_CASE("calc: parallelism evidence rejects invalid inputs", "[calc]") {
    CHECK_THROWS_WITH(parallelism_evidence(-30, 20, 18, 1),
                      Equals("serial_ms must be a finite non-negative number in ms, got -30"));
    CHECK_THROWS_WITH(parallelism_evidence(30, -20, 18, 1), Contains("elapsed_ms") && Contains("got -20"));
    CHECK_THROWS_WITH(parallelism_evidence(30, 20, -18, 1), Contains("gpu_active_ms") && Contains("got -18"));
    CHECK_THROWS_WITH(parallelism_evidence(30, 20, 18, kNaN), Contains("exposed_sync_ms") && Contains("got nan"));
    CHECK_THROWS_WITH(parallelism_evidence(0, 20, 18, 1), Contains("serial_ms must be positive") && Contains("got 0"));
    CHECK_THROWS_WITH(parallelism_evidence(30, 0, 0, 0), Contains("elapsed_ms must be positive") && Contains("got 0"));
    CHECK_THROWS_WITH(parallelism_evidence(30, 20, 18, 3),
                      Contains("gpu_active_ms + exposed_sync_ms must not exceed elapsed_ms") &&
                          Contains("got 18 + 3 > 20"));
    CHECK_NOTHROW(parallelism_evidence(30, 20, 18, 2));
}

TEST_CASE("calc: format_number is fixed, trimmed and deterministic", "[calc]") {
    CHECK(format_number(8.1) == "8.1");
    CHECK(format_number(stage_placement(2.0, 0.4, 64e6, 64e6, 16.0, 0.1).transfer_ms) == "8.1");
    CHECK(format_number(250.0) == "250");
    CHECK(format_number(0.9375) == "0.9375");
    CHECK(format_number(-2.0) == "-2");
    CHECK(format_number(64e6) == "64000000");
    CHECK(format_number(1.0 / 3.0) == "0.333333");
    CHECK(format_number(0.0) == "0");
    CHECK(format_number(-0.0) == "0");
    CHECK(format_number(1.5e-7) == "1.5e-07");
    CHECK(format_number(kNaN) == "nan");
    CHECK(format_number(-kInf) == "-inf");
}

// --- the CLI end to end --------------------------------------------------------------------

namespace {

struct CliRun {
    int code = -1;
    std::string out;
    std::string err;
};

bool cli_available() {
    const std::string path = HETSIM_CLI_PATH;
    return !path.empty() && std::filesystem::exists(path);
}

// Runs `hetsim <args>` (tests/cli_util.hpp); `args` must already be shell-safe.
CliRun run_cli(const std::string& args) {
    hetsim_test::Cli c = hetsim_test::cli(args);
    return CliRun{c.exit_code, c.out, c.err};
}

// Whitespace-separated tokens of each output line whose first token is `key`.
std::vector<std::vector<std::string>> lines_with_key(const std::string& text, const std::string& key) {
    std::vector<std::vector<std::string>> found;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::vector<std::string> tokens;
        std::string w;
        while (words >> w) tokens.push_back(w);
        if (!tokens.empty() && tokens.front() == key) found.push_back(tokens);
    }
    return found;
}

#define SKIP_WITHOUT_CLI()                                                              \
    do {                                                                                \
        if (!cli_available()) {                                                         \
            WARN("hetsim CLI not found at '" HETSIM_CLI_PATH "'; skipping CLI checks"); \
            return;                                                                     \
        }                                                                               \
    } while (false)

}  // namespace

TEST_CASE("calc: CLI stage prints the seed examples", "[calc][cli]") {
    SKIP_WITHOUT_CLI();
    const CliRun r = run_cli("calc stage");
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Contains("seed example: small stage") && Contains("seed example: large stage"));
    const auto transfer = lines_with_key(r.out, "transfer_ms");
    REQUIRE(transfer.size() == 2);
    for (const auto& t : transfer) {
        REQUIRE(t.size() == 3);
        CHECK(t[1] == "8.1");
        CHECK(t[2] == "ms");
    }
    const auto shorter = lines_with_key(r.out, "shorter");
    REQUIRE(shorter.size() == 2);
    CHECK(shorter[0] == std::vector<std::string>{"shorter", "cpu"});
    CHECK(shorter[1] == std::vector<std::string>{"shorter", "gpu"});
    // Byte-identical across runs.
    CHECK(run_cli("calc stage").out == r.out);
}

TEST_CASE("calc: CLI overlap with flags gives JSON", "[calc][cli]") {
    SKIP_WITHOUT_CLI();
    const CliRun r = run_cli("calc overlap --copy-ms 8 --compute-ms 20 --dependency-ms 5 --format json");
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j.is_object());
    CHECK(j["calculator"] == "overlap");
    CHECK(j["results"]["hidden_ms"].get<double>() == 3.0);
    CHECK(j["results"]["serial_ms"].get<double>() == 28.0);
    CHECK(j["results"]["elapsed_ms"].get<double>() == 25.0);
    CHECK(j["inputs"]["dependency_ms"].get<double>() == 5.0);
}

TEST_CASE("calc: CLI values take units as scenario files write them", "[calc][cli]") {
    SKIP_WITHOUT_CLI();
    // --copy-ms 3.5ms was rejected: values with a unit are converted to the flag's unit.
    CliRun r = run_cli("calc overlap --copy-ms 3.5ms --compute-ms 2000us --dependency-ms 0.5 --format json");
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["inputs"]["copy_ms"].get<double>() == 3.5);
    CHECK(j["inputs"]["compute_ms"].get<double>() == 2.0);
    CHECK(j["inputs"]["dependency_ms"].get<double>() == 0.5);
    r = run_cli("calc stage --cpu-ms 2ms --gpu-ms 400us --input-bytes 64MB --output-bytes 64e6 --bandwidth-gbps 16GB/s "
                "--fixed-ms 100us --format json");
    REQUIRE(r.code == 0);
    j = nlohmann::json::parse(r.out);
    CHECK(j["inputs"]["input_bytes"].get<double>() == 64e6);
    CHECK(j["inputs"]["bandwidth_gbps"].get<double>() == 16.0);
    CHECK(j["results"]["transfer_ms"].get<double>() == Approx(8.1));
    r = run_cli("calc offload --state-gb 4GB --bandwidth-gbps 32 --format json");
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["inputs"]["state_gb"].get<double>() == 4.0);
    // The wrong kind of unit, or none that parses, is one error line naming what was expected.
    r = run_cli("calc overlap --copy-ms 64MiB --compute-ms 2");
    CHECK(r.code == 2);
    CHECK(r.err == "hetsim calc: error: --copy-ms expects a time such as 3.5ms, or a number of ms, got '64MiB' (a size)\n");
    r = run_cli("calc stage --cpu-ms 2 --gpu-ms 1 --input-bytes 1 --output-bytes 1 --bandwidth-gbps fast");
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("--bandwidth-gbps expects a bandwidth such as 16GB/s, or a number of GB/s, got 'fast'"));
}

TEST_CASE("calc: CLI seed examples in JSON are an array", "[calc][cli]") {
    SKIP_WITHOUT_CLI();
    const CliRun stage = run_cli("calc stage --format json");
    REQUIRE(stage.code == 0);
    const auto js = nlohmann::json::parse(stage.out);
    REQUIRE(js.is_array());
    REQUIRE(js.size() == 2);
    CHECK(js[0]["results"]["transfer_ms"].get<double>() == 8.1);
    CHECK(js[0]["results"]["shorter"] == "cpu");
    CHECK(js[1]["results"]["shorter"] == "gpu");

    const auto jo = nlohmann::json::parse(run_cli("calc overlap --format=json").out);
    REQUIRE(jo.size() == 3);
    CHECK(jo[0]["results"]["hidden_ms"].get<double>() == 8.0);
    CHECK(jo[1]["results"]["hidden_ms"].get<double>() == 3.0);
    CHECK(jo[2]["results"]["hidden_ms"].get<double>() == 0.0);

    const auto jl = nlohmann::json::parse(run_cli("calc offload --format json").out);
    REQUIRE(jl.is_object());
    CHECK(jl["results"]["transfer_gb_per_step"].get<double>() == 8.0);
    CHECK(jl["results"]["transfer_ms"].get<double>() == 250.0);
    CHECK(jl["results"]["estimated_exposed_ms"].get<double>() == 62.5);

    const auto je = nlohmann::json::parse(run_cli("calc evidence --format json").out);
    REQUIRE(je.size() == 2);
    CHECK(je[0]["results"]["elapsed_saved_ms"].get<double>() == 10.0);
    CHECK(je[1]["results"]["elapsed_saved_ms"].get<double>() == -2.0);
}

TEST_CASE("calc: CLI computes one case from flags", "[calc][cli]") {
    SKIP_WITHOUT_CLI();
    const CliRun r = run_cli("calc offload --state-gb 4 --bandwidth-gbps 32 --round-trips 2 --overlap-ratio 0.5");
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("from flags") && !Contains("seed example"));
    const auto ms = lines_with_key(r.out, "transfer_ms");
    REQUIRE(ms.size() == 1);
    CHECK(ms[0][1] == "500");
    const auto ev = run_cli("calc evidence --serial-ms 30 --elapsed-ms 20 --gpu-active-ms 18 --exposed-sync-ms 1");
    REQUIRE(ev.code == 0);
    CHECK(lines_with_key(ev.out, "speedup").at(0).at(1) == "1.5");
}

TEST_CASE("calc: CLI errors print one line and exit 2", "[calc][cli]") {
    SKIP_WITHOUT_CLI();
    const CliRun neg = run_cli("calc overlap --copy-ms -1 --compute-ms 20");
    CHECK(neg.code == 2);
    CHECK(neg.out.empty());
    CHECK(neg.err == "hetsim calc: error: copy_ms must be a finite non-negative number in ms, got -1\n");

    const CliRun bw = run_cli("calc stage --cpu-ms 2 --gpu-ms 0.4 --input-bytes 1 --output-bytes 1 --bandwidth-gbps 0");
    CHECK(bw.code == 2);
    CHECK(bw.err == "hetsim calc: error: bandwidth_gbps must be a finite positive number in GB/s, got 0\n");

    const std::vector<std::string> bad = {
        "calc frobnicate",
        "calc stage --bogus 1",
        "calc stage --cpu-ms abc --gpu-ms 1 --input-bytes 1 --output-bytes 1 --bandwidth-gbps 1",
        "calc stage --cpu-ms 1",
        "calc offload --state-gb 4 --bandwidth-gbps 32 --round-trips 1.5",
        "calc offload --state-gb 4 --bandwidth-gbps 32 --overlap-ratio 2",
        "calc evidence --serial-ms 30 --elapsed-ms 20 --gpu-active-ms 18 --exposed-sync-ms 8",
        "calc overlap --copy-ms 8 --compute-ms 20 --dependency-ms 9",
        "calc overlap --format xml",
        "calc overlap stray",
        "calc overlap --copy-ms",
    };
    for (const std::string& args : bad) {
        INFO("hetsim " << args);
        const CliRun r = run_cli(args);
        CHECK(r.code == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, Catch::Matchers::StartsWith("hetsim calc: error: "));
        CHECK(r.err.find('\n') == r.err.size() - 1);
    }
    CHECK_THAT(run_cli("calc frobnicate").err, Contains("unknown calculator 'frobnicate'"));
    CHECK_THAT(run_cli("calc stage --bogus 1").err, Contains("--bogus"));
    CHECK_THAT(run_cli("calc stage --cpu-ms abc").err, Contains("--cpu-ms expects a time such as 3.5ms, or a number of ms, got 'abc'"));
    CHECK_THAT(run_cli("calc offload --state-gb 4 --bandwidth-gbps 32 --round-trips 1.5").err,
               Contains("--round-trips expects a non-negative integer"));
}

TEST_CASE("calc: CLI usage and help", "[calc][cli]") {
    SKIP_WITHOUT_CLI();
    const CliRun none = run_cli("calc");
    CHECK(none.code == 2);
    CHECK(none.out.empty());
    CHECK_THAT(none.err, Contains("usage: hetsim calc"));

    const CliRun help = run_cli("calc --help");
    CHECK(help.code == 0);
    CHECK_THAT(help.out, Contains("usage: hetsim calc"));

    for (const char* name : {"stage", "overlap", "offload", "evidence"}) {
        const CliRun h = run_cli(std::string("calc ") + name + " -h");
        INFO(name);
        CHECK(h.code == 0);
        CHECK_THAT(h.out, Contains(std::string("usage: hetsim calc ") + name) && Contains("--format"));
    }
}
