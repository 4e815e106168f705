// Engine tests, part 3: the hardware-fidelity rules of docs/model.md (rules 1-9), each on a
// small scenario whose timeline is derived by hand from the rule, and each rule's switch.
// Scenarios start from `zero_latency: true` and set the parameters they test, so every
// expected time below follows from the numbers in the scenario alone.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine_test_util.hpp"

using namespace hetsim;
using namespace hetsim::enginetest;

namespace {
// `extra` goes under `hardware:` (indented two spaces), `body` after it.
Sim run_with(const std::string& extra, const std::string& body) {
    return run("hardware:\n  profile: h200\n  zero_latency: true\n" + extra + body);
}
constexpr Time ps(int64_t v) { return Time::ps(v); }
}  // namespace

// ---------------------------------------------------------------- rule 1: copies

TEST_CASE("rule 1: a pinned copy follows the efficiency curve at its size", "[engine][rules]") {
    const std::string hw = R"(  copy.h2d.bandwidth: 1GB/s
  copy.h2d.efficiency: "1KiB:0.5, 1MiB:1"
)";
    const std::string body = R"(streams: [s]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 32KiB
      stream: s
)";
    // 32 KiB = 2^15 lies halfway between 2^10 and 2^20 in log2: efficiency 0.75, so
    // 32768 B at 0.75 GB/s = 43.690666.. us, rounded up to the picosecond.
    check_gpu(run_with(hw + "  rules.copy_efficiency: on\n", body), "up", Time{}, ps(43'690'667));
    // Switched off: the full 1 GB/s, 32.768 us.
    check_gpu(run_with(hw + "  rules.copy_efficiency: off\n", body), "up", Time{}, ns(32'768));
    // Outside the points the curve is flat: 512 B at 0.5 GB/s = 1.024 us.
    Sim small = run_with(hw + "  rules.copy_efficiency: on\n", R"(streams: [s]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 512B
      stream: s
)");
    check_gpu(small, "up", Time{}, ns(1'024));
}

TEST_CASE("rule 1: H2D beside D2H slow each other by the duplex factor", "[engine][rules]") {
    const std::string hw = R"(  copy.duplex_factor: 2
  copy.h2d.bandwidth: 1GB/s
  copy.d2h.bandwidth: 1GB/s
)";
    const std::string body = R"(streams: [a, b]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 1MB
      stream: a
    - memcpy_async: down
      direction: d2h
      bytes: 500KB
      stream: b
)";
    // Both start at 0. Together each runs at half speed: the 500 us D2H ends at 1000 us, when
    // the H2D has done 500 of its 1000 us; the rest at full speed ends it at 1500 us.
    Sim s = run_with(hw + "  rules.duplex: on\n", body);
    check_gpu(s, "down", Time{}, us(1000));
    check_gpu(s, "up", Time{}, us(1500));
    // Switched off: side by side at full speed.
    Sim off = run_with(hw + "  rules.duplex: off\n", body);
    check_gpu(off, "down", Time{}, us(500));
    check_gpu(off, "up", Time{}, us(1000));
}

TEST_CASE("rule 1: a pinned H2D beside a pageable D2H slows more, the reverse does not", "[engine][rules]") {
    Sim s = run_with(R"(  rules.duplex: on
  copy.duplex_factor: 2
  copy.pageable_contention: 3
  copy.h2d.bandwidth: 1GB/s
  copy.d2h.bandwidth: 1GB/s
  host.pageable_d2h_bandwidth: 1GB/s
)",
                     R"(streams: [a, b]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 1MB
      stream: a
    - memcpy_async: down
      direction: d2h
      memory: pageable
      bytes: 250KB
      stream: b
)");
    // The pageable D2H (250 us of work) runs at the duplex factor 2: 0-500 us. Meanwhile the
    // pinned H2D runs 3x slower: 500 us / 3 = 166.666666 us of work done (truncated to the
    // picosecond), the remaining 833.333334 us at full speed end it at 1333.333334 us.
    check_gpu(s, "down", Time{}, us(500));
    check_gpu(s, "up", Time{}, ps(1'333'333'334));
    // The other way round a pinned D2H is not slowed; the pageable H2D beside it pays duplex.
    Sim rev = run_with(R"(  rules.duplex: on
  copy.duplex_factor: 2
  copy.pageable_contention: 3
  copy.h2d.bandwidth: 1GB/s
  copy.d2h.bandwidth: 1GB/s
  host.pageable_h2d_bandwidth: 1GB/s
  host.staging_chunk: 1KB
)",
                       R"(streams: [a, b]
threads:
  main:
    - memcpy_async: down
      direction: d2h
      bytes: 1MB
      stream: a
    - memcpy_async: up
      direction: h2d
      memory: pageable
      bytes: 250KB
      stream: b
)");
    check_gpu(rev, "down", Time{}, us(1000));
}

TEST_CASE("rule 1: copies of one direction queue across streams unless copy_fifo is off", "[engine][rules]") {
    const std::string hw = "  copy.h2d.bandwidth: 1GB/s\n";
    const std::string body = R"(streams: [a, b]
threads:
  main:
    - memcpy_async: first
      direction: h2d
      bytes: 100KB
      stream: a
    - memcpy_async: second
      direction: h2d
      bytes: 100KB
      stream: b
)";
    Sim s = run_with(hw, body);
    check_gpu(s, "first", Time{}, us(100));
    check_gpu(s, "second", us(100), us(200));
    CHECK(s.op("second").gpu_cause.kind == CauseKind::Resource);
    Sim off = run_with(hw + "  rules.copy_fifo: off\n", body);
    check_gpu(off, "second", Time{}, us(100));
}

// ---------------------------------------------------------------- rule 2: pageable copies

namespace {
const std::string kStaging = R"(  host.pageable_h2d_bandwidth: 1GB/s
  copy.h2d.bandwidth: 10GB/s
  host.staging_chunk: 100KB
)";
const std::string kPool = kStaging + "  host.staging_pool: 1MB\n";
const std::string kPoolBody = R"(streams: [s]
threads:
  main:
    - kernel: busy
      stream: s
      duration: 5ms
      grid: 1
    - memcpy_async: upload
      direction: h2d
      memory: pageable
      bytes: 4MB
      stream: s
)";
}  // namespace

TEST_CASE("rule 1: a pinned copy that waited for a kernel in its stream (or the reverse) starts later", "[engine][rules]") {
    // gpu.stream_gap 1 us, gpu.cross_engine_wait 3 us, copies at 1 GB/s (1 MB = 1000 us), calls
    // free (zero_latency). Every op is issued at 0, so each waits on the GPU for the one before it:
    // k 0-100; down (kernel -> copy) 100 + 1 + 3 = 104-1104; up (copy -> copy, no kernel) 1105-2105;
    // k2 (copy -> kernel) 2105 + 1 + 3 = 2109-2209.
    const std::string body = R"(streams: [s]
threads:
  main:
    - {kernel: k, stream: s, duration: 100us, grid: 1}
    - {memcpy_async: down, direction: d2h, memory: pinned, bytes: 1MB, stream: s}
    - {memcpy_async: up, direction: h2d, memory: pinned, bytes: 1MB, stream: s}
    - {kernel: k2, stream: s, duration: 100us, grid: 1}
)";
    const std::string hw = "  gpu.stream_gap: 1us\n  gpu.cross_engine_wait: 3us\n  copy.h2d.bandwidth: 1GB/s\n"
                           "  copy.d2h.bandwidth: 1GB/s\n  rules.copy_efficiency: off\n";
    Sim on = run_with(hw, body);
    check_gpu(on, "k", Time{}, us(100));
    check_gpu(on, "down", us(104), us(1104));
    check_gpu(on, "up", us(1105), us(2105));
    check_gpu(on, "k2", us(2109), us(2209));
    // Switched off: the stream gap alone, 1 us at each step.
    Sim off = run_with(hw + "  rules.cross_engine_wait: off\n", body);
    check_gpu(off, "down", us(101), us(1101));
    check_gpu(off, "up", us(1102), us(2102));
    check_gpu(off, "k2", us(2103), us(2203));
    // A copy that reaches the GPU only after the kernel ended did not wait for it: launch latency
    // 20 us, so k runs 20-30; down is issued at 15 (after 15 us of host work) and arrives at 35,
    // later than 30 + 1: it starts at 35, without the cross-engine wait.
    Sim late = run_with(hw + "  gpu.launch_latency: 20us\n", R"(streams: [s]
threads:
  main:
    - {kernel: k, stream: s, duration: 10us, grid: 1}
    - {host: work, duration: 15us}
    - {memcpy_async: down, direction: d2h, memory: pinned, bytes: 1MB, stream: s}
)");
    check_gpu(late, "k", us(20), us(30));
    check_gpu(late, "down", us(35), us(1035));
    // Issued at 5 instead, it arrives at 25, before k ends: it waited, 30 + 1 + 3 = 34.
    Sim early = run_with(hw + "  gpu.launch_latency: 20us\n", R"(streams: [s]
threads:
  main:
    - {kernel: k, stream: s, duration: 10us, grid: 1}
    - {host: work, duration: 5us}
    - {memcpy_async: down, direction: d2h, memory: pinned, bytes: 1MB, stream: s}
)");
    check_gpu(early, "down", us(34), us(1034));
    // A pageable copy keeps the stream gap (rule 2's wake-ups were fitted with it): the same
    // timeline with the rule on and off.
    const std::string pageable = R"(streams: [s]
threads:
  main:
    - {kernel: k, stream: s, duration: 100us, grid: 1}
    - {memcpy_async: down, direction: d2h, memory: pageable, bytes: 1MB, stream: s}
)";
    Sim pon = run_with(hw, pageable);
    Sim poff = run_with(hw + "  rules.cross_engine_wait: off\n", pageable);
    CHECK(pon.op("down").gpu_start == poff.op("down").gpu_start);
    CHECK(pon.op("down").gpu_end == poff.op("down").gpu_end);
}

TEST_CASE("rule 2: a pageable H2D larger than the staging pool blocks until its DMA starts", "[engine][rules]") {
    Sim s = run_with(kPool, kPoolBody);
    // Staging alone would take 4 MB / 1 GB/s = 4000 us. The DMA waits for `busy` (5000 us), so
    // after 1 MB the pool is full; staging resumes at 5000 and needs 3000 us more: the call
    // returns at 8000, 4000 us of it blocked. The DMA (400 us at 10 GB/s) trails the staging by
    // one 100 KB chunk (10 us): 5000-8010.
    check_host(s, "upload", Time{}, us(8000));
    check_wait(s, "upload", us(4000));
    check_gpu(s, "upload", us(5000), us(8010));
    // An unbounded pool: the call returns when staged (4000); the DMA starts at 5000 and runs
    // its pinned 400 us.
    Sim off = run_with(kPool + "  rules.staging_pool: off\n", kPoolBody);
    check_host(off, "upload", Time{}, us(4000));
    check_gpu(off, "upload", us(5000), us(5400));
    // A copy that fits the pool never blocks: 1 MB stages in 1000 us.
    Sim fits = run_with(kPool, R"(streams: [s]
threads:
  main:
    - kernel: busy
      stream: s
      duration: 5ms
      grid: 1
    - memcpy_async: upload
      direction: h2d
      memory: pageable
      bytes: 1MB
      stream: s
)");
    check_host(fits, "upload", Time{}, us(1000));
    check_gpu(fits, "upload", us(5000), us(5100));
}

TEST_CASE("rule 2: the documented behaviour syncs the stream before a pageable copy", "[engine][rules]") {
    Sim s = run_with(kStaging + "  host.staging_pool: 0B\n  host.pageable_sync: true\n", kPoolBody);
    // The call waits for `busy` (5000), then stages 4000 us: host 0-9000, 5000 of it waiting.
    // The DMA may start once the first chunk is staged (5100) and trails the staging by a chunk.
    check_host(s, "upload", Time{}, us(9000));
    check_wait(s, "upload", us(5000));
    check_gpu(s, "upload", us(5100), us(9010));
}

TEST_CASE("rule 2: pageable copies behave as pinned with pageable_staging off", "[engine][rules]") {
    Sim s = run_with(kPool + "  rules.pageable_staging: off\n", kPoolBody);
    check_host(s, "upload", Time{}, Time{});
    check_gpu(s, "upload", us(5000), us(5400));
}

TEST_CASE("rule 2: pageable copies of all host threads take the bounce buffers one at a time", "[engine][rules]") {
    const std::string hw = R"(  host.pageable_h2d_bandwidth: 1GB/s
  host.pageable_d2h_bandwidth: 2GB/s
  copy.h2d.bandwidth: 10GB/s
  copy.d2h.bandwidth: 10GB/s
  host.staging_chunk: 100KB
  host.staging_pool: 0B
)";
    // Two threads upload 1 MB each at time 0, from pageable memory, into streams of their own.
    const std::string uploads = R"(streams: [a, b]
threads:
  ta:
    - memcpy_async: up_a
      direction: h2d
      memory: pageable
      bytes: 1MB
      stream: a
  tb:
    - memcpy_async: up_b
      direction: h2d
      memory: pageable
      bytes: 1MB
      stream: b
)";
    // up_a asks first and stages 1 MB at 1 GB/s: 0-1000 us. up_b waits for it (1000 us of sync
    // wait) and stages 1000-2000. Each DMA may start once its first 100 KB chunk is staged (100
    // and 1100 us) and ends a chunk at 10 GB/s (10 us) after its staging: 100-1010, 1100-2010.
    Sim s = run_with(hw, uploads);
    check_host(s, "up_a", Time{}, us(1000));
    check_host(s, "up_b", Time{}, us(2000));
    check_wait(s, "up_b", us(1000));
    check_gpu(s, "up_a", us(100), us(1010));
    check_gpu(s, "up_b", us(1100), us(2010));
    // Switched off, the threads stage side by side: both 0-1000, the second DMA queued on the H2D
    // engine behind the first (100-1010), so 1010-1110 (its 100 us at 10 GB/s).
    Sim off = run_with(hw + "  rules.staging_lock: off\n", uploads);
    check_host(off, "up_a", Time{}, us(1000));
    check_host(off, "up_b", Time{}, us(1000));
    check_wait(off, "up_b", Time{});
    check_gpu(off, "up_b", us(1010), us(1110));

    // Uploads and downloads take locks of their own: an upload does not wait for a download.
    const std::string mixed = R"(streams: [a, b]
threads:
  ta:
    - kernel: k
      stream: a
      duration: 500us
      grid: 1
    - memcpy_async: down
      direction: d2h
      memory: pageable
      bytes: 1MB
      stream: a
  tb:
    - host: prep
      duration: 200us
    - memcpy_async: up
      direction: h2d
      memory: pageable
      bytes: 1MB
      stream: b
    - memcpy_async: up2
      direction: h2d
      memory: pageable
      bytes: 1MB
      stream: b
)";
    // `down` is called at 0 and takes the download lock; `up` takes the upload lock at 200 and
    // stages until 1200 (DMA 300-1210). `down`'s DMA starts at 500 (k's end): the first 100 KB
    // chunk at 10 GB/s (10 us), the other 900 KB as the host drains them at 2 GB/s (450 us):
    // 500-960; the call returns after draining the last chunk (50 us) at 1010. `up2` stages
    // 1200-2200 at once (DMA 1300-2210), with the lock switched off as with it on.
    for (const char* sw : {"on", "off"}) {
        Sim m = run_with(hw + "  rules.staging_lock: " + sw + "\n", mixed);
        check_host(m, "up", us(200), us(1200));
        check_gpu(m, "down", us(500), us(960));
        check_host(m, "down", Time{}, us(1010));
        check_host(m, "up2", us(1200), us(2200));
        check_wait(m, "up2", Time{});
        check_gpu(m, "up2", us(1300), us(2210));
    }
}

TEST_CASE("rule 2: a pageable download holds the staging lock from its call, a waiter wakes late", "[engine][rules]") {
    const std::string hw = R"(  host.pageable_d2h_bandwidth: 2GB/s
  copy.d2h.bandwidth: 10GB/s
  host.staging_chunk: 100KB
  host.staging_lock_wakeup: 20us
)";
    // ta downloads behind a 500 us kernel, then again at once; tb, 10 us later, downloads behind
    // a 100 us kernel.
    const std::string body = R"(streams: [a, b]
threads:
  ta:
    - kernel: ka
      stream: a
      duration: 500us
      grid: 1
    - memcpy_async: down_a
      direction: d2h
      memory: pageable
      bytes: 1MB
      stream: a
    - memcpy_async: again_a
      direction: d2h
      memory: pageable
      bytes: 1MB
      stream: a
  tb:
    - host: prep
      duration: 10us
    - kernel: kb
      stream: b
      duration: 100us
      grid: 1
    - memcpy_async: down_b
      direction: d2h
      memory: pageable
      bytes: 1MB
      stream: b
)";
    // down_a takes the lock when called (0) and keeps it while it waits for ka: its DMA runs
    // 500-960 (10 us for the first 100 KB chunk at 10 GB/s, 450 us for the other 900 KB drained
    // at 2 GB/s) and it returns at 1010 (the last chunk drained). down_b asks at 10: it waits,
    // though kb is done at 110 (490 us of sync wait to 500 at least). At 1010 the lock is free
    // and down_b would wake at 1030, but ta asks again at once (again_a, 1010) and takes it:
    // DMA 1010-1470, returns 1520. down_b wakes at 1540: DMA 1540-2000, returns 2050, having
    // waited 1530 us for the lock (10 -> 1540) and 510 for its DMA and the last chunk's draining.
    Sim s = run_with(hw, body);
    check_host(s, "down_a", Time{}, us(1010));
    check_gpu(s, "down_a", us(500), us(960));
    check_gpu(s, "again_a", us(1010), us(1470));
    check_host(s, "again_a", us(1010), us(1520));
    check_gpu(s, "down_b", us(1540), us(2000));
    check_host(s, "down_b", us(10), us(2050));
    check_wait(s, "down_b", us(2040));
    // The wake-ups spread over 20 +- 10 us: the k-th release with a waiter wakes it 20 + 10 x
    // (2u - 1) us later, u = frac(1/2 + k x 0.6180339887...). The release at 1010 (k = 0, u =
    // 1/2: 20 us) is barged; the one at 1520 (k = 1, u = 0.11803...) wakes down_b
    // 12.360679775 us later: DMA from 1532.360680 us (rounded to the picosecond).
    Sim spread = run_with(hw + "  host.staging_lock_wakeup_spread: 10us\n", body);
    check_gpu(spread, "down_b", ps(1'532'360'680), ps(1'992'360'680));
    // Switched off: no lock. down_b's DMA runs at 110-570, queued behind nothing (down_a's DMA
    // starts at 500 on the same D2H engine: behind down_b, 570-1030).
    Sim off = run_with(hw + "  rules.staging_lock: off\n", body);
    check_gpu(off, "down_b", us(110), us(570));
    check_gpu(off, "down_a", us(570), us(1030));
}

// ---------------------------------------------------------------- rule 3: legacy stream switch

TEST_CASE("rule 3: legacy_sync off frees the legacy stream from blocking streams", "[engine][rules]") {
    const std::string body = R"(streams: [sb]
threads:
  main:
    - kernel: slow
      stream: sb
      duration: 100us
      grid: 1
    - kernel: legacy_kernel
      duration: 10us
      grid: 1
)";
    check_gpu(run_with("", body), "legacy_kernel", us(100), us(110));
    check_gpu(run_with("  rules.legacy_sync: off\n", body), "legacy_kernel", Time{}, us(10));
}

// ---------------------------------------------------------------- rule 4: kernel switches

TEST_CASE("rule 4: sm_residency off runs device-filling kernels side by side", "[engine][rules]") {
    const std::string body = R"(streams: [a, b]
threads:
  main:
    - kernel: left
      stream: a
      duration: 100us
      grid: 264
      block: 1024
    - kernel: right
      stream: b
      duration: 100us
      grid: 264
      block: 1024
)";
    check_gpu(run_with("", body), "right", us(100), us(200));
    check_gpu(run_with("  rules.sm_residency: off\n", body), "right", Time{}, us(100));
}

TEST_CASE("rule 4: the concurrent-kernel limit comes from gpu.max_kernels", "[engine][rules]") {
    const std::string body = R"(streams: {s: {count: 3}}
threads:
  main:
    - repeat: 3
      do:
        - kernel: k
          stream: s[i]
          duration: 10us
          grid: 1
)";
    Sim s = run_with("  gpu.max_kernels: 2\n", body);
    check_gpu(s, "k[2]", us(10), us(20));
    check_gpu(run_with("  gpu.max_kernels: 2\n  rules.kernel_limit: off\n", body), "k[2]", Time{}, us(10));
}

TEST_CASE("rule 4: priorities choose who takes freed room, off, ready order does", "[engine][rules]") {
    const std::string body = R"(streams:
  a: {}
  b: {}
  hi: {priority: -1}
threads:
  main:
    - kernel: fill
      stream: a
      duration: 100us
      grid: 264
      block: 1024
    - kernel: low
      stream: b
      duration: 10us
      grid: 264
      block: 1024
    - kernel: high
      stream: hi
      duration: 10us
      grid: 264
      block: 1024
)";
    // `fill` takes the whole device at 0; `low` and `high` (ready at 0, `low` first) wait.
    // At 100 the higher-priority `high` takes the room although `low` was ready first.
    Sim s = run_with("", body);
    check_gpu(s, "high", us(100), us(110));
    check_gpu(s, "low", us(110), us(120));
    Sim off = run_with("  rules.priorities: off\n", body);
    check_gpu(off, "low", us(100), us(110));
    check_gpu(off, "high", us(110), us(120));
}

TEST_CASE("rule 4: small_kernel_floor off drops the launch latency and minimum duration", "[engine][rules]") {
    const std::string hw = "  gpu.launch_latency: 3us\n  kernel.min_duration: 2us\n";
    const std::string body = R"(streams: [s]
threads:
  main:
    - kernel: tiny
      stream: s
      duration: 1us
      grid: 1
)";
    check_gpu(run_with(hw, body), "tiny", us(3), us(5));
    check_gpu(run_with(hw + "  rules.small_kernel_floor: off\n", body), "tiny", Time{}, us(1));
}

// ---------------------------------------------------------------- rule 5: queues

namespace {
const std::string kQueues = R"(streams: {s: {count: 4}}
threads:
  main:
    - repeat: 4
      var: k
      do:
        - kernel: first
          stream: s[k]
          duration: 100us
          grid: 1
        - kernel: second
          stream: s[k]
          duration: 100us
          grid: 1
)";
}

TEST_CASE("rule 5: streams sharing a hardware queue get false dependencies", "[engine][rules]") {
    // Two queues: s[0], s[2] on one, s[1], s[3] on the other. In queue 0, second[0] waits for
    // first[0] (to 100) and holds first[2] behind it until it leaves the queue at 100.
    Sim s = run_with("  gpu.hw_queues: 2\n", kQueues);
    check_gpu(s, "first[0]", Time{}, us(100));
    check_gpu(s, "second[0]", us(100), us(200));
    check_gpu(s, "first[2]", us(100), us(200));
    CHECK(s.op("first[2]").gpu_cause.kind == CauseKind::Queue);
    check_gpu(s, "second[2]", us(200), us(300));
    check_gpu(s, "first[3]", us(100), us(200));
    check_end(s, us(300));
    // The scenario's max_connections overrides the profile: 4 queues, no sharing.
    Sim four = run_with("  gpu.hw_queues: 2\n", "options: {max_connections: 4}\n" + kQueues);
    check_end(four, us(200));
    check_end(run_with("  gpu.hw_queues: 2\n  rules.hw_queues: off\n", kQueues), us(200));
}

TEST_CASE("rule 5: independent nodes of a graph leave a shared hardware queue in any order", "[engine][rules]") {
    // Two roots of one launch start together; the node taken second left the queue while not at
    // its front and stayed in it, so k (another stream on the one queue) waited without end: a
    // false deadlock ("k (kernel): waits on 1 unfinished dependencies"). With 8 queues, the same
    // happened to any ninth stream.
    const std::string body = R"(options: {max_connections: 1}
streams: [t, s]
graphs:
  g:
    - kernel: a
      duration: 100us
    - kernel: b
      duration: 50us
      after: []
threads:
  main:
    - graph_instantiate: g
    - graph_launch: g
      stream: t
    - kernel: k
      stream: s
      duration: 10us
    - device_sync:
)";
    // With a launch latency the GPU takes b before a (both ready at 5 us); k leaves the queue
    // when b, the launch's last entry, has.
    Sim s = run_with("  gpu.launch_latency: 5us\n", body);
    check_gpu(s, "a", us(5), us(105));
    check_gpu(s, "b", us(5), us(55));
    check_gpu(s, "k", us(5), us(15));
    check_end(s, us(105));
}

TEST_CASE("rule 5: a graph's nodes keep their launch's place in a shared hardware queue", "[engine][rules]") {
    // Three threads launch a graph on their per-thread streams, all on one hardware queue. A
    // launch's nodes are issued after it, one step each; they joined the queue behind the other
    // threads' launches issued meanwhile, which wait (stream order) for their own nodes behind
    // them: 'deadlock: 32 ops never finished ... join:w[0] ... blocked at stream_sync'
    // (validation 108 with --set hardware.gpu.hw_queues=1 or 2 too).
    Sim s = run(R"(hardware:
  profile: h200
  gpu.hw_queues: 1
options: {default_stream: per_thread}
graphs:
  g:
    - repeat: 3
      do:
        - kernel: node
          duration: 5us
          grid: 16
threads:
  main:
    - graph_instantiate: g
    - host: spawn
      duration: 1us
    - join: w
  w:
    count: 3
    start_after: spawn
    ops:
      - repeat: 2
        do:
          - graph_launch: g
            stream: per_thread
          - stream_sync: per_thread
)");
    const Program& pg = s.sc.program;
    uint32_t nodes = 0;
    for (uint32_t i = 0; i < pg.ops.size(); ++i) {
        if (!pg.ops[i].graph_node) continue;
        ++nodes;
        INFO(pg.op_name(i));
        CHECK(s.tl.ops[i].gpu_start >= s.tl.ops[i - 1].gpu_end);  // after its launch, or the node before it
    }
    CHECK(nodes == 3 * 2 * 3);
}

TEST_CASE("rule 5: H2D/D2H copies do not wait in a hardware queue behind another stream's work", "[engine][rules]") {
    // One queue for two streams, as 16 streams over 8 queues share them (validation 67: stream
    // k + 8's upload started at once, its first kernel when stream k's second kernel started).
    // Each stream: an H2D of 1 MB (1 ms at 1 GB/s), k1 (100 us), k2 (100 us), a D2H of 1 MB;
    // s[0] issued first. Kernels join the queue: k1[0], k2[0], k1[1], k2[1]; the copies do not.
    // up[0] 0-1000, up[1] 1000-2000 (one H2D engine); k1[0] 1000-1100, k2[0] 1100-1200 (it
    // leaves the queue at 1100, freeing k1[1]); k1[1] after up[1] 2000-2100, k2[1] 2100-2200;
    // down[0] 1200-2200 and down[1] 2200-3200 on the D2H engine. Had the copies joined the
    // queue, up[1] would have waited behind down[0] (issued before it) until 1200.
    const std::string body = R"(streams: {s: {count: 2}}
threads:
  main:
    - repeat: 2
      var: k
      do:
        - memcpy_async: up
          direction: h2d
          bytes: 1MB
          stream: s[k]
        - kernel: k1
          stream: s[k]
          duration: 100us
          grid: 1
        - kernel: k2
          stream: s[k]
          duration: 100us
          grid: 1
        - memcpy_async: down
          direction: d2h
          bytes: 1MB
          stream: s[k]
)";
    const std::string hw = "  gpu.hw_queues: 1\n  copy.h2d.bandwidth: 1GB/s\n  copy.d2h.bandwidth: 1GB/s\n"
                           "  rules.copy_efficiency: off\n  rules.duplex: off\n";
    Sim s = run_with(hw, body);
    check_gpu(s, "up[0]", Time{}, us(1000));
    check_gpu(s, "up[1]", us(1000), us(2000));  // the H2D engine runs one copy at a time
    check_gpu(s, "k1[0]", us(1000), us(1100));
    check_gpu(s, "k2[0]", us(1100), us(1200));
    // k1[1] needs up[1] (stream order, to 2000); k2[0] left the queue at 1100.
    check_gpu(s, "k1[1]", us(2000), us(2100));
    check_gpu(s, "k2[1]", us(2100), us(2200));
    check_gpu(s, "down[0]", us(1200), us(2200));
    check_gpu(s, "down[1]", us(2200), us(3200));
    // up[1] joined no queue: it started when the engine freed, not when down[0] (issued before it
    // to the same queue) left at 1200.
    CHECK(s.op("up[1]").gpu_cause.kind != CauseKind::Queue);
}

TEST_CASE("rule 5: a full launch queue blocks the launching thread", "[engine][rules]") {
    const std::string hw = "  host.launch_cost: 1us\n  gpu.launch_queue_depth: 2\n";
    const std::string body = R"(streams: [s]
threads:
  main:
    - repeat: 4
      do:
        - kernel: k
          stream: s
          duration: 100us
          grid: 1
)";
    // k[0] is taken by the GPU at 1 (after its call); k[1] and k[2] fill the queue at 2 and 3.
    // k[3]'s call at 3 blocks until k[1] is taken at 101 (when k[0] ends), then costs 1 us.
    Sim s = run_with(hw, body);
    check_host(s, "k[2]", us(2), us(3));
    check_host(s, "k[3]", us(3), us(102));
    check_wait(s, "k[3]", us(98));
    check_gpu(s, "k[3]", us(301), us(401));
    Sim off = run_with(hw + "  rules.launch_queue: off\n", body);
    check_host(off, "k[3]", us(3), us(4));
    check_gpu(off, "k[3]", us(301), us(401));
}

// ---------------------------------------------------------------- rule 6: host side

TEST_CASE("rule 6: a cold process loads each kernel's module at its first launch", "[engine][rules]") {
    const std::string hw = "  host.launch_cost: 1us\n  host.module_load_cost: 60us\n";
    const std::string body = R"(streams: [s]
threads:
  main:
    - kernel: a
      stream: s
      duration: 1us
      name: a1
    - kernel: a
      stream: s
      duration: 1us
      name: a2
    - kernel: b
      stream: s
      duration: 1us
)";
    // A kernel is known by its label (`name:` replaces it): a1, a2 and b are three kernels, each
    // paying 60 us at its first launch in a cold process.
    Sim cold = run_with(hw, "options: {cold_start: true}\n" + body);
    check_host(cold, "a1", Time{}, us(61));
    check_host(cold, "a2", us(61), us(122));
    check_host(cold, "b", us(122), us(183));
    Sim warm = run_with(hw, body);
    check_host(warm, "b", us(2), us(3));
    Sim same = run_with(hw, R"(options: {cold_start: true}
streams: [s]
threads:
  main:
    - repeat: 3
      do:
        - kernel: a
          stream: s
          duration: 1us
)");
    check_host(same, "a[0]", Time{}, us(61));
    check_host(same, "a[1]", us(61), us(62));
    check_host(run_with(hw + "  rules.module_loading: off\n", "options: {cold_start: true}\n" + body), "b", us(2), us(3));
}

TEST_CASE("rule 6: blocking-sync scheduling wakes syncs later, events spin unless flagged", "[engine][rules]") {
    // A wake-up of 100 us after any sleep (the next test makes it follow the sleep).
    const std::string hw = "  host.sync_wakeup: 2us\n  host.blocking_sync_wakeup: 100us\n  host.blocking_sync_wakeup_short: 100us\n";
    const std::string body = R"(streams: [s]
events:
  plain: {}
  sleepy: {blocking_sync: true}
threads:
  main:
    - kernel: k1
      stream: s
      duration: 50us
    - stream_sync: s
    - kernel: k2
      stream: s
      duration: 50us
    - event_record: plain
      stream: s
    - event_sync: plain
    - kernel: k3
      stream: s
      duration: 50us
    - event_record: sleepy
      stream: s
    - event_sync: sleepy
)";
    Sim b = run_with(hw, "options: {sync: blocking}\n" + body);
    // k1 0-50; the stream sync sleeps: returns at 150. k2 150-200; the plain event spins: 202.
    // k3 202-252; the flagged event sleeps: 352.
    check_host(b, "stream_sync:s", Time{}, us(150));
    check_host(b, "event_sync:plain", us(150), us(202));
    check_host(b, "event_sync:sleepy", us(202), us(352));
    Sim spin = run_with(hw, body);
    check_host(spin, "stream_sync:s", Time{}, us(52));
    check_host(spin, "event_sync:sleepy", us(104), us(254));  // the event's own flag still sleeps
    Sim off = run_with(hw + "  rules.sync_wakeup: off\n", "options: {sync: blocking}\n" + body);
    check_host(off, "stream_sync:s", Time{}, us(50));
}

TEST_CASE("rule 6: a blocking-sync wake-up grows with how long the thread slept", "[engine][rules]") {
    // 20 us after a sleep of at most 50 us, rising linearly over the next 100 us to 100 us.
    const std::string hw = R"(  host.blocking_sync_wakeup: 100us
  host.blocking_sync_wakeup_short: 20us
  host.blocking_sync_sleep_from: 50us
  host.blocking_sync_sleep_ramp: 100us
)";
    const std::string body = R"(streams: [s]
events:
  sleepy: {blocking_sync: true}
threads:
  main:
    - kernel: k1
      stream: s
      duration: 30us
    - stream_sync: s
      name: sync1
    - kernel: k2
      stream: s
      duration: 100us
    - stream_sync: s
      name: sync2
    - kernel: k3
      stream: s
      duration: 300us
    - stream_sync: s
      name: sync3
    - kernel: k4
      stream: s
      duration: 10us
    - event_record: sleepy
      stream: s
    - event_sync: sleepy
)";
    // k1 0-30, slept 30 <= 50: back at 50. k2 50-150, slept 100: 20 + 80 x 50/100 = 60 -> 210.
    // k3 210-510, slept 300 >= 150: 100 -> 610. k4 610-620; the flagged event slept 10: 20 -> 640.
    Sim b = run_with(hw, "options: {sync: blocking}\n" + body);
    check_host(b, "sync1", Time{}, us(50));
    check_host(b, "sync2", us(50), us(210));
    check_host(b, "sync3", us(210), us(610));
    check_host(b, "event_sync:sleepy", us(610), us(640));
    // Spinning syncs keep host.sync_wakeup (zero here); the flagged event still sleeps: k4 at
    // 430-440, back at 460.
    Sim spin = run_with(hw, body);
    check_host(spin, "sync3", us(130), us(430));
    check_host(spin, "event_sync:sleepy", us(430), us(460));
    // rules.sync_wakeup off: no wake-up at any sleep.
    Sim off = run_with(hw + "  rules.sync_wakeup: off\n", "options: {sync: blocking}\n" + body);
    check_host(off, "sync2", us(30), us(130));
    check_host(off, "event_sync:sleepy", us(430), us(440));
}

TEST_CASE("rule 6: a call costs more while another thread spins in a sync, not while it sleeps in one", "[engine][rules]") {
    const std::string hw = R"(  host.launch_cost: 4us
  host.memcpy_call_cost: 2us
  host.sync_call_cost: 0us
  host.sync_wakeup: 1us
  host.launch_contention: 0.5
  host.spin_contention: 0.25
)";
    const std::string body = R"(streams: [sa, sb]
threads:
  a:
    - kernel: ka
      stream: sa
      duration: 100us
    - stream_sync: sa
  b:
    - host: work
      duration: 20us
    - memcpy_async: up
      direction: h2d
      memory: pinned
      bytes: 4KiB
      stream: sb
    - host: more
      duration: 10us
    - kernel: kb
      stream: sb
      duration: 10us
)";
    // Thread a launches ka (0-4: b is in host work, no call) and spins in its sync from 4 until
    // ka's end + the 1 us wake-up. Thread b's copy call at 20 costs 2 x (1 + 0.25) = 2.5 us
    // (one thread spinning, none inside a call), its launch at 32.5 costs 4 x 1.25 = 5 us.
    Sim spin = run_with(hw, body);
    check_host(spin, "ka", us(0), us(4));
    check_host(spin, "up", us(20), ns(22500));
    check_host(spin, "kb", ns(32500), ns(37500));
    check_host(spin, "stream_sync:sa", us(4), spin.op("ka").gpu_end + us(1));
    // Blocking-sync scheduling: a sleeps in its sync, so b's calls cost their base.
    Sim sleep = run_with(hw, "options: {sync: blocking}\n" + body);
    check_host(sleep, "up", us(20), us(22));
    check_host(sleep, "kb", us(32), us(36));
    // rules.launch_contention off takes both contentions away.
    Sim off = run_with(hw + "  rules.launch_contention: off\n", body);
    check_host(off, "up", us(20), us(22));
    check_host(off, "kb", us(32), us(36));
}

// Rule 6's callbacks: 20 us after work done within 50 us of the last callback's return, rising
// over 100 us of idle time to 40 us.
const std::string kCallbackHw = R"(  host.launch_cost: 1us
  host.host_func_call_cost: 3us
  gpu.host_func_latency: 20us
  gpu.host_func_latency_idle: 40us
  gpu.host_func_idle_from: 50us
  gpu.host_func_idle_ramp: 100us
  gpu.host_func_gap: 10us
)";

TEST_CASE("rule 6: a host callback starts late, runs, and holds its stream", "[engine][rules]") {
    const std::string& hw = kCallbackHw;
    const std::string body = R"(streams: [s, idle]
threads:
  main:
    - kernel: kA
      stream: s
      duration: 100us
    - host_func: cb
      stream: s
      duration: 5us
    - kernel: kB
      stream: s
      duration: 50us
    - host_func: lone
      stream: idle
      duration: 5us
)";
    // kA call 0-1, GPU 1-101 (no launch latency). cb call 1-4. kB call 4-5. `lone` on an idle
    // stream: call 5-8; the callback thread has run no callback yet: it starts 40 us after its
    // call, 48-53. cb: kA ends at 101, 48 us after the thread returned from `lone` (<= 50): 20 us
    // later, 121-126. kB starts 10 us after cb returns: 136-186.
    Sim s = run_with(hw, body);
    check_host(s, "cb", us(1), us(4));
    check_gpu(s, "kA", us(1), us(101));
    check_gpu(s, "lone", us(48), us(53));
    check_gpu(s, "cb", us(121), us(126));
    check_gpu(s, "kB", us(136), us(186));
    Sim flat = run_with(hw + "  rules.callback_idle: off\n", body);  // always 20 us
    check_gpu(flat, "lone", us(28), us(33));
    check_gpu(flat, "cb", us(121), us(126));
    Sim off = run_with(hw + "  rules.host_funcs: off\n", body);
    check_gpu(off, "cb", us(101), us(106));
    check_gpu(off, "kB", us(106), us(156));
}

TEST_CASE("rule 6: a callback starts later the longer the callback thread was idle, and callbacks run one at a time",
          "[engine][rules]") {
    const std::string& hw = kCallbackHw;
    // The ramp: a call 1-4 and k2 call 4-5. a: k1 ends at 101, no callback before: 40 us, 141-146.
    // k2 starts 10 us after a returns: 156-231. b (call 5-8): k2 ends 85 us after a returned,
    // 35 us into the ramp: 20 + 20 x 35/100 = 27 us later, 258-263.
    Sim ramp = run_with(hw, R"(streams: [s]
threads:
  main:
    - kernel: k1
      stream: s
      duration: 100us
    - host_func: a
      stream: s
      duration: 5us
    - kernel: k2
      stream: s
      duration: 75us
    - host_func: b
      stream: s
      duration: 5us
)");
    check_gpu(ramp, "a", us(141), us(146));
    check_gpu(ramp, "k2", us(156), us(231));
    check_gpu(ramp, "b", us(258), us(263));
    // One at a time: k1 (call 0-1) 1-101 on s1, c1 call 1-4, k2 call 4-5, 5-115 on s2, c2 call
    // 5-8. c1: first callback, 40 us after k1: 141-171. c2: k2 ends at 115, ready 40 us later
    // (c1 had not started), but c1 runs until 171: c2 starts 20 us after it returns, 191-196.
    const std::string two = R"(streams: [s1, s2]
threads:
  main:
    - kernel: k1
      stream: s1
      duration: 100us
    - host_func: c1
      stream: s1
      duration: 30us
    - kernel: k2
      stream: s2
      duration: 110us
    - host_func: c2
      stream: s2
      duration: 5us
)";
    Sim serial = run_with(hw, two);
    check_gpu(serial, "k2", us(5), us(115));
    check_gpu(serial, "c1", us(141), us(171));
    check_gpu(serial, "c2", us(191), us(196));
    Sim flat = run_with(hw + "  rules.callback_idle: off\n", two);  // 20 us each, side by side
    check_gpu(flat, "c1", us(121), us(151));
    check_gpu(flat, "c2", us(135), us(140));
}

// ---------------------------------------------------------------- rule 7: graphs

namespace {
const std::string kGraphHw = R"(  host.launch_cost: 1us
  gpu.launch_latency: 4us
  gpu.stream_gap: 5us
  graph.instantiate_per_node: 3us
  graph.launch_cost: 2us
  graph.launch_per_node: 1us
  graph.node_gap: 1us
  graph.node_gap_small: 1us
  graph.copy_node_extra: 2us
  copy.memset.bandwidth: 1TB/s
)";
const std::string kGraphBody = R"(streams: [s]
graphs:
  g:
    - kernel: a
      duration: 10us
    - kernel: b
      duration: 20us
    - memset_async: m
      bytes: 1MB
threads:
  main:
    - graph_instantiate: g
    - graph_launch: g
      stream: s
)";
}  // namespace

TEST_CASE("rule 7: another thread's op issued to a stream while a launch's nodes are issued follows the graph", "[engine][rules]") {
    // t1 issues to stream b between t0's graph launch and its node: the op bound to the launch op
    // and overtook the node, then the node took the stream's tail back, so that the next op
    // overtook t1's callback; with a launch queue of 4 the entries taken out of order never
    // freed: "deadlock: cb[2] (host_func)" (with the default depth after about 350 launches).
    const std::string body = R"(  gpu.launch_queue_depth: 4
streams: [a, b]
graphs:
  g:
    - host_func: n0
      id: n0
      duration: 3us
threads:
  t0:
    - graph_instantiate: g
    - repeat: 2
      do:
        - kernel: k
          stream: a
          duration: 19us
          grid: 500
        - graph_launch: g
          stream: b
    - device_sync:
  t1:
    - graph_instantiate: g
    - repeat: 3
      do:
        - memset_async: m
          bytes: 8MiB
          stream: b
        - host_func: cb
          stream: b
          duration: 2us
    - device_sync:
)";
    Sim s = run("hardware:\n  profile: h200\n" + body);
    // Stream b runs its ops one at a time in the order they were issued (host calls' order).
    std::vector<std::pair<Time, std::string>> issued;
    for (uint32_t i = 0; i < s.sc.program.ops.size(); ++i)
        if (s.sc.program.ops[i].stream == 2 && s.sc.program.ops[i].kind != OpKind::GraphLaunch)
            issued.emplace_back(s.tl.ops[i].gpu_start, s.sc.program.op_name(i));
    std::sort(issued.begin(), issued.end());
    std::vector<std::string> order;
    for (const auto& [t, name] : issued) order.push_back(name);
    CHECK(order == std::vector<std::string>{"m[0]", "n0[0]", "cb[0]", "m[1]", "cb[1]", "n0[1]", "m[2]", "cb[2]"});
    for (size_t k = 1; k < order.size(); ++k) {
        INFO(order[k - 1] << " then " << order[k]);
        CHECK(s.op(order[k - 1]).gpu_end <= s.op(order[k]).gpu_start);
    }
    // The same graph as a chain (no id): the same timeline.
    Sim chain = run("hardware:\n  profile: h200\n" + body.substr(0, body.find("      id: n0\n")) + body.substr(body.find("      id: n0\n") + 13));
    CHECK(chain.tl.end_to_end == s.tl.end_to_end);
}

TEST_CASE("rule 7: a graph costs one instantiation and one cheap launch, nodes follow closely", "[engine][rules]") {
    Sim s = run_with(kGraphHw, kGraphBody);
    // Instantiate 3 nodes x 3 us = 0-9. Launch 2 + 3 x 1 = 5 us: 9-14; the graph starts at
    // 14 + launch latency 4 = 18. a 18-28; b after a + node gap 1: 29-49; the memset node
    // after b + 1: 1 MB at 1 TB/s = 1 us, + 2 us as a graph node: 50-53.
    check_host(s, "graph_instantiate:g", Time{}, us(9));
    check_host(s, "graph_launch:g", us(9), us(14));
    check_gpu(s, "a", us(18), us(28));
    check_gpu(s, "b", us(29), us(49));
    check_gpu(s, "m", us(50), us(53));
    check_end(s, us(53));
}

TEST_CASE("rule 7: the first launch of an executable uploads it, later launches and rules.graphs off do not", "[engine][rules]") {
    const std::string hw = kGraphHw + "  graph.upload_per_node: 2us\n";
    const std::string body = R"(streams: [s]
graphs:
  g:
    - kernel: a
      duration: 10us
    - kernel: b
      duration: 20us
threads:
  main:
    - repeat: 2
      do:
        - graph_instantiate: g
        - repeat: 2
          var: k
          do:
            - graph_launch: g
              stream: s
)";
    // Instantiate 2 nodes x 3 us: 0-6. The executable's first launch: 2 + 2 x 1 us + its upload
    // 2 x 2 us = 8 us, 6-14; a starts after the launch latency, 18-28, b after the node gap,
    // 29-49. Its second launch 4 us: 14-18. The second instantiation makes a new executable,
    // 18-24, whose first launch uploads again: 24-32; then 32-36.
    Sim s = run_with(hw, body);
    check_host(s, "graph_instantiate:g[0]", Time{}, us(6));
    check_host(s, "graph_launch:g[0][0]", us(6), us(14));
    check_gpu(s, "a[0][0]", us(18), us(28));
    check_gpu(s, "b[0][0]", us(29), us(49));
    check_host(s, "graph_launch:g[0][1]", us(14), us(18));
    check_host(s, "graph_instantiate:g[1]", us(18), us(24));
    check_host(s, "graph_launch:g[1][0]", us(24), us(32));
    check_host(s, "graph_launch:g[1][1]", us(32), us(36));
    // Off: no instantiation cost, a launch costs its nodes' launches (2 x 1 us), no upload.
    Sim off = run_with(hw + "  rules.graphs: off\n", body);
    check_host(off, "graph_launch:g[0][0]", Time{}, us(2));
    check_host(off, "graph_launch:g[1][0]", us(4), us(6));
}

TEST_CASE("rule 7: the gap after a kernel node grows with its run time, whatever its grid", "[engine][rules]") {
    // graph.node_gap_small 0.2 us after an empty kernel node (one that runs kernel.min_duration,
    // here 1 us), graph.node_gap 1 us after one that runs 1 + 4 us or more (graph.node_gap_ramp
    // 4 us), linear in between: after a node that ran r us, 0.2 + 0.8 x (r - 1) / 4 us.
    std::string hw = kGraphHw + "  sm.count: 5\n  kernel.min_duration: 1us\n  graph.node_gap_ramp: 4us\n";
    hw.replace(hw.find("graph.node_gap_small: 1us"), 25, "graph.node_gap_small: 0.2us");
    Sim s = run_with(hw, R"(streams: [s]
graphs:
  g:
    - kernel: a
      duration: 0.5us
      grid: 5
    - kernel: b
      duration: 2us
      grid: 1
    - kernel: c
      duration: 3us
      grid: 5
    - kernel: e
      duration: 10us
      grid: 1
    - memset_async: m
      bytes: 1MB
    - kernel: d
      duration: 10us
      grid: 1
threads:
  main:
    - graph_instantiate: g
    - graph_launch: g
      stream: s
)");
    // Instantiate 6 nodes x 3 us: 0-18; launch 2 + 6 x 1 us: 18-26; the graph starts at 26 +
    // launch latency 4 = 30. a (0.5 us, floored to kernel.min_duration 1 us, on all 5 SMs) 30-31; b after a
    // + 0.2 (an empty kernel, whatever its grid): 31.2-33.2; c after b (ran 2 us: 0.2 + 0.8 x 1/4
    // = 0.4, on 1 SM): 33.6-36.6; e after c (ran 3 us on every SM: 0.2 + 0.8 x 2/4 = 0.6):
    // 37.2-47.2; m after e (ran 10 us >= 1 + 4, on 1 SM: the full 1): 1 MB at 1 TB/s + 2 us as a
    // node, 48.2-51.2; d after the memset node + graph.node_gap 1: 52.2-62.2.
    check_host(s, "graph_launch:g", us(18), us(26));
    check_gpu(s, "a", us(30), us(31));
    check_gpu(s, "b", ns(31'200), ns(33'200));
    check_gpu(s, "c", ns(33'600), ns(36'600));
    check_gpu(s, "e", ns(37'200), ns(47'200));
    check_gpu(s, "m", ns(48'200), ns(51'200));
    check_gpu(s, "d", ns(52'200), ns(62'200));
    check_end(s, ns(62'200));
    // rules.graphs off: both gaps are gpu.stream_gap (5 us).
    Sim off = run_with(hw + "  rules.graphs: off\n", R"(streams: [s]
graphs:
  g:
    - kernel: a
      duration: 10us
      grid: 1
    - kernel: b
      duration: 10us
      grid: 5
threads:
  main:
    - graph_instantiate: g
    - graph_launch: g
      stream: s
)");
    // Launch 2 nodes x launch cost 1 us: 0-2; a 6-16; b 21-31.
    check_gpu(off, "a", us(6), us(16));
    check_gpu(off, "b", us(21), us(31));
}

TEST_CASE("rule 7: graphs off cost what stream launches of the nodes cost", "[engine][rules]") {
    Sim s = run_with(kGraphHw + "  rules.graphs: off\n", kGraphBody);
    // No instantiation cost; the launch costs 3 nodes x launch cost 1 us: 0-3. Nodes from 7,
    // with the stream gap 5 between them, and no extra for the memset node.
    check_host(s, "graph_instantiate:g", Time{}, Time{});
    check_host(s, "graph_launch:g", Time{}, us(3));
    check_gpu(s, "a", us(7), us(17));
    check_gpu(s, "b", us(22), us(42));
    check_gpu(s, "m", us(47), us(48));
}

TEST_CASE("rule 7: each launch repeats the nodes with the launch's loop indices", "[engine][rules]") {
    Sim s = run_with(kGraphHw + "  graph.relaunch_gap: 3us\n", R"(streams: [s]
graphs:
  g:
    - repeat: 2
      var: j
      do:
        - kernel: layer
          duration: 10us
threads:
  main:
    - graph_instantiate: g
    - repeat: 2
      do:
        - graph_launch: g
          stream: s
)");
    // Instantiate 0-6; launch 0: 6-10, nodes from 14: layer[0][0] 14-24, layer[1][0] 25-35.
    // Launch 1: 10-14; its first node follows layer[1][0], the previous launch of the same graph
    // in the same stream, by graph.relaunch_gap 3 (not the stream gap 5 nor the node gap 1):
    // 38-48, layer[1][1] 49-59.
    check_gpu(s, "layer[0][0]", us(14), us(24));
    check_gpu(s, "layer[1][0]", us(25), us(35));
    check_gpu(s, "layer[0][1]", us(38), us(48));
    check_gpu(s, "layer[1][1]", us(49), us(59));
    // rules.graphs off: the nodes are stream launches, the stream gap 5 between every two of
    // them, across launches too. Instantiation is free; launch 0 costs 2 nodes x launch cost 1:
    // 0-2, nodes from 2 + 4: layer[0][0] 6-16, layer[1][0] 21-31; launch 1 2-4, its first node
    // after layer[1][0] + 5: 36-46, layer[1][1] 51-61.
    Sim off = run_with(kGraphHw + "  graph.relaunch_gap: 3us\n  rules.graphs: off\n", R"(streams: [s]
graphs:
  g:
    - repeat: 2
      var: j
      do:
        - kernel: layer
          duration: 10us
threads:
  main:
    - graph_instantiate: g
    - repeat: 2
      do:
        - graph_launch: g
          stream: s
)");
    check_gpu(off, "layer[1][0]", us(21), us(31));
    check_gpu(off, "layer[0][1]", us(36), us(46));
    check_gpu(off, "layer[1][1]", us(51), us(61));
}

TEST_CASE("rule 7: a graph launched again from another stream waits for its previous launch", "[engine][rules]") {
    const std::string hw = kGraphHw + "  graph.relaunch_gap: 3us\n";
    const std::string graphs = R"(streams: {s: {count: 2}}
graphs:
  g:
    - kernel: a
      duration: 10us
    - kernel: b
      duration: 20us
  h:
    - kernel: c
      duration: 10us
    - kernel: d
      duration: 20us
)";
    Sim s = run_with(hw, graphs + R"(threads:
  main:
    - graph_instantiate: g
    - repeat: 2
      var: k
      do:
        - graph_launch: g
          stream: s[k]
)");
    // Instantiate 2 nodes x 3 us: 0-6. Launch 1 costs 2 + 2 x 1 = 4 us: 6-10; its nodes from
    // 10 + launch latency 4: a[0] 14-24, b[0] 25-45. Launch 2: 10-14, issued to s2 at 18, but
    // CUDA runs one launch of a graph at a time: it waits for b[0] (45), and its first node
    // starts graph.relaunch_gap later: a[1] 48-58, b[1] 59-79.
    check_host(s, "graph_launch:g[1]", us(10), us(14));
    check_gpu(s, "a[0]", us(14), us(24));
    check_gpu(s, "b[0]", us(25), us(45));
    check_gpu(s, "a[1]", us(48), us(58));
    check_gpu(s, "b[1]", us(59), us(79));
    check_end(s, us(79));
    // Two graphs (two executables) do not wait for each other: c runs beside a.
    Sim two = run_with(hw, graphs + R"(threads:
  main:
    - graph_instantiate: g
    - graph_instantiate: h
    - graph_launch: g
      stream: s[0]
    - graph_launch: h
      stream: s[1]
)");
    // Instantiations 0-6, 6-12; launch g 12-16, nodes from 20: a 20-30, b 31-51; launch h
    // 16-20, nodes from 24: c 24-34, d 35-55.
    check_gpu(two, "a", us(20), us(30));
    check_gpu(two, "c", us(24), us(34));
    check_gpu(two, "d", us(35), us(55));
}

namespace {
// The GPU phases of the ops named `name` (one a host thread), in the order they start.
std::vector<std::pair<Time, Time>> gpu_phases(const Sim& s, const std::string& name) {
    std::vector<std::pair<Time, Time>> v;
    for (uint32_t i = 0; i < s.sc.program.ops.size(); ++i)
        if (s.sc.program.op_name(i) == name) v.emplace_back(s.tl.ops[i].gpu_start, s.tl.ops[i].gpu_end);
    std::sort(v.begin(), v.end());
    return v;
}
void check_phases(const Sim& s, const std::string& name, const std::vector<std::pair<Time, Time>>& want) {
    const auto got = gpu_phases(s, name);
    INFO("GPU phases of the ops named '" << name << "'");
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
        CHECK(show(got[k].first) == show(want[k].first));
        CHECK(show(got[k].second) == show(want[k].second));
    }
}
const std::string kFourStreamsGraph = R"(streams: {s: {count: 4}}
graphs:
  g:
    - kernel: a
      duration: 10us
    - kernel: b
      duration: 20us
)";
}  // namespace

TEST_CASE("rule 7: each graph_instantiate makes its own executable, launches of different ones run side by side", "[engine][rules]") {
    const std::string hw = kGraphHw + "  graph.relaunch_gap: 3us\n  rules.launch_contention: off\n";
    // Four threads each instantiate g and launch their own executable on their own stream.
    Sim own = run_with(hw, kFourStreamsGraph + R"(threads:
  w:
    count: 4
    var: k
    ops:
      - graph_instantiate: g
      - graph_launch: g
        stream: s[k]
)");
    // Each thread: instantiate 2 nodes x 3 us: 0-6; launch 2 + 2 x 1 = 4 us: 6-10; nodes from
    // 10 + launch latency 4: a 14-24, b after the node gap 1: 25-45, on all four streams at
    // once (four executables: no launch waits for another).
    check_phases(own, "a", {{us(14), us(24)}, {us(14), us(24)}, {us(14), us(24)}, {us(14), us(24)}});
    check_phases(own, "b", {{us(25), us(45)}, {us(25), us(45)}, {us(25), us(45)}, {us(25), us(45)}});
    check_end(own, us(45));
    for (uint32_t i = 0; i < own.sc.program.ops.size(); ++i) {  // a launch launches its own thread's executable
        const Op& op = own.sc.program.ops[i];
        if (op.kind != OpKind::GraphLaunch) continue;
        CHECK(own.sc.program.ops[own.sc.program.execs[op.exec]].thread == op.thread);
    }
    CHECK(own.sc.program.execs.size() == 4);

    // One thread instantiates g once and four threads launch that one executable (validation
    // 108's shape): the launches run one after the other, as before.
    Sim shared = run_with(hw, kFourStreamsGraph + R"(threads:
  main:
    - graph_instantiate: g
    - host: spawn
      duration: 1us
  w:
    count: 4
    var: k
    start_after: spawn
    ops:
      - graph_launch: g
        stream: s[k]
)");
    // Instantiate 0-6, spawn 6-7; the workers start at 7 and launch 7-11, issued at 11 + 4 =
    // 15. The first launch: a 15-25, b 26-46; each next launch waits for the previous one's b
    // and starts its a graph.relaunch_gap 3 later: 49-59 / 60-80, 83-93 / 94-114, 117-127 / 128-148.
    check_phases(shared, "a", {{us(15), us(25)}, {us(49), us(59)}, {us(83), us(93)}, {us(117), us(127)}});
    check_phases(shared, "b", {{us(26), us(46)}, {us(60), us(80)}, {us(94), us(114)}, {us(128), us(148)}});
    check_end(shared, us(148));
    CHECK(shared.sc.program.execs.size() == 1);

    // A thread that instantiates g again launches its latest executable: two launches of the
    // first executable on s[0] and s[1] run one after the other; the launch after the second
    // instantiation, on s[2], runs beside them.
    Sim latest = run_with(hw, kFourStreamsGraph + R"(threads:
  main:
    - graph_instantiate: g
    - graph_launch: g
      stream: s[0]
    - graph_launch: g
      stream: s[1]
    - graph_instantiate: g
    - graph_launch: g
      stream: s[2]
)");
    // Instantiate 0-6; launch 1 6-10 (nodes from 14: a 14-24, b 25-45); launch 2 10-14, issued
    // at 18, waits for b (45): a 48-58, b 59-79; instantiate 14-20; launch 3 20-24, nodes from
    // 28: a 28-38, b 39-59, beside the first executable's.
    check_phases(latest, "a", {{us(14), us(24)}, {us(28), us(38)}, {us(48), us(58)}});
    check_phases(latest, "b", {{us(25), us(45)}, {us(39), us(59)}, {us(59), us(79)}});
    check_end(latest, us(79));
}

TEST_CASE("rule 7: a DAG graph launched again waits for every last node of its previous launch", "[engine][rules]") {
    Sim s = run_with(kGraphHw + "  graph.relaunch_gap: 3us\n", R"(streams: {s: {count: 2}}
graphs:
  g:
    - kernel: root
      id: root
      duration: 10us
    - kernel: short
      after: [root]
      duration: 5us
    - kernel: long
      after: [root]
      duration: 30us
threads:
  main:
    - graph_instantiate: g
    - repeat: 2
      var: k
      do:
        - graph_launch: g
          stream: s[k]
)");
    // Instantiate 3 x 3 us: 0-9. Launch 1: 2 + 3 x 1 = 5 us, 9-14; root[0] from 18: 18-28;
    // short[0] and long[0] side by side after it + node gap 1: 29-34 and 29-59. Launch 2:
    // 14-19, waits for both last nodes (long[0] ends at 59): root[1] from 59 + 3 = 62: 62-72.
    check_gpu(s, "root[0]", us(18), us(28));
    check_gpu(s, "short[0]", us(29), us(34));
    check_gpu(s, "long[0]", us(29), us(59));
    check_gpu(s, "root[1]", us(62), us(72));
    check_end(s, us(103));
}

// ---------------------------------------------------------------- rule 8: unified memory

TEST_CASE("rule 8: managed memory is tracked per block, a partial prefetch leaves faults", "[engine][rules]") {
    const std::string hw = R"(  um.block_size: 2MiB
  um.prefetch_h2d_bandwidth: 1GB/s
  um.fault_bandwidth: 0.5GB/s
)";
    const std::string body = R"(buffers:
  um: {kind: managed, size: 8MiB}
streams: [s]
threads:
  main:
    - prefetch: um
      bytes: 4MiB
      stream: s
    - kernel: k1
      stream: s
      duration: 100us
      grid: 1
      uses: [um]
    - kernel: k2
      stream: s
      duration: 100us
      grid: 1
      uses: [um]
)";
    // The prefetch moves the first two 2 MiB blocks: 4194304 B at 1 GB/s = 4194.304 us. k1 faults
    // in the other 4 MiB at 0.5 GB/s (8388.608 us) before its 100 us; k2 pays nothing.
    Sim s = run_with(hw, body);
    check_gpu(s, "prefetch:um", Time{}, ns(4'194'304));
    check_gpu(s, "k1", ns(4'194'304), ns(12'682'912));
    check_gpu(s, "k2", ns(12'682'912), ns(12'782'912));
    // Prefetching what is already resident moves nothing.
    Sim twice = run_with(hw, R"(buffers:
  um: {kind: managed, size: 8MiB, resident: device}
streams: [s]
threads:
  main:
    - prefetch: um
      stream: s
)");
    check_gpu(twice, "prefetch:um", Time{}, Time{});
    Sim off = run_with(hw + "  rules.um_migration: off\n", body);
    check_gpu(off, "k1", Time{}, us(100));
}

// ---------------------------------------------------------------- rule 9: allocation calls

TEST_CASE("rule 9: allocation calls cost host time, cudaFree waits for the device", "[engine][rules]") {
    const std::string hw = R"(  host.launch_cost: 1us
  host.malloc_cost: 100us
  host.free_cost: 50us
  host.malloc_cost_per_gib: 0us
  host.free_cost_per_gib: 0us
  host.malloc_host_bandwidth: 1GB/s
  host.malloc_async_cost: 2us
)";
    const std::string body = R"(buffers:
  d: {kind: device, size: 1MB}
  h: {kind: pinned, size: 1MB}
streams: [s]
threads:
  main:
    - malloc: d
    - kernel: k
      stream: s
      duration: 500us
    - free: d
    - malloc_host: h
    - malloc_async: d
      stream: s
)";
    // malloc 0-100; k call 100-101, GPU 101-601; free waits for k (601), then 50 us: 101-651,
    // 500 us of it waiting; malloc_host 1 MB at 1 GB/s: 651-1651; malloc_async 1651-1653.
    Sim s = run_with(hw, body);
    check_host(s, "malloc:d", Time{}, us(100));
    check_host(s, "free:d", us(101), us(651));
    check_wait(s, "free:d", us(500));
    check_host(s, "malloc_host:h", us(651), us(1651));
    check_host(s, "malloc_async:d", us(1651), us(1653));
    Sim off = run_with(hw + "  rules.alloc_costs: off\n", body);
    check_host(off, "free:d", us(1), us(1));
    check_host(off, "malloc_host:h", us(1), us(1));
}

TEST_CASE("rule 9: cudaMalloc and cudaFree grow with the size", "[engine][rules]") {
    const std::string hw = R"(  host.launch_cost: 1us
  host.malloc_cost: 100us
  host.malloc_cost_per_gib: 40us
  host.free_cost: 50us
  host.free_cost_per_gib: 100us
)";
    const std::string body = R"(buffers:
  big: {kind: device, size: 512MiB}
  small: {kind: device, size: 4MiB}
streams: [s]
threads:
  main:
    - malloc: big
    - malloc: small
    - kernel: k
      stream: s
      duration: 200us
    - free: big
    - free: small
)";
    // malloc big: 100 + 40 x 0.5 = 120 us (0-120); small: 100 + 40 x 4/1024 = 100.15625 us
    // (120-220.15625); k call 1 us, GPU 221.15625-421.15625; free big waits for k, then
    // 50 + 100 x 0.5 = 100 us: returns at 521.15625; free small: 50 + 100 x 4/1024 = 50.390625 us.
    Sim s = run_with(hw, body);
    check_host(s, "malloc:big", Time{}, us(120));
    auto ps = [](int64_t v) { return Time::ps(v); };
    check_host(s, "malloc:small", us(120), ps(220'156'250));
    check_gpu(s, "k", ps(221'156'250), ps(421'156'250));
    check_host(s, "free:big", ps(221'156'250), ps(521'156'250));
    check_wait(s, "free:big", us(200));
    check_host(s, "free:small", ps(521'156'250), ps(571'546'875));
    Sim off = run_with(hw + "  rules.alloc_costs: off\n", body);
    check_host(off, "malloc:big", Time{}, Time{});
    check_host(off, "free:big", us(1), us(1));
}

TEST_CASE("rule 2: a pageable source copied again while still in the CPU caches stages faster", "[engine][rules]") {
    const std::string hw = R"(  host.pageable_h2d_bandwidth: 1GB/s
  host.pageable_h2d_warm_bandwidth: 2GB/s
  host.staging_cache: 3MB
  copy.h2d.bandwidth: 100GB/s
)";
    const std::string body = R"(buffers:
  a: {kind: pageable, size: 1MB}
  b: {kind: pageable, size: 2MB}
  c: {kind: pageable, size: 1MB}
  d: {kind: device, size: 2MB}
threads:
  main:
    - memcpy: a1
      src: a
      dst: d
    - memcpy: b1
      src: b
      dst: d
    - memcpy: a2
      src: a
      dst: d
    - memcpy: c1
      src: c
      dst: d
    - memcpy: b2
      src: b
      dst: d
)";
    // a1 (first touch) stages 1 MB cold: 1000 us. b1 cold: 2000 us. a2: only b (2 MB) was
    // staged since, 2 + 1 <= 3 MB: warm, 500 us. c1 cold. b2: a and c (2 MB) since, 2 + 2 > 3:
    // cold again. Host phases of synchronous pageable H2D copies = their staging here (no call
    // cost; the DMA trails the staging by one chunk, which the sync copy does not wait for).
    Sim s = run_with(hw, body);
    auto staged = [&](const char* name) { return s.op(name).host_end - s.op(name).host_start; };
    CHECK(show(staged("a1")) == show(us(1000)));
    CHECK(show(staged("b1")) == show(us(2000)));
    CHECK(show(staged("a2")) == show(us(500)));
    CHECK(show(staged("c1")) == show(us(1000)));
    CHECK(show(staged("b2")) == show(us(2000)));
    Sim off = run_with(hw + "  rules.staging_cache: off\n", body);
    CHECK(show(off.op("a2").host_end - off.op("a2").host_start) == show(us(1000)));
}

TEST_CASE("rule 2: a source within the nearer cache level stages faster still", "[engine][rules]") {
    const std::string hw = R"(  host.pageable_h2d_bandwidth: 1GB/s
  host.pageable_h2d_warm_bandwidth: 2GB/s
  host.pageable_h2d_near_bandwidth: 4GB/s
  host.staging_cache: 3MB
  copy.h2d.bandwidth: 100GB/s
)";
    const std::string body = R"(buffers:
  a: {kind: pageable, size: 500KB}
  b: {kind: pageable, size: 500KB}
  c: {kind: pageable, size: 2MB}
  d: {kind: device, size: 2MB}
threads:
  main:
    - memcpy: a1
      src: a
      dst: d
    - memcpy: a2
      src: a
      dst: d
    - memcpy: b1
      src: b
      dst: d
    - memcpy: a3
      src: a
      dst: d
    - memcpy: c1
      src: c
      dst: d
    - memcpy: a4
      src: a
      dst: d
)";
    // a1 first touch: cold, 500 KB at 1 GB/s = 500 us. a2 at once: 0.5 MB <= 1 MB, near: 125 us.
    // b1 cold: 500 us. a3: b (0.5 MB) staged since, 0.5 + 0.5 <= 1 MB: near again, 125 us. c1
    // cold: 2000 us. a4: c (2 MB) since, 2.5 MB: beyond the near level, within the cache: warm,
    // 250 us.
    Sim s = run_with(hw + "  host.staging_cache_near: 1MB\n", body);
    auto staged = [](const Sim& sim, const char* name) { return sim.op(name).host_end - sim.op(name).host_start; };
    CHECK(show(staged(s, "a1")) == show(us(500)));
    CHECK(show(staged(s, "a2")) == show(us(125)));
    CHECK(show(staged(s, "b1")) == show(us(500)));
    CHECK(show(staged(s, "a3")) == show(us(125)));
    CHECK(show(staged(s, "c1")) == show(us(2000)));
    CHECK(show(staged(s, "a4")) == show(us(250)));
    // No nearer level (its size 0): a2 and a3 stage at the warm speed, 250 us.
    Sim no_near = run_with(hw + "  host.staging_cache_near: 0B\n", body);
    CHECK(show(staged(no_near, "a2")) == show(us(250)));
    CHECK(show(staged(no_near, "a3")) == show(us(250)));
    // The cache rule off: every copy stages cold.
    Sim off = run_with(hw + "  host.staging_cache_near: 1MB\n  rules.staging_cache: off\n", body);
    CHECK(show(staged(off, "a2")) == show(us(500)));
}

TEST_CASE("rule 8: host work migrates managed memory back slower while a copy engine is busy", "[engine][rules]") {
    const std::string base = R"(  rules.copy_efficiency: off
  copy.h2d.bandwidth: 1GB/s
  um.cpu_fault_bandwidth: 1GB/s
)";
    const std::string hw = base + "  um.cpu_fault_beside_copies: 0.25\n";
    const std::string body = R"(buffers:
  m: {kind: managed, size: 1MB, resident: device}
streams: [s]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 500KB
      stream: s
    - host: pass
      duration: 100us
      uses: [m]
)";
    // The 1 MB migration (1000 us alone) starts with the copy at 0 and runs at a quarter of its
    // rate while the copy runs (0-500 us: 125 us of it done), the remaining 875 us at the full
    // rate (to 1375 us), then the pass's own 100 us. The copy itself is not slowed.
    Sim s = run_with(hw, body);
    check_gpu(s, "up", Time{}, us(500));
    check_host(s, "pass", Time{}, us(1475));
    // A copy that starts during the migration (another thread, at 300 us) slows it from then on:
    // 300 us done at the full rate, 400 KB copied 300-700 us (100 us more), the other 600 us
    // at the full rate to 1300 us, then 100 us.
    Sim later = run_with(hw, R"(buffers:
  m: {kind: managed, size: 1MB, resident: device}
streams: [s]
threads:
  main:
    - host: pass
      duration: 100us
      uses: [m]
  other:
    - host: wait
      duration: 300us
    - memcpy_async: up
      direction: h2d
      bytes: 400KB
      stream: s
)");
    check_gpu(later, "up", us(300), us(700));
    check_host(later, "pass", Time{}, us(1400));
    // 1 switches it off: 1000 us of migration, then 100 us.
    check_host(run_with(base + "  um.cpu_fault_beside_copies: 1\n", body), "pass", Time{}, us(1100));
    // Nothing to migrate (no migration rule): the pass's own 100 us only.
    check_host(run_with(hw + "  rules.um_migration: off\n", body), "pass", Time{}, us(100));
}

TEST_CASE("rule 8: a prefetch to the device holds the host for part of its transfer", "[engine][rules]") {
    const std::string hw = R"(  um.prefetch_h2d_bandwidth: 1GB/s
  um.prefetch_host_block: 0.5
)";
    const std::string body = R"(buffers:
  um: {kind: managed, size: 8MB}
streams: [s]
threads:
  main:
    - prefetch: um
      stream: s
    - host: next
      duration: 1ms
)";
    // 8 MB at 1 GB/s = 8000 us on the H2D engine from the call; the host is held for half of it.
    Sim s = run_with(hw, body);
    check_gpu(s, "prefetch:um", Time{}, us(8000));
    check_host(s, "prefetch:um", Time{}, us(4000));
    check_host(s, "next", us(4000), us(5000));
    // Nothing left to move: no hold.
    Sim resident = run_with(hw, R"(buffers:
  um: {kind: managed, size: 8MB, resident: device}
streams: [s]
threads:
  main:
    - prefetch: um
      stream: s
)");
    check_host(resident, "prefetch:um", Time{}, Time{});
    check_host(run_with(hw + "  rules.um_migration: off\n", body), "prefetch:um", Time{}, Time{});
}

TEST_CASE("rule 8: a kernel that ends while another kernel demand-faults completes when the faults are served", "[engine][rules]") {
    const std::string hw = "  um.fault_bandwidth: 1GB/s\n";
    const std::string body = R"(buffers:
  m: {kind: managed, size: 1MB, resident: host}
streams: [a, b]
threads:
  main:
    - kernel: f
      stream: a
      duration: 100us
      grid: 1
      block: 32
      uses: [m]
    - kernel: k
      stream: b
      duration: 200us
      grid: 1
      block: 32
    - kernel: next
      stream: b
      duration: 50us
      grid: 1
      block: 32
    - host: wait
      duration: 1200us
    - kernel: late
      stream: b
      duration: 200us
      grid: 1
      block: 32
)";
    // f faults the 1 MB in first (1000 us), then runs its 100 us: 0-1100, its faults served at
    // 1000. k's block runs 0-200 beside it, but k completes only at 1000; next follows it in
    // stream b (1000-1050). late starts at 1200, after the faults: 1200-1400, not held.
    Sim s = run_with(hw, body);
    check_gpu(s, "f", Time{}, us(1100));
    check_gpu(s, "k", Time{}, us(1000));
    check_gpu(s, "next", us(1000), us(1050));
    check_gpu(s, "late", us(1200), us(1400));
    // Off: k ends with its block.
    Sim off = run_with(hw + "  rules.fault_hold: off\n", body);
    check_gpu(off, "k", Time{}, us(200));
    check_gpu(off, "next", us(200), us(250));
    // Resident pages fault nothing: nothing is held.
    Sim resident = run_with(hw, std::string(body).replace(body.find("resident: host"), 14, "resident: device"));
    check_gpu(resident, "f", Time{}, us(100));
    check_gpu(resident, "k", Time{}, us(200));
}

TEST_CASE("rule 7: a copy node hands over to a kernel node (and back) graph.cross_engine_wait later", "[engine][rules]") {
    const std::string hw = kGraphHw + R"(  graph.cross_engine_wait: 3us
  gpu.cross_engine_wait: 7us
  rules.copy_efficiency: off
  copy.h2d.bandwidth: 1GB/s
  copy.d2h.bandwidth: 1GB/s
)";
    const std::string body = R"(buffers:
  h: {kind: pinned, size: 10KB}
  d: {kind: device, size: 10KB}
streams: [s]
graphs:
  g:
    - memcpy_async: up
      src: h
      dst: d
    - kernel: a
      duration: 10us
    - memcpy_async: down
      src: d
      dst: h
threads:
  main:
    - graph_instantiate: g
    - graph_launch: g
      stream: s
)";
    // Instantiate 3 nodes x 3 us: 0-9; launch 2 + 3 x 1 us: 9-14; the graph starts after the
    // launch latency, at 18. up: 10 us + 2 us as a copy node, 18-30; a after the node gap 1 and
    // the hand-over 3: 34-44; down likewise: 48-60.
    Sim s = run_with(hw, body);
    check_gpu(s, "up", us(18), us(30));
    check_gpu(s, "a", us(34), us(44));
    check_gpu(s, "down", us(48), us(60));
    // rules.cross_engine_wait off: the node gap alone. 18-30, 31-41, 42-54.
    Sim off = run_with(hw + "  rules.cross_engine_wait: off\n", body);
    check_gpu(off, "a", us(31), us(41));
    check_gpu(off, "down", us(42), us(54));
    // rules.graphs off: the nodes cost stream launches, hand-overs included: the launch 3 x 1 us
    // (0-3), up 7-17, a after the stream gap 5 and gpu.cross_engine_wait 7: 29-39, down 51-61.
    Sim streams = run_with(hw + "  rules.graphs: off\n", body);
    check_gpu(streams, "up", us(7), us(17));
    check_gpu(streams, "a", us(29), us(39));
    check_gpu(streams, "down", us(51), us(61));
}
