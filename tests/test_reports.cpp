// Tests of report/: analysis (busy, hidden, evidence, critical path), summary text, JSON,
// CSV, Chrome trace and atomic output files, on hand-built programs and timelines.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "report/analysis.hpp"
#include "report/chrome_trace.hpp"
#include "report/csv_report.hpp"
#include "report/json_report.hpp"
#include "report/output_file.hpp"
#include "report/summary.hpp"
#include "report/svg_timeline.hpp"
#include "core/error.hpp"
#include "cli_util.hpp"

using namespace hetsim;
using namespace hetsim::report;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

Cause by(int32_t op, Phase ph, CauseKind k) { return Cause{op, ph, k}; }
const Cause kStart{};

struct Built {
    Program p;
    Timeline t;
    uint32_t add(OpKind k, int32_t thread, int32_t stream, const std::string& name, uint64_t bytes = 0) {
        Op op;
        op.kind = k;
        op.thread = static_cast<int16_t>(thread);
        op.stream = stream;
        op.bytes = bytes;
        Site site;
        site.label = static_cast<uint32_t>(p.names.size());
        p.names.push_back(name);
        op.site = static_cast<uint32_t>(p.sites.size());
        p.sites.push_back(site);
        auto i = static_cast<uint32_t>(p.ops.size());
        p.ops.push_back(op);
        if (thread >= 0) p.threads[static_cast<size_t>(thread)].ops.push_back(i);
        t.ops.emplace_back();
        return i;
    }
    void host(uint32_t i, Time s, Time e, Cause c, Time wait = {}) {
        t.ops[i].host_start = s, t.ops[i].host_end = e, t.ops[i].host_cause = c, t.ops[i].sync_wait = wait;
    }
    void gpu(uint32_t i, Time s, Time e, Cause c, Engine eng) {
        t.ops[i].gpu_start = s, t.ops[i].gpu_end = e, t.ops[i].gpu_cause = c, t.ops[i].engine = eng;
    }
};

// Host work 0-2 ms; H2D copy (call 2.000-2.002, copy 2.002-6.002); kernel (call 2.002-2.004,
// GPU 6.002-16.002); stream sync 2.004-16.002 waiting 13.998 ms.
Built copy_then_kernel() {
    Built b;
    b.p.source = "scenarios/examples/copy_kernel.yaml";
    b.p.streams = {{"default", StreamKind::Legacy, 0, -1}, {"s", StreamKind::NonBlocking, 0, -1}};
    b.p.threads = {{"main", {}}};
    uint32_t prep = b.add(OpKind::HostWork, 0, kNone, "prep");
    uint32_t copy = b.add(OpKind::Memcpy, 0, 1, "copy_in", 64000000);
    uint32_t kern = b.add(OpKind::Kernel, 0, 1, "kern");
    uint32_t sync = b.add(OpKind::StreamSync, 0, 1, "sync");
    b.host(prep, Time{}, Time::ms(2), kStart);
    b.host(copy, Time::ms(2), Time::us(2002), by(0, Phase::Host, CauseKind::ProgramOrder));
    b.gpu(copy, Time::us(2002), Time::us(6002), by(1, Phase::Host, CauseKind::Submit), Engine::H2D);
    b.host(kern, Time::us(2002), Time::us(2004), by(1, Phase::Host, CauseKind::ProgramOrder));
    b.gpu(kern, Time::us(6002), Time::us(16002), by(1, Phase::Gpu, CauseKind::StreamOrder), Engine::Compute);
    b.host(sync, Time::us(2004), Time::us(16002), by(2, Phase::Host, CauseKind::ProgramOrder), Time::us(13998));
    b.t.end_to_end = Time::us(16002);
    b.t.warnings = {"buffer x is never read"};
    return b;
}

// The seed's Q4 example: serial 30 ms, elapsed 20, GPU union 18, exposed sync wait 1.
// Kernel A on s1 1-10, an event record on s1 at 11 releases kernel B on s2 11-20; the
// worker thread waits 10-11 for the event while the GPU is idle.
Built seed_q4() {
    Built b;
    b.p.source = "q4.yaml";
    b.p.streams = {{"default", StreamKind::Legacy, 0, -1}, {"s1", StreamKind::Blocking, 0, -1},
                   {"s2", StreamKind::Blocking, 0, -1}};
    b.p.threads = {{"main", {}}, {"worker", {}}};
    b.p.events = {{"e"}};
    uint32_t a = b.add(OpKind::Kernel, 0, 1, "A");
    uint32_t cpu = b.add(OpKind::HostWork, 0, kNone, "cpu");
    uint32_t rec = b.add(OpKind::EventRecord, 0, 1, "rec");
    uint32_t kb = b.add(OpKind::Kernel, 0, 2, "B");
    uint32_t w = b.add(OpKind::HostWork, 1, kNone, "w");
    uint32_t es = b.add(OpKind::EventSync, 1, kNone, "wait_e");
    b.host(a, Time{}, Time::ms(1), kStart);
    b.gpu(a, Time::ms(1), Time::ms(10), by(0, Phase::Host, CauseKind::Submit), Engine::Compute);
    b.host(cpu, Time::ms(1), Time::ms(11), by(0, Phase::Host, CauseKind::ProgramOrder));
    b.host(rec, Time::ms(11), Time::ms(11), by(1, Phase::Host, CauseKind::ProgramOrder));
    b.gpu(rec, Time::ms(11), Time::ms(11), by(2, Phase::Host, CauseKind::Submit), Engine::None);
    b.host(kb, Time::ms(11), Time::ms(11), by(2, Phase::Host, CauseKind::ProgramOrder));
    b.gpu(kb, Time::ms(11), Time::ms(20), by(2, Phase::Gpu, CauseKind::Event), Engine::Compute);
    b.host(w, Time::ms(9), Time::ms(10), kStart);
    b.host(es, Time::ms(10), Time::ms(11), by(2, Phase::Gpu, CauseKind::Sync), Time::ms(1));
    b.t.end_to_end = Time::ms(20);
    return b;
}

const Resource& res(const Analysis& a, const std::string& name) {
    for (const Resource& r : a.resources)
        if (r.name == name) return r;
    FAIL("no resource " << name);
    throw;
}

double frac(int64_t num, int64_t den) { return static_cast<double>(num) / static_cast<double>(den); }

}  // namespace

TEST_CASE("report: time formatting is exact and deterministic") {
    CHECK(format_ns(Time::ms(2)) == "2000000");
    CHECK(format_ns(Time::ps(250)) == "0.250");
    CHECK(format_ns(Time::ps(-1500)) == "-1.500");
    CHECK(format_time(Time{}) == "0.000 ns");
    CHECK(format_time(Time::ps(1500)) == "1.500 ns");
    CHECK(format_time(Time::us(999)) == "999.000 us");
    CHECK(format_time(Time::ps(999'999'600)) == "1.000 ms");
    CHECK(format_time(Time::us(16002)) == "16.002 ms");
    CHECK(format_time(Time::us(-2)) == "-2.000 us");
    CHECK(format_time(Time::ms(1500)) == "1.500 s");
    CHECK(format_us(Time::ps(6'002'000'000'123)) == "6002000.000123");
    CHECK(ns_value(Time::ps(1500)).get<double>() == 1.5);
    CHECK(ns_value(Time::us(3)).is_number_integer());
    CHECK(json(ns_value(Time::ps(123456))).dump() == "123.456");
}

TEST_CASE("report: copy then kernel: resources, evidence, critical path") {
    Built b = copy_then_kernel();
    Analysis a = analyze(b.p, b.t);
    const int64_t e2e = Time::us(16002).ps();

    REQUIRE(a.resources.size() == 4);
    CHECK(a.resources[0].name == "host:main");
    CHECK(a.resources[1].name == "stream:s");
    CHECK(a.resources[2].name == "copy:h2d");
    CHECK(a.resources[3].name == "sm");
    CHECK(res(a, "host:main").kind == "host_thread");
    CHECK(res(a, "host:main").busy == Time::us(2004));  // the 13.998 ms sync wait is not busy
    CHECK(res(a, "host:main").utilization == frac(Time::us(2004).ps(), e2e));
    CHECK(res(a, "host:main").hidden == Time::us(2));   // 2.002-2.004 runs under the copy
    CHECK(res(a, "stream:s").kind == "stream");
    CHECK(res(a, "stream:s").busy == Time::ms(14));
    CHECK(res(a, "stream:s").hidden == Time::us(2));
    CHECK(res(a, "copy:h2d").kind == "copy_engine");
    CHECK(res(a, "copy:h2d").busy == Time::ms(4));
    CHECK(res(a, "copy:h2d").utilization == frac(Time::ms(4).ps(), e2e));
    CHECK(res(a, "copy:h2d").hidden == Time::us(2));
    CHECK(res(a, "sm").kind == "sm");
    CHECK(res(a, "sm").busy == Time::ms(10));
    CHECK(res(a, "sm").hidden == Time{});

    const Metrics& m = a.metrics;
    CHECK(m.serial == Time::us(16004));
    CHECK(m.elapsed == Time::us(16002));
    CHECK(m.speedup == frac(Time::us(16004).ps(), e2e));
    CHECK(m.hidden == Time::us(2));
    CHECK(m.exposed_sync == Time::us(13998));
    CHECK(m.gpu_active_union == Time::ms(14));
    CHECK(m.gpu_active_fraction == frac(Time::ms(14).ps(), e2e));
    CHECK(m.exposed_sync_fraction == frac(Time::us(13998).ps(), e2e));

    // The kernel and the sync both end at 16.002: the lower op index (the kernel) wins.
    REQUIRE(a.critical_path.size() == 4);
    const auto& cp = a.critical_path;
    CHECK((cp[0].op == 0 && cp[0].phase == Phase::Host && a.lane(cp[0]) == "host:main"));
    CHECK((cp[0].start == Time{} && cp[0].end == Time::ms(2) && cp[0].cause == CauseKind::None));
    CHECK((cp[1].op == 1 && cp[1].phase == Phase::Host && cp[1].cause == CauseKind::ProgramOrder));
    CHECK((cp[2].op == 1 && cp[2].phase == Phase::Gpu && a.lane(cp[2]) == "copy:h2d" && a.kind(cp[2]) == "copy_engine"));
    CHECK(cp[2].cause == CauseKind::Submit);
    CHECK((cp[3].op == 2 && a.lane(cp[3]) == "sm" && cp[3].start == Time::us(6002) && cp[3].end == Time::us(16002)));
    REQUIRE(a.critical_share.size() == 4);
    CHECK((a.critical_share[0].kind == "host_thread" && a.critical_share[0].time == Time::us(2002)));
    CHECK((a.critical_share[1].kind == "copy_engine" && a.critical_share[1].time == Time::ms(4)));
    CHECK((a.critical_share[2].kind == "sm" && a.critical_share[2].time == Time::ms(10)));
    CHECK((a.critical_share[3].kind == "latency" && a.critical_share[3].time == Time{}));
    CHECK(a.critical_share[1].share == frac(Time::ms(4).ps(), e2e));
}

TEST_CASE("report: seed Q4 parallelism evidence") {
    Built b = seed_q4();
    Analysis a = analyze(b.p, b.t);
    const Metrics& m = a.metrics;
    CHECK(m.serial == Time::ms(30));
    CHECK(m.elapsed == Time::ms(20));
    CHECK(m.gpu_active_union == Time::ms(18));  // the zero-length event record adds nothing
    CHECK(m.exposed_sync == Time::ms(1));
    CHECK(m.speedup == 1.5);
    CHECK(m.hidden == Time::ms(10));
    CHECK(m.gpu_active_fraction == 0.9);
    CHECK(m.exposed_sync_fraction == 0.05);

    CHECK(res(a, "host:main").busy == Time::ms(11));
    CHECK(res(a, "host:main").hidden == Time::ms(9));
    CHECK(res(a, "host:worker").busy == Time::ms(1));
    CHECK(res(a, "host:worker").hidden == Time::ms(1));
    CHECK(res(a, "stream:s1").busy == Time::ms(9));
    CHECK(res(a, "stream:s1").hidden == Time::ms(9));
    CHECK(res(a, "stream:s2").hidden == Time{});
    CHECK(res(a, "sm").busy == Time::ms(18));
    CHECK(res(a, "sm").utilization == 0.9);
    CHECK(res(a, "sm").hidden == Time::ms(9));
    CHECK(a.resources.size() == 5);

    REQUIRE(a.critical_path.size() == 5);
    CHECK(a.lane(a.critical_path[3]) == "stream:s1");
    CHECK(a.kind(a.critical_path[3]) == "stream");
    CHECK(a.critical_path[4].cause == CauseKind::Event);
    REQUIRE(a.critical_share.size() == 4);
    CHECK((a.critical_share[0].kind == "host_thread" && a.critical_share[0].share == 0.55));
    CHECK((a.critical_share[1].kind == "stream" && a.critical_share[1].time == Time{}));
    CHECK((a.critical_share[2].kind == "sm" && a.critical_share[2].share == 0.45));
}

TEST_CASE("report: critical path steps start at their last dependency's end and never overlap") {
    Built b = copy_then_kernel();
    b.t.ops[3].host_end = Time::us(16010);  // the sync returns 8 us after the kernel it waited for
    b.t.ops[3].host_cause = by(2, Phase::Gpu, CauseKind::Sync);
    b.t.end_to_end = Time::us(16010);
    Analysis a = analyze(b.p, b.t);
    REQUIRE(a.critical_path.size() == 5);
    const CriticalStep& sync = a.critical_path.back();
    CHECK((sync.op == 3 && sync.phase == Phase::Host && sync.cause == CauseKind::Sync));
    CHECK(sync.start == Time::us(16002));  // not its own start, 2.004 ms: it only waited until then
    CHECK(sync.end == Time::us(16010));
    for (size_t i = 1; i < a.critical_path.size(); ++i) {
        INFO("step " << i);
        CHECK(a.critical_path[i].start >= a.critical_path[i - 1].end);
        CHECK(a.critical_path[i].end >= a.critical_path[i].start);
    }
    // A GPU phase that ended before the step before it (a pageable copy's DMA under its host
    // staging) is on the path for no time, where that step ended.
    b.t.ops[1].host_end = Time::us(6500);
    b.t.ops[1].gpu_cause = by(1, Phase::Host, CauseKind::Submit);
    b.t.ops[2].gpu_start = Time::us(6500);
    b.t.ops[2].gpu_cause = by(1, Phase::Gpu, CauseKind::StreamOrder);
    Analysis c = analyze(b.p, b.t);
    REQUIRE(c.critical_path.size() == 5);
    CHECK((c.critical_path[2].op == 1 && c.critical_path[2].phase == Phase::Gpu));
    CHECK((c.critical_path[2].start == Time::us(6500) && c.critical_path[2].end == Time::us(6500)));
    CHECK(c.critical_path[3].start == Time::us(6500));

    std::string s = to_string_with([&](std::ostream& os) { write_summary(os, b.p, b.t, a); });
    CHECK_THAT(s, Contains("  host:main  16.002 ms - 16.010 ms  1 op: sync\n"));

    // A long segment names its first ops and says how many more it holds.
    Built h;
    h.p.threads = {{"main", {}}};
    for (int i = 0; i < 10; ++i) {
        uint32_t k = h.add(OpKind::HostWork, 0, kNone, "work" + std::to_string(i));
        h.host(k, Time::ms(i), Time::ms(i + 1), i ? by(static_cast<int32_t>(k) - 1, Phase::Host, CauseKind::ProgramOrder) : kStart);
    }
    h.t.end_to_end = Time::ms(10);
    std::string s2 = to_string_with([&](std::ostream& os) { write_summary(os, h.p, h.t, analyze(h.p, h.t)); });
    CHECK_THAT(s2, Contains("  host:main  0.000 ns - 10.000 ms  10 ops: work0, work1, work2, work3 and 6 more\n"));
}

TEST_CASE("report: hidden by overlap is never negative, exposed sync never past elapsed") {
    // Scenarios that printed "hidden by overlap: -5.898 ms" (serial - elapsed, with the host
    // idle between blocking calls) and "exposed sync wait ... 273.4% of elapsed" (sync waits
    // summed over four threads waiting at once).
    for (const char* f : {"scenarios/examples/blocking_sync.yaml", "scenarios/examples/cuda_graph.yaml",
                          "scenarios/seeds/pinned_vs_pageable.yaml", "scenarios/validation/22_two_threads_loaders.yaml",
                          "scenarios/validation/24_four_threads_per_thread_stream.yaml"}) {
        INFO(f);
        hetsim_test::Cli r = hetsim_test::cli(std::string("run ") + f);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.out, !Contains("hidden by overlap:  -"));
        const size_t at = r.out.find("exposed sync wait:");
        REQUIRE(at != std::string::npos);
        const size_t open = r.out.find('(', at);
        CHECK(std::stod(r.out.substr(open + 1)) <= 100.0);
        json j = json::parse(hetsim_test::cli(std::string("run ") + f + " --format json").out);
        const json& m = j["metrics"];
        CHECK(m["hidden_ns"].get<double>() >= 0);
        CHECK(m["exposed_sync_ns"].get<double>() <= m["elapsed_ns"].get<double>());
        CHECK(m["busy_union_ns"].get<double>() <= m["elapsed_ns"].get<double>());
        CHECK(m["hidden_ns"].get<double>() ==
              Approx(m["serial_ns"].get<double>() - m["busy_union_ns"].get<double>()).margin(0.002));
    }
    // Two threads waiting at once count once.
    Built b = seed_q4();
    b.t.ops[0].sync_wait = Time::us(500);  // main's launch of A waits 0.5-1 ms
    b.t.ops[4].host_start = Time{};        // the worker's host work starts at 0 and waits 0.2-1 ms
    b.t.ops[4].sync_wait = Time::us(800);
    b.t.ops[4].host_end = Time::ms(1);
    Analysis a = analyze(b.p, b.t);
    CHECK(a.metrics.exposed_sync == Time::ms(1) + Time::us(800));  // 0.2-1 ms, and 10-11 ms
}

TEST_CASE("report: critical path survives a cause cycle") {
    Built b = copy_then_kernel();
    b.t.ops[0].host_cause = by(3, Phase::Host, CauseKind::ProgramOrder);
    b.t.ops[3].host_cause = by(0, Phase::Host, CauseKind::ProgramOrder);
    b.t.ops[2].gpu_cause = by(3, Phase::Host, CauseKind::Sync);
    Analysis a = analyze(b.p, b.t);
    REQUIRE(a.critical_path.size() == 3);  // kernel <- sync <- prep, then prep's cause repeats
    CHECK(a.critical_path.back().op == 2);
    CHECK(analyze(Program{}, Timeline{}).critical_path.empty());
}

TEST_CASE("report: summary text") {
    Built b = copy_then_kernel();
    std::string s = to_string_with([&](std::ostream& os) { write_summary(os, b.p, b.t, analyze(b.p, b.t)); });
    CHECK_THAT(s, Contains("scenario: scenarios/examples/copy_kernel.yaml\n"));
    CHECK_THAT(s, Contains("end-to-end: 16.002 ms\n"));
    CHECK_THAT(s, Contains("  copy:h2d   copy_engine  4.000 ms      25.0%    2.000 us\n"));
    CHECK_THAT(s, Contains("  serial work:        16.004 ms\n"));
    CHECK_THAT(s, Contains("  speedup:            1.000x\n"));
    CHECK_THAT(s, Contains("  any work running:   16.002 ms (100.0% of elapsed)\n"));
    CHECK_THAT(s, Contains("  hidden by overlap:  2.000 us (serial work - any work running)\n"));
    CHECK_THAT(s, Contains("  exposed sync wait:  13.998 ms (87.5% of elapsed; some host thread blocked on the GPU)\n"));
    CHECK_THAT(s, Contains("  GPU active union:   14.000 ms (87.5% of elapsed"));
    CHECK_THAT(s, Contains("critical path (4 steps, 3 segments):\n"
                           "  host:main  0.000 ns - 2.002 ms  2 ops: prep, copy_in\n"
                           "  copy:h2d   2.002 ms - 6.002 ms  1 op: copy_in\n"
                           "  sm         6.002 ms - 16.002 ms  1 op: kern\n"));
    CHECK_THAT(s, Contains("  copy_engine  25.0%   4.000 ms\n"));
    CHECK_THAT(s, Contains("\nwarning: buffer x is never read\n"));

    // A long alternating path is cut after 12 lines.
    Built c;
    c.p.threads = {{"main", {}}};
    c.p.streams = {{"default", StreamKind::Legacy, 0, -1}};
    for (int i = 0; i < 20; ++i) {
        uint32_t k = c.add(OpKind::Kernel, 0, 0, "k");
        c.host(k, Time::ms(2 * i), Time::ms(2 * i + 1), i ? by(static_cast<int32_t>(k) - 1, Phase::Gpu, CauseKind::Sync) : kStart);
        c.gpu(k, Time::ms(2 * i + 1), Time::ms(2 * i + 2), by(static_cast<int32_t>(k), Phase::Host, CauseKind::Submit), Engine::Compute);
    }
    c.t.end_to_end = Time::ms(40);
    std::string s2 = to_string_with([&](std::ostream& os) { write_summary(os, c.p, c.t, analyze(c.p, c.t)); });
    CHECK_THAT(s2, Contains("critical path (40 steps, 40 segments):\n"));
    CHECK_THAT(s2, Contains("  ... 28 more segments\n"));
}

namespace {
size_t occurrences(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
    return n;
}
}  // namespace

TEST_CASE("report: SVG timeline with engine rows, tooltips and the critical path") {
    Built b = copy_then_kernel();
    Analysis a = analyze(b.p, b.t);
    SvgOptions o;
    o.engine_lanes = true;
    std::string s = to_string_with([&](std::ostream& os) { write_svg_timelines(os, b.p, {{"Simulated", &b.t, &a}}, "t", o); });
    CHECK(s.rfind("<?xml", 0) == 0);
    CHECK_THAT(s, Contains(">critical path</text>") && Contains(">host:main</text>") && Contains(">stream:s</text>") &&
                      Contains(">copy:h2d</text>") && Contains(">sm</text>"));
    // 4 host phases, 2 GPU phases on the stream and again on their engines.
    CHECK(occurrences(s, "<rect class=\"op host") == 4);
    CHECK(occurrences(s, "<rect class=\"op gpu") == 4);
    CHECK(occurrences(s, "<rect class=\"op crit") == a.critical_path.size());
    CHECK(occurrences(s, "<rect class=\"crit-outline\"") == a.critical_path.size());
    // The tooltip: name, kind, phase, lane, start, end, duration and cause.
    CHECK_THAT(s, Contains("<title>kern (kernel, gpu) sm: 6.002 ms .. 16.002 ms (10.000 ms); cause: stream order after "
                           "copy_in (gpu)</title>"));
    CHECK_THAT(s, Contains("<title>prep (host, host) host:main: 0.000 ns .. 2.000 ms (2.000 ms); cause: start</title>"));
    // Past max_phase_rects: each lane as its busy share per pixel column, no rect per phase.
    o.max_phase_rects = 3;
    std::string d = to_string_with([&](std::ostream& os) { write_svg_timelines(os, b.p, {{"Simulated", &b.t, &a}}, "t", o); });
    CHECK(occurrences(d, "<rect class=\"op host") == 0);
    CHECK(occurrences(d, "<rect class=\"busy ") >= 4);
    CHECK_THAT(d, Contains("each lane shows its busy share per pixel column"));
    // Without an analysis or engine rows: the compare layout (host threads and streams only).
    std::string c = to_string_with([&](std::ostream& os) { write_svg_timelines(os, b.p, {{"Simulated", &b.t}}, "t"); });
    CHECK_THAT(c, !Contains(">critical path</text>") && !Contains(">sm</text>"));
    CHECK(occurrences(c, "<rect class=\"op gpu") == 2);
}

TEST_CASE("report: hetsim run --svg draws the timeline") {
    const std::string out = (std::filesystem::temp_directory_path() / ("hetsim-run-svg-" + std::to_string(::getpid()) + ".svg")).string();
    hetsim_test::Cli r = hetsim_test::cli("run scenarios/seeds/double_buffer.yaml --svg '" + out + "'");
    REQUIRE(r.exit_code == 0);
    const std::string s = hetsim_test::slurp(out);
    std::filesystem::remove(out);
    CHECK(s.rfind("<?xml", 0) == 0);
    CHECK_THAT(s, Contains("double buffering (seed loop): end to end ") && Contains(">critical path</text>") &&
                      Contains(">copy:h2d</text>"));
    CHECK(occurrences(s, "<rect class=\"op crit") == 47);  // the 47 steps of its critical path
    CHECK(s.substr(s.size() - 7) == "</svg>\n");
}

TEST_CASE("report: JSON report and its inverse") {
    Built b = copy_then_kernel();
    json j = to_json(b.p, b.t, analyze(b.p, b.t));
    CHECK(j["scenario"] == "scenarios/examples/copy_kernel.yaml");
    CHECK(j["end_to_end_ns"] == 16002000);
    REQUIRE(j["resources"].size() == 4);
    CHECK(j["resources"][2] == json({{"name", "copy:h2d"}, {"kind", "copy_engine"}, {"busy_ns", 4000000},
                                     {"utilization", frac(4000, 16002)}, {"hidden_ns", 2000}}));
    const json& m = j["metrics"];
    CHECK(m["serial_ns"] == 16004000);
    CHECK(m["elapsed_ns"] == 16002000);
    CHECK(m["hidden_ns"] == 2000);
    CHECK(m["busy_union_ns"] == 16002000);
    CHECK(m["exposed_sync_ns"] == 13998000);
    CHECK(m["gpu_active_union_ns"] == 14000000);
    CHECK(m["speedup"].get<double>() == frac(16004, 16002));
    CHECK(m["gpu_active_fraction"].get<double>() == frac(14000, 16002));
    CHECK(m["exposed_sync_fraction"].get<double>() == frac(13998, 16002));
    const json& steps = j["critical_path"]["steps"];
    REQUIRE(steps.size() == 4);
    CHECK(steps[2] == json({{"op", 1}, {"name", "copy_in"}, {"phase", "gpu"}, {"lane", "copy:h2d"},
                            {"kind", "copy_engine"}, {"start_ns", 2002000}, {"end_ns", 6002000}, {"cause", "launch"}}));
    CHECK(j["critical_path"]["share"]["sm"].get<double>() == frac(10000, 16002));
    REQUIRE(j["ops"].size() == 4);
    const json& op0 = j["ops"][0];
    CHECK((op0["name"] == "prep" && op0["kind"] == "host" && op0["lane"] == "host:main"));
    CHECK((op0["start_ns"] == 0 && op0["end_ns"] == 2000000 && op0["host_end_ns"] == 2000000));
    CHECK(!op0.contains("gpu_start_ns"));
    CHECK(!op0.contains("engine"));
    const json& op1 = j["ops"][1];
    CHECK((op1["lane"] == "stream:s" && op1["gpu_lane"] == "stream:s" && op1["host_lane"] == "host:main"));
    CHECK((op1["start_ns"] == 2002000 && op1["gpu_end_ns"] == 6002000 && op1["host_start_ns"] == 2000000));
    CHECK((op1["engine"] == "copy:h2d" && op1["bytes"] == 64000000 && op1["sync_wait_ns"] == 0));
    CHECK(j["ops"][3]["sync_wait_ns"] == 13998000);
    CHECK(j["warnings"] == json::array({"buffer x is never read"}));
    std::string text = dump_json(j);
    CHECK_THAT(text, Contains("\n  \"end_to_end_ns\": 16002000,\n"));
    CHECK(text == dump_json(to_json(b.p, b.t, analyze(b.p, b.t))));
    CHECK((text.front() == '{' && text.back() == '}'));

    b.t.ops[0].host_end = Time::ps(1'999'999'500);  // a non-whole nanosecond survives the round trip
    Timeline back = timeline_from_json(json::parse(dump_json(to_json(b.p, b.t, analyze(b.p, b.t)))), b.p);
    REQUIRE(back.ops.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
        const OpRecord &x = b.t.ops[i], &y = back.ops[i];
        CHECK((x.host_start == y.host_start && x.host_end == y.host_end && x.sync_wait == y.sync_wait));
        CHECK((x.gpu_start == y.gpu_start && x.gpu_end == y.gpu_end && x.engine == y.engine));
        CHECK((x.host_cause.op == y.host_cause.op && x.host_cause.kind == y.host_cause.kind));
        CHECK((x.gpu_cause.op == y.gpu_cause.op && x.gpu_cause.phase == y.gpu_cause.phase &&
               x.gpu_cause.kind == y.gpu_cause.kind));
    }
    CHECK(back.end_to_end == Time::us(16002));
    CHECK(back.warnings == b.t.warnings);

    json bad = to_json(b.p, b.t, analyze(b.p, b.t));
    bad["ops"].erase(3);
    CHECK_THROWS_WITH(timeline_from_json(bad, b.p), Contains("has 3 ops but the program has 4"));
    bad = to_json(b.p, b.t, analyze(b.p, b.t));
    bad["ops"][2]["name"] = "other";
    CHECK_THROWS_WITH(timeline_from_json(bad, b.p), Contains("op 2 (kern): name \"other\" does not match"));
    bad["ops"][2]["name"] = "kern";
    bad["ops"][2].erase("gpu_end_ns");
    CHECK_THROWS_AS(timeline_from_json(bad, b.p), std::runtime_error);
}

TEST_CASE("report: CSV rows") {
    Built b = copy_then_kernel();
    b.p.names[0] = "prep, \"warm\"";
    b.t.ops[0].host_end = Time::ps(1'999'999'500);
    std::string s = to_string_with([&](std::ostream& os) { write_csv(os, b.p, b.t); });
    CHECK(s ==
          "op,name,kind,thread,stream,engine,host_start_ns,host_end_ns,gpu_start_ns,gpu_end_ns,sync_wait_ns,bytes\n"
          "0,\"prep, \"\"warm\"\"\",host,main,,,0,1999999.500,,,0,0\n"
          "1,copy_in,memcpy,main,s,copy:h2d,2000000,2002000,2002000,6002000,0,64000000\n"
          "2,kern,kernel,main,s,sm,2002000,2004000,6002000,16002000,0,0\n"
          "3,sync,stream_sync,main,s,,2004000,16002000,,,13998000,0\n");
}

TEST_CASE("report: Chrome trace structure") {
    Built b = seed_q4();
    std::string text = to_string_with([&](std::ostream& os) { write_chrome_trace(os, b.p, b.t); });
    json j = json::parse(text);
    CHECK(j["displayTimeUnit"] == "ns");
    CHECK_THAT(text, Contains("\"ts\":11000.000000,\"dur\":9000.000000"));
    std::map<std::pair<int, int>, std::string> names;
    std::map<std::pair<int, int>, int> sort;
    std::map<int, std::string> procs;
    int slices = 0;
    std::map<int, std::vector<json>> flows;
    for (const json& e : j["traceEvents"]) {
        std::string ph = e["ph"];
        std::pair<int, int> track{e["pid"], e["tid"]};
        if (ph == "M" && e["name"] == "process_name") procs[e["pid"]] = e["args"]["name"];
        if (ph == "M" && e["name"] == "thread_name") names[track] = e["args"]["name"];
        if (ph == "M" && e["name"] == "thread_sort_index") sort[track] = e["args"]["sort_index"];
        if (ph == "X") {
            ++slices;
            CHECK(names.count(track) == 1);  // every slice is on a named track
            CHECK(e["args"].contains("op"));
        }
        if (ph == "s" || ph == "f") flows[e["id"]].push_back(e);
    }
    CHECK(procs == std::map<int, std::string>{{1, "Host"}, {2, "GPU"}});
    CHECK(names == std::map<std::pair<int, int>, std::string>{{{1, 1}, "main"}, {{1, 2}, "worker"},
                                                              {{2, 2}, "stream s1"}, {{2, 3}, "stream s2"},
                                                              {{2, kEngineTidBase + 200}, "SMs"}});
    CHECK((sort[{1, 1}] < sort[{1, 2}] && sort[{1, 2}] < sort[{2, 2}] && sort[{2, 3}] < sort[{2, kEngineTidBase + 200}]));
    CHECK(slices == 6 + 3 + 2);  // host phases, GPU phases on streams, kernels on the SMs track
    REQUIRE(flows.size() == 4);  // launches of A, rec, B; event rec -> B
    for (auto& [id, ev] : flows) {
        REQUIRE(ev.size() == 2);
        CHECK((ev[0]["ph"] == "s" && ev[1]["ph"] == "f" && ev[1]["bp"] == "e"));
    }
    const auto& ev = flows[4];
    CHECK((ev[0]["name"] == "event" && ev[0]["pid"] == 2 && ev[0]["tid"] == 2 && ev[1]["tid"] == 3));
    CHECK((ev[0]["ts"].get<double>() == 11000.0 && ev[1]["ts"].get<double>() == 15500.0));
    CHECK((flows[1][0]["pid"] == 1 && flows[1][0]["ts"].get<double>() == 500.0 && flows[1][1]["tid"] == 2));

    // Concurrent kernels go to a second SMs row instead of overlapping on one track.
    b.t.ops[3].gpu_start = Time::ms(5);
    json k = json::parse(to_string_with([&](std::ostream& os) { write_chrome_trace(os, b.p, b.t); }));
    int rows = 0, on_second = 0;
    for (const json& e : k["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] == kEngineTidBase + 201)
            rows += e["args"]["name"] == "SMs (2)";
        if (e["ph"] == "X" && e["tid"] == kEngineTidBase + 201) on_second += e["name"] == "B";
    }
    CHECK((rows == 1 && on_second == 1));
}

TEST_CASE("report: write_file_atomic") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("hetsim-report-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    auto read = [](const fs::path& f) {
        std::ifstream in(f, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    auto entries = [&] { return std::distance(fs::directory_iterator(dir), fs::directory_iterator{}); };
    std::string big(1 << 20, 'x');
    write_file_atomic((dir / "out.json").string(), big);
    CHECK(read(dir / "out.json") == big);
    write_file_atomic((dir / "out.json").string(), "second\n");
    CHECK(read(dir / "out.json") == "second\n");
    CHECK(entries() == 1);

    std::string missing = (dir / "no-such-dir" / "out.json").string();
    try {
        write_file_atomic(missing, "x");
        FAIL("expected InputError");
    } catch (const InputError& e) {
        CHECK(e.where().file == missing);
        CHECK_THAT(e.message(), Contains("cannot write output file: No such file or directory"));
    }
    fs::create_directories(dir / "taken");  // rename onto a directory fails after the temp is written
    CHECK_THROWS_AS(write_file_atomic((dir / "taken").string(), "x"), InputError);
    CHECK(fs::is_directory(dir / "taken"));
    CHECK(entries() == 2);  // no temporary left behind
    CHECK(read(dir / "out.json") == "second\n");
    fs::remove_all(dir);
}
