// Scenarios that say what real programs do (issue 11): host queues between threads, callback
// flags, threads created and joined inside the run, graph DAGs, the tasks form with loops, and
// steady state (measure: {warmup: K}). Each timeline is derived by hand in the comment above its
// checks, from `zero_latency: true` and the parameters each scenario sets.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/program_json.hpp"
#include "engine_test_util.hpp"

using namespace hetsim;
using namespace hetsim::enginetest;

namespace {
// A scenario on h200 with zero latencies, the profile lines `extra` and the rest `body`, loaded
// with the --set values `sets`.
Scenario load_with(const std::string& extra, const std::string& body, const std::vector<std::pair<std::string, std::string>>& sets) {
    LoadOptions o;
    o.sets = sets;
    return load_scenario_text("hardware:\n  profile: h200\n  zero_latency: true\n" + extra + body, "t.yaml", o);
}
Sim run_with(const std::string& extra, const std::string& body) {
    return run("hardware:\n  profile: h200\n  zero_latency: true\n" + extra + body);
}
// The program written as the lowered-program JSON and read back (what hetsim-runner reads).
Program through_json(const Program& p, const std::string& name) { return program_from_json(program_to_json(p, name), name + ".json"); }
const std::string kQueueCosts = R"(  host.queue_put_cost: 1us
  host.queue_get_cost: 2us
  host.queue_wakeup: 10us
)";
std::string handoff(const char* load, const char* train, int capacity) {
    return std::string("queues:\n  q: {capacity: ") + std::to_string(capacity) + R"(}
threads:
  loader:
    - repeat: 3
      do:
        - host: load
          duration: )" + load + R"(
        - put: q
  trainer:
    - repeat: 3
      do:
        - get: q
        - host: train
          duration: )" + train + "\n";
}
}  // namespace

TEST_CASE("host queue: a trainer-bound hand-off blocks the loader's put on a full queue", "[engine][handoff]") {
    // Capacity 1; put 1 us, get 2 us, a woken thread 10 us after what released it.
    // trainer get[0] at 0: empty, waits. load[0] 0-100; put[0] at 100 hands its item to the
    // waiting getter: put returns 101, get[0] returns 101 + 10 + 2 = 113; train[0] 113-413.
    // load[1] 101-201; put[1] 201-202 (the queue has room). load[2] 202-302; put[2] at 302: full,
    // waits. get[1] at 413 takes put[1]'s item: 413-415, and the slot goes to put[2], which returns
    // 415 + 10 + 1 = 426. train[1] 415-715; get[2] 715-717 (item ready at 426); train[2] 717-1017.
    Sim s = run_with(kQueueCosts, handoff("100us", "300us", 1));
    check_host(s, "put:q[0]", us(100), us(101));
    check_host(s, "get:q[0]", Time{}, us(113));
    check_host(s, "put:q[1]", us(201), us(202));
    check_host(s, "put:q[2]", us(302), us(426));
    check_host(s, "get:q[1]", us(413), us(415));
    check_host(s, "get:q[2]", us(715), us(717));
    check_host(s, "train[2]", us(717), us(1017));
    CHECK(show(s.tl.end_to_end) == show(us(1017)));
    CHECK(s.tl.ops[s.sc.program.ops.size() - 1].host_cause.kind == CauseKind::ProgramOrder);
}

TEST_CASE("host queue: a loader-bound hand-off blocks the trainer's get on an empty queue", "[engine][handoff]") {
    // Capacity 2, a batch every 300 us, a step of 100 us: every get waits for the next put.
    // load[0] 0-300; put[0] 300-301 releases get[0] at 301 + 10 + 2 = 313; train[0] 313-413;
    // get[1] waits from 413. load[1] 301-601; put[1] 601-602; get[1] returns 614; train[1]
    // 614-714. load[2] 602-902; put[2] 902-903; get[2] 714-915; train[2] 915-1015.
    Sim s = run_with(kQueueCosts, handoff("300us", "100us", 2));
    check_host(s, "get:q[0]", Time{}, us(313));
    check_host(s, "get:q[1]", us(413), us(614));
    check_host(s, "get:q[2]", us(714), us(915));
    check_host(s, "put:q[2]", us(902), us(903));
    check_host(s, "train[2]", us(915), us(1015));
    CHECK(s.op("get:q[2]").host_cause.kind == CauseKind::HostQueue);
    // Several producers: two loaders of 3 batches each into one queue, one trainer of 6.
    Sim two = run_with(kQueueCosts, R"(queues:
  q: {capacity: 2}
threads:
  loader:
    count: 2
    var: w
    ops:
      - repeat: 3
        do:
          - host: load
            name: load${w}
            duration: 300us
          - put: q
            name: put${w}
  trainer:
    - repeat: 6
      do:
        - get: q
        - host: train
          duration: 100us
)");
    // Both loaders put at 300: loader[0] first hands its item to the waiting get[0] (returns 313),
    // loader[1]'s is queued (ready 301); get[1] at 413 takes it at once: 413-415, train[1] 415-515.
    check_host(two, "get:q[0]", Time{}, us(313));
    check_host(two, "get:q[1]", us(413), us(415));
    check_host(two, "load1[0]", Time{}, us(300));
    CHECK(two.sc.program.threads.size() == 3);
    CHECK(two.sc.program.threads[1].name == "loader[1]");
}

TEST_CASE("host queue: a get that can never be served is named in the deadlock message", "[engine][handoff]") {
    const std::string yaml = R"(hardware: {profile: h200, zero_latency: true}
queues:
  q: {capacity: 2}
threads:
  loader:
    - put: q
  trainer:
    - repeat: 2
      do:
        - get: q
)";
    Scenario sc = load_scenario_text(yaml, "t.yaml");
    try {
        simulate(sc.program, sc.profile);
        FAIL("no deadlock reported");
    } catch (const DeadlockError& e) {
        const std::string msg = e.what();
        INFO(msg);
        CHECK(msg.find("get:q[1] (get): waits for a put into host queue 'q', which stays empty") != std::string::npos);
    }
}

TEST_CASE("host_wait: a host thread waits for a host_func callback to set a flag", "[engine][handoff]") {
    // The kernel runs 0-100 on s; the callback after it 100-120 and sets `done` when it ends;
    // the waiting thread runs again host.flag_wakeup = 5 us later: host_wait 0-125, then after
    // 125-135. A second wait finds the set the second callback made before it (counted).
    Sim s = run_with("  host.flag_wakeup: 5us\n", R"(streams: [s]
flags: [done]
threads:
  main:
    - kernel: k
      stream: s
      duration: 100us
    - host_func: cb
      stream: s
      duration: 20us
      sets: done
    - host_wait: done
    - host: after
      duration: 10us
)");
    check_gpu(s, "cb", us(100), us(120));
    check_host(s, "host_wait:done", Time{}, us(125));
    check_host(s, "after", us(125), us(135));
    CHECK(s.op("host_wait:done").host_cause.kind == CauseKind::Flag);
    // Two sets before any wait: cb1 100-120 and cb2 120-140 each set `done` (counted: 2 pending);
    // the host is busy 0-500, then both waits find a set and return at once, 500-500.
    Sim two = run_with("  host.flag_wakeup: 5us\n", R"(streams: [s]
flags: [done]
threads:
  main:
    - kernel: k
      stream: s
      duration: 100us
    - host_func: cb1
      stream: s
      duration: 20us
      sets: done
    - host_func: cb2
      stream: s
      duration: 20us
      sets: done
    - host: busy
      duration: 500us
    - host_wait: done
      name: w1
    - host_wait: done
      name: w2
)");
    check_gpu(two, "cb2", us(120), us(140));
    check_host(two, "w1", us(500), us(500));
    check_host(two, "w2", us(500), us(500));
    // A graph's host_func node sets a flag too (graphs are read after the flags they name).
    Sim g = run_with("  host.flag_wakeup: 5us\n", R"(streams: [s]
flags: [done]
graphs:
  step:
    - kernel: k
      duration: 100us
    - host_func: cb
      duration: 20us
      sets: done
threads:
  main:
    - graph_instantiate: step
    - graph_launch: step
      stream: s
    - host_wait: done
)");
    const OpRecord& cb = g.op("cb");
    CHECK(cb.gpu_end - cb.gpu_start == us(20));
    CHECK(g.op("host_wait:done").host_end == cb.gpu_end + us(5));
}

TEST_CASE("start_after and join: threads created and joined inside the run", "[engine][handoff]") {
    // spawn 0-10 creates the worker host.thread_start = 20 us later: work 30-130. main's join
    // at 10 waits until work ends and returns host.join_wakeup = 7 us after: 10-137; tail 137-142.
    const std::string hw = "  host.thread_start: 20us\n  host.join_wakeup: 7us\n";
    Sim s = run_with(hw, R"(threads:
  main:
    - host: spawn
      duration: 10us
    - join: worker
    - host: tail
      duration: 5us
  worker:
    start_after: spawn
    ops:
      - host: work
        duration: 100us
)");
    check_host(s, "work", us(30), us(130));
    check_host(s, "join:worker", us(10), us(137));
    check_host(s, "tail", us(137), us(142));
    // An array: `join: workers` joins workers[0] then workers[1]; spawn[k] creates workers[k].
    // spawn[0] 0-10, spawn[1] 10-20; workers[k] start 30 and 40, run (k + 1) * 100 us: work0
    // 30-130, work1 40-240. join:workers[0] 20-137; join:workers[1] 137-247; tail 247-252.
    Sim a = run_with(hw, R"(threads:
  main:
    - repeat: 2
      do:
        - host: spawn
          duration: 10us
    - join: workers
    - host: tail
      duration: 5us
  workers:
    count: 2
    var: w
    start_after: spawn
    ops:
      - host: work
        name: work${w}
        duration: (w + 1) * 100us
)");
    check_host(a, "work0", us(30), us(130));
    check_host(a, "work1", us(40), us(240));
    check_host(a, "join:workers[0]", us(20), us(137));
    check_host(a, "join:workers[1]", us(137), us(247));
    check_host(a, "tail", us(247), us(252));
    // The same with the index variable in start_after (spawn[${w}]): the same starts.
    std::string by_var = R"(threads:
  main:
    - repeat: 2
      do:
        - host: spawn
          duration: 10us
    - join: workers
  workers:
    count: 2
    var: w
    start_after: spawn[${w}]
    ops:
      - host: work
        name: work${w}
        duration: (w + 1) * 100us
)";
    Sim v = run_with(hw, by_var);
    check_host(v, "work0", us(30), us(130));
    check_host(v, "work1", us(40), us(240));
    CHECK(v.sc.program.threads[1].start_after == 0);
    CHECK(v.sc.program.threads[2].start_after == 1);
}

namespace {
// stem -> (left, right) -> head; `left_grid` blocks of 1024 threads with 64 registers each (one
// block per SM: 65536 registers), so 66 leave room for the other branch and 132 fill the GPU.
std::string fork_join(int grid, bool dag) {
    const std::string g = std::to_string(grid);
    return std::string(R"(streams: [s]
graphs:
  g:
    - kernel: stem
      duration: 100us
      grid: 132
      block: 1024
      registers: 64
)") + (dag ? "      id: stem\n" : "") + R"(    - kernel: left
      duration: 1ms
      grid: )" + g + "\n      block: 1024\n      registers: 64\n" + (dag ? "      id: left\n      after: [stem]\n" : "") +
           R"(    - kernel: right
      duration: 1ms
      grid: )" + g + "\n      block: 1024\n      registers: 64\n" + (dag ? "      id: right\n      after: [stem]\n" : "") +
           R"(    - kernel: head
      duration: 100us
      grid: 132
      block: 1024
      registers: 64
)" + (dag ? "      after: [left, right]\n" : "") + R"(threads:
  main:
    - graph_instantiate: g
    - graph_launch: g
      stream: s
    - stream_sync: s
)";
}
}  // namespace

TEST_CASE("graph DAG: branches with no path between them run side by side when the SMs have room", "[engine][handoff]") {
    // With room (66 + 66 of 132 SMs): stem 0-100, left and right both 100-1100, head 1100-1200.
    Sim room = run_with("", fork_join(66, true));
    check_gpu(room, "stem", Time{}, us(100));
    check_gpu(room, "left", us(100), us(1100));
    check_gpu(room, "right", us(100), us(1100));
    check_gpu(room, "head", us(1100), us(1200));
    // Without room (132 blocks each fill every SM): one branch runs 100-1100 and the other waits
    // for its SMs, 1100-2100 (which goes first is the SM scheduler's choice); head 2100-2200.
    Sim full = run_with("", fork_join(132, true));
    const Time l = full.op("left").gpu_start, r = full.op("right").gpu_start;
    CHECK(show(min(l, r)) == show(us(100)));
    CHECK(show(max(l, r)) == show(us(1100)));
    check_gpu(full, "head", us(2100), us(2200));
    // The same nodes as a chain (no id/after) run one after the other even with room.
    Sim chain = run_with("", fork_join(66, false));
    check_gpu(chain, "right", us(1100), us(2100));
    CHECK(chain.sc.program.graphs[0].chain());
    // A node named before the node it waits for is put after it (a dependency order).
    Sim fwd = run_with("", R"(streams: [s]
graphs:
  g:
    - kernel: b
      duration: 10us
      grid: 1
      after: [a]
    - kernel: a
      id: a
      duration: 20us
      grid: 1
      after: []
threads:
  main:
    - graph_instantiate: g
    - graph_launch: g
      stream: s
    - stream_sync: s
)");
    check_gpu(fwd, "a", Time{}, us(20));
    check_gpu(fwd, "b", us(20), us(30));
}

TEST_CASE("graph DAG: the lowered program carries the dependencies through JSON", "[engine][handoff]") {
    Sim room = run_with("", fork_join(66, true));
    const Program& p = room.sc.program;
    REQUIRE(p.graphs[0].after_index == std::vector<uint32_t>{0, 0, 1, 2, 4});
    CHECK(p.graphs[0].after == std::vector<uint32_t>{0, 0, 1, 2});
    Program back = through_json(p, "x");
    CHECK(back.graphs[0].after_index == p.graphs[0].after_index);
    CHECK(back.graphs[0].after == p.graphs[0].after);
    Timeline t = simulate(back, room.sc.profile);
    CHECK(show(t.end_to_end) == show(us(1200)));
}

TEST_CASE("tasks form: repeat blocks and params make a sweepable dependency graph", "[engine][handoff]") {
    // n = 3 iterations of load (host, 100 us) -> up (H2D 1 MB at 1 GB/s = 1000 us) on s.
    // load[i] on main: 0-100, 100-200, 200-300. up[0] 100-1100, up[1] 1100-2100 (stream order),
    // up[2] 2100-3100. fin (after up[n - 1] = up[2]) is reached at 300, after load[2] on main,
    // waits for up[2] to end at 3100 and runs 3100-3110: its host phase 300-3110.
    const std::string body = R"(params: {n: 3}
streams: [s]
tasks:
  batches:
    repeat: ${n}
    do:
      load: {host: load, duration: 100us}
      up: {memcpy_async: up, direction: h2d, bytes: 1MB, stream: s, after: [load]}
  fin: {host: fin, duration: 10us, after: ["up[n - 1]"]}
)";
    Sim s = run_with("  copy.h2d.bandwidth: 1GB/s\n", body);
    check_host(s, "load[2]", us(200), us(300));
    check_gpu(s, "up[0]", us(100), us(1100));
    check_gpu(s, "up[2]", us(2100), us(3100));
    check_host(s, "fin", us(300), us(3110));
    // fin's after entry names up[2] (op 5); the loop's after: [load] names load[i] of its iteration.
    const Program& p = s.sc.program;
    REQUIRE(p.ops.size() == 7);
    CHECK(std::vector<uint32_t>(p.after_begin(6), p.after_end(6)) == std::vector<uint32_t>{5});
    CHECK(std::vector<uint32_t>(p.after_begin(3), p.after_end(3)) == std::vector<uint32_t>{2});
    // --set n=1: one load and one upload.
    Scenario one = load_with("  copy.h2d.bandwidth: 1GB/s\n", body, {{"n", "1"}});
    CHECK(one.program.ops.size() == 3);  // load[0] 0-100, up[0] 100-1100, fin 1100-1110
    CHECK(show(simulate(one.program, one.profile).end_to_end) == show(us(1110)));
}

// ---------------------------------------------------------------- steady state

namespace {
Time measured(const Sim& s) { return s.tl.end_to_end - s.tl.measured_from; }
}  // namespace

TEST_CASE("measure warmup: module loading happens in the first iteration only (cold_start)", "[engine][handoff]") {
    // Iteration 0: the launch loads the module (50 us of host time): call 0-50, GPU 50-60, sync
    // to 60; the barrier's device sync returns at 60 and the measured iteration starts there:
    // k 60-70 with no load. Measured 10 us; one cold pass is 60 us.
    const std::string body = R"(options: {cold_start: true}
measure: {warmup: 1}
streams: [s]
threads:
  main:
    - kernel: k
      stream: s
      duration: 10us
    - stream_sync: s
)";
    Sim s = run_with("  host.module_load_cost: 50us\n", body);
    const Program& p = s.sc.program;
    REQUIRE(p.ops.size() == 5);  // k, sync, barrier, k, sync
    CHECK(p.ops[2].kind == OpKind::Barrier);
    CHECK(p.ops[0].warmup);
    CHECK(p.ops[2].warmup);
    CHECK_FALSE(p.ops[3].warmup);
    CHECK(show(s.tl.ops[0].gpu_start) == show(us(50)));
    CHECK(show(s.tl.measured_from) == show(us(60)));
    CHECK(show(s.tl.ops[3].gpu_start) == show(us(60)));
    CHECK(show(measured(s)) == show(us(10)));
}

namespace {
const std::string kWarmHw = R"(  host.pageable_h2d_bandwidth: 1GB/s
  host.pageable_h2d_warm_bandwidth: 2GB/s
  host.staging_cache: 3MB
  host.staging_cache_near: 0B
  copy.h2d.bandwidth: 100GB/s
)";
}  // namespace

TEST_CASE("measure warmup: a pageable source copied in the warm-up is warm in the measured iteration", "[engine][handoff]") {
    // 1 MB pageable at 1 GB/s cold: the first copy's host phase 0-1000 us. The measured one
    // stages at the warm 2 GB/s: 500 us.
    const std::string body = R"(params: {warm: 1}
measure: {warmup: "${warm}"}
buffers:
  a: {kind: pageable, size: 1MB}
  d: {kind: device, size: 1MB}
threads:
  main:
    - memcpy: up
      src: a
      dst: d
)";
    Sim s = run_with(kWarmHw, body);
    REQUIRE(s.sc.program.ops.size() == 3);
    const auto staged = [&](uint32_t i) { return s.tl.ops[i].host_end - s.tl.ops[i].host_start; };
    CHECK(show(staged(0)) == show(us(1000)));
    CHECK(show(staged(2)) == show(us(500)));
    // --set warm=0: one cold pass, no barrier.
    Scenario cold = load_with(kWarmHw, body, {{"warm", "0"}});
    CHECK(cold.program.ops.size() == 1);
    CHECK(cold.program.warmup == 0);
    // Host work that writes the buffer first warms it too (writes: the CPU caches hold it).
    Sim w = run_with(kWarmHw, R"(buffers:
  a: {kind: pageable, size: 1MB}
  p: {kind: pinned, size: 1MB}
  d: {kind: device, size: 1MB}
threads:
  main:
    - host: fill
      duration: 10us
      writes: [a, p]
    - memcpy: up
      src: a
      dst: d
)");
    check_host(w, "up", us(10), us(510));
}

TEST_CASE("measure warmup: managed pages stay where the last iteration left them", "[engine][handoff]") {
    // um (8 MiB, on the host) faults to the device in iteration 0: 8388608 B at 0.5 GB/s =
    // 16777.216 us before k's 100 us: k 0-16877.216. Iteration 1 starts at 16877.216 (the
    // barrier) and k pays no faults: 100 us. A host read in the body faults it back each time:
    // the host op reads 8 MiB at 0.5 GB/s too, so the measured kernel faults again.
    const std::string hw = "  um.block_size: 2MiB\n  um.fault_bandwidth: 0.5GB/s\n";
    const std::string body = R"(measure: {warmup: 1}
buffers:
  um: {kind: managed, size: 8MiB}
streams: [s]
threads:
  main:
    - kernel: k
      stream: s
      duration: 100us
      grid: 1
      uses: [um]
    - stream_sync: s
)";
    Sim s = run_with(hw, body);
    CHECK(show(s.tl.ops[0].gpu_end) == show(ns(16'877'216)));
    CHECK(show(s.tl.measured_from) == show(ns(16'877'216)));
    CHECK(show(measured(s)) == show(us(100)));
    Sim back = run_with(hw, R"(measure: {warmup: 1}
buffers:
  um: {kind: managed, size: 8MiB}
streams: [s]
threads:
  main:
    - host: read
      duration: 10us
      reads: [um]
    - kernel: k
      stream: s
      duration: 100us
      grid: 1
      uses: [um]
    - stream_sync: s
)");
    // Iteration 1: read 10 us + 16777.216 us of faults back to the host, then k faults again.
    const OpRecord& k1 = back.tl.ops[5];
    CHECK(show(k1.gpu_end - k1.gpu_start) == show(ns(16'877'216)));
}

TEST_CASE("measure warmup: allocation calls cost the same in every iteration (no pool state is modelled)", "[engine][handoff]") {
    // malloc_async 2 us and free_async 2 us each iteration (docs/model.md: the pool is not
    // modelled); the barrier between iterations waits for the device (idle): iteration 0 0-4,
    // iteration 1 4-8.
    Sim s = run_with("  host.malloc_async_cost: 2us\n", R"(measure: {warmup: 1}
buffers:
  d: {kind: device, size: 1MB}
streams: [s]
threads:
  main:
    - malloc_async: d
      stream: s
    - free_async: d
      stream: s
)");
    CHECK(show(s.tl.measured_from) == show(us(4)));
    CHECK(show(measured(s)) == show(us(4)));
}

TEST_CASE("measure warmup: every thread meets at the barrier between iterations", "[engine][handoff]") {
    // a runs 100 us, b 300 us per iteration; the barrier releases both at 300; iteration 1 ends
    // at 600 (b), a's second op runs 300-400.
    Sim s = run_with("", R"(measure: {warmup: 1}
threads:
  a:
    - host: x
      duration: 100us
  b:
    - host: y
      duration: 300us
)");
    CHECK(show(s.tl.measured_from) == show(us(300)));
    CHECK(show(s.tl.ops[2].host_start) == show(us(300)));
    CHECK(show(s.tl.ops[2].host_end) == show(us(400)));
    CHECK(show(s.tl.end_to_end) == show(us(600)));
}

TEST_CASE("count before expanding: thread arrays, joins of arrays and warm-up iterations", "[lowering][handoff]") {
    // loader[0..3]: 10 host ops each (40); main: join: loader (4 joins) = 44 ops. With
    // measure: {warmup: 1} (a join is then an error, so main does one host op instead): 41 ops
    // twice, and a barrier per thread (5): 87.
    const std::string body = R"(threads:
  main:
    - join: loader
  loader:
    count: 4
    var: w
    ops:
      - repeat: 10
        do:
          - host: load
            name: load${w}
            duration: 1us
)";
    auto load = [&](const std::string& yaml, uint64_t max_ops) {
        LoadOptions o;
        o.max_ops = max_ops;
        return load_scenario_text(yaml, "count.yaml", o);
    };
    Scenario sc = load(body, 44);
    CHECK(sc.program.ops.size() == 44);
    CHECK(sc.program.ops.capacity() == 44);  // reserved at the exact count
    CHECK(sc.program.threads[0].ops.size() == 4);
    CHECK_THROWS_WITH(load(body, 43), Catch::Contains("expands to more than 43 ops"));
    const std::string warm = "measure: {warmup: 1}\n" + body;
    CHECK_THROWS_WITH(load(warm, 1000), Catch::Contains("join with measure"));  // a join cannot be repeated
    std::string nojoin = warm;
    nojoin.replace(nojoin.find("    - join: loader\n"), 19, "    - host: m\n      duration: 1us\n");
    Scenario w = load(nojoin, 1 + 40 + 1 + 40 + 5);
    CHECK(w.program.ops.size() == 87);
    CHECK(w.program.ops.capacity() == 87);
    CHECK_THROWS_WITH(load(nojoin, 86), Catch::Contains("expands to more than 86 ops"));
}

TEST_CASE("program JSON: queues, flags, thread starts, joins, DAG graphs and warm-up survive the round trip", "[handoff]") {
    // The lowered program the runner reads simulates to the same timeline as the one lowered here.
    int checked = 0;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(HETSIM_SOURCE_DIR) / "scenarios" / "validation")) {
        const std::string name = e.path().filename().string();
        if (e.path().extension() != ".yaml" || name < "78" || name > "9") continue;
        INFO(name);
        Scenario sc = load_scenario(e.path().string());
        Program back = through_json(sc.program, sc.name);
        CHECK(back.queues.size() == sc.program.queues.size());
        CHECK(back.flags.size() == sc.program.flags.size());
        CHECK(back.warmup == sc.program.warmup);
        const Timeline a = simulate(sc.program, sc.profile), b = simulate(back, sc.profile);
        CHECK(show(a.end_to_end) == show(b.end_to_end));
        CHECK(show(a.measured_from) == show(b.measured_from));
        ++checked;
    }
    CHECK(checked == 12);
    Sim s = run_with("  host.thread_start: 20us\n  host.join_wakeup: 7us\n", R"(threads:
  main:
    - host: spawn
      duration: 10us
    - join: worker
  worker:
    start_after: spawn
    ops:
      - host: work
        duration: 100us
)");
    Program back = through_json(s.sc.program, "x");
    CHECK(back.threads[1].start_after == 0);
    CHECK(back.ops[1].target == 1);
    CHECK(show(simulate(back, s.sc.profile).end_to_end) == show(us(137)));
}

TEST_CASE("host queue arrays: each loader puts into its own queue, the trainer takes them in turn", "[handoff]") {
    // loader[w] puts into b[w]; the trainer gets b[i % 2]. With put 1 us, get 2 us, wake-up 10 us:
    // both loads 0-100; get b[0] at 0 waits, put b[0] 100-101 releases it at 113; b[1]'s item is
    // queued (ready 101), so get b[1] at 113 takes it at once: 113-115.
    Sim s = run_with(kQueueCosts, R"(queues:
  b: {capacity: 1, count: 2}
threads:
  loader:
    count: 2
    var: w
    ops:
      - host: load
        name: load${w}
        duration: 100us
      - put: b[${w}]
  trainer:
    - repeat: 2
      do:
        - get: b[i % 2]
)");
    const Program& p = s.sc.program;
    REQUIRE(p.queues.size() == 2);
    CHECK(p.queues[1].name == "b[1]");
    CHECK(p.ops[1].queue == 0);
    CHECK(p.ops[3].queue == 1);
    check_host(s, "get:b[0][0]", Time{}, us(113));
    check_host(s, "get:b[1][1]", us(113), us(115));
}
