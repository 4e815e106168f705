// Engine tests, part 1: copies, events and syncs.
// Every expected time is computed by hand from docs/model.md (the comment above each check
// shows the arithmetic); the engine must match to the picosecond. Streams, host threads, the
// tasks form, loops and determinism are in test_engine_streams.cpp; kernels, SMs, HBM and
// managed memory in test_engine_kernels.cpp.
#include <catch2/catch.hpp>

#include <string>

#include "engine_test_util.hpp"

using namespace hetsim;
using namespace hetsim::enginetest;
using Catch::Matchers::Contains;

TEST_CASE("engine: one pinned H2D copy", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.memcpy_call_cost: 1us
  gpu.launch_latency: 2us
  copy.h2d.fixed: 1us
  copy.h2d.bandwidth: 10GB/s
streams: [s1]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 1MB
      stream: s1
)");
    // call 0 -> 1 (memcpy_call_cost).
    check_host(s, "up", us(0), us(1));
    // starts at 1 + launch_latency 2 = 3; takes fixed 1 + 1e6 B / 1e10 B/s = 1 + 100 = 101.
    check_gpu(s, "up", us(3), us(104));
    CHECK(s.op("up").engine == Engine::H2D);
    check_wait(s, "up", us(0));
    check_end(s, us(104));
}

TEST_CASE("engine: copy and kernel in one stream", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.memcpy_call_cost: 1us
  host.launch_cost: 1us
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
  copy.h2d.bandwidth: 10GB/s
streams: [s1]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 1MB
      stream: s1
    - kernel: k
      stream: s1
      duration: 50us
)");
    // up: call 0-1, GPU 1 + 2 = 3, 100 us of transfer.
    check_host(s, "up", us(0), us(1));
    check_gpu(s, "up", us(3), us(103));
    // k: call 1-2; ready at 2 + 2 = 4, but stream order: up ends 103 + stream_gap 1 = 104.
    check_host(s, "k", us(1), us(2));
    check_gpu(s, "k", us(104), us(154));
    CHECK(s.op("k").gpu_cause.kind == CauseKind::StreamOrder);
    check_end(s, us(154));
}

TEST_CASE("engine: copy and kernel in two streams overlap", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.memcpy_call_cost: 1us
  host.launch_cost: 1us
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
  copy.h2d.bandwidth: 10GB/s
streams: [s1, s2]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 1MB
      stream: s1
    - kernel: k
      stream: s2
      duration: 50us
)");
    check_gpu(s, "up", us(3), us(103));
    // k: call 1-2, no dependency on up: starts at 2 + launch_latency 2 = 4, under the copy.
    check_host(s, "k", us(1), us(2));
    check_gpu(s, "k", us(4), us(54));
    check_end(s, us(103));
}

TEST_CASE("engine: two H2D copies in two streams serialise on the H2D engine", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.memcpy_call_cost: 1us
  copy.h2d.bandwidth: 10GB/s
streams: [s1, s2]
threads:
  main:
    - memcpy_async: a
      direction: h2d
      bytes: 1MB
      stream: s1
    - memcpy_async: b
      direction: h2d
      bytes: 2MB
      stream: s2
)");
    // a: call 0-1, copy 1 + 100 = 101.
    check_host(s, "a", us(0), us(1));
    check_gpu(s, "a", us(1), us(101));
    // b: call 1-2, ready at 2, but one H2D copy at a time: starts when a ends, 200 us long.
    check_host(s, "b", us(1), us(2));
    check_gpu(s, "b", us(101), us(301));
    CHECK(s.op("b").gpu_cause.kind == CauseKind::Resource);
    check_end(s, us(301));
}

TEST_CASE("engine: H2D beside D2H overlap", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.memcpy_call_cost: 1us
  copy.h2d.bandwidth: 10GB/s
  copy.d2h.bandwidth: 10GB/s
streams: [s1, s2]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 1MB
      stream: s1
    - memcpy_async: down
      direction: d2h
      bytes: 2MB
      stream: s2
)");
    // Separate queues: each starts when its call returns.
    check_gpu(s, "up", us(1), us(101));
    check_gpu(s, "down", us(2), us(202));
    CHECK(s.op("down").engine == Engine::D2H);
    check_end(s, us(202));
}

TEST_CASE("engine: memset and D2D copy use no copy engine and run one at a time on the SMs", "[engine]") {
    const std::string body = R"(
streams: [s1, s2, s3]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 1MB
      stream: s1
    - memcpy_async: dd
      direction: d2d
      bytes: 1MB
      stream: s2
    - memset_async: ms
      bytes: 1MB
      stream: s3
)";
    const std::string hw = R"(
hardware:
  profile: h200
  zero_latency: true
  copy.h2d.bandwidth: 10GB/s
  copy.d2d.fixed: 1us
  copy.d2d.bandwidth: 20GB/s
  copy.memset.fixed: 2us
  copy.memset.bandwidth: 10GB/s
)";
    Sim s = run(hw + body);
    check_gpu(s, "up", us(0), us(100));
    // D2D: fixed 1 + 2 * 1e6 B / 2e10 B/s = 1 + 100; not behind the H2D copy (no copy engine).
    check_gpu(s, "dd", us(0), us(101));
    // memset: fixed 2 + 1e6 / 1e10 = 2 + 100, after the D2D copy, which held the SMs.
    check_gpu(s, "ms", us(101), us(203));
    CHECK(s.op("dd").engine == Engine::DeviceCopy);
    CHECK(s.op("ms").engine == Engine::DeviceCopy);
    CHECK(s.op("ms").gpu_cause.kind == CauseKind::Resource);
    // rules.device_copy_sms off: both run at once, beside everything.
    Sim off = run(hw + "  rules.device_copy_sms: off\n" + body);
    check_gpu(off, "dd", us(0), us(101));
    check_gpu(off, "ms", us(0), us(102));
}

TEST_CASE("engine: a D2D copy or memset waits for room on the SMs, holds them, and slows with less room", "[engine]") {
    const std::string hw = R"(
hardware:
  profile: h200
  zero_latency: true
  copy.d2d.fixed: 1us
  copy.d2d.bandwidth: 20GB/s
  copy.memset.fixed: 2us
  copy.memset.bandwidth: 10GB/s
  copy.device_room: 0.8
streams: [s1, s2, s3]
)";
    // A half-device kernel (132 x 1024 on 132 SMs of 2048 threads) runs 0-300. The D2D copy finds
    // half the threads free: 0.5 / 0.8 = 0.625 of its speed, 101 / 0.625 = 161.6 us. The small
    // kernel k2, ready at 0 too, waits for the copy to end: 161.6-211.6.
    Sim half = run(hw + R"(
threads:
  main:
    - kernel: half
      stream: s1
      duration: 300us
      grid: 132
      block: 1024
    - memcpy_async: dd
      direction: d2d
      bytes: 1MB
      stream: s2
    - kernel: k2
      stream: s3
      duration: 50us
      grid: 1
      block: 32
)");
    check_gpu(half, "half", us(0), us(300));
    check_gpu(half, "dd", us(0), Time::ns(161600));
    check_gpu(half, "k2", Time::ns(161600), Time::ns(211600));
    CHECK(half.op("k2").gpu_cause.kind == CauseKind::Resource);
    // A full-device kernel (264 x 1024) leaves no room: the memset starts when it ends, 300-402;
    // k2, ready after the memset, starts after it: 402-452.
    Sim full = run(hw + R"(
threads:
  main:
    - kernel: full
      stream: s1
      duration: 300us
      grid: 264
      block: 1024
    - memset_async: ms
      bytes: 1MB
      stream: s2
    - kernel: k2
      stream: s3
      duration: 50us
      grid: 1
      block: 32
)");
    check_gpu(full, "full", us(0), us(300));
    check_gpu(full, "ms", us(300), us(402));
    check_gpu(full, "k2", us(402), us(452));
    check_end(full, us(452));
}

TEST_CASE("engine: cross-stream event wait", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.event_record_cost: 1us
  host.stream_wait_event_cost: 1us
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
  gpu.event_gap: 3us
streams: [s1, s2]
events: [ev]
threads:
  main:
    - kernel: k1
      stream: s1
      duration: 100us
    - event_record: ev
      stream: s1
    - stream_wait_event: ev
      stream: s2
    - kernel: k2
      stream: s2
      duration: 10us
    - kernel: k3
      stream: s1
      duration: 100us
    - event_record: ev
      name: rec2
      stream: s1
)");
    // k1: call 0-1, GPU 1 + 2 = 3 .. 103.
    check_gpu(s, "k1", us(3), us(103));
    // record: call 1-2; ready 4; after k1 at 103 (markers take no gap on the way in); zero length.
    check_host(s, "event_record:ev", us(1), us(2));
    check_gpu(s, "event_record:ev", us(103), us(103));
    // wait: call 2-3; ready 5; bound to the record above -> 103, released by the event.
    check_host(s, "stream_wait_event:ev", us(2), us(3));
    check_gpu(s, "stream_wait_event:ev", us(103), us(103));
    CHECK(s.op("stream_wait_event:ev").gpu_cause.kind == CauseKind::Event);
    // k2: call 3-4; ready 6; after the wait, which the event released: 103 + event_gap 3 = 106.
    check_host(s, "k2", us(3), us(4));
    check_gpu(s, "k2", us(106), us(116));
    // k3 and the second record come after the wait call: they do not hold k2 back.
    // k3: call 4-5, ready 7; after the record, released by stream order: 103 + stream_gap 1 = 104
    // -> 204. rec2: after k3 at 204, no gap into a marker.
    check_gpu(s, "k3", us(104), us(204));
    check_gpu(s, "rec2", us(204), us(204));
    CHECK(s.tl.warnings.empty());
    check_end(s, us(204));
}

TEST_CASE("engine: waits on a never-recorded event complete at once with a warning", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.stream_wait_event_cost: 1us
  host.sync_call_cost: 1us
  host.sync_wakeup: 3us
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
streams: [s2]
events: [ev]
threads:
  main:
    - stream_wait_event: ev
      stream: s2
    - kernel: k
      stream: s2
      duration: 10us
    - event_sync: ev
)");
    // wait: call 0-1, GPU marker at 1 + 2 = 3, nothing to wait for.
    check_host(s, "stream_wait_event:ev", us(0), us(1));
    check_gpu(s, "stream_wait_event:ev", us(3), us(3));
    // k: call 1-2, ready 4 (after the marker at 3, no gap).
    check_gpu(s, "k", us(4), us(14));
    // event sync: returns after its call cost, no wakeup, no wait.
    check_host(s, "event_sync:ev", us(2), us(3));
    check_wait(s, "event_sync:ev", us(0));
    REQUIRE(s.tl.warnings.size() == 2);
    CHECK_THAT(s.tl.warnings[0], Contains("stream_wait_event:ev") && Contains("'ev'"));
    CHECK_THAT(s.tl.warnings[1], Contains("event_sync:ev") && Contains("'ev'"));
    check_end(s, us(14));
}

TEST_CASE("engine: stream sync blocks the host", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.sync_call_cost: 1us
  host.sync_wakeup: 3us
  gpu.launch_latency: 2us
streams: [s1]
threads:
  main:
    - kernel: k
      stream: s1
      duration: 100us
    - stream_sync: s1
      name: sync1
    - host: h
      duration: 10us
    - host: late
      duration: 1us
    - stream_sync: s1
      name: sync2
)");
    // k: call 0-1, GPU 3-103.
    check_gpu(s, "k", us(3), us(103));
    // sync1: call at 1, its cost ends at 2; k is not done: returns at 103 + wakeup 3 = 106.
    check_host(s, "sync1", us(1), us(106));
    check_wait(s, "sync1", us(104));  // 106 - (1 + 1)
    check_host(s, "h", us(106), us(116));
    check_host(s, "late", us(116), us(117));
    // sync2: k finished long before the call: only the call cost, no wait.
    check_host(s, "sync2", us(117), us(118));
    check_wait(s, "sync2", us(0));
    check_end(s, us(118));
}

TEST_CASE("engine: stream sync called just after the work ended pays no wakeup", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.sync_call_cost: 1us
  host.sync_wakeup: 3us
  gpu.launch_latency: 2us
streams: [s1]
threads:
  main:
    - kernel: k
      stream: s1
      duration: 100us
    - host: h
      duration: 103us
    - stream_sync: s1
)");
    // k: GPU 3-103. h: 1-104. The sync is called at 104 when k is already done: the model
    // charges only host.sync_call_cost ("if the awaited work is not done, returns at its end +
    // host.sync_wakeup"), so it returns at 105, not at 103 + 3 = 106.
    check_gpu(s, "k", us(3), us(103));
    check_host(s, "h", us(1), us(104));
    check_host(s, "stream_sync:s1", us(104), us(105));
    check_wait(s, "stream_sync:s1", us(0));
}

TEST_CASE("engine: event sync waits for the record, not for later work", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.event_record_cost: 1us
  host.sync_call_cost: 1us
  host.sync_wakeup: 3us
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
streams: [s1]
events: [ev]
threads:
  main:
    - kernel: k1
      stream: s1
      duration: 100us
    - event_record: ev
      stream: s1
    - kernel: k2
      stream: s1
      duration: 100us
    - event_sync: ev
)");
    // k1 GPU 3-103; record call 1-2, at 103 (no gap into a marker); k2 call 2-3, after the
    // marker, which stream order released: 103 + 1 = 104 .. 204.
    check_gpu(s, "k1", us(3), us(103));
    check_gpu(s, "event_record:ev", us(103), us(103));
    check_gpu(s, "k2", us(104), us(204));
    // event sync: call 3-4, returns at the record 103 + wakeup 3 = 106, wait 106 - 4 = 102.
    check_host(s, "event_sync:ev", us(3), us(106));
    check_wait(s, "event_sync:ev", us(102));
    check_end(s, us(204));
}

TEST_CASE("engine: device sync waits for every stream", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.sync_call_cost: 1us
  host.sync_wakeup: 3us
  gpu.launch_latency: 2us
streams: [s1, s2]
threads:
  main:
    - kernel: k1
      stream: s1
      duration: 100us
    - kernel: k2
      stream: s2
      duration: 200us
    - device_sync:
    - host: h
      duration: 10us
)");
    check_gpu(s, "k1", us(3), us(103));
    check_gpu(s, "k2", us(4), us(204));
    // call 2-3; the last op of any stream ends at 204: returns 204 + 3 = 207; wait 207 - 3.
    check_host(s, "device_sync", us(2), us(207));
    check_wait(s, "device_sync", us(204));
    check_host(s, "h", us(207), us(217));
    check_end(s, us(217));
}

TEST_CASE("engine: pageable H2D copy stages on the host, DMA pipelined", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.memcpy_call_cost: 1us
  host.launch_cost: 1us
  host.pageable_h2d_bandwidth: 5GB/s
  host.staging_chunk: 1MB
  copy.h2d.fixed: 1us
  copy.h2d.bandwidth: 10GB/s
  gpu.stream_gap: 1us
streams: [s1]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      memory: pageable
      bytes: 4MB
      stream: s1
    - kernel: k
      stream: s1
      duration: 50us
)");
    // The call: cost 1, then staging 4e6 B / 5e9 B/s = 800 -> returns at 801.
    check_host(s, "up", us(0), us(801));
    check_wait(s, "up", us(0));
    // DMA starts once the first chunk is staged: 1 + 1e6 / 5e9 = 1 + 200 = 201.
    // Ends no earlier than 201 + pinned (1 + 4e6 / 1e10 = 401) = 602, and no earlier than
    // staging end 801 + fixed 1 + one chunk at pinned 100 = 902.
    check_gpu(s, "up", us(201), us(902));
    // k: call 801-802; stream order 902 + 1.
    check_host(s, "k", us(801), us(802));
    check_gpu(s, "k", us(903), us(953));
    check_end(s, us(953));
}

TEST_CASE("engine: pageable D2H copy blocks the host", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.memcpy_call_cost: 1us
  host.launch_cost: 1us
  host.sync_wakeup: 3us
  host.pageable_d2h_wakeup: 5us
  host.pageable_d2h_bandwidth: 5GB/s
  host.staging_chunk: 1MB
  copy.d2h.fixed: 1us
  copy.d2h.bandwidth: 10GB/s
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
streams: [s1]
threads:
  main:
    - kernel: k
      stream: s1
      duration: 100us
    - memcpy_async: down
      direction: d2h
      memory: pageable
      bytes: 2MB
      stream: s1
    - host: h
      duration: 10us
    - memcpy_async: down2
      direction: d2h
      memory: pageable
      bytes: 500KB
      stream: s1
)");
    check_gpu(s, "k", us(3), us(103));
    // down: call 1-2; ready 2 + 2 = 4, stream order 103 + 1 = 104. DMA: fixed 1 + max(pinned
    // 2e6 / 1e10 = 200, first chunk at the copy's speed 1e6 / 1e10 = 100 + the rest drained by
    // the host 1e6 / 5e9 = 200 -> 300) = 301 -> 405.
    check_gpu(s, "down", us(104), us(405));
    // The host returns once the last chunk is drained, 405 + 1e6 / 5e9 = 605, plus
    // host.pageable_d2h_wakeup (5): the call waited for k, earlier work of its stream -> 610;
    // it waited 610 - 2.
    check_host(s, "down", us(1), us(610));
    check_wait(s, "down", us(608));
    check_host(s, "h", us(610), us(620));
    // down2 on an idle stream: call 620-621, DMA from 621 + 2 = 623: fixed 1 + max(5e5 / 1e10
    // = 50, 50 + 0) = 51 -> 674; drained 674 + 5e5 / 5e9 = 774, + host.sync_wakeup 3 = 777.
    check_gpu(s, "down2", us(623), us(674));
    check_host(s, "down2", us(620), us(777));
    check_end(s, us(777));
}

TEST_CASE("engine: synchronous cudaMemcpy blocks the host", "[engine]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.memcpy_call_cost: 1us
  host.sync_wakeup: 3us
  gpu.launch_latency: 2us
  gpu.stream_gap: 1us
  copy.h2d.fixed: 1us
  copy.h2d.bandwidth: 10GB/s
  copy.d2h.fixed: 1us
  copy.d2h.bandwidth: 10GB/s
buffers:
  h: {kind: pinned, size: 1MB}
  d: {kind: device, size: 1MB}
threads:
  main:
    - memcpy: up
      src: h
      dst: d
    - host: h
      duration: 10us
    - memcpy: down
      src: d
      dst: h
)");
    // up: call 0-1; GPU 1 + 2 = 3, 1 + 100 long -> 104; returns 104 + 3 = 107, waited 107 - 1.
    check_gpu(s, "up", us(3), us(104));
    check_host(s, "up", us(0), us(107));
    check_wait(s, "up", us(106));
    check_host(s, "h", us(107), us(117));
    // down: call 117-118; GPU 118 + 2 = 120 (stream order 104 + 1 is earlier) -> 221;
    // returns 221 + 3 = 224, waited 224 - 118.
    check_gpu(s, "down", us(120), us(221));
    check_host(s, "down", us(117), us(224));
    check_wait(s, "down", us(106));
    check_end(s, us(224));
}
