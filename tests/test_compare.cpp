// Tests of `hetsim compare` and report/compare, report/svg_timeline and the two-timeline Chrome
// trace: a small inline scenario is simulated, a measured timeline is synthesised from it with
// known perturbations (one kernel 10 us late, end to end x1.05), and the errors are checked.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/scenario.hpp"
#include "report/chrome_trace.hpp"
#include "report/compare.hpp"
#include "report/json_report.hpp"
#include "report/output_file.hpp"
#include "report/svg_timeline.hpp"
#include "sim/engine.hpp"
#include "core/error.hpp"
#include "core/program_json.hpp"
#include "cli_util.hpp"

using namespace hetsim;
using namespace hetsim::report;
using Catch::Matchers::Contains;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kYaml = R"(name: compare <test> & 'co'
hardware: {profile: h200, zero_latency: true}
params: {n: 2}
streams: [s]
threads:
  main:
    - repeat: n
      do:
        - {host: prep, duration: 100us}
        - {memcpy_async: up, direction: h2d, bytes: 8MiB, stream: s}
        - {kernel: work, stream: s, duration: 200us}
        - {memcpy_async: down, direction: d2h, bytes: 8MiB, stream: s}
    - stream_sync: s
)";

struct Fixture {
    Scenario sc;
    Timeline sim;
    uint32_t shifted = 0;  // the op that the measured timeline has 10 us late
    Fixture() : sc(load_scenario_text(kYaml, "compare_test.yaml")), sim(simulate(sc.program, sc.profile)) {
        for (uint32_t i = 0; i < sc.program.ops.size(); ++i)
            if (sc.program.op_name(i) == "work[0]") shifted = i;
    }
};

// A measured document from `t`: op `shift_op` (if >= 0) 10 us late in both phases, end to end
// scaled by `e2e_percent` / 100.
json measured_doc(const Program& p, const Timeline& t, int64_t shift_op, int64_t e2e_percent) {
    json ops = json::array();
    for (uint32_t i = 0; i < p.ops.size(); ++i) {
        const OpRecord& r = t.ops[i];
        Time d = static_cast<int64_t>(i) == shift_op ? Time::us(10) : Time{};
        json o = {{"index", i}, {"name", p.op_name(i)}, {"kind", to_string(p.ops[i].kind)}, {"thread", p.ops[i].thread}};
        if (p.ops[i].stream >= 0) o["stream"] = p.ops[i].stream;
        if (r.has_host()) o["host_start_ns"] = ns_value(r.host_start + d), o["host_end_ns"] = ns_value(r.host_end + d);
        if (r.has_gpu()) o["gpu_start_ns"] = ns_value(r.gpu_start + d), o["gpu_end_ns"] = ns_value(r.gpu_end + d);
        ops.push_back(std::move(o));
    }
    return {{"schema", "hetsim.measured"}, {"version", 1}, {"scenario", "compare test"},
            {"metadata", {{"gpu", "synthetic"}, {"timing", "events"}}},
            {"end_to_end_ns", ns_value(Time::ps(t.end_to_end.ps() * e2e_percent / 100))},
            {"end_to_end_runs_ns", json::array()}, {"uninstrumented_end_to_end_ns", json::array()},
            {"ops", std::move(ops)}, {"warnings", json::array()}};
}

size_t phases(const Timeline& t) {
    size_t n = 0;
    for (const OpRecord& r : t.ops) n += (r.has_host() ? 1 : 0) + (r.has_gpu() ? 1 : 0);
    return n;
}

size_t count(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
    return n;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A scratch directory holding the scenario and measured files; removed at the end.
struct TempDir {
    fs::path dir;
    TempDir() {
        static int counter = 0;
        dir = fs::temp_directory_path() / ("hetsim-compare-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::create_directories(dir);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(dir / name, std::ios::binary) << text;
        return (dir / name).string();
    }
    std::string path(const std::string& name) const { return (dir / name).string(); }
};

struct CliRun {
    int code = -1;
    std::string out, err;
};

// Runs `hetsim compare <args>` in the repository root (tests/cli_util.hpp); `args` must be shell-safe.
CliRun compare_cli(const TempDir&, const std::string& args) {
    hetsim_test::Cli c = hetsim_test::cli("compare " + args);
    return CliRun{c.exit_code, c.out, c.err};
}

// Two paths, single-quoted for the shell.
std::string quoted(const std::string& a, const std::string& b) {
    std::string s(1, '\'');  // appends, not operator+: GCC 12 -Wrestrict false positive
    return s.append(a).append("' '").append(b).append(1, '\'');
}

// Scenario and measured files for the CLI: returns "SCENARIO MEASURED" (quoted).
std::string cli_files(const TempDir& tmp, const json& measured) {
    return quoted(tmp.write("scenario.yaml", kYaml), tmp.write("measured.json", measured.dump(2)));
}

// Tags balance: every <x ...> closed by </x> in order, <x/> and <?...?> skipped.
bool tags_balanced(const std::string& s) {
    std::vector<std::string> stack;
    for (size_t at = s.find('<'); at != std::string::npos; at = s.find('<', at + 1)) {
        size_t end = s.find('>', at);
        if (end == std::string::npos) return false;
        std::string tag = s.substr(at + 1, end - at - 1);
        if (tag.empty() || tag[0] == '?' || tag.back() == '/') continue;
        if (tag[0] == '/') {
            if (stack.empty() || stack.back() != tag.substr(1)) return false;
            stack.pop_back();
        } else {
            stack.push_back(tag.substr(0, tag.find(' ')));
        }
    }
    return stack.empty();
}

}  // namespace

TEST_CASE("compare: per-op and end-to-end errors of a perturbed measurement") {
    Fixture f;
    const Program& p = f.sc.program;
    REQUIRE(p.ops.size() == 9);
    Timeline meas = measured_timeline_from_json(measured_doc(p, f.sim, f.shifted, 105), p, "m.json");
    Comparison c = compare_timelines(p, f.sim, meas, 3);

    CHECK(c.simulated == f.sim.end_to_end);
    CHECK(c.measured == Time::ps(f.sim.end_to_end.ps() * 105 / 100));
    CHECK(c.error == c.simulated - c.measured);
    CHECK(c.error_pct == Approx(-100.0 * 0.05 / 1.05).epsilon(1e-6));
    REQUIRE(c.ops.size() == p.ops.size());
    for (const OpError& e : c.ops) {
        INFO("op " << e.op << " " << p.op_name(e.op));
        REQUIRE(e.compared);
        CHECK(e.phase == (f.sim.ops[e.op].has_gpu() ? Phase::Gpu : Phase::Host));
        Time want = e.op == f.shifted ? Time::us(-10) : Time{};
        CHECK(e.start_error == want);
        CHECK(e.end_error == want);
    }
    CHECK(c.ops[f.shifted].lane == "stream:s");
    CHECK(c.ops[f.shifted].meas_end == f.sim.ops[f.shifted].gpu_end + Time::us(10));
    REQUIRE(c.largest.size() == 3);
    CHECK(c.largest[0] == f.shifted);
    CHECK(c.largest[1] < c.largest[2]);  // equal (zero) errors in op order
    CHECK(c.sim.metrics.elapsed == c.simulated);
    CHECK(c.meas.metrics.elapsed == c.measured);
    CHECK(c.meas.metrics.gpu_active_union > Time{});
    // The measured sync wait is the host phase of the stream sync.
    const OpRecord& sync = meas.ops[p.ops.size() - 1];
    CHECK(sync.sync_wait == sync.host_end - sync.host_start);
    CHECK(meas.ops[f.shifted].engine == Engine::Compute);

    json j = comparison_to_json(p, c, "s.yaml", "m.json");
    CHECK(j["end_to_end"]["error_pct"].get<double>() == Approx(c.error_pct));
    CHECK(j["largest"][0]["name"] == "work[0]");
    CHECK(j["largest"][0]["end_error_ns"] == -10000);
    CHECK(j["ops"].size() == p.ops.size());
    CHECK(j["metrics"]["measured"].contains("gpu_active_union_ns"));
}

TEST_CASE("compare: duration errors tell an op's own length from the delay it inherited") {
    Fixture f;
    const Program& p = f.sc.program;
    // The shifted op is 10 us late at both ends: its end error is -10 us, its length error 0.
    // Then the last op's measured phase is made 7 us longer at its end only: length error -7 us.
    json doc = measured_doc(p, f.sim, f.shifted, 100);
    const uint32_t last = static_cast<uint32_t>(p.ops.size() - 1);
    json& o = doc["ops"][last];
    const char* end_key = f.sim.ops[last].has_gpu() ? "gpu_end_ns" : "host_end_ns";
    o[end_key] = o[end_key].get<double>() + 7000.0;
    doc["end_to_end_ns"] = doc["end_to_end_ns"].get<double>() + 7000.0;
    Comparison c = compare_timelines(p, f.sim, measured_timeline_from_json(doc, p, "m.json"), 2);
    CHECK(c.ops[f.shifted].end_error == Time::us(-10));
    CHECK(c.ops[f.shifted].duration_error == Time{});
    CHECK(c.ops[last].end_error == Time::us(-7));
    CHECK(c.ops[last].duration_error == Time::us(-7));
    REQUIRE(c.largest.size() == 2);
    CHECK(c.largest[0] == f.shifted);
    CHECK(c.largest[1] == last);
    REQUIRE(c.largest_duration.size() == 2);
    CHECK(c.largest_duration[0] == last);
    CHECK(c.largest_duration[1] == 0u);  // the others are 0: the first in op order
    json j = comparison_to_json(p, c, "s.yaml", "m.json");
    CHECK(j["largest_duration"][0]["duration_error_ns"] == -7000);
    CHECK(j["largest"][0]["duration_error_ns"] == 0);
    std::ostringstream text;
    write_comparison_text(text, p, c, "s.yaml", "m.json");
    const std::string s = text.str();
    REQUIRE(s.find("largest per-op duration errors") != std::string::npos);
    CHECK(s.find(format_time(Time::us(-7)), s.find("largest per-op duration errors")) != std::string::npos);
}

TEST_CASE("compare: identical timelines and ops without a common phase") {
    Fixture f;
    const Program& p = f.sc.program;
    json doc = measured_doc(p, f.sim, -1, 100);
    Timeline same = measured_timeline_from_json(doc, p, "m.json");
    Comparison c = compare_timelines(p, f.sim, same, 10);
    CHECK(c.error == Time{});
    CHECK(c.error_pct == 0.0);
    CHECK(c.meas.metrics.gpu_active_union == c.sim.metrics.gpu_active_union);
    for (const OpError& e : c.ops) CHECK(e.end_error == Time{});

    // Op 0 (host work) loses its phase in the measurement: not compared, not listed.
    doc["ops"][0].erase("host_start_ns");
    doc["ops"][0].erase("host_end_ns");
    Comparison d = compare_timelines(p, f.sim, measured_timeline_from_json(doc, p, "m.json"), 100);
    CHECK_FALSE(d.ops[0].compared);
    CHECK(d.largest.size() == p.ops.size() - 1);
    CHECK(std::find(d.largest.begin(), d.largest.end(), 0u) == d.largest.end());
    CHECK(comparison_to_json(p, d, "s", "m")["ops"][0]["phase"] == "none");

    // Ops are matched by index, not position.
    json rev = measured_doc(p, f.sim, -1, 100);
    std::reverse(rev["ops"].begin(), rev["ops"].end());
    Timeline r = measured_timeline_from_json(rev, p, "m.json");
    for (uint32_t i = 0; i < p.ops.size(); ++i) CHECK(r.ops[i].end() == f.sim.ops[i].end());
}

TEST_CASE("compare: bad measured documents throw InputError naming the file") {
    Fixture f;
    const Program& p = f.sc.program;
    const json good = measured_doc(p, f.sim, -1, 100);
    // Applies `change` to a good document and expects an InputError containing `what`.
    auto expect = [&](const std::function<void(json&)>& change, const std::string& what) {
        INFO(what);
        json doc = good;
        change(doc);
        try {
            measured_timeline_from_json(doc, p, "bad.json");
            FAIL("no error");
        } catch (const InputError& e) {
            CHECK(e.where().file == "bad.json");
            CHECK_THAT(std::string(e.what()), Contains(what));
            CHECK(std::string(e.what()).find('\n') == std::string::npos);
        }
    };
    expect([](json& d) { d["schema"] = "hetsim.program"; }, "schema is \"hetsim.program\"");
    expect([](json& d) { d.erase("schema"); }, "no \"schema\"");
    expect([](json& d) { d["version"] = 2; }, "version 2 is not supported");
    expect([](json& d) { d["ops"].erase(d["ops"].size() - 1); }, "has 8 ops but the scenario lowers to 9");
    expect([](json& d) { d["ops"][2]["name"] = "other"; },
           "measured name \"other\" does not match the scenario's \"" + p.op_name(2) + "\"");
    expect([](json& d) { d["ops"][3]["index"] = 2; }, "op index 2 appears twice");
    expect([](json& d) { d["ops"][1]["kind"] = "kernel"; }, "measured kind \"kernel\"");
    expect([](json& d) { d["ops"][1].erase("gpu_end_ns"); }, "\"gpu_start_ns\" given without \"gpu_end_ns\"");
    expect([](json& d) { d["ops"][1]["gpu_start_ns"] = "soon"; }, "must be a number of nanoseconds");
    expect([](json& d) { d["ops"][1]["gpu_start_ns"] = -5; }, "is negative");
    CHECK_THROWS_AS(read_measured_timeline("/nonexistent/measured.json", p), InputError);
    // A run of 0 ns read as the measured time gave an error of +0.00 % and passed --max-error.
    json zero = good;
    zero["uninstrumented_end_to_end_ns"] = json::array({0});
    CHECK_THROWS_WITH(measured_uninstrumented_runs(zero, "bad.json", ""),
                      Contains("uninstrumented_end_to_end_ns[0] is 0; a run's end to end time is a positive number of nanoseconds"));
}

TEST_CASE("compare: CLI reports, formats and --max-error exit codes") {
    Fixture f;
    TempDir tmp;
    const std::string files = cli_files(tmp, measured_doc(f.sc.program, f.sim, f.shifted, 105));

    CliRun r = compare_cli(tmp, files + " --format json --top 3");
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    json j = json::parse(r.out);
    for (const char* k : {"scenario", "measured_file", "end_to_end", "metrics", "ops", "largest"}) CHECK(j.contains(k));
    CHECK(j["end_to_end"]["error_pct"].get<double>() == Approx(-100.0 * 0.05 / 1.05).epsilon(1e-6));
    CHECK(j["end_to_end"]["simulated_ns"] == ns_value(f.sim.end_to_end));
    CHECK(j["metrics"]["simulated"]["speedup"].get<double>() > 0);
    CHECK(j["ops"].size() == 9);
    REQUIRE(j["largest"].size() == 3);
    CHECK(j["largest"][0]["name"] == "work[0]");
    CHECK(j["largest"][0]["kind"] == "kernel");
    CHECK(j["largest"][0]["lane"] == "stream:s");
    CHECK(j["largest"][0]["start_error_ns"] == -10000);

    r = compare_cli(tmp, files);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("end to end: simulated") && Contains("(-4.76%)") && Contains("GPU active union") &&
                          Contains("work[0]") && Contains("-10.000 us"));

    r = compare_cli(tmp, files + " --max-error 4");
    CHECK(r.code == 1);
    CHECK_THAT(r.err, Contains("4.76%") && Contains("--max-error"));
    CHECK(compare_cli(tmp, files + " --max-error 5").code == 0);
    CHECK(compare_cli(tmp, files + " --max-error 4.8").code == 0);
    // A value boost cannot read is one line (it printed the whole option list).
    CliRun bad = compare_cli(tmp, files + " --max-error 1e999");
    CHECK(bad.code == 2);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
    CHECK_THAT(bad.err, Contains("the argument ('1e999') for option '--max-error' is invalid"));

    // --set changes the program: the measurement no longer matches.
    r = compare_cli(tmp, files + " --set n=3");
    CHECK(r.code == 2);
    CHECK(count(r.err, "\n") == 1);
    CHECK_THAT(r.err, Contains("has 9 ops but the scenario lowers to 13"));
}

TEST_CASE("compare: host calls are also compared with the median uninstrumented run's host stamps") {
    Fixture f;
    TempDir tmp;
    const Program& p = f.sc.program;
    json doc = measured_doc(p, f.sim, -1, 100);
    // The uninstrumented run's host stamps: every host phase as simulated, except the first one
    // with a host phase, 3 us longer, and the longest other one, 1 us shorter.
    uint32_t first = 0;
    while (!f.sim.ops[first].has_host()) ++first;
    auto len = [&](uint32_t i) { return f.sim.ops[i].host_end - f.sim.ops[i].host_start; };
    uint32_t second = first == 0 ? 1 : 0;
    for (uint32_t i = 0; i < p.ops.size(); ++i)
        if (i != first && f.sim.ops[i].has_host() && len(i) > len(second)) second = i;
    REQUIRE(len(second) >= Time::us(1));
    json u = json::array();
    size_t with_host = 0;
    for (uint32_t i = 0; i < p.ops.size(); ++i) {
        const OpRecord& r = f.sim.ops[i];
        if (!r.has_host()) continue;
        ++with_host;
        Time end = r.host_end + (i == first ? Time::us(3) : Time{}) - (i == second ? Time::us(1) : Time{});
        u.push_back({{"index", i}, {"host_start_ns", ns_value(r.host_start)}, {"host_end_ns", ns_value(end)}});
    }
    doc["uninstrumented_ops"] = u;
    const Timeline un = measured_unobserved_host(doc, p, "m.json");
    Comparison c = compare_timelines(p, f.sim, measured_timeline_from_json(doc, p, "m.json"), 2, {}, &un);
    REQUIRE(c.host_unobserved.size() == with_host);
    REQUIRE(c.largest_host_unobserved.size() == 2);
    const OpError& a = c.host_unobserved[c.largest_host_unobserved[0]];
    const OpError& b = c.host_unobserved[c.largest_host_unobserved[1]];
    CHECK((a.op == first && a.duration_error == Time{} - Time::us(3)));
    CHECK((b.op == second && b.duration_error == Time::us(1)));

    const std::string files = cli_files(tmp, doc);
    CliRun r = compare_cli(tmp, files + " --top 2");
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("largest host-call length errors against the median uninstrumented run (no profiler attached): 2 of " +
                               std::to_string(with_host) + " host phases"));
    CHECK_THAT(r.out, Contains(p.op_name(first)) && Contains("-3.000 us"));
    json j = json::parse(compare_cli(tmp, files + " --format json --top 2").out);
    CHECK(j["host_unobserved"].size() == with_host);
    CHECK(j["largest_host_unobserved"][0]["index"] == first);

    // Without stamps: no such table.
    doc.erase("uninstrumented_ops");
    CHECK(compare_cli(tmp, cli_files(tmp, doc)).out.find("host-call length errors") == std::string::npos);
    // Bad stamps are bad input, at their place in the file.
    doc["uninstrumented_ops"] = json::array({{{"index", first}, {"host_start_ns", 10}, {"host_end_ns", 5}}});
    r = compare_cli(tmp, cli_files(tmp, doc));
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("\"host_end_ns\" is before \"host_start_ns\""));
    doc["uninstrumented_ops"] = json::array({{{"index", 99999}, {"host_start_ns", 1}, {"host_end_ns", 5}}});
    r = compare_cli(tmp, cli_files(tmp, doc));
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("uninstrumented_ops[0]: index 99999 is out of range"));
    CHECK(count(r.err, "\n") == 1);
}

TEST_CASE("compare: the end-to-end error is judged on the uninstrumented runs and says so") {
    Fixture f;
    TempDir tmp;
    const Program& p = f.sc.program;
    // The instrumented run is 5% long (CUPTI); the uninstrumented runs are 0.5%, 1% and 3% long.
    json doc = measured_doc(p, f.sim, f.shifted, 105);
    const int64_t e2e = f.sim.end_to_end.ps();
    doc["uninstrumented_end_to_end_ns"] = {ns_value(Time::ps(e2e * 103 / 100)), ns_value(Time::ps(e2e * 1005 / 1000)),
                                           ns_value(Time::ps(e2e * 101 / 100))};
    const std::vector<Time> runs = measured_uninstrumented_runs(doc, "m.json");
    REQUIRE(runs.size() == 3);
    Comparison c = compare_timelines(p, f.sim, measured_timeline_from_json(doc, p, "m.json"), 3, runs);
    CHECK(c.measured == Time::ps(e2e * 101 / 100));  // the median
    CHECK(c.instrumented == Time::ps(e2e * 105 / 100));
    CHECK(c.measured_runs == 3);
    CHECK(c.error_pct == Approx(-100.0 * 0.01 / 1.01).epsilon(1e-6));
    CHECK(measured_basis(c) == "the median of 3 uninstrumented runs");
    CHECK(c.meas.metrics.elapsed == c.instrumented);  // the metrics are the instrumented timeline's

    const std::string files = cli_files(tmp, doc);
    CliRun r = compare_cli(tmp, files);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("(uninstrumented median): error") && Contains("(-0.99%)") &&
                          Contains("  measured: the median of 3 uninstrumented runs; the metrics and per-op times below "
                                   "are of the instrumented run, "));
    json j = json::parse(compare_cli(tmp, files + " --format json").out);
    CHECK(j["end_to_end"]["measured_basis"] == "uninstrumented_median");
    CHECK(j["end_to_end"]["measured_runs"] == 3);
    CHECK(j["end_to_end"]["instrumented_ns"] == ns_value(Time::ps(e2e * 105 / 100)));
    CHECK(compare_cli(tmp, files + " --max-error 1").code == 0);  // 4.76% against the instrumented run
    r = compare_cli(tmp, files + " --max-error 0.5");
    CHECK(r.code == 1);
    CHECK_THAT(r.err, Contains("0.99% exceeds --max-error 0.5% (measured: the median of 3 uninstrumented runs)"));

    // No uninstrumented runs: the instrumented run, and it says so.
    Comparison d = compare_timelines(p, f.sim, measured_timeline_from_json(doc, p, "m.json"), 3, {});
    CHECK((d.measured == d.instrumented && d.measured_runs == 0));
    CHECK(measured_basis(d) == "the instrumented run (the file has no uninstrumented runs)");
    CHECK(comparison_to_json(p, d, "s", "m")["end_to_end"]["measured_basis"] == "instrumented");

    // A bad run time is bad input, at its place in the file.
    doc["uninstrumented_end_to_end_ns"][1] = "fast";
    r = compare_cli(tmp, cli_files(tmp, doc));
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("uninstrumented_end_to_end_ns[1] must be a number of nanoseconds, got \"fast\""));
    CHECK(count(r.err, "\n") == 1);
}

TEST_CASE("compare: bad inputs exit 2 with one line") {
    Fixture f;
    TempDir tmp;
    json wrong_schema = measured_doc(f.sc.program, f.sim, -1, 100), wrong_version = wrong_schema, short_ops = wrong_schema;
    wrong_schema["schema"] = "hetsim.report";
    wrong_version["version"] = 7;
    short_ops["ops"].erase(0);
    const std::string scenario = tmp.write("scenario.yaml", kYaml);
    const std::string schema = tmp.write("schema.json", wrong_schema.dump());
    // {arguments, what stderr must contain}; stderr is one line "FILE: error: ..." in each case.
    const std::vector<std::pair<std::string, std::string>> cases = {
        {quoted(scenario, schema), schema + ":1:"},  // the line and column of the schema value
        {quoted(scenario, schema), ": error: schema is \"hetsim.report\", expected \"hetsim.measured\""},
        {quoted(scenario, tmp.write("version.json", wrong_version.dump())), "version 7 is not supported"},
        {quoted(scenario, tmp.write("count.json", short_ops.dump())), "has 8 ops but the scenario lowers to 9"},
        {quoted(scenario, tmp.write("broken.json", "{\"schema\": ")), "broken.json:1:12: error: not valid JSON: syntax error while parsing value - unexpected end of input"},
        {quoted(scenario, tmp.path("missing.json")), "cannot read the file (No such file or directory)"},
        {quoted(tmp.path("missing.yaml"), schema), "missing.yaml"},
        {quoted(scenario, schema) + " --format xml", "expected text or json"},
        {quoted(scenario, schema) + " --top -1", "--top"},
    };
    for (const auto& [args, message] : cases) {
        INFO(args);
        CliRun r = compare_cli(tmp, args);
        CHECK(r.code == 2);
        CHECK(count(r.err, "\n") == 1);
        CHECK_THAT(r.err, Contains(message));
        CHECK(r.out.empty());
    }
}

TEST_CASE("compare: Chrome trace with both timelines") {
    Fixture f;
    TempDir tmp;
    const std::string files = cli_files(tmp, measured_doc(f.sc.program, f.sim, f.shifted, 105));
    const std::string trace = tmp.path("both.json");
    REQUIRE(compare_cli(tmp, files + " --trace '" + trace + "'").code == 0);
    json j = json::parse(slurp(trace));
    std::set<int> pids;
    std::map<int, std::string> names;
    std::map<int, size_t> slices;
    std::map<int, double> work_ts;
    std::set<int> flow_ids;
    for (const json& e : j["traceEvents"]) {
        int pid = e["pid"].get<int>();
        pids.insert(pid);
        if (e["ph"] == "M" && e["name"] == "process_name") names[pid] = e["args"]["name"].get<std::string>();
        if (e["ph"] == "X") ++slices[pid];
        if (e["ph"] == "X" && e["name"] == "work[0]" && e["tid"] == 2) work_ts[pid] = e["ts"].get<double>();
        if (e["ph"] == "s") CHECK(flow_ids.insert(e["id"].get<int>()).second);
    }
    CHECK(pids == std::set<int>{1, 2, 3, 4});
    CHECK(names[1] == "Simulated host");
    CHECK(names[2] == "Simulated GPU");
    CHECK(names[3] == "Measured host");
    CHECK(names[4] == "Measured GPU");
    CHECK(slices[1] == slices[3]);
    CHECK(slices[2] == slices[4]);  // engines inferred for the measured ops
    REQUIRE(work_ts.count(2) == 1);
    REQUIRE(work_ts.count(4) == 1);
    CHECK(work_ts[4] - work_ts[2] == Approx(10.0));  // microseconds

    // One timeline through the multi writer is the single-timeline trace, byte for byte.
    const Program& p = f.sc.program;
    std::string one = to_string_with([&](std::ostream& o) { write_chrome_trace(o, p, f.sim); });
    std::string multi = to_string_with([&](std::ostream& o) { write_chrome_trace_multi(o, p, {{&f.sim, "Host", "GPU"}}); });
    CHECK(one == multi);
}

TEST_CASE("compare: SVG of both timelines") {
    Fixture f;
    TempDir tmp;
    const Program& p = f.sc.program;
    const json doc = measured_doc(p, f.sim, f.shifted, 105);
    const std::string files = cli_files(tmp, doc);
    const std::string svg = tmp.path("both.svg");
    REQUIRE(compare_cli(tmp, files + " --svg '" + svg + "'").code == 0);
    const std::string s = slurp(svg);
    CHECK(s.rfind("<?xml", 0) == 0);
    CHECK(count(s, "<svg ") == 1);
    CHECK(count(s, "</svg>") == 1);
    CHECK(s.size() >= 7);
    CHECK(s.substr(s.size() - 7) == "</svg>\n");
    CHECK(tags_balanced(s));
    Timeline meas = measured_timeline_from_json(doc, p, "m");
    CHECK(count(s, "<rect class=\"op ") == phases(f.sim) + phases(meas));
    CHECK(count(s, "<rect class=\"op gpu kernel\"") == 4);
    CHECK(count(s, "<rect class=\"op host sync\"") == 2);
    CHECK(count(s, "<rect class=\"swatch\"") == 8);
    // Title: escaped scenario name, end-to-end times and the error.
    const size_t t0 = s.find("<title>"), t1 = s.find("</title>");
    REQUIRE(t0 < t1);
    const std::string title = s.substr(t0, t1 - t0);
    CHECK_THAT(title, Contains("compare &lt;test&gt; &amp; &apos;co&apos;") && Contains("(-4.76%)") &&
                          Contains("simulated ") && Contains("measured "));
    CHECK(s.find("<test>") == std::string::npos);
    CHECK_THAT(s, Contains(">Simulated<") && Contains(">Measured<") && Contains(">stream:s<") && Contains(">host:main<"));
    // Deterministic.
    const std::string again = tmp.path("again.svg");
    REQUIRE(compare_cli(tmp, files + " --svg '" + again + "'").code == 0);
    CHECK(slurp(again) == s);
    CHECK(xml_escape("a<b>&\"'\x01") == "a&lt;b&gt;&amp;&quot;&apos;");
}

TEST_CASE("compare: steady state compares the measured iteration, from measured_from_ns") {
    // validation/runner/fake/programs/steady.json: warmup 1, two threads meeting at a barrier.
    // A measured document whose ops all sit in [0, 1.3 ms]: measured_from_ns 1 ms and
    // end_to_end_ns 0.4 ms make the measured timeline end at 1.4 ms and the compared end to end
    // 0.4 ms; the simulated one is likewise its end less its own measured_from.
    const Program p = read_program_file(HETSIM_SOURCE_DIR "/validation/runner/fake/programs/steady.json");
    REQUIRE(p.warmup == 1);
    Scenario sc = load_scenario(HETSIM_SOURCE_DIR "/scenarios/seeds/double_buffer.yaml");
    const Timeline sim = simulate(p, sc.profile);
    REQUIRE(sim.measured_from > Time{});
    json m{{"schema", "hetsim.measured"}, {"version", 1}, {"measured_from_ns", 1000000}, {"end_to_end_ns", 400000}};
    json ops = json::array();
    const uint64_t n = p.ops.size();
    for (uint32_t i = 0; i < n; ++i)
        ops.push_back({{"index", i}, {"name", p.op_name(i)}, {"host_start_ns", 1300000 * i / (n - 1) - 5}, {"host_end_ns", 1300000 * i / (n - 1)}});
    ops[0]["host_start_ns"] = 0;
    m["ops"] = ops;
    {
        // A measured iteration that starts after every op has ended, or whose end overflows.
        json late = m;
        late["measured_from_ns"] = 2000000;
        CHECK_THROWS_WITH(measured_timeline_from_json(late, p, "steady.measured.json"),
                          Contains("\"measured_from_ns\" 2000000 is after the end of every measured op (1300000 ns)"));
        json huge = m;
        huge["end_to_end_ns"] = 9223372036854000LL;  // with 1 ms before it, past INT64_MAX ps
        huge["measured_from_ns"] = 1000000;
        CHECK_THROWS_WITH(measured_timeline_from_json(huge, p, "steady.measured.json"), Contains("passes 9.2e15 ns"));
    }
    const Timeline meas = measured_timeline_from_json(m, p, "steady.measured.json");
    CHECK(meas.measured_from == Time::ms(1));
    CHECK(meas.end_to_end == Time::us(1400));
    const Comparison c = compare_timelines(p, sim, meas, 3, {Time::us(500), Time::us(300), Time::us(420)});
    CHECK(c.instrumented == Time::us(400));
    CHECK(c.measured == Time::us(420));  // the median of the uninstrumented windows
    CHECK(c.simulated == sim.end_to_end - sim.measured_from);
    // Without measured_from_ns the document cannot be a steady-state measurement of this program.
    m.erase("measured_from_ns");
    CHECK_THROWS_WITH(measured_timeline_from_json(m, p, "steady.measured.json"), Contains("no \"measured_from_ns\""));
}
