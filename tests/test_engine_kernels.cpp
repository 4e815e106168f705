// Engine tests, part 3: kernels on the SMs (residency, waves, priorities), HBM sharing, the
// roofline, kernel.min_duration and managed memory. Every expected time is computed by hand
// from docs/model.md; the engine must match to the picosecond.
//
// The H200 profile's SM: 2048 threads, 32 blocks, 65536 registers, 132 SMs. A block of 1024
// threads x 32 registers fits twice per SM, so one wave is 264 such blocks.
#include <catch2/catch.hpp>

#include <string>

#include "engine_test_util.hpp"

using namespace hetsim;
using namespace hetsim::enginetest;

TEST_CASE("engine: two kernels that fit side by side run together", "[engine][kernel]") {
    Sim s = run(R"(
hardware: {profile: h200, zero_latency: true}
streams: [s1, s2]
threads:
  main:
    - kernel: k1
      stream: s1
      grid: 132
      block: 1024
      duration: 100us
    - kernel: k2
      stream: s2
      grid: 132
      block: 1024
      duration: 100us
)");
    // Each needs one block on every SM (half of each SM): both start at 0 and end at 100.
    check_gpu(s, "k1", us(0), us(100));
    check_gpu(s, "k2", us(0), us(100));
    CHECK(s.op("k1").engine == Engine::Compute);
    check_end(s, us(100));
}

TEST_CASE("engine: two kernels that do not fit run one after the other", "[engine][kernel]") {
    Sim s = run(R"(
hardware: {profile: h200, zero_latency: true}
streams: [s1, s2]
threads:
  main:
    - kernel: k1
      stream: s1
      grid: 264
      block: 1024
      duration: 100us
    - kernel: k2
      stream: s2
      grid: 264
      block: 1024
      duration: 100us
)");
    // k1 fills every SM (2 blocks each); k2 gets room only when k1's blocks finish at 100.
    check_gpu(s, "k1", us(0), us(100));
    check_gpu(s, "k2", us(100), us(200));
    CHECK(s.op("k2").gpu_cause.kind == CauseKind::Resource);
    check_end(s, us(200));
}

TEST_CASE("engine: a kernel in waves leaves room after its full wave", "[engine][kernel]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 10us
streams: [s1, s2]
threads:
  main:
    - kernel: waves
      stream: s1
      grid: 300
      block: 1024
      duration: 100us
    - kernel: other
      stream: s2
      grid: 132
      block: 1024
      duration: 100us
)");
    // waves: call 0-10; 300 blocks, 264 per wave -> 2 waves, each block 100 / 2 = 50 us.
    // 10-60: the first 264 blocks fill the device; 60-110: the last 36 (one on SMs 0-35).
    check_gpu(s, "waves", us(10), us(110));
    // other: call 10-20, ready at 20 but no room until 60; then, after waves' 36 blocks (it
    // became ready first), its 132 blocks fit in what is left: 60-160.
    check_gpu(s, "other", us(60), us(160));
    check_end(s, us(160));
}

TEST_CASE("engine: block residency limited by shared memory sets the wave", "[engine][kernel]") {
    Sim s = run(R"(
hardware: {profile: h200, zero_latency: true}
streams: [s1]
threads:
  main:
    - kernel: k
      stream: s1
      grid: 264
      block: 128
      shared_memory: 100KiB
      duration: 90us
)");
    // 228 KiB / 100 KiB = 2 blocks per SM (threads would allow 16): one wave of 264, 90 us.
    check_gpu(s, "k", us(0), us(90));

    Sim t = run(R"(
hardware: {profile: h200, zero_latency: true}
streams: [s1, s2]
threads:
  main:
    - kernel: k
      stream: s1
      grid: 265
      block: 128
      shared_memory: 100KiB
      duration: 90us
    - kernel: o
      stream: s2
      grid: 264
      block: 128
      shared_memory: 100KiB
      duration: 90us
)");
    // k: one block more than a wave: 2 waves of 45 us. Its first 264 blocks fill the device
    // at 0; o waits. At 45 k places its last block, and o the 263 blocks that still fit
    // (45-135); o's last block gets room when k's ends at 90: 90-180.
    check_gpu(t, "k", us(0), us(90));
    check_gpu(t, "o", us(45), us(180));
    check_end(t, us(180));
}

TEST_CASE("engine: a high-priority kernel takes the free SMs first", "[engine][kernel]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
streams:
  s0: {}
  lo: {priority: 0}
  hi: {priority: -1}
threads:
  main:
    - kernel: fill
      stream: s0
      grid: 264
      block: 1024
      duration: 100us
    - kernel: low
      stream: lo
      grid: 264
      block: 1024
      duration: 10us
    - kernel: high
      stream: hi
      grid: 264
      block: 1024
      duration: 10us
)");
    // fill: call 0-1, GPU 1-101, all SMs. low ready at 2, high at 3: both wait. At 101 high
    // (priority -1) goes first though low became ready earlier: 101-111, then low 111-121.
    check_gpu(s, "fill", us(1), us(101));
    check_gpu(s, "high", us(101), us(111));
    check_gpu(s, "low", us(111), us(121));
    check_end(s, us(121));
}

TEST_CASE("engine: a waiting kernel holds back the kernels behind it", "[engine][kernel]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
streams: [s0, a, b]
threads:
  main:
    - kernel: fill
      stream: s0
      grid: 132
      block: 1024
      shared_memory: 200KiB
      duration: 100us
    - kernel: first
      stream: a
      grid: 132
      block: 256
      shared_memory: 100KiB
      duration: 10us
    - kernel: second
      stream: b
      grid: 132
      block: 256
      duration: 10us
)");
    // fill: 1-101, one block per SM (200 of 228 KiB shared memory), leaving 28 KiB, 1024
    // threads. first (ready 2) needs 100 KiB: no room. second (ready 3) would fit, but does not
    // overtake first. At 101 both place their blocks: 101-111.
    check_gpu(s, "fill", us(1), us(101));
    check_gpu(s, "first", us(101), us(111));
    check_gpu(s, "second", us(101), us(111));
}

TEST_CASE("engine: memory-bound kernels share HBM", "[engine][kernel]") {
    const std::string body = R"(
streams: [s1, s2, s3]
threads:
  main:
    - kernel: m1
      stream: s1
      bytes: 100MB
    - kernel: m2
      stream: s2
      bytes: 100MB
    - kernel: c
      stream: s3
      duration: 100us
)";
    SECTION("sharing on") {
        Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  hbm.bandwidth: 1TB/s
)" + body);
        // Alone, each takes 1e8 B / 1e12 B/s = 100 us. m1 starts at 1 and runs alone to 2
        // (1 us of work done); from 2 both run at half speed: m1's 99 us left take 198 -> 200.
        // m2 did 198 / 2 = 99 by then; its last 1 us runs at full speed -> 201.
        check_gpu(s, "m1", us(1), us(200));
        check_gpu(s, "m2", us(2), us(201));
        // A fixed-duration kernel is not memory-bound and is not slowed.
        check_gpu(s, "c", us(3), us(103));
        check_end(s, us(201));
    }
    SECTION("sharing off") {
        Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  hbm.bandwidth: 1TB/s
  hbm.sharing: false
)" + body);
        check_gpu(s, "m1", us(1), us(101));
        check_gpu(s, "m2", us(2), us(102));
        check_gpu(s, "c", us(3), us(103));
        check_end(s, us(103));
    }
}

TEST_CASE("engine: copies slow memory-bound kernels while they transfer (rules.copy_hbm)", "[engine][kernel]") {
    const std::string hw = R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  host.memcpy_call_cost: 1us
  hbm.bandwidth: 1TB/s
  copy.h2d.bandwidth: 10GB/s
  copy.d2h.bandwidth: 10GB/s
  hbm.beside_h2d: 0.25
  hbm.beside_d2h: 0.25
)";
    const std::string body = R"(
streams: [s1, s2, s3, s4]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 1MB
      stream: s1
    - kernel: m
      stream: s2
      bytes: 100MB
    - memcpy_async: down
      direction: d2h
      bytes: 600KB
      stream: s3
    - kernel: c
      stream: s4
      duration: 100us
)";
    SECTION("rule on") {
        Sim s = run(hw + body);
        // up 1-101, down 3-63 (100 and 60 us on their engines, no duplex under zero_latency).
        // m (100 us alone) starts at 2: 2-3 beside the H2D at 1/1.25 (0.8 us of work), 3-63
        // beside both at 1/1.5 (40 us), 63-101 beside the H2D again (30.4 us): 71.2 us done,
        // 28.8 us left alone -> 129.8. The fixed-duration kernel c is not slowed: 4-104.
        check_gpu(s, "up", us(1), us(101));
        check_gpu(s, "down", us(3), us(63));
        check_gpu(s, "m", us(2), Time::ps(129'800'000));
        check_gpu(s, "c", us(4), us(104));
        check_end(s, Time::ps(129'800'000));
    }
    SECTION("rule off") {
        Sim s = run(hw + "  rules.copy_hbm: off\n" + body);
        check_gpu(s, "m", us(2), us(102));
        check_gpu(s, "c", us(4), us(104));
        check_end(s, us(104));
    }
    SECTION("with HBM sharing off the copies still slow it") {
        Sim s = run(hw + "  hbm.sharing: false\n" + body);
        check_gpu(s, "m", us(2), Time::ps(129'800'000));
    }
    SECTION("a pageable copy's DMA does not slow it") {
        Sim s = run(hw + R"(
streams: [s1, s2]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      memory: pageable
      bytes: 1MB
      stream: s1
    - kernel: m
      stream: s2
      bytes: 100MB
)");
        // The pageable upload stages on the host and its DMA runs beside m, which runs as alone.
        CHECK(s.op("up").gpu_end > s.op("m").gpu_start);
        CHECK(s.op("up").gpu_start < s.op("m").gpu_end);
        check_gpu(s, "m", s.op("m").gpu_start, s.op("m").gpu_start + us(100));
    }
}

TEST_CASE("engine: a memory-bound kernel's SMs drain early, to kernels that are not memory-bound (rules.beside_streaming)",
          "[engine][kernel]") {
    const std::string hw = R"(
hardware:
  profile: h200
  zero_latency: true
  host.launch_cost: 1us
  hbm.bandwidth: 1TB/s
  hbm.drain_start: 0.5
  kernel.beside_hbm_extra: 2us
)";
    const std::string body = R"(
streams: [s1, s2, s3]
threads:
  main:
    - kernel: m
      stream: s1
      bytes: 100MB
      grid: 264
      block: 1024
    - kernel: c
      stream: s2
      duration: 10us
      grid: 4
      block: 1024
    - kernel: m2
      stream: s3
      bytes: 100MB
      grid: 264
      block: 1024
)";
    SECTION("rule on") {
        Sim s = run(hw + body);
        // m fills the device (2 blocks of 1024 threads on each of 132 SMs) at 1 for 100 us, its
        // SMs in 4 parts of 33 ending at 0.5, 2/3, 5/6 and 1 of that: 51, 67.67, 84.33, 101. c
        // (ready at 2) takes 4 of the first part's SMs at 51 and, starting beside a memory-bound
        // kernel, runs 10 + 2 us: 51-63. m2 (ready at 3, memory-bound) does not take drained room:
        // it starts when m ends, 101-201.
        check_gpu(s, "m", us(1), us(101));
        check_gpu(s, "c", us(51), us(63));
        check_gpu(s, "m2", us(101), us(201));
        check_end(s, us(201));
    }
    SECTION("rule off") {
        Sim s = run(hw + "  rules.beside_streaming: off\n" + body);
        // c waits for m's end; at 101 c takes one slot on SMs 0-3 and m2 the other 260, its last
        // 4 blocks when c ends: m2's second batch 111-211 (one kernel: no HBM sharing with itself).
        check_gpu(s, "m", us(1), us(101));
        check_gpu(s, "c", us(101), us(111));
        check_gpu(s, "m2", us(101), us(211));
    }
}

TEST_CASE("engine: two memory-bound kernels started together take twice as long", "[engine][kernel]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  hbm.bandwidth: 1TB/s
streams: [s1, s2]
threads:
  main:
    - kernel: m1
      stream: s1
      bytes: 100MB
    - kernel: m2
      stream: s2
      bytes: 100MB
)");
    // 100 us each alone; both at half speed from 0: 200 us each.
    check_gpu(s, "m1", us(0), us(200));
    check_gpu(s, "m2", us(0), us(200));
}

TEST_CASE("engine: blocks that waited for room fill freed SMs deep (rules.refill_deep)", "[engine][kernel]") {
    // The H200 block_placement cases (validation/measurements/h200/2026-12-03ad): big, 160 KiB a
    // block, fills every SM one deep; t1 and t2 (96 KiB a block, two fit an SM) wait for it.
    const std::string head = R"(
hardware:
  profile: h200
  zero_latency: true
)";
    const std::string body = R"(streams: [s1, s2, s3]
threads:
  main:
    - kernel: big
      stream: s1
      grid: 132
      block: 128
      shared_memory: 160KiB
      duration: 500us
    - kernel: t1
      stream: s2
      grid: 132
      block: 256
      shared_memory: 96KiB
      duration: 1000us
    - kernel: t2
      stream: s3
      grid: 132
      block: 256
      shared_memory: 96KiB
      duration: 2000us
    - kernel: big2
      stream: s1
      grid: 132
      block: 128
      shared_memory: 160KiB
      duration: 500us
)";
    SECTION("deep") {
        // At 500 big's SMs free: t1's 132 blocks, which waited, take SMs 0-65 two deep, t2's
        // SMs 66-131. t1 ends at 1500 and frees SMs 0-65 whole: big2 (after big in s1, waiting
        // since 500) places 66 blocks there (1500-2000, one wave of 500 us) and its other 66 on
        // the same SMs when those end: 2000-2500, as t2 ends.
        Sim s = run(head + body);
        check_gpu(s, "big", us(0), us(500));
        check_gpu(s, "t1", us(500), us(1500));
        check_gpu(s, "t2", us(500), us(2500));
        check_gpu(s, "big2", us(1500), us(2500));
        check_end(s, us(2500));
    }
    SECTION("breadth-first") {
        // Off: t1 and t2 each take one block on every SM at 500, so no SM is whole again until
        // t2 ends: big2 runs 2500-3000.
        Sim s = run(head + "  rules.refill_deep: off\n" + body);
        check_gpu(s, "t1", us(500), us(1500));
        check_gpu(s, "t2", us(500), us(2500));
        check_gpu(s, "big2", us(2500), us(3000));
        check_end(s, us(3000));
    }
    SECTION("a kernel that finds room spreads breadth-first") {
        // t1 alone on an idle device: one block on each SM, so the 160 KiB big beside it fits
        // nowhere (96 + 160 > 228 KiB) and waits for t1: 0-1000, then 1000-1500.
        Sim s = run(head + R"(streams: [s1, s2]
threads:
  main:
    - kernel: t1
      stream: s1
      grid: 132
      block: 256
      shared_memory: 96KiB
      duration: 1000us
    - kernel: big
      stream: s2
      grid: 132
      block: 128
      shared_memory: 160KiB
      duration: 500us
)");
        check_gpu(s, "t1", us(0), us(1000));
        check_gpu(s, "big", us(1000), us(1500));
    }
}

TEST_CASE("engine: a block with shared memory joins a busy SM only within its carveout (rules.smem_carveout)",
          "[engine][kernel]") {
    const std::string head = R"(
hardware:
  profile: h200
  zero_latency: true
)";
    const std::string reduce = R"(
    - kernel: reduce
      stream: s1
      grid: 132
      block: 1024
      duration: 800us
)";
    const std::string tiles = R"(
    - kernel: t1
      stream: s2
      grid: 132
      block: 256
      shared_memory: 96KiB
      duration: 1000us
    - kernel: t2
      stream: s3
      grid: 132
      block: 256
      shared_memory: 96KiB
      duration: 1000us
)";
    const std::string streams = "streams: [s1, s2, s3]\nthreads:\n  main:";
    SECTION("tiles beside a kernel without shared memory wait") {
        // reduce lands first: its SMs get no shared memory, so the 96 KiB tiles (threads and the
        // 228 KiB would allow them) wait until it ends at 800; then two deep: 800-1800 each.
        Sim s = run(head + streams + reduce + tiles);
        check_gpu(s, "reduce", us(0), us(800));
        check_gpu(s, "t1", us(800), us(1800));
        check_gpu(s, "t2", us(800), us(1800));
        CHECK(s.op("t1").gpu_cause.kind == CauseKind::Resource);
        // Off: 1024 + 2 x 256 threads and 2 x 96 KiB fit one SM: all from 0.
        Sim t = run(head + "  rules.smem_carveout: off\n" + streams + reduce + tiles);
        check_gpu(t, "t1", us(0), us(1000));
        check_gpu(t, "t2", us(0), us(1000));
    }
    SECTION("a kernel without shared memory joins the tiles") {
        // t1 lands first and sets each SM's shared memory to its two blocks' 192 KiB: t2 fits
        // beside it, and reduce needs no shared memory: all three from 0 (validation 30).
        Sim s = run(head + streams + tiles + reduce);
        check_gpu(s, "t1", us(0), us(1000));
        check_gpu(s, "t2", us(0), us(1000));
        check_gpu(s, "reduce", us(0), us(800));
    }
    SECTION("the carveout is the first kernel's blocks alone x their shared memory") {
        // a: 1024 threads, 32 KiB -> 2 blocks alone (threads) -> 64 KiB carveout; one block per
        // SM uses 32. b (256 threads, 32 KiB) fits once beside it; c (the same) finds 0 KiB left
        // and waits for a and b: 0-100, then 100-200.
        Sim s = run(head + R"(streams: [s1, s2, s3]
threads:
  main:
    - kernel: a
      stream: s1
      grid: 132
      block: 1024
      shared_memory: 32KiB
      duration: 100us
    - kernel: b
      stream: s2
      grid: 132
      block: 256
      shared_memory: 32KiB
      duration: 100us
    - kernel: c
      stream: s3
      grid: 132
      block: 256
      shared_memory: 32KiB
      duration: 100us
)");
        check_gpu(s, "a", us(0), us(100));
        check_gpu(s, "b", us(0), us(100));
        check_gpu(s, "c", us(100), us(200));
    }
}

TEST_CASE("engine: HBM sharing with a kernel in waves", "[engine][kernel]") {
    // m1: 100 us alone, 2 blocks per SM (shared memory) -> 2 waves of 50 us. m2: 50 us alone;
    // its blocks fit beside m1's.
    const std::string head = R"(
hardware:
  profile: h200
  zero_latency: true
  hbm.bandwidth: 1TB/s
streams: [s1, s2]
threads:
  main:
)";
    const std::string m1 = R"(
    - kernel: m1
      stream: s1
      grid: 528
      block: 128
      shared_memory: 100KiB
      bytes: 100MB
)";
    const std::string m2 = R"(
    - kernel: m2
      stream: s2
      grid: 132
      block: 256
      bytes: 50MB
)";
    SECTION("m2 first") {
        // m2 lands first on idle SMs and sets their shared memory to none (rules.smem_carveout):
        // m1's 100 KiB blocks wait for m2 to end. m2 runs alone 0-50, m1 alone 50-150.
        Sim s = run(head + m2 + m1);
        check_gpu(s, "m2", us(0), us(50));
        check_gpu(s, "m1", us(50), us(150));
        CHECK(s.op("m1").gpu_cause.kind == CauseKind::Resource);
        // Without carveouts both run from 0 at half speed: m2 and m1's first wave end at 100;
        // m1's second wave then runs alone: 100-150.
        std::string off = head;
        off.insert(off.find("streams:"), "  rules.smem_carveout: off\n");
        Sim t = run(off + m2 + m1);
        check_gpu(t, "m2", us(0), us(100));
        check_gpu(t, "m1", us(0), us(150));
    }
    SECTION("m1 first") {
        Sim s = run(head + m1 + m2);
        // m1's second wave waits for room and m2 may not overtake it: m1 runs alone 0-50. At
        // 50 both place their blocks and share HBM: 50 us of work each at half speed -> 150.
        check_gpu(s, "m1", us(0), us(150));
        check_gpu(s, "m2", us(50), us(150));
    }
}

TEST_CASE("engine: roofline compute-bound kernel duration", "[engine][kernel]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  hbm.bandwidth: 1TB/s
  kernel.peak_flops: 1e12
streams: [s1, s2, s3]
threads:
  main:
    - kernel: c1
      stream: s1
      flops: 1e8
      bytes: 10MB
    - kernel: c2
      stream: s2
      flops: 1e8
      bytes: 20MB
    - kernel: f
      stream: s3
      flops: 5e7
    - kernel: g
      stream: s3
      flops: 3.3e7
)");
    // max(1e8 / 1e12 s = 100 us, 1e7 B / 1e12 B/s = 10 us) = 100 us: compute-bound, so c1 and c2
    // running together do not share HBM.
    check_gpu(s, "c1", us(0), us(100));
    check_gpu(s, "c2", us(0), us(100));
    // flops only: 5e7 / 1e12 = 50 us.
    check_gpu(s, "f", us(0), us(50));
    // 3.3e7 / 1e12 = 33 us exactly (ceil(flops * 1e12 / peak) ps; no rounding up by a ps).
    check_gpu(s, "g", us(50), us(83));
}

TEST_CASE("engine: kernel.min_duration floors kernels", "[engine][kernel]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  kernel.min_duration: 5us
  hbm.bandwidth: 1TB/s
streams: [s1, s2, s3]
threads:
  main:
    - kernel: tiny
      stream: s1
      duration: 1us
    - kernel: small_roofline
      stream: s2
      bytes: 1MB
    - kernel: long
      stream: s3
      duration: 10us
)");
    // 1 us -> 5 us; 1e6 B / 1e12 B/s = 1 us -> 5 us; 10 us stays.
    check_gpu(s, "tiny", us(0), us(5));
    check_gpu(s, "small_roofline", us(0), us(5));
    check_gpu(s, "long", us(0), us(10));
}

TEST_CASE("engine: managed memory faults, migrations and prefetch", "[engine][kernel][um]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  um.fault_bandwidth: 10GB/s
  um.cpu_fault_bandwidth: 5GB/s
  um.prefetch_h2d_bandwidth: 20GB/s
buffers:
  um: {kind: managed, size: 10MB, resident: host}
  um2: {kind: managed, size: 10MB}
streams: [s1]
threads:
  main:
    - kernel: k1
      stream: s1
      duration: 100us
      uses: [um]
    - kernel: k2
      stream: s1
      duration: 100us
      uses: [um]
    - stream_sync: s1
    - host: h
      duration: 10us
      uses: [um]
    - prefetch: um2
      stream: s1
    - kernel: k3
      stream: s1
      duration: 100us
      uses: [um2]
)");
    // k1: um is on the host: its (only) wave pays 1e7 B / 1e10 B/s = 1000 us more: 0-1100.
    check_gpu(s, "k1", us(0), us(1100));
    // k2: um is now on the device: 1100-1200.
    check_gpu(s, "k2", us(1100), us(1200));
    check_host(s, "stream_sync:s1", us(0), us(1200));
    // h: um is on the device: migrates back at 1e7 / 5e9 = 2000 us more: 1200-3210.
    check_host(s, "h", us(1200), us(3210));
    // prefetch um2 on the H2D engine: 1e7 / 2e10 = 500 us: 3210-3710; k3 then pays no fault.
    check_gpu(s, "prefetch:um2", us(3210), us(3710));
    CHECK(s.op("prefetch:um2").engine == Engine::H2D);
    check_gpu(s, "k3", us(3710), us(3810));
    check_end(s, us(3810));
}

TEST_CASE("engine: a managed fault stalls only the first wave", "[engine][kernel][um]") {
    Sim s = run(R"(
hardware:
  profile: h200
  zero_latency: true
  um.fault_bandwidth: 10GB/s
buffers:
  um: {kind: managed, size: 1MB}
streams: [s1]
threads:
  main:
    - kernel: k
      stream: s1
      grid: 528
      block: 1024
      duration: 100us
      uses: [um]
)");
    // 2 waves of 50 us; the first blocks take 1e6 / 1e10 = 100 us longer: wave 1 0-150,
    // wave 2 150-200.
    check_gpu(s, "k", us(0), us(200));
}
