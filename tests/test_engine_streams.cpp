// Engine tests, part 2: the legacy default stream, host threads, event binding, the tasks
// form, loops, the seed's double buffering and determinism. Every expected time is computed by
// hand from docs/model.md; the engine must match to the picosecond.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine_test_util.hpp"

using namespace hetsim;
using namespace hetsim::enginetest;

TEST_CASE("engine: legacy default stream serialises with blocking streams only", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
  gpu.event_gap: 3us
streams:
  sb: {}
  snb: {kind: non_blocking}
threads:
  main:
    - kernel: kA
      stream: sb
      duration: 100us
    - kernel: kN
      stream: snb
      duration: 100us
    - kernel: kL
      duration: 50us
    - kernel: kB
      stream: sb
      duration: 20us
    - kernel: kN2
      stream: snb
      duration: 20us
)");
    // kA call 0-1: 3-103. kN call 1-2: 4-104 (non-blocking: no legacy ties).
    check_gpu(s, "kA", us(3), us(103));
    check_gpu(s, "kN", us(4), us(104));
    // kL (legacy) call 2-3: ready 5; waits for the blocking stream sb: 103 + event_gap 3 = 106.
    check_gpu(s, "kL", us(106), us(156));
    CHECK(s.op("kL").gpu_cause.kind == CauseKind::Legacy);
    // kB (blocking) call 3-4: ready 6; stream order 104; legacy kL 156 + 3 = 159.
    check_gpu(s, "kB", us(159), us(179));
    // kN2 (non-blocking) call 4-5: ready 7; stream order 104 + 1 = 105; ignores kL.
    check_gpu(s, "kN2", us(105), us(125));
    check_end(s, us(179));
}

TEST_CASE("engine: two host threads launch into the same stream", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
streams: [s1]
threads:
  t1:
    - host: a
      duration: 30us
    - kernel: k1
      stream: s1
      duration: 100us
  t2:
    - host: b
      duration: 20us
    - kernel: k2
      stream: s1
      duration: 50us
)");
    // The threads run concurrently; stream order follows the simulated call times, so k2
    // (called at 20) goes before k1 (called at 30) though t1 is declared first.
    check_host(s, "a", us(0), us(30));
    check_host(s, "b", us(0), us(20));
    check_host(s, "k2", us(20), us(21));
    check_gpu(s, "k2", us(23), us(73));
    // k1: call 30-31, ready 33; stream order after k2: 73 + 1 = 74.
    check_host(s, "k1", us(30), us(31));
    check_gpu(s, "k1", us(74), us(174));
    check_end(s, us(174));
}

TEST_CASE("engine: a stream wait binds the last record issued before it in simulated time", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.event_record_cost: 1us
  host.stream_wait_event_cost: 1us
  gpu.launch_latency: 2us
streams: [s1, s2]
events: [ev]
threads:
  a:
    - kernel: k1
      stream: s1
      duration: 100us
    - event_record: ev
      name: rec1
      stream: s1
    - host: wa
      duration: 50us
    - kernel: k3
      stream: s1
      duration: 100us
    - event_record: ev
      name: rec2
      stream: s1
  b:
    - host: wb
      duration: 60us
    - stream_wait_event: ev
      name: wait
      stream: s2
    - kernel: k2
      stream: s2
      duration: 10us
)");
    // Thread a: k1 call 0-1, GPU 3-103; rec1 call 1-2, at 103; wa 2-52; k3 call 52-53, after
    // rec1 (a marker, no gap): 103-203; rec2 call 53-54, at 203.
    check_gpu(s, "rec1", us(103), us(103));
    check_gpu(s, "k3", us(103), us(203));
    check_host(s, "rec2", us(53), us(54));
    check_gpu(s, "rec2", us(203), us(203));
    // Thread b calls the wait at 60, after rec2 was issued (53): it binds rec2, not rec1.
    check_host(s, "wait", us(60), us(61));
    check_gpu(s, "wait", us(203), us(203));
    // k2: call 61-62, after the wait marker: 203-213.
    check_gpu(s, "k2", us(203), us(213));
    check_end(s, us(213));
}

TEST_CASE("engine: synchronous memset in the legacy stream, prefetch to the host", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.memset_call_cost: 1us
  host.prefetch_call_cost: 1us
  host.sync_wakeup: 3us
  gpu.launch_latency: 2us
  gpu.event_gap: 1us
  copy.memset.bandwidth: 10GB/s
  um.prefetch_d2h_bandwidth: 10GB/s
  um.cpu_fault_bandwidth: 1GB/s
buffers:
  um: {kind: managed, size: 1MB, resident: device}
  d: {kind: device, size: 1MB}
streams: [s1]
threads:
  main:
    - kernel: k
      stream: s1
      duration: 100us
    - memset: ms
      dst: d
    - prefetch: um
      to: host
      stream: s1
    - host: h
      duration: 10us
      uses: [um]
)");
    // k: call 0-1, GPU 3-103.
    check_gpu(s, "k", us(3), us(103));
    // memset (legacy stream): call 1-2; ready 4; waits for s1's k: 103 + event_gap 1 = 104;
    // 1e6 / 1e10 = 100 us -> 204. cudaMemset of device memory does not wait for its GPU work
    // (sync_call_waits): the host returns at 2, having waited nothing.
    check_gpu(s, "ms", us(104), us(204));
    check_host(s, "ms", us(1), us(2));
    check_wait(s, "ms", us(0));
    // prefetch to the host on the D2H engine: call 2-3; ready 5, but s1 waits for the legacy
    // stream's memset: 204 + event_gap 1 = 205. Host work h (from 3) touches the buffer first
    // and faults it back to the host, so at 205 the prefetch finds nothing to move.
    check_host(s, "prefetch:um", us(2), us(3));
    check_gpu(s, "prefetch:um", us(205), us(205));
    CHECK(s.op("prefetch:um").engine == Engine::D2H);
    // h at 3 does not wait for the prefetch (no sync), and um is still on the device: it
    // migrates it back by CPU faults, 1e6 / 1e9 = 1000 us more than its 10 us: 3-1013.
    check_host(s, "h", us(3), us(1013));
    check_end(s, us(1013));
}

TEST_CASE("engine: tasks form after-lists across host work, a copy and kernels", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.sync_wakeup: 5us
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
  gpu.event_gap: 3us
  copy.h2d.bandwidth: 10GB/s
streams: [s1, s2, s3]
tasks:
  load: {host: load, duration: 100us}
  pre:  {kernel: pre, duration: 10us, stream: s3}
  copy: {memcpy_async: up, direction: h2d, bytes: 1MB, stream: s1, after: [load]}
  comp: {kernel: comp, duration: 50us, stream: s2, after: [copy]}
  comp2: {kernel: comp2, duration: 10us, stream: s2, after: [comp]}
  post: {host: post, duration: 10us, after: [comp2]}
)");
    // Host task on thread main at time zero.
    check_host(s, "load", us(0), us(100));
    // GPU task without dependencies: issued at time zero with no call, so no launch latency.
    CHECK_FALSE(s.op("pre").has_host());
    check_gpu(s, "pre", us(0), us(10));
    // After a host task: 100 + launch_latency 2 = 102; 100 us copy.
    CHECK_FALSE(s.op("copy").has_host());
    check_gpu(s, "copy", us(102), us(202));
    // Across streams: 202 + event_gap 3 = 205.
    check_gpu(s, "comp", us(205), us(255));
    CHECK(s.op("comp").gpu_cause.kind == CauseKind::After);
    // Within one stream: 255 + stream_gap 1 = 256.
    check_gpu(s, "comp2", us(256), us(266));
    // Host task after GPU work: starts at 266 + sync_wakeup 5 = 271, ends 281. The thread
    // reached it at 100 (after load); the engine counts 100..271 as the task's sync wait, so
    // the work itself begins at host_start + sync_wait.
    const OpRecord& post = s.op("post");
    CHECK(show(post.host_start + post.sync_wait) == show(us(271)));
    CHECK(show(post.host_end) == show(us(281)));
    check_end(s, us(281));
}

TEST_CASE("engine: tasks form pageable H2D copy stages once it is ready", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.pageable_h2d_bandwidth: 5GB/s
  host.staging_chunk: 1MB
  copy.h2d.fixed: 1us
  copy.h2d.bandwidth: 10GB/s
  gpu.launch_latency: 2us
streams: [s1]
tasks:
  load: {host: load, duration: 10us}
  up: {memcpy_async: up, direction: h2d, memory: pageable, bytes: 4MB, stream: s1, after: [load]}
  k: {kernel: k, duration: 50us, stream: s1, after: [up]}
)");
    // No host call stages a task's copy: staging starts when the copy is ready, 10 + 2 = 12,
    // and ends at 12 + 4e6 / 5e9 = 812. The DMA starts once the first chunk is staged,
    // 12 + 200 = 212, and ends at max(212 + 1 + 400, 812 + 1 + 100) = 913.
    check_host(s, "load", us(0), us(10));
    check_gpu(s, "up", us(212), us(913));
    check_gpu(s, "k", us(913), us(963));
    check_end(s, us(963));
}

TEST_CASE("engine: repeat loop with an if names ops by index", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.sync_call_cost: 1us
  host.sync_wakeup: 3us
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
params: {n: 3}
streams: [s1]
threads:
  main:
    - repeat: n
      do:
        - host: load
          duration: 50us
        - kernel: k
          stream: s1
          duration: 100us
        - if: i > 0
          then:
            - stream_sync: s1
          else: []
)");
    std::vector<std::string> names;
    for (uint32_t i = 0; i < s.sc.program.ops.size(); ++i) names.push_back(s.sc.program.op_name(i));
    CHECK(names == std::vector<std::string>{"load[0]", "k[0]", "load[1]", "k[1]", "stream_sync:s1[1]", "load[2]",
                                            "k[2]", "stream_sync:s1[2]"});
    // i = 0: load 0-50, k call 50-51, GPU 53-153; no sync.
    check_host(s, "load[0]", us(0), us(50));
    check_host(s, "k[0]", us(50), us(51));
    check_gpu(s, "k[0]", us(53), us(153));
    // i = 1: load 51-101, k call 101-102, ready 104, stream order 153 + 1 = 154 -> 254;
    // sync call 102-103, returns 254 + 3 = 257, waited 257 - 103.
    check_host(s, "load[1]", us(51), us(101));
    check_gpu(s, "k[1]", us(154), us(254));
    check_host(s, "stream_sync:s1[1]", us(102), us(257));
    check_wait(s, "stream_sync:s1[1]", us(154));
    // i = 2: load 257-307, k call 307-308, ready 310 (stream order 255 earlier) -> 410;
    // sync call 308-309, returns 413, waited 413 - 309.
    check_host(s, "load[2]", us(257), us(307));
    check_gpu(s, "k[2]", us(310), us(410));
    check_host(s, "stream_sync:s1[2]", us(308), us(413));
    check_wait(s, "stream_sync:s1[2]", us(104));
    check_end(s, us(413));
}

namespace {
// The seed's section 2 (pinned memory + async + double buffering): load into h_buf[i % 2],
// copy it up on one stream, from the second iteration on sync the stream and process the
// previous results, then launch the kernel. Zero latencies: load 100, copy 100, kernel 150,
// process 20 (us).
const char* kDoubleBuffer = R"(
hardware:
  profile: h200
  zero_latency: true
  copy.h2d.bandwidth: 10GB/s
params: {n: 3, size: 1MB}
buffers:
  h_buf: {kind: pinned, size: size, count: 2}
  d_buf: {kind: device, size: size, count: 2}
streams: [s]
threads:
  main:
    - repeat: n
      do:
        - host: load
          duration: 100us
        - memcpy_async: upload
          src: h_buf[i % 2]
          dst: d_buf[i % 2]
          stream: s
        - if: i > 0
          then:
            - stream_sync: s
            - host: process
              duration: 20us
        - kernel: kernel
          stream: s
          duration: 150us
    - stream_sync: s
      name: final_sync
)";
}  // namespace

TEST_CASE("engine: double buffering of the seed", "[engine]") {
    Sim s = run(kDoubleBuffer);
    // i = 0: load 0-100; upload 100-200; kernel after it in the stream 200-350.
    check_host(s, "load[0]", us(0), us(100));
    check_gpu(s, "upload[0]", us(100), us(200));
    check_gpu(s, "kernel[0]", us(200), us(350));
    // i = 1: load 100-200; upload waits for kernel[0] in the stream: 350-450; the sync at 200
    // waits for the upload (the last op of s): 450, waited 250; process 450-470; kernel 470-620.
    check_host(s, "load[1]", us(100), us(200));
    check_gpu(s, "upload[1]", us(350), us(450));
    check_host(s, "stream_sync:s[1]", us(200), us(450));
    check_wait(s, "stream_sync:s[1]", us(250));
    check_host(s, "process[1]", us(450), us(470));
    check_host(s, "kernel[1]", us(470), us(470));
    check_gpu(s, "kernel[1]", us(470), us(620));
    // i = 2: load 470-570; upload after kernel[1]: 620-720; sync 570-720 (waited 150);
    // process 720-740; kernel 740-890.
    check_host(s, "load[2]", us(470), us(570));
    check_gpu(s, "upload[2]", us(620), us(720));
    check_host(s, "stream_sync:s[2]", us(570), us(720));
    check_wait(s, "stream_sync:s[2]", us(150));
    check_host(s, "process[2]", us(720), us(740));
    check_gpu(s, "kernel[2]", us(740), us(890));
    // The final sync at 740 waits for kernel[2].
    check_host(s, "final_sync", us(740), us(890));
    check_wait(s, "final_sync", us(150));
    check_end(s, us(890));
}

TEST_CASE("engine: the same program simulates to the same timeline", "[engine]") {
    // The shipped profile (uneven latencies and bandwidths), two threads, shared HBM, events,
    // the legacy stream and a pageable copy: every field of every record must repeat.
    const std::string yaml = R"(
params: {n: 4}
buffers:
  h_buf: {kind: pinned, size: 3MiB, count: 2}
  d_buf: {kind: device, size: 3MiB, count: 2}
  um: {kind: managed, size: 5MiB}
streams:
  s1: {}
  s2: {kind: non_blocking, priority: -1}
events: [ev]
threads:
  main:
    - repeat: n
      do:
        - memcpy_async: up
          src: h_buf[i % 2]
          dst: d_buf[i % 2]
          stream: s1
        - kernel: mem
          stream: s1
          bytes: 7MiB
          grid: 300
          block: 512
        - event_record: ev
          stream: s1
        - stream_wait_event: ev
          stream: s2
        - kernel: comp
          stream: s2
          flops: 3.3e9
          uses: [um]
    - kernel: legacy
      duration: 13us
    - device_sync:
  helper:
    - repeat: n
      var: j
      do:
        - host: prep
          duration: 7us
          uses: [um]
        - memcpy_async: page
          direction: h2d
          memory: pageable
          bytes: 5MiB
          stream: s2
        - kernel: side
          stream: s2
          bytes: 11MiB
    - stream_sync: s2
)";
    Sim a = run(yaml);
    // Once more on the same Program and profile, and once on a fresh load of the same text.
    const Timeline again = simulate(a.sc.program, a.sc.profile);
    const Sim fresh = run(yaml);
    for (const Timeline* other : {&again, &fresh.tl}) {
        const Timeline& b = *other;
        REQUIRE(a.tl.ops.size() == b.ops.size());
        for (size_t i = 0; i < a.tl.ops.size(); ++i) {
            const OpRecord &x = a.tl.ops[i], &y = b.ops[i];
            INFO("op " << a.sc.program.op_name(static_cast<uint32_t>(i)));
            CHECK(show(x.host_start) == show(y.host_start));
            CHECK(show(x.host_end) == show(y.host_end));
            CHECK(show(x.gpu_start) == show(y.gpu_start));
            CHECK(show(x.gpu_end) == show(y.gpu_end));
            CHECK(show(x.sync_wait) == show(y.sync_wait));
            CHECK(x.engine == y.engine);
            CHECK(x.host_cause.op == y.host_cause.op);
            CHECK(x.host_cause.phase == y.host_cause.phase);
            CHECK(x.host_cause.kind == y.host_cause.kind);
            CHECK(x.gpu_cause.op == y.gpu_cause.op);
            CHECK(x.gpu_cause.phase == y.gpu_cause.phase);
            CHECK(x.gpu_cause.kind == y.gpu_cause.kind);
        }
        CHECK(show(a.tl.end_to_end) == show(b.end_to_end));
        CHECK(a.tl.sm_thread_occupancy_ps == b.sm_thread_occupancy_ps);
        CHECK(a.tl.warnings == b.warnings);
    }
    // Every op ran: nothing was left unset.
    for (const OpRecord& r : a.tl.ops) CHECK((r.has_host() || r.has_gpu()));
    CHECK(a.tl.end_to_end > Time{});
}
