// The CLI end to end: graph, lower, determinism of every output, usage errors.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli_util.hpp"
#include "frontend/scenario.hpp"
#include "models/profile.hpp"
#include "report/json_report.hpp"
#include "core/program_json.hpp"
#include "sim/engine.hpp"

using namespace hetsim_test;
namespace fs = std::filesystem;

TEST_CASE("cli: graph prints the dependency edges as DOT") {
    Cli r = cli("graph scenarios/examples/legacy_default_stream.yaml");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.rfind("digraph hetsim {", 0) == 0);
    // ops: 0 slow (blocking), 1 free_kernel (non_blocking), 2 sneaky (legacy), 3 device_sync
    CHECK(r.out.find("op0 -> op1 [color=black, label=\"program order\"]") != std::string::npos);
    CHECK(r.out.find("op0 -> op2 [color=orange, style=dashed, label=\"legacy default stream\"]") != std::string::npos);
    CHECK(r.out.find("op1 -> op2 [color=orange") == std::string::npos);  // non-blocking: exempt
    CHECK(r.out.find("op2 -> op3 [color=red, style=dashed, label=\"host sync\"]") != std::string::npos);
    CHECK(r.out.find("op1 -> op3 [color=red") != std::string::npos);
}

TEST_CASE("cli: graph joins the host threads' hand-offs") {
    // A loader thread started by the trainer's spawn feeds it through a queue; a callback's flag
    // wakes the trainer; the trainer joins the loader at the end.
    const fs::path f = fs::temp_directory_path() / ("hetsim-graph-handoff-" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(f) << "queues: {batches: {capacity: 1}}\n"
                        "flags: [done]\n"
                        "streams: [s]\n"
                        "threads:\n"
                        "  main:\n"
                        "    - {host: spawn, duration: 10us}\n"  // op0
                        "    - repeat: 2\n"
                        "      do:\n"
                        "        - get: batches\n"                                      // op1, op4
                        "        - {host_func: notify, stream: s, duration: 5us, sets: done}\n"  // op2, op5
                        "        - host_wait: done\n"                                   // op3, op6
                        "    - join: loader\n"                                          // op7
                        "  loader:\n"
                        "    start_after: spawn\n"
                        "    ops:\n"
                        "      - repeat: 2\n"
                        "        do:\n"
                        "          - {host: load, duration: 2ms}\n"  // op8, op10
                        "          - put: batches\n";               // op9, op11
    Cli r = cli("graph '" + f.string() + "'");
    REQUIRE(r.exit_code == 0);
    INFO(r.out);
    // Each put feeds the get of the same turn (FIFO), never the other.
    CHECK(r.out.find("op9 -> op1 [color=brown, style=dotted, penwidth=2, label=\"host queue\"]") != std::string::npos);
    CHECK(r.out.find("op11 -> op4 [color=brown, style=dotted, penwidth=2, label=\"host queue\"]") != std::string::npos);
    CHECK(r.out.find("op9 -> op4 ") == std::string::npos);
    CHECK(r.out.find("op11 -> op1 ") == std::string::npos);
    // The callback's set -> the host_wait that takes it.
    CHECK(r.out.find("op2 -> op3 [color=darkcyan, style=dotted, penwidth=2, label=\"flag\"]") != std::string::npos);
    CHECK(r.out.find("op5 -> op6 [color=darkcyan, style=dotted, penwidth=2, label=\"flag\"]") != std::string::npos);
    // start_after: spawn -> the loader's first op; join: the loader's last op -> the join.
    CHECK(r.out.find("op0 -> op8 [color=gray40, style=dotted, penwidth=2, label=\"host thread\"]") != std::string::npos);
    CHECK(r.out.find("op11 -> op7 [color=gray40, style=dotted, penwidth=2, label=\"host thread\"]") != std::string::npos);
    fs::remove(f);
}

TEST_CASE("cli: graph pipes into Graphviz's dot (installed by the launcher)") {
    INFO("Graphviz's dot is missing: ./hetsim installs the Debian package graphviz with its other packages");
    REQUIRE(std::system("command -v dot >/dev/null 2>&1") == 0);
    Cli r = cli("graph scenarios/seeds/double_buffer.yaml | dot -Tsvg");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("<svg") != std::string::npos);
    CHECK(r.out.find("upload[0]") != std::string::npos);
}

TEST_CASE("cli: lower writes a program that simulates to the same timeline") {
    fs::path tmp = fs::temp_directory_path() / "hetsim-lower-test.json";
    for (const char* file : {"scenarios/seeds/double_buffer.yaml", "scenarios/examples/cuda_graph.yaml",
                             "scenarios/examples/cold_start.yaml", "scenarios/examples/host_callbacks.yaml",
                             "scenarios/examples/allocations.yaml", "scenarios/examples/hardware_queues.yaml",
                             "scenarios/examples/blocking_sync.yaml", "scenarios/examples/unified_memory_blocks.yaml"}) {
        INFO(file);
        Cli r = cli(std::string("lower ") + file + " -o '" + tmp.string() + "'");
        REQUIRE(r.exit_code == 0);
        auto j = nlohmann::json::parse(slurp(tmp));
        CHECK(j["schema"] == "hetsim.program");
        CHECK(j["version"] == 4);
        hetsim::Program back = hetsim::program_from_json(j, tmp.string());
        hetsim::Scenario sc = hetsim::load_scenario(std::string(HETSIM_SOURCE_DIR "/") + file);
        REQUIRE(back.ops.size() == sc.program.ops.size());
        hetsim::Timeline a = hetsim::simulate(sc.program, sc.profile), b = hetsim::simulate(back, sc.profile);
        CHECK(a.end_to_end == b.end_to_end);
        for (size_t i = 0; i < a.ops.size(); ++i) {
            CHECK(a.ops[i].gpu_end == b.ops[i].gpu_end);
            CHECK(a.ops[i].host_end == b.ops[i].host_end);
            CHECK(sc.program.op_name(static_cast<uint32_t>(i)) == back.op_name(static_cast<uint32_t>(i)));
        }
        j["version"] = 99;
        CHECK_THROWS_WITH(hetsim::program_from_json(j, "p.json"),
                          Catch::Contains("schema version 99; this hetsim reads versions 3 to 4"));
    }
    fs::remove(tmp);
}

TEST_CASE("cli: every output is byte-identical across runs") {
    fs::path dir = fs::temp_directory_path() / "hetsim-determinism";
    fs::create_directories(dir);
    std::string outs[2][3];
    for (int k = 0; k < 2; ++k) {
        std::string base = (dir / std::to_string(k)).string();
        Cli r = cli("run scenarios/examples/chunked_pipeline.yaml --format json --trace '" + base + ".trace' --csv '" + base +
                    ".csv'");
        REQUIRE(r.exit_code == 0);
        outs[k][0] = r.out;
        outs[k][1] = slurp(base + ".trace");
        outs[k][2] = slurp(base + ".csv");
    }
    for (int f = 0; f < 3; ++f) {
        CHECK(!outs[0][f].empty());
        CHECK(outs[0][f] == outs[1][f]);
    }
    auto trace = nlohmann::json::parse(outs[0][1]);
    CHECK(trace["traceEvents"].size() > 100);
    fs::remove_all(dir);
}

TEST_CASE("cli: usage errors exit 2 with one line") {
    Cli r = cli("run no/such/file.yaml");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "no/such/file.yaml: error: no such file\n");
    r = cli("frobnicate");
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("hetsim: error: unknown command 'frobnicate'\n", 0) == 0);
    r = cli("run scenarios/examples/chunked_pipeline.yaml --time-limit 1ms");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("simulated time passed the limit") != std::string::npos);
    r = cli("--help");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("run FILE") != std::string::npos);
    CHECK(r.out.find("\n  sweep-merge ") != std::string::npos);
}

TEST_CASE("cli: a mistyped command or long option is told the one meant") {
    Cli r = cli("runn scenarios/examples/chunked_pipeline.yaml");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "hetsim: error: unknown command 'runn'; did you mean 'run'?\n");
    r = cli("sweep-merg a.csv");
    CHECK(r.err == "hetsim: error: unknown command 'sweep-merg'; did you mean 'sweep-merge'?\n");
    r = cli("run scenarios/examples/chunked_pipeline.yaml --no-sugest");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "hetsim: error: unrecognised option '--no-sugest'; did you mean '--no-suggest'? (usage: hetsim run FILE "
                   "[options]; --help lists the options)\n");
    r = cli("sweep scenarios/sweeps/overlap_chunks.yaml --vary chunk=1MiB --plott p.svg");
    CHECK(r.err == "hetsim: error: unrecognised option '--plott'; did you mean '--plot'?\n");
    // Nothing near: the parser's message alone.
    r = cli("run scenarios/examples/chunked_pipeline.yaml --frobnicate");
    CHECK(r.err.find("unrecognised option '--frobnicate' (") != std::string::npos);
}

TEST_CASE("cli: a failed run leaves an existing output file untouched") {
    fs::path f = fs::temp_directory_path() / "hetsim-keep.csv";
    { std::ofstream(f) << "keep me\n"; }
    Cli r = cli("run tests/bad/03_unknown_key.yaml --csv '" + f.string() + "'");
    CHECK(r.exit_code == 2);
    CHECK(slurp(f) == "keep me\n");
    fs::remove(f);
}

TEST_CASE("cli: option errors are one line") {
    Cli r = cli("run scenarios/examples/chunked_pipeline.yaml --max-ops abc");
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err == "--max-ops: error: expected a whole number from 1 to 1099511627776, got 'abc'\n");
    r = cli("run scenarios/examples/chunked_pipeline.yaml --bogus");
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    r = cli("run");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "hetsim: error: no scenario file given (usage: hetsim run FILE [options])\n");
}

TEST_CASE("cli: params lists every parameter with its kind, default or 'required', range and description") {
    Cli r = cli("params");
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    for (const char* line : {
             "  gpu.hw_queues                    count      default 8     1 <= x <= 32 (CUDA_DEVICE_MAX_CONNECTIONS takes 1 "
             "to 32; CUDA's default is 8)\n      hardware queues streams map onto (CUDA_DEVICE_MAX_CONNECTIONS)\n",
             "  copy.h2d.bandwidth               bandwidth  required      0 < x <= 100TB/s (",
             "  um.prefetch_host_block           number     default 0     0 <= x <= 1 (",
             "  rules.duplex                     on/off     default on    on or off\n",
             "  host.launch_cost                 time       required      0 <= x <= 10ms (",
             "      host time of cudaLaunchKernel [latency]\n"}) {
        INFO(line);
        CHECK(r.out.find(line) != std::string::npos);
    }
    for (const auto& d : hetsim::param_decls()) CHECK(r.out.find(std::string("\n  ") + d.key + " ") != std::string::npos);
}

TEST_CASE("cli: params PROFILE prints each value and where it comes from") {
    Cli r = cli("params h100-pcie");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.rfind("profile h100-pcie (hw/profiles/h100-pcie.yaml), base h200 (hw/profiles/h200.yaml)\n", 0) == 0);
    CHECK(r.out.find("\n  sm.count                         114                  this file\n") != std::string::npos);
    CHECK(r.out.find("\n  sm.max_threads                   2048                 base h200\n") != std::string::npos);
    CHECK(r.out.find("\n  hbm.bandwidth                    2TB/s                this file\n") != std::string::npos);
    CHECK(r.out.find("\n  rules.duplex                     on                   base h200\n") != std::string::npos);
    // A path, with a chain of bases and a default.
    fs::path dir = fs::temp_directory_path() / ("hetsim-params-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    {
        std::ofstream(dir / "mine.yaml") << "name: mine\nbase: h100-pcie\nparams:\n  sm.count: 100\n";
    }
    r = cli("params '" + (dir / "mine.yaml").string() + "'");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find(", base h100-pcie (hw/profiles/h100-pcie.yaml), its base h200 (hw/profiles/h200.yaml)\n") != std::string::npos);
    CHECK(r.out.find("\n  sm.count                         100                  this file\n") != std::string::npos);
    CHECK(r.out.find("\n  hbm.bandwidth                    2TB/s                base h100-pcie\n") != std::string::npos);
    CHECK(r.out.find("\n  sm.max_threads                   2048                 base h200\n") != std::string::npos);
    fs::remove_all(dir);
    // Errors.
    r = cli("params h300");
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("h300: error: unknown hardware profile 'h300'; did you mean 'h200'?", 0) == 0);
    r = cli("params h200 h100-sxm");
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("hetsim: error: 'params' takes at most one profile", 0) == 0);
}

TEST_CASE("cli: the streaming-kernels example gives the times its header states, with each rule on and off") {
    // scenarios/examples/streaming_beside_copies.yaml's header quotes these end-to-end times.
    const std::string f = "run scenarios/examples/streaming_beside_copies.yaml";
    for (const auto& [set, want] : std::vector<std::pair<std::string, std::string>>{
             {"", "end-to-end: 5.701 ms"},
             {" --set hardware.rules.copy_hbm=off", "end-to-end: 5.502 ms"},
             {" --set hardware.rules.beside_streaming=off", "end-to-end: 5.780 ms"}}) {
        INFO(set);
        Cli r = cli(f + set);
        REQUIRE(r.exit_code == 0);
        CHECK(r.out.find(want) != std::string::npos);
    }
}
