// Limits and deadlocks: the engine names the ops left pending when no event remains and what
// they wait on; the simulated-time cap stops a run; --max-ops and --max-memory stop expansion
// with a message saying how to raise them.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "frontend/limits.hpp"
#include "frontend/scenario.hpp"
#include "sim/engine.hpp"

using namespace hetsim;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

namespace {

// A hand-built program (the frontend rejects these shapes): what a lowered program file or a
// frontend bug could hand to the engine.
struct Builder {
    Program p;
    Builder(bool tasks) {
        p.tasks_form = tasks;
        p.streams.push_back(Stream{"default", StreamKind::Legacy, 0, -1});
    }
    int32_t thread(const std::string& name) {
        p.threads.push_back(HostThread{name, {}});
        return static_cast<int32_t>(p.threads.size() - 1);
    }
    int32_t stream(const std::string& name) {
        p.streams.push_back(Stream{name, StreamKind::NonBlocking, 0, -1});
        return static_cast<int32_t>(p.streams.size() - 1);
    }
    int32_t event(const std::string& name) {
        p.events.push_back(Event{name});
        return static_cast<int32_t>(p.events.size() - 1);
    }
    uint32_t op(const std::string& name, OpKind kind, int32_t thread, int32_t stream = kNone, std::vector<uint32_t> after = {}) {
        Op o;
        o.kind = kind;
        o.thread = static_cast<int16_t>(thread);
        o.stream = stream;
        o.duration = Time::us(10);
        Site site;
        site.label = static_cast<uint32_t>(p.names.size());
        p.names.push_back(name);
        o.site = static_cast<uint32_t>(p.sites.size());
        p.sites.push_back(site);
        if (p.after_index.empty()) p.after_index.push_back(0);
        for (uint32_t a : after) p.after.push_back(a);
        p.after_index.push_back(static_cast<uint32_t>(p.after.size()));
        const uint32_t i = static_cast<uint32_t>(p.ops.size());
        p.ops.push_back(o);
        if (thread >= 0) p.threads[static_cast<size_t>(thread)].ops.push_back(i);
        else p.gpu_tasks.push_back(i);
        return i;
    }
};

const HwProfile& h200() {
    static const HwProfile hw = load_scenario_text("threads: {main: [{host: x, duration: 1us}]}", "hw.yaml").profile;
    return hw;
}

std::string deadlock_message(const Program& p) {
    try {
        simulate(p, h200());
    } catch (const DeadlockError& e) {
        return e.what();
    }
    return "(no deadlock reported)";
}

}  // namespace

TEST_CASE("limits: two host threads waiting on each other deadlock, named with what they wait on") {
    // Tasks form: a on thread A waits for d on thread B, whose first op c waits for b, which
    // thread A reaches only after a. Nothing can move; the engine runs out of events.
    Builder b(true);
    int32_t ta = b.thread("A"), tb = b.thread("B");
    b.op("a", OpKind::HostWork, ta, kNone, {3});
    b.op("b", OpKind::HostWork, ta);
    b.op("c", OpKind::HostWork, tb, kNone, {1});
    b.op("d", OpKind::HostWork, tb);
    const std::string m = deadlock_message(b.p);
    INFO(m);
    CHECK_THAT(m, Contains("deadlock: 4 ops never finished when no event remained"));
    CHECK_THAT(m, Contains("\n  a (host): waits on d (after)"));
    CHECK_THAT(m, Contains("\n  b (host): its host thread 'A' never reached it (it is blocked at a)"));
    CHECK_THAT(m, Contains("\n  c (host): waits on b (after)"));
    CHECK_THAT(m, Contains("\n  d (host): its host thread 'B' never reached it (it is blocked at c)"));
}

TEST_CASE("limits: a stream waiting on work that a blocked host thread would issue deadlocks") {
    // Tasks form: kernel k on stream s runs after host op late; the host thread reaches late
    // only after sync, a stream_sync on s, which waits for k.
    Builder b(true);
    int32_t t = b.thread("main");
    int32_t s = b.stream("s");
    b.op("k", OpKind::Kernel, kNone, s, {2});
    b.op("sync", OpKind::StreamSync, t, s);
    b.op("late", OpKind::HostWork, t);
    const std::string m = deadlock_message(b.p);
    INFO(m);
    CHECK_THAT(m, Contains("deadlock: 3 ops never finished"));
    CHECK_THAT(m, Contains("\n  k (kernel): waits on late (after)"));
    CHECK_THAT(m, Contains("\n  late (host): its host thread 'main' never reached it (it is blocked at sync)"));
}

TEST_CASE("limits: an op waiting on a later op of its own thread deadlocks") {
    Builder b(true);
    int32_t t = b.thread("main");
    b.op("first", OpKind::HostWork, t, kNone, {1});
    b.op("second", OpKind::HostWork, t);
    const std::string m = deadlock_message(b.p);
    INFO(m);
    CHECK_THAT(m, Contains("deadlock: 2 ops never finished"));
    CHECK_THAT(m, Contains("first (host): waits on second (after)"));
    CHECK_THAT(m, Contains("second (host): its host thread 'main' never reached it (it is blocked at first)"));
}

TEST_CASE("limits: a deadlock of more than 10 ops lists 10 and says how many more") {
    // A chain of 14 host ops, the first waiting on the last: all 14 stuck.
    Builder b(true);
    int32_t t = b.thread("main");
    b.op("op0", OpKind::HostWork, t, kNone, {13});
    for (int k = 1; k < 14; ++k) b.op("op" + std::to_string(k), OpKind::HostWork, t);
    const std::string m = deadlock_message(b.p);
    INFO(m);
    CHECK_THAT(m, Contains("deadlock: 14 ops never finished"));
    CHECK_THAT(m, Contains("\n  op9 (host)"));
    CHECK(m.find("op10 (host)") == std::string::npos);
    CHECK_THAT(m, EndsWith("\n  ... and 4 more"));
}

TEST_CASE("limits: a program that can finish reports no deadlock") {
    // The same shape as the two-thread deadlock with the cycle broken: the check is not a false alarm.
    Builder b(true);
    int32_t ta = b.thread("A"), tb = b.thread("B");
    b.op("a", OpKind::HostWork, ta);
    b.op("b", OpKind::HostWork, ta);
    b.op("c", OpKind::HostWork, tb, kNone, {1});
    b.op("d", OpKind::HostWork, tb);
    Timeline tl = simulate(b.p, h200());
    CHECK(tl.end_to_end == Time::us(40));  // a, b on A; c (after b), d on B
}

TEST_CASE("limits: the simulated-time cap stops the run") {
    Scenario sc = load_scenario_text("threads: {main: [{repeat: 100, do: [{host: x, duration: 1ms}]}]}", "t.yaml");
    EngineOptions eo;
    eo.time_limit = Time::ms(50);
    CHECK_THROWS_WITH(simulate(sc.program, sc.profile, eo),
                      Contains("simulated time passed the limit of 50 ms; raise it with --time-limit"));
    eo.time_limit = Time::ms(100);
    CHECK(simulate(sc.program, sc.profile, eo).end_to_end == Time::ms(100));
}

TEST_CASE("limits: --max-memory stops loop expansion early with a message saying how to raise it") {
    const std::string yaml = "threads:\n  main:\n    - repeat: 1000000\n      do:\n        - host: step\n          duration: 1us\n";
    LoadOptions lo;
    // 1 MiB: about 8400 ops at 40 (Op) + 4 (loop index) + 80 (kRunBytesPerOp) bytes each; the cap
    // is checked every 1024 ops, so the first check past it is at 9216 (1.09 MiB).
    lo.max_memory = uint64_t{1} << 20;
    try {
        load_scenario_text(yaml, "big.yaml", lo);
        FAIL("no error");
    } catch (const InputError& e) {
        const std::string m = e.what();
        INFO(m);
        CHECK(m.rfind("big.yaml:5:11: error: the scenario needs more memory than the cap of 1 MiB (--max-memory): at 9216 ops", 0) == 0);
        CHECK_THAT(m, Contains("raise the cap with --max-memory"));
    }
    // The same loop at 2000 iterations fits, and the default cap does not get in the way.
    const std::string small = "threads:\n  main:\n    - repeat: 2000\n      do:\n        - host: step\n          duration: 1us\n";
    CHECK(load_scenario_text(small, "small.yaml", lo).program.ops.size() == 2000);
    CHECK(LoadOptions{}.max_memory > (uint64_t{64} << 20));
    CHECK(estimated_run_bytes(load_scenario_text(small, "small.yaml", lo).program) >= 2000 * kRunBytesPerOp);
    // A JSON report costs more per op (4124 bytes): the same cap stops the same loop sooner, at
    // the check at 256 ops (a power of two: 1.01 MiB).
    lo.run_bytes_per_op = kJsonRunBytesPerOp;
    CHECK_THROWS_WITH(load_scenario_text(small, "small.yaml", lo), Contains("at 256 ops it already needs about"));
}

TEST_CASE("limits: --max-memory and --max-ops on the command line") {
    using hetsim_test::cli;
    hetsim_test::Cli r = cli("run scenarios/examples/chunked_pipeline.yaml --max-memory 4KiB");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("scenarios/examples/chunked_pipeline.yaml:") &&
                          Contains(": error: the scenario needs more memory than the cap of 4 KiB (--max-memory)"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    r = cli("run scenarios/examples/chunked_pipeline.yaml --max-memory lots");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--max-memory: error: ") && Contains("expected a size such as 8GiB"));
    r = cli("run scenarios/examples/chunked_pipeline.yaml --max-memory 2s");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "--max-memory: error: expected a size such as 8GiB (0: no cap), got '2s'\n");
    r = cli("run scenarios/examples/chunked_pipeline.yaml --max-memory 0 --format json");
    CHECK(r.exit_code == 0);
    r = cli("run scenarios/examples/chunked_pipeline.yaml --max-ops 5");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("raise the cap with --max-ops"));
    r = cli("compare tests/bad/measured/scenario.yaml tests/bad/measured/06_other_schema.json --max-memory 1B");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("(--max-memory)"));
}

namespace {
// Peak RSS in bytes of `hetsim ARGS` run from the repository root (wait4's ru_maxrss of the
// process itself: the shell execs it), or 0 when it failed.
uint64_t peak_rss(const std::string& args) {
    const std::string cmd = "cd '" HETSIM_SOURCE_DIR "' && exec '" HETSIM_CLI_PATH "' " + args + " >/dev/null 2>&1";
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    int status = 0;
    struct rusage ru {};
    if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 0;
    return static_cast<uint64_t>(ru.ru_maxrss) * 1024;
}
}  // namespace

TEST_CASE("limits: the --max-memory estimate is within 25% of the peak RSS of the run", "[limits][memory]") {
#if defined(__SANITIZE_ADDRESS__)
    WARN("not measured under AddressSanitizer: its shadow memory and quarantine are not the run's own memory");
#else
    // The pipeline of bench/analysis_pipeline.yaml (3n + 1 ops) with each output the estimate
    // counts; the estimate of each command is what its lowering checks against the cap. Sizes:
    // large enough that the process's own 7 MB are under 10% of the peak.
    struct Case {
        int64_t n;
        std::string args;
        uint64_t per_op;
    };
    const std::vector<Case> cases = {
        {333'333, "run bench/analysis_pipeline.yaml --no-suggest", run_bytes_per_op(false, false, false)},
        {100'000, "run bench/analysis_pipeline.yaml --no-suggest --csv -", run_bytes_per_op(false, false, true)},
        {20'000, "run bench/analysis_pipeline.yaml --no-suggest --format json", run_bytes_per_op(true, false, false)},
        {20'000, "run bench/analysis_pipeline.yaml --no-suggest --trace -", run_bytes_per_op(false, true, false)},
        {20'000, "lower bench/analysis_pipeline.yaml", kLowerBytesPerOp},
    };
    const std::string yaml = hetsim_test::slurp(std::filesystem::path(HETSIM_SOURCE_DIR) / "bench" / "analysis_pipeline.yaml");
    for (const Case& c : cases) {
        LoadOptions lo;
        lo.sets = {{"n", std::to_string(c.n)}};
        const Program p = load_scenario_text(yaml, "analysis_pipeline.yaml", lo).program;
        const uint64_t estimate = estimated_run_bytes(p, c.per_op);
        const uint64_t rss = peak_rss(c.args + " --set n=" + std::to_string(c.n));
        INFO(c.args << " at " << p.ops.size() << " ops: estimate " << estimate << " bytes, peak RSS " << rss);
        REQUIRE(rss > 0);
        CHECK(static_cast<double>(estimate) >= 0.8 * static_cast<double>(rss));
        CHECK(static_cast<double>(estimate) <= 1.25 * static_cast<double>(rss));
    }
#endif
}
