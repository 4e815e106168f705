// `hetsim import` on the hand-made Kineto traces of tests/import/traces (tests/import/make_traces.py
// writes them from the format's documentation): the reader, the workload it becomes (threads,
// steps, streams, events, what the knobs act on), the scenario text (it loads, every knob loads
// and moves the prediction the way it should), `hetsim compare` against the trace, and the CLI.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "core/error.hpp"
#include "frontend/scenario.hpp"
#include "import/emit.hpp"
#include "import/kineto_trace.hpp"
#include "import/measured.hpp"
#include "import/workload.hpp"
#include "sim/engine.hpp"

using namespace hetsim;
using namespace hetsim::import;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

std::string trace_path(const std::string& name) { return "tests/import/traces/" + name; }

Workload workload_of(const std::string& name) { return build_workload(read_kineto_trace(trace_path(name))); }

std::string scenario_of(const std::string& name) {
    EmitOptions eo;
    eo.source = trace_path(name);
    eo.pin_bandwidth = 13'435'010'000;  // h200's host.pageable_h2d_warm_bandwidth
    eo.pin_bandwidth_from = "test";
    return write_scenario(workload_of(name), eo);
}

// End to end of the scenario text with --set values.
double predict_us(const std::string& yaml, std::vector<std::pair<std::string, std::string>> sets = {}) {
    LoadOptions lo;
    lo.sets = std::move(sets);
    Scenario sc = load_scenario_text(yaml, "imported.yaml", lo);
    return static_cast<double>(simulate(sc.program, sc.profile).end_to_end.ps()) / 1e6;
}

size_t count(const Workload& w, WKind k) {
    size_t n = 0;
    for (const WThread& th : w.threads)
        for (const auto& step : th.steps)
            for (const WOp& op : step) n += op.kind == k;
    return n;
}

}  // namespace

TEST_CASE("import: the Kineto reader", "[import]") {
    KinetoTrace t = read_kineto_trace(trace_path("infer_eager.json"));
    CHECK(t.device_name == "NVIDIA H200");
    CHECK(t.device == 0);
    REQUIRE(t.steps.size() == 5);
    CHECK(t.steps.front().number == 3);
    CHECK(t.steps.back().number == 7);
    size_t kernels = 0, copies = 0;
    for (const GpuActivity& g : t.gpu) kernels += g.kind == GpuKind::Kernel, copies += g.kind == GpuKind::Memcpy;
    CHECK(kernels == 100);
    CHECK(copies == 10);
    const GpuActivity* k = nullptr;
    for (const GpuActivity& g : t.gpu)
        if (g.kind == GpuKind::Kernel) k = k ? k : &g;
    REQUIRE(k);
    CHECK(k->grid == 16);
    CHECK(k->block == 128);
    CHECK(k->registers == 64);
    CHECK(k->shared_memory == 4096);
    CHECK(k->stream == 7);
    // Every GPU record is found again by the correlation id of its call.
    for (const GpuActivity& g : t.gpu) CHECK(t.gpu_by_correlation.count(g.correlation) == 1);

    SECTION("a gzip-compressed trace reads the same") {
        KinetoTrace a = read_kineto_trace(trace_path("infer_graph.json"));
        KinetoTrace b = read_kineto_trace(trace_path("infer_graph.json.gz"));
        CHECK(a.events == b.events);
        CHECK(a.gpu.size() == b.gpu.size());
        CHECK(a.calls.size() == b.calls.size());
    }
    SECTION("copies: direction and host memory kind from the record's name") {
        KinetoTrace p = read_kineto_trace(trace_path("train_pageable_sync.json"));
        size_t pageable_up = 0, pageable_down = 0;
        for (const GpuActivity& g : p.gpu)
            if (g.kind == GpuKind::Memcpy) {
                pageable_up += g.dir == CopyDir::H2D && g.host_mem == MemKind::Pageable;
                pageable_down += g.dir == CopyDir::D2H && g.host_mem == MemKind::Pageable;
            }
        CHECK(pageable_up == 6);
        CHECK(pageable_down == 3);
    }
    SECTION("not Kineto: the first problem, at its place") {
        CHECK_THROWS_WITH(parse_kineto_trace("{\"traceEvents\": 3}", "x.json"), Contains("x.json:1:17: error: no \"traceEvents\" array"));
        CHECK_THROWS_WITH(parse_kineto_trace("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1",
                                             "x.json"),
                          Contains("truncated"));
    }
}

TEST_CASE("import: a training loop becomes one step body", "[import]") {
    Workload w = workload_of("train_pageable_sync.json");
    CHECK(w.steps == 3);
    CHECK(w.repeat);
    CHECK(w.profile == "h200");
    // The autograd thread's backward calls are folded into main, in time order.
    REQUIRE(w.threads.size() == 1);
    CHECK(w.threads[0].tids.size() == 2);
    CHECK(w.threads[0].loader_in_thread);
    // 7 kernels a step (forward, backward, SGD) in the body; the last step ends with a device sync.
    size_t kernels = 0, uploads = 0, copy_syncs = 0, readback_syncs = 0, loader = 0;
    for (size_t p = 0; p < w.body_len[0]; ++p) {
        const WOp& op = w.threads[0].steps[0][p];
        kernels += op.kind == WKind::Kernel;
        uploads += op.pageable_upload;
        copy_syncs += op.copy_sync;
        readback_syncs += op.readback && op.kind == WKind::StreamSync;
        loader += op.loader;
    }
    CHECK(kernels == 7);
    CHECK(uploads == 2);
    CHECK(copy_syncs == 2);
    CHECK(readback_syncs == 1);
    CHECK(loader == 1);
    const auto& last = w.threads[0].steps.back();
    REQUIRE(last.size() > w.body_len[0]);
    CHECK(last[w.body_len[0]].kind == WKind::DeviceSync);
    // Host work keeps its measured length: the DataLoader's 1.846 ms a step.
    bool found = false;
    for (const WOp& op : w.threads[0].steps[0])
        if (op.loader) found = op.duration == 1'846'000;
    CHECK(found);
    // Kernels keep their measured duration and shape.
    for (const WOp& op : w.threads[0].steps[0])
        if (op.kind == WKind::Kernel && op.label == "cudnn::conv_bwd_kernel") {
            CHECK(op.duration == 240'000);
            CHECK(op.grid == 128);
            CHECK(op.block == 128);
            CHECK(op.registers == 64);
            CHECK(op.shared_memory == 8192);
        }
    CHECK(w.capturable);
}

TEST_CASE("import: the scenario loads and its knobs act", "[import]") {
    SECTION("pageable uploads: pin_memory, step_sync, steps, gpu, hardware.*") {
        const std::string y = scenario_of("train_pageable_sync.json");
        CHECK_THAT(y, Contains("pin_memory: false"));
        CHECK_THAT(y, Contains("step_sync: true"));
        CHECK_THAT(y, Contains("steps: 3"));
        CHECK_THAT(y, Contains("# Measured (kept from the trace)"));
        CHECK_THAT(y, Contains("# Modelled (hardware profile"));
        const double base = predict_us(y);
        CHECK(base > 8000);
        CHECK(base < 10000);
        // Pinned uploads skip the staging (~0.4 ms of host time a step) but pay the pinning copy.
        const double pinned = predict_us(y, {{"pin_memory", "true"}});
        CHECK(pinned < base);
        // Without loss.item() the host no longer waits for each step's GPU work.
        const double nosync = predict_us(y, {{"step_sync", "false"}});
        CHECK(nosync < base);
        // Twice the steps, about twice the time.
        const double six = predict_us(y, {{"steps", "6"}});
        CHECK(six == Approx(2 * base).epsilon(0.02));
        // A slower link is slower; another profile keeps the kernels' measured durations.
        CHECK(predict_us(y, {{"hardware.copy.h2d.bandwidth", "5GB/s"}}) > base);
        CHECK(predict_us(y, {{"gpu", "h100-sxm"}}) == Approx(base).epsilon(0.05));
    }
    SECTION("eager inference -> CUDA graph") {
        const std::string y = scenario_of("infer_eager.json");
        CHECK_THAT(y, Contains("cuda_graph: false"));
        CHECK_THAT(y, Contains("step_graph:"));
        const double eager = predict_us(y), graph = predict_us(y, {{"cuda_graph", "true"}});
        CHECK(graph < 0.5 * eager);
        // The graph trace itself replays as graph launches of one declared graph.
        const std::string g = scenario_of("infer_graph.json");
        CHECK_THAT(g, Contains("graph_launch: g0"));
        CHECK(predict_us(g) == Approx(graph).epsilon(0.25));
    }
    SECTION("an offloaded optimizer: side streams, events, event syncs") {
        Workload w = workload_of("offload.json");
        CHECK(w.repeat);
        CHECK(w.streams.size() == 3);
        CHECK(count(w, WKind::EventSync) == 9);
        CHECK(count(w, WKind::StreamWait) == 6);
        // Each event sync waits for the record after its layer's gradient copy, in order.
        for (const auto& step : w.threads[0].steps) {
            std::vector<int32_t> synced;
            for (const WOp& op : step)
                if (op.kind == WKind::EventSync) synced.push_back(op.record);
            REQUIRE(synced.size() == 3);
            CHECK(synced[0] < synced[1]);
            CHECK(synced[1] < synced[2]);
        }
        const std::string y = scenario_of("offload.json");
        CHECK_THAT(y, Contains("s13: {kind: non_blocking}"));
        CHECK_THAT(y, Contains("cuda_graph: false"));  // forward and backward, before the copies
        const double t = predict_us(y);
        CHECK(t > 18000);
        CHECK(t < 23000);
    }
    SECTION("steps that differ are written flat") {
        KinetoTrace t = read_kineto_trace(trace_path("train_pageable_sync.json"));
        // Drop the second step's SGD kernel.
        for (size_t i = 0; i < t.gpu.size(); ++i)
            if (t.gpu[i].name.find("multi_tensor_apply") != std::string::npos) {
                t.gpu_by_correlation.erase(t.gpu[i].correlation);
                break;
            }
        Workload w = build_workload(t);
        CHECK_FALSE(w.repeat);
        CHECK_THAT(w.flat_reason, Contains("step 1"));
        EmitOptions eo;
        const std::string y = write_scenario(w, eo);
        CHECK_THAT(y, Contains("(flat)"));
        CHECK_THAT(y, Contains("# step 2 (ProfilerStep#5)"));
        CHECK(predict_us(y) > 8000);
        CHECK(predict_us(y, {{"step_sync", "false"}}) < predict_us(y));
    }
}

TEST_CASE("import: compare against the trace", "[import]") {
    const std::string y = scenario_of("train_pageable_sync.json");
    Scenario sc = load_scenario_text(y, "imported.yaml");
    MeasuredTrace m = read_kineto_measured(trace_path("train_pageable_sync.json"), sc.program);
    CHECK(m.timeline.end_to_end == Time::ns(8'934'179));
    size_t with_host = 0;
    for (const OpRecord& r : m.timeline.ops) with_host += r.has_host();
    CHECK(with_host == m.timeline.ops.size());
    Timeline sim = simulate(sc.program, sc.profile);
    std::vector<StepError> steps = step_errors(m, sim);
    REQUIRE(steps.size() == 3);
    for (const StepError& e : steps) CHECK(std::abs(e.error_pct) < 10);
    // With a knob changed the program is another one: a clear error, not a wrong comparison.
    LoadOptions lo;
    lo.sets = {{"pin_memory", "true"}};
    Scenario other = load_scenario_text(y, "imported.yaml", lo);
    CHECK_THROWS_WITH(read_kineto_measured(trace_path("train_pageable_sync.json"), other.program),
                      Contains("in the scenario but memcpy 'aten::copy_' in the trace"));
}

TEST_CASE("import: the command line", "[import]") {
    const fs::path dir = fs::temp_directory_path() / ("hetsim-import-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string out = (dir / "w.yaml").string();
    auto r = hetsim_test::cli("import tests/import/traces/train_pageable_sync.json -o '" + out + "'");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Contains("3 steps"));
    REQUIRE(fs::exists(out));
    auto run = hetsim_test::cli("run '" + out + "' --set pin_memory=true --set step_sync=false");
    CHECK(run.exit_code == 0);
    auto sw = hetsim_test::cli("sweep '" + out + "' --vary pin_memory=false,true -o '" + (dir / "s.csv").string() + "' -j 1");
    CHECK(sw.exit_code == 0);
    auto cmp = hetsim_test::cli("compare '" + out + "' tests/import/traces/train_pageable_sync.json --format json");
    CHECK(cmp.exit_code == 0);
    nlohmann::json j = nlohmann::json::parse(cmp.out);
    CHECK(j["steps"].size() == 3);
    auto stdout_only = hetsim_test::cli("import tests/import/traces/infer_graph.json.gz");
    CHECK(stdout_only.exit_code == 0);
    CHECK_THAT(stdout_only.out, Contains("graphs:"));
    auto bad_hw = hetsim_test::cli("import tests/import/traces/infer_graph.json --hardware h900");
    CHECK(bad_hw.exit_code == 2);
    fs::remove_all(dir);
}
