// The program JSON codec (core/program_json.*), shared by `hetsim lower` and hetsim-runner: every
// shipped scenario's lowered program reads back to the same program, op by op, and writes back
// to the same JSON. The bad-program catalogue is in test_bad_inputs.cpp.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/program_json.hpp"
#include "frontend/scenario.hpp"
#include "sim/engine.hpp"

namespace fs = std::filesystem;
using namespace hetsim;

namespace {

std::vector<std::string> shipped_scenarios() {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(HETSIM_SOURCE_DIR) / "scenarios"))
        if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(fs::relative(e.path(), HETSIM_SOURCE_DIR).string());
    std::sort(out.begin(), out.end());
    return out;
}

// Everything the engine and the runner read of an op (not its source position, which a lowered
// program replaces by the program file).
void check_same_op(const Program& a, const Op& x, const Program& b, const Op& y) {
    CHECK(x.kind == y.kind);
    CHECK(x.sync == y.sync);
    CHECK(x.to_device == y.to_device);
    CHECK(x.graph_node == y.graph_node);
    CHECK(x.warmup == y.warmup);
    CHECK(x.dir == y.dir);
    CHECK(x.host_mem == y.host_mem);
    CHECK(x.thread == y.thread);
    CHECK(x.stream == y.stream);
    CHECK(x.event == y.event);  // the union: event, buffer or graph
    CHECK(x.duration == y.duration);
    CHECK(x.bytes == y.bytes);  // the union: bytes, or a graph op's exec
    if (x.kind == OpKind::GraphInstantiate || x.kind == OpKind::GraphLaunch) CHECK(x.exec == y.exec);
    CHECK(a.label(x) == b.label(y));
    CHECK(a.site(x).depth == b.site(y).depth);
    CHECK(a.site(x).shape == b.site(y).shape);
    CHECK(a.site(x).flops == b.site(y).flops);
    CHECK(std::vector<uint32_t>(a.uses_begin(x), a.uses_begin(x) + a.uses_count(x)) ==
          std::vector<uint32_t>(b.uses_begin(y), b.uses_begin(y) + b.uses_count(y)));
}

}  // namespace

TEST_CASE("program json: every shipped scenario's lowered program reads back op by op and writes back the same") {
    const std::vector<std::string> files = shipped_scenarios();
    REQUIRE(files.size() >= 60);
    for (const auto& f : files) {
        INFO(f);
        Scenario sc = load_scenario(std::string(HETSIM_SOURCE_DIR "/") + f);
        const Program& p = sc.program;
        const nlohmann::json j = program_to_json(p, sc.name);
        std::string name;
        Program back = program_from_json(j, "lowered.json", &name);
        CHECK(name == sc.name);
        CHECK(back.source == p.source);
        CHECK(back.tasks_form == p.tasks_form);
        CHECK(back.blocking_sync == p.blocking_sync);
        CHECK(back.cold_start == p.cold_start);
        CHECK(back.max_connections == p.max_connections);
        CHECK(back.warmup == p.warmup);
        REQUIRE(back.buffers.size() == p.buffers.size());
        for (size_t i = 0; i < p.buffers.size(); ++i) {
            CHECK(back.buffers[i].name == p.buffers[i].name);
            CHECK(back.buffers[i].kind == p.buffers[i].kind);
            CHECK(back.buffers[i].bytes == p.buffers[i].bytes);
            CHECK(back.buffers[i].managed_on_device == p.buffers[i].managed_on_device);
        }
        REQUIRE(back.streams.size() == p.streams.size());
        for (size_t i = 0; i < p.streams.size(); ++i) {
            CHECK(back.streams[i].name == p.streams[i].name);
            CHECK(back.streams[i].kind == p.streams[i].kind);
            CHECK(back.streams[i].priority == p.streams[i].priority);
            CHECK(back.streams[i].owner_thread == p.streams[i].owner_thread);
        }
        REQUIRE(back.events.size() == p.events.size());
        for (size_t i = 0; i < p.events.size(); ++i) {
            CHECK(back.events[i].name == p.events[i].name);
            CHECK(back.events[i].blocking_sync == p.events[i].blocking_sync);
        }
        REQUIRE(back.threads.size() == p.threads.size());
        for (size_t i = 0; i < p.threads.size(); ++i) {
            CHECK(back.threads[i].name == p.threads[i].name);
            CHECK(back.threads[i].ops == p.threads[i].ops);
            CHECK(back.threads[i].start_after == p.threads[i].start_after);
        }
        REQUIRE(back.queues.size() == p.queues.size());
        for (size_t i = 0; i < p.queues.size(); ++i) {
            CHECK(back.queues[i].name == p.queues[i].name);
            CHECK(back.queues[i].capacity == p.queues[i].capacity);
        }
        REQUIRE(back.flags.size() == p.flags.size());
        for (size_t i = 0; i < p.flags.size(); ++i) CHECK(back.flags[i].name == p.flags[i].name);
        CHECK(back.gpu_tasks == p.gpu_tasks);
        REQUIRE(back.graphs.size() == p.graphs.size());
        for (size_t g = 0; g < p.graphs.size(); ++g) {
            CHECK(back.graphs[g].name == p.graphs[g].name);
            CHECK(back.graphs[g].after_index == p.graphs[g].after_index);
            CHECK(back.graphs[g].after == p.graphs[g].after);
            REQUIRE(back.graphs[g].nodes.size() == p.graphs[g].nodes.size());
            for (size_t k = 0; k < p.graphs[g].nodes.size(); ++k) check_same_op(p, p.graphs[g].nodes[k], back, back.graphs[g].nodes[k]);
        }
        REQUIRE(back.ops.size() == p.ops.size());
        for (uint32_t i = 0; i < p.ops.size(); ++i) {
            INFO("op " << i << " " << p.op_name(i));
            check_same_op(p, p.ops[i], back, back.ops[i]);
            CHECK(back.op_name(i) == p.op_name(i));
            CHECK(back.loop_indices(i) == p.loop_indices(i));
            REQUIRE(back.after_count(i) == p.after_count(i));
            if (p.after_count(i)) CHECK(std::vector<uint32_t>(back.after_begin(i), back.after_end(i)) == std::vector<uint32_t>(p.after_begin(i), p.after_end(i)));
        }
        CHECK(program_to_json(back, name) == j);
    }
}

TEST_CASE("program json: the reader names the file and the JSON path of the problem") {
    Scenario sc = load_scenario(HETSIM_SOURCE_DIR "/scenarios/examples/chunked_pipeline.yaml");
    nlohmann::json j = program_to_json(sc.program, sc.name);
    j["ops"][1]["stream"] = 99;
    CHECK_THROWS_WITH(program_from_json(j, "p.json"),
                      Catch::StartsWith("p.json: error: ops[1].stream of ") && Catch::Contains("names stream 99, but the program has"));
    CHECK_THROWS_WITH(program_from_text("{\"schema\": \"hetsim.program\",\n \"version\": x}", "q.json"),
                      Catch::StartsWith("q.json:2:13: error: not valid JSON: "));
    CHECK_THROWS_WITH(read_program_file("/no/such/program.json"),
                      "/no/such/program.json: error: cannot read the file (No such file or directory); it should be a lowered program "
                      "(hetsim lower SCENARIO.yaml -o program.json)");
}

TEST_CASE("program json: host queues, flags, thread start and join, graph nodes with dependencies") {
    // No scenario reaches these yet (the frontend follows the engine); the codec carries them.
    const std::string text = R"({"schema":"hetsim.program","version":4,"scenario":"host sync","source":"host_sync.yaml",
      "form":"threads","options":{"sync":"spin","cold_start":false,"max_connections":0},"buffers":[],
      "streams":[{"name":"default","kind":"legacy","priority":0},{"name":"s","kind":"blocking","priority":0}],"events":[],
      "queues":[{"name":"batches","capacity":2}],"flags":[{"name":"ready"}],
      "graphs":[{"name":"g","nodes":[
        {"name":"a","kind":"kernel","grid":1,"block":32,"registers":32,"shared_memory":0,"duration_ps":1000000,"after":[]},
        {"name":"b","kind":"kernel","grid":1,"block":32,"registers":32,"shared_memory":0,"duration_ps":1000000,"after":[0]},
        {"name":"c","kind":"host_func","duration_ps":1000000,"after":[0]}]}],
      "threads":[{"name":"main","ops":[0,1,2,3,4,5,6,7,8,9]},{"name":"loader","ops":[10],"start_after":0}],
      "gpu_tasks":[],"ops":[
        {"index":0,"name":"spawn","kind":"host","thread":0,"duration_ps":1000000},
        {"index":1,"name":"get:batches","kind":"get","thread":0,"queue":0},
        {"index":2,"name":"cb","kind":"host_func","thread":0,"stream":1,"duration_ps":2000000,"flag":0},
        {"index":3,"name":"host_wait:ready","kind":"host_wait","thread":0,"flag":0},
        {"index":4,"name":"graph_instantiate:g","kind":"graph_instantiate","thread":0,"graph":0},
        {"index":5,"name":"graph_launch:g","kind":"graph_launch","thread":0,"stream":1,"graph":0,"exec":0},
        {"index":6,"name":"a","kind":"kernel","thread":0,"stream":1,"graph_node":true,"grid":1,"block":32,"registers":32,
         "shared_memory":0,"duration_ps":1000000},
        {"index":7,"name":"b","kind":"kernel","thread":0,"stream":1,"graph_node":true,"grid":1,"block":32,"registers":32,
         "shared_memory":0,"duration_ps":1000000},
        {"index":8,"name":"c","kind":"host_func","thread":0,"stream":1,"graph_node":true,"duration_ps":1000000},
        {"index":9,"name":"join:loader","kind":"join","thread":0,"target":1},
        {"index":10,"name":"put:batches","kind":"put","thread":1,"queue":0}]})";
    std::string name;
    Program p = program_from_text(text, "host_sync.json", &name);
    REQUIRE(p.queues.size() == 1);
    CHECK(p.queues[0].capacity == 2);
    REQUIRE(p.flags.size() == 1);
    CHECK(p.flags[0].name == "ready");
    CHECK(p.threads[0].start_after == kNone);
    CHECK(p.threads[1].start_after == 0);
    CHECK(p.ops[1].queue == 0);
    CHECK(p.ops[2].flag == 0);
    CHECK(p.ops[3].flag == 0);
    CHECK(p.ops[9].target == 1);
    CHECK(p.ops[10].queue == 0);
    REQUIRE(!p.graphs[0].chain());
    CHECK(p.graphs[0].after_index == std::vector<uint32_t>{0, 0, 1, 2});
    CHECK(p.graphs[0].after == std::vector<uint32_t>{0, 0});
    CHECK(program_to_json(p, name) == nlohmann::json::parse(text));
    // The engine runs it: the put lets the get through, the callback sets the flag, the join
    // waits for the loader.
    Scenario sc = load_scenario(HETSIM_SOURCE_DIR "/scenarios/seeds/double_buffer.yaml");
    Timeline t = simulate(p, sc.profile);
    CHECK(t.end_to_end > Time{});
    for (const OpRecord& r : t.ops) CHECK(r.has_host());
}

TEST_CASE("program json: each launch carries its executable graph, version 3 files get it by the rule") {
    // Two threads each instantiate g and launch their own executable. A program may also name
    // any other executable of the launch's graph (the frontend writes the one its rule gives).
    const std::string yaml = R"(streams: {s: {count: 3}}
graphs:
  g:
    - kernel: a
      duration: 10us
threads:
  w:
    count: 2
    var: k
    ops:
      - graph_instantiate: g
      - graph_launch: g
        stream: s[k]
)";
    Scenario sc = load_scenario_text(yaml, "execs.yaml");
    const Program& p = sc.program;
    REQUIRE(p.execs.size() == 2);
    nlohmann::json j = program_to_json(p, sc.name);
    CHECK(j["version"] == 4);
    std::vector<uint64_t> launched;
    for (const auto& o : j["ops"]) {
        if (o["kind"] == "graph_launch") launched.push_back(o["exec"].get<uint64_t>());
        if (o["kind"] == "graph_instantiate") CHECK_FALSE(o.contains("exec"));  // the k-th instantiation makes executable k
    }
    CHECK(launched == std::vector<uint64_t>{0, 1});
    Program back = program_from_json(j, "execs.json");
    CHECK(back.execs == p.execs);
    REQUIRE(back.ops.size() == p.ops.size());
    for (size_t i = 0; i < p.ops.size(); ++i) check_same_op(p, p.ops[i], back, back.ops[i]);
    CHECK(program_to_json(back, sc.name) == j);
    // A launch may name the other executable of its graph: it reads back as written.
    uint32_t second_launch = 0;
    for (uint32_t i = 0; i < p.ops.size(); ++i)
        if (p.ops[i].kind == OpKind::GraphLaunch) second_launch = i;
    j["ops"][second_launch]["exec"] = 0;
    Program shared = program_from_json(j, "execs.json");
    CHECK(shared.ops[second_launch].exec == 0);
    CHECK(program_to_json(shared, sc.name)["ops"][second_launch]["exec"] == 0);
    // Out of range, or missing in version 4: errors at the op.
    j["ops"][second_launch]["exec"] = 2;
    CHECK_THROWS_WITH(program_from_json(j, "execs.json"),
                      Catch::Contains("].exec of graph_launch 'graph_launch:g': is 2, but the program has 2 executable graphs (one per graph_instantiate op)"));
    j["ops"][second_launch].erase("exec");
    CHECK_THROWS_WITH(program_from_json(j, "execs.json"), Catch::Contains("missing key \"exec\""));
    // Version 3 (no exec): each launch gets the executable of its own thread's instantiation.
    j["version"] = 3;
    for (auto& o : j["ops"]) o.erase("exec");
    Program v3 = program_from_json(j, "execs_v3.json");
    for (size_t i = 0; i < p.ops.size(); ++i) check_same_op(p, p.ops[i], v3, v3.ops[i]);
    CHECK(program_to_json(v3, sc.name) == program_to_json(p, sc.name));
}

TEST_CASE("program json: steady-state iterations (warm-up ops and barriers)") {
    const std::string text = R"({"schema":"hetsim.program","version":4,"scenario":"steady","source":"steady.yaml","form":"threads",
      "options":{"sync":"spin","cold_start":false,"max_connections":0},"warmup":1,"buffers":[],
      "streams":[{"name":"default","kind":"legacy","priority":0}],"events":[],"queues":[],"flags":[],"graphs":[],
      "threads":[{"name":"main","ops":[0,1,2]},{"name":"io","ops":[3,4,5]}],"gpu_tasks":[],"ops":[
        {"index":0,"name":"step[0]","label":"step","loop":[0],"kind":"host","thread":0,"duration_ps":3000000,"warmup":true},
        {"index":1,"name":"barrier","kind":"barrier","thread":0,"warmup":true},
        {"index":2,"name":"step[1]","label":"step","loop":[1],"kind":"host","thread":0,"duration_ps":3000000},
        {"index":3,"name":"read[0]","label":"read","loop":[0],"kind":"host","thread":1,"duration_ps":5000000,"warmup":true},
        {"index":4,"name":"barrier","kind":"barrier","thread":1,"warmup":true},
        {"index":5,"name":"read[1]","label":"read","loop":[1],"kind":"host","thread":1,"duration_ps":5000000}]})";
    std::string name;
    Program p = program_from_text(text, "steady.json", &name);
    CHECK(p.warmup == 1);
    CHECK(p.ops[0].warmup);
    CHECK(p.ops[4].warmup);
    CHECK_FALSE(p.ops[5].warmup);
    CHECK(p.ops[1].kind == OpKind::Barrier);
    CHECK(program_to_json(p, name) == nlohmann::json::parse(text));
    Scenario sc = load_scenario(HETSIM_SOURCE_DIR "/scenarios/seeds/double_buffer.yaml");
    Timeline t = simulate(p, sc.profile);
    CHECK(t.measured_from >= Time::us(5));  // the measured iteration starts once both threads met
}

