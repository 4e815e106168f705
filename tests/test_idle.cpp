// Why the GPU idles (report/idle.hpp): a timeline derived by hand, the exact sums on every shipped
// scenario, and the acceptance scenarios of issue 13 (loader-bound, copy-bound, launch-bound).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "frontend/scenario.hpp"
#include "report/analysis.hpp"
#include "report/idle.hpp"
#include "sim/engine.hpp"

using namespace hetsim;
namespace fs = std::filesystem;

namespace {

Time us(int64_t v) { return Time::us(v); }

int64_t cause_ps(const report::IdleLane& l, const std::string& cause, const std::string& what) {
    int64_t ps = 0;
    for (const report::IdleCause& c : l.causes)
        if (c.cause == cause && c.what == what) ps += c.time.ps();
    return ps;
}

// Every lane's causes sum to its idle time, in ps and in the integer ns reported; the GPU lane's
// idle time is elapsed minus the GPU active union, an engine's elapsed minus its busy time.
void check_sums(const report::Analysis& a) {
    REQUIRE(!a.idle.lanes.empty());
    CHECK(a.idle.lanes[0].name == "gpu");
    for (const report::IdleLane& l : a.idle.lanes) {
        INFO("lane " << l.name);
        int64_t ps = 0, ns = 0;
        for (const report::IdleCause& c : l.causes) {
            CHECK(c.time > Time{});
            CHECK(c.ns >= 0);
            ps += c.time.ps();
            ns += c.ns;
        }
        CHECK(ps == l.idle.ps());
        CHECK(ns == l.idle_ns);
        CHECK(l.idle_ns == (l.idle.ps() + 500) / 1000);
        for (size_t k = 1; k < l.causes.size(); ++k) CHECK(l.causes[k - 1].time >= l.causes[k].time);
        if (l.name == "gpu") {
            CHECK(l.idle == a.end_to_end - a.metrics.gpu_active_union);
        } else {
            const auto r = std::find_if(a.resources.begin(), a.resources.end(), [&](const report::Resource& x) { return x.name == l.name; });
            REQUIRE(r != a.resources.end());
            CHECK(l.idle == a.end_to_end - r->busy);
        }
    }
}

report::Analysis run_file(const std::string& rel) {
    const Scenario sc = load_scenario((fs::path(HETSIM_SOURCE_DIR) / rel).string());
    const Timeline t = simulate(sc.program, sc.profile);
    return report::analyze(sc.program, t);
}

}  // namespace

TEST_CASE("idle: a timeline derived by hand") {
    // The ops come from a scenario; their timeline is written here (times in us):
    //   0 load   host [0, 3000)                      no cause (first op)
    //   1 k      host [3000, 3005) call; gpu [3010, 4010) on the SMs, released by its call (Submit)
    //   2 sync   host [3005, 4020): waits for k's end (4010) and wakes 10 us later (Sync)
    //   3 post   host [4020, 5020)
    //   4 k2     host [5020, 5025) call; gpu [5030, 5530) (Submit)
    //   5 sync2  host [5025, 5540) (Sync on k2)
    // GPU idle: [0, 3010) + [4010, 5030) + [5530, 5540) = 4040 us. Walking back from k's start:
    // [3005, 3010) launch latency, [3000, 3005) the launch call, [0, 3000) load. From k2's start:
    // [5025, 5030) latency, [5020, 5025) the call, [4020, 5020) post, [4010, 4020) the sync's
    // wake-up (the gap began at k's end, 4010). After k2: [5530, 5540) nothing left to do.
    const Scenario sc = load_scenario_text(R"(
hardware: h200
streams: [s]
threads:
  main:
    - host: load
      duration: 3ms
    - kernel: k
      stream: s
      duration: 1ms
    - stream_sync: s
    - host: post
      duration: 1ms
    - kernel: k2
      stream: s
      duration: 500us
    - stream_sync: s
)", "hand.yaml");
    const Program& p = sc.program;
    REQUIRE(p.ops.size() == 6);
    Timeline t;
    t.ops.resize(6);
    auto host = [&](int i, int64_t s, int64_t e, Cause c) {
        t.ops[i].host_start = us(s);
        t.ops[i].host_end = us(e);
        t.ops[i].host_cause = c;
    };
    auto gpu = [&](int i, int64_t s, int64_t e) {
        t.ops[i].gpu_start = us(s);
        t.ops[i].gpu_end = us(e);
        t.ops[i].gpu_cause = Cause{i, Phase::Host, CauseKind::Submit};
        t.ops[i].engine = Engine::Compute;
    };
    host(0, 0, 3000, Cause{});
    host(1, 3000, 3005, Cause{0, Phase::Host, CauseKind::ProgramOrder});
    gpu(1, 3010, 4010);
    host(2, 3005, 4020, Cause{1, Phase::Gpu, CauseKind::Sync});
    t.ops[2].sync_wait = us(1014);
    host(3, 4020, 5020, Cause{2, Phase::Host, CauseKind::ProgramOrder});
    host(4, 5020, 5025, Cause{3, Phase::Host, CauseKind::ProgramOrder});
    gpu(4, 5030, 5530);
    host(5, 5025, 5540, Cause{4, Phase::Gpu, CauseKind::Sync});
    t.ops[5].sync_wait = us(504);
    t.end_to_end = us(5540);

    const report::Analysis a = report::analyze(p, t);
    check_sums(a);
    REQUIRE(a.idle.lanes.size() == 2);  // the GPU and the SMs: the same gaps here
    for (const report::IdleLane& l : a.idle.lanes) {
        INFO(l.name);
        CHECK(l.idle == us(4040));
        CHECK(l.idle_ns == 4040000);
        CHECK(cause_ps(l, "host_work", "load on host:main") == us(3000).ps());
        CHECK(cause_ps(l, "host_work", "post on host:main") == us(1000).ps());
        CHECK(cause_ps(l, "launch_overhead", "cudaLaunchKernel calls on host:main") == us(10).ps());
        CHECK(cause_ps(l, "launch_overhead", "launch latency (call to GPU start)") == us(10).ps());
        CHECK(cause_ps(l, "sync_wakeup", "cudaStreamSynchronize returning on host:main") == us(10).ps());
        CHECK(cause_ps(l, "nothing_left", "after its last work, while " + p.op_name(5) + " ran") == us(10).ps());
        CHECK(l.causes.size() == 6);
        CHECK(l.causes[0].what == "load on host:main");
        CHECK(report::idle_cause_text(l.causes[0]) == "host work: load on host:main");
    }
}

TEST_CASE("idle: integer nanoseconds sum to the idle time when the causes have fractions") {
    // Causes of 1.4 ns, 1.4 ns and 1.4 ns (4.2 ns idle, 4 ns reported): the floors give 3 ns and
    // the one left goes to the largest remainder (all equal: the first in order).
    const Scenario sc = load_scenario_text(R"(
hardware: h200
streams: [s]
threads:
  main:
    - host: a
      duration: 1400ps
    - kernel: k
      stream: s
      duration: 1ns
)", "frac.yaml");
    Timeline t;
    t.ops.resize(2);
    t.ops[0].host_start = Time::ps(0);
    t.ops[0].host_end = Time::ps(1400);
    t.ops[1].host_start = Time::ps(1400);
    t.ops[1].host_end = Time::ps(2800);
    t.ops[1].host_cause = Cause{0, Phase::Host, CauseKind::ProgramOrder};
    t.ops[1].gpu_start = Time::ps(4200);
    t.ops[1].gpu_end = Time::ps(5000);
    t.ops[1].gpu_cause = Cause{1, Phase::Host, CauseKind::Submit};
    t.ops[1].engine = Engine::Compute;
    t.end_to_end = Time::ps(5000);
    const report::Analysis a = report::analyze(sc.program, t);
    check_sums(a);
    const report::IdleLane& g = a.idle.lanes[0];
    CHECK(g.idle == Time::ps(4200));
    CHECK(g.idle_ns == 4);
    REQUIRE(g.causes.size() == 3);
    int64_t twos = 0;
    for (const report::IdleCause& c : g.causes) twos += c.ns == 2;
    CHECK(twos == 1);
}

TEST_CASE("idle: the causes sum exactly to the idle time on every seed and example scenario") {
    std::vector<fs::path> files;
    for (const char* dir : {"scenarios/seeds", "scenarios/examples"})
        for (const auto& e : fs::directory_iterator(fs::path(HETSIM_SOURCE_DIR) / dir))
            if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 30);
    for (const fs::path& f : files) {
        INFO(f.string());
        const Scenario sc = load_scenario(f.string());
        const Timeline t = simulate(sc.program, sc.profile);
        const report::Analysis a = report::analyze(sc.program, t);
        check_sums(a);
        // No stretch of a gap goes unexplained where the engine recorded a cause.
        for (const report::IdleLane& l : a.idle.lanes)
            for (const report::IdleCause& c : l.causes) CHECK(c.cause != "other");
    }
}

TEST_CASE("idle: a loader-bound loop idles for the loader's host work") {
    const report::Analysis a = run_file("scenarios/examples/loader_bound_loop.yaml");
    check_sums(a);
    for (const char* lane : {"gpu", "sm"}) {
        INFO(lane);
        const report::IdleLane* l = a.idle.lane(lane);
        REQUIRE(l);
        REQUIRE(!l->causes.empty());
        CHECK(l->causes[0].cause == "host_work");
        CHECK(l->causes[0].what == "load_batch on host:main");
        // 20 loads of 3.5 ms, each one wholly in a gap of the GPU.
        CHECK(l->causes[0].time == Time::us(70000));
    }
    // The pageable staging of the upload is the SMs' next cause.
    const report::IdleLane* sm = a.idle.lane("sm");
    CHECK(sm->causes[1].cause == "copy");
    CHECK(sm->causes[1].what.find("H2D pageable staging of upload on host:main") != std::string::npos);
}

TEST_CASE("idle: a copy-bound pipeline idles the SMs for the H2D copy engine") {
    const report::Analysis a = run_file("scenarios/examples/copy_bound_pipeline.yaml");
    check_sums(a);
    const report::IdleLane* sm = a.idle.lane("sm");
    REQUIRE(sm);
    REQUIRE(!sm->causes.empty());
    CHECK(sm->causes[0].cause == "copy");
    CHECK(sm->causes[0].what == "H2D copy upload (pinned) on copy:h2d");
    CHECK(sm->causes[0].time.ps() * 2 > sm->idle.ps());  // most of it
}

TEST_CASE("idle: a launch-bound decode loop idles for launch overhead") {
    const report::Analysis a = run_file("scenarios/examples/launch_bound_decode.yaml");
    check_sums(a);
    const report::IdleLane* g = a.idle.lane("gpu");
    REQUIRE(g);
    REQUIRE(!g->causes.empty());
    CHECK(g->causes[0].cause == "launch_overhead");
    int64_t launch = 0;
    for (const report::IdleCause& c : g->causes)
        if (c.cause == "launch_overhead") launch += c.time.ps();
    CHECK(launch * 2 > g->idle.ps());  // launch overhead is most of the idle time
}
