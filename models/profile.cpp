#include "models/profile.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace hetsim {

const char* to_string(Dim d) {
    switch (d) {
        case Dim::None: return "number";
        case Dim::Time: return "time";
        case Dim::Bytes: return "size";
        case Dim::Bandwidth: return "bandwidth";
        case Dim::Curve: return "curve";
    }
    return "?";
}

double Curve::at(uint64_t bytes) const {
    if (points.empty()) return 1.0;
    if (bytes <= points.front().first) return points.front().second;
    if (bytes >= points.back().first) return points.back().second;
    size_t k = 1;
    while (points[k].first < bytes) ++k;
    const auto& a = points[k - 1];
    const auto& b = points[k];
    double f = (std::log2(static_cast<double>(bytes)) - std::log2(static_cast<double>(a.first))) /
               (std::log2(static_cast<double>(b.first)) - std::log2(static_cast<double>(a.first)));
    return a.second + f * (b.second - a.second);
}

std::string Curve::text() const {
    if (points.empty()) return "none";
    std::string s;
    for (const auto& [bytes, eff] : points) {
        if (!s.empty()) s += ", ";
        static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        uint64_t v = bytes;
        int u = 0;
        while (u < 4 && v >= 1024 && v % 1024 == 0) v /= 1024, ++u;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4g", eff);
        s += std::to_string(v) + units[u] + ":" + buf;
    }
    return s;
}

namespace {
using P = HwProfile;
constexpr double kMs = 1e9, kS = 1e12;  // in ps
constexpr double kTB = 1e12;            // B/s
constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;

constexpr Range closed(double lo, double hi) { return Range{lo, hi, false, false}; }
constexpr Range above(double lo, double hi) { return Range{lo, hi, true, false}; }  // lo < x <= hi

// Upper bounds against absurd inputs (a unit slip, an extra factor of 1000), each far above
// what a GPU of the next decade needs, so that they never stand in the way of a what-if study.
constexpr Range kCall = closed(0, 10 * kMs);
const char* const kCallNote = "today's calls, gaps and latencies take up to 50 us";
constexpr Range kSlow = closed(0, 1 * kS);
const char* const kRowNote = "narrow rows of today's copy engines and drivers take 1-30 ns each";
const char* const kSlowNote = "today's allocations, module loads and wake-ups take 3 us-2.4 ms";
constexpr Range kHostBw = above(0, 100 * kTB);
const char* const kHostBwNote = "over 100x NVLink-C2C's 450 GB/s per direction, and any host memory";
constexpr Range kDevBw = above(0, 1000 * kTB);
const char* const kDevBwNote = "over 100x the 8 TB/s of a B200's HBM3e";

ParamDecl decl(const char* k, Dim dim, bool lat, const char* d, Range r, const char* note) {
    ParamDecl p{k, dim, lat, d};
    p.range = r;
    p.range_note = note;
    p.positive = r.lo == 0 && r.lo_open;
    return p;
}
ParamDecl t(const char* k, Time P::*m, bool lat, const char* d, Range r = kCall, const char* note = kCallNote) {
    ParamDecl p = decl(k, Dim::Time, lat, d, r, note);
    p.time = m;
    return p;
}
ParamDecl bw(const char* k, uint64_t P::*m, const char* d, Range r = kHostBw, const char* note = kHostBwNote) {
    ParamDecl p = decl(k, Dim::Bandwidth, false, d, r, note);
    p.count = m;
    return p;
}
ParamDecl sz(const char* k, uint64_t P::*m, const char* d, Range r, const char* note) {
    ParamDecl p = decl(k, Dim::Bytes, false, d, r, note);
    p.count = m;
    return p;
}
ParamDecl n(const char* k, uint64_t P::*m, const char* d, Range r, const char* note, const char* dflt = nullptr) {
    ParamDecl p = decl(k, Dim::None, false, d, r, note);
    p.count = m;
    p.default_value = dflt;
    return p;
}
ParamDecl real(const char* k, double P::*m, const char* d, Range r, const char* note, const char* dflt = nullptr) {
    ParamDecl p = decl(k, Dim::None, false, d, r, note);
    p.real = m;
    p.default_value = dflt;
    return p;
}
ParamDecl flag(const char* k, bool P::*m, const char* d, const char* dflt) {
    ParamDecl p{k, Dim::None, false, d};
    p.flag = m;
    p.default_value = dflt;
    return p;
}
ParamDecl rule(const char* k, bool P::Rules::*m, const char* d) {
    ParamDecl p{k, Dim::None, false, d};
    p.rule = m;
    p.default_value = "on";
    return p;
}
ParamDecl curve(const char* k, Curve P::*m, const char* d) {
    ParamDecl p{k, Dim::Curve, false, d};
    p.curve = m;
    p.default_value = "none";  // efficiency 1 at every size: the rule's neutral value
    return p;
}
}  // namespace

const std::vector<ParamDecl>& param_decls() {
    static const std::vector<ParamDecl> decls{
        t("host.launch_cost", &P::launch_cost, true, "host time of cudaLaunchKernel"),
        t("host.memcpy_call_cost", &P::memcpy_call_cost, true, "host time of a cudaMemcpy(Async) call"),
        t("host.memset_call_cost", &P::memset_call_cost, true, "host time of a cudaMemset(Async) call"),
        t("host.event_record_cost", &P::event_record_cost, true, "host time of cudaEventRecord"),
        t("host.stream_wait_event_cost", &P::stream_wait_event_cost, true, "host time of cudaStreamWaitEvent"),
        t("host.sync_call_cost", &P::sync_call_cost, true, "host time of a sync call with nothing to wait for"),
        t("host.prefetch_call_cost", &P::prefetch_call_cost, true, "host time of cudaMemPrefetchAsync"),
        t("host.sync_wakeup", &P::sync_wakeup, true, "GPU work done -> blocked sync call returns", kSlow, kSlowNote),
        bw("host.pageable_h2d_bandwidth", &P::pageable_h2d_bw, "host staging speed of pageable H2D copies"),
        bw("host.pageable_d2h_bandwidth", &P::pageable_d2h_bw, "host staging speed of pageable D2H copies"),
        sz("host.staging_chunk", &P::staging_chunk, "pinned bounce-buffer chunk of pageable copies", above(0, kGiB),
           "the driver stages about 1 MiB at a time"),
        t("copy.h2d.fixed", &P::h2d_fixed, true, "GPU-side fixed cost of an H2D copy"),
        bw("copy.h2d.bandwidth", &P::h2d_bw, "pinned H2D bandwidth"),
        t("copy.d2h.fixed", &P::d2h_fixed, true, "GPU-side fixed cost of a D2H copy"),
        bw("copy.d2h.bandwidth", &P::d2h_bw, "pinned D2H bandwidth"),
        t("copy.d2d.fixed", &P::d2d_fixed, true, "GPU-side fixed cost of a D2D copy"),
        bw("copy.d2d.bandwidth", &P::d2d_bw, "D2D copy bandwidth, counting read + write", kDevBw, kDevBwNote),
        t("copy.memset.fixed", &P::memset_fixed, true, "GPU-side fixed cost of a memset"),
        bw("copy.memset.bandwidth", &P::memset_bw, "memset bandwidth", kDevBw, kDevBwNote),
        t("copy.row_cost.h2d", &P::row_cost_h2d, false,
          "DMA time per row of a pitched H2D copy (cudaMemcpy2DAsync, contiguous rows too): R rows take at least the fixed "
          "cost + R x (this + copy.row_cost.h2d_dense x 128 B / source pitch)", closed(0, 0.1 * kMs), kRowNote),
        t("copy.row_cost.h2d_dense", &P::row_cost_h2d_dense, false,
          "extra DMA time per row of a pitched H2D copy whose rows lie 128 B apart in host memory, in proportion to "
          "128 B / the source pitch (rows packed densely cost more)", closed(0, 0.1 * kMs), kRowNote),
        t("copy.row_cost.d2h", &P::row_cost_d2h, false,
          "DMA time per row of a pitched D2H copy (contiguous rows too): R rows take at least the fixed cost + R x this",
          closed(0, 0.1 * kMs), kRowNote),
        t("copy.row_cost.d2d", &P::row_cost_d2d, false,
          "DMA time per row of a pitched device-to-device copy: R rows take at least the fixed cost + R x this",
          closed(0, 0.1 * kMs), kRowNote),
        t("copy.row_cost.pageable_h2d", &P::row_cost_pageable_h2d, false,
          "host time per row of a pageable pitched H2D copy, beyond staging its bytes (the host packs the rows)",
          closed(0, 0.1 * kMs), kRowNote),
        t("copy.row_cost.pageable_d2h", &P::row_cost_pageable_d2h, false,
          "host time per row of a pageable pitched D2H copy, beyond draining its bytes (the host unpacks the rows)",
          closed(0, 0.1 * kMs), kRowNote),
        t("copy.row_cost.pageable_d2h_sparse", &P::row_cost_pageable_d2h_sparse, false,
          "extra host time per row of a pageable pitched D2H copy whose rows, narrower than 64 B, lie apart in host memory, "
          "in proportion to min(destination pitch, 128 B) / 128 B (the host writes part of a cache line per row)",
          closed(0, 0.1 * kMs), kRowNote),
        real("copy.row_cost.blend", &P::row_cost_blend,
             "exponent k with which a pitched copy's row-bound time r and bandwidth time b combine: (r^k + b^k)^(1/k) "
             "(a large k: the larger of the two)", closed(1, 1000), "1 adds the two; 1000 is the larger of the two to 0.1%"),
        t("gpu.launch_latency", &P::launch_latency, true, "API call returns -> work starts on an idle stream"),
        t("gpu.stream_gap", &P::stream_gap, true, "gap between dependent ops of one stream"),
        t("gpu.event_gap", &P::event_gap, true, "gap of a dependency through an event or the legacy stream"),
        t("gpu.cross_engine_wait", &P::cross_engine_wait, true,
          "added to gpu.stream_gap when a pinned H2D/D2H copy waited in its stream for a kernel to end, or a kernel "
          "for such a copy"),
        n("sm.count", &P::sm_count, "number of SMs", closed(1, 1024),
          "7x the 148 SMs of a B200"),
        n("sm.max_threads", &P::sm_threads, "resident threads per SM", closed(1, 8192), "4x today's 2048"),
        n("sm.max_blocks", &P::sm_blocks, "resident blocks per SM", closed(1, 256), "8x today's 32"),
        n("sm.registers", &P::sm_registers, "32-bit registers per SM", closed(1, 1 << 20),
          "16x today's 65536"),
        sz("sm.shared_memory", &P::sm_shared_memory, "shared memory per SM", above(0, 16 * kMiB),
           "70x today's 228 KiB"),
        bw("hbm.bandwidth", &P::hbm_bw, "HBM bandwidth seen by a memory-bound kernel", kDevBw, kDevBwNote),
        t("kernel.min_duration", &P::kernel_min_duration, true, "shortest kernel (empty kernel) on the GPU"),
        bw("um.fault_bandwidth", &P::um_fault_bw, "GPU-fault-driven managed migration to the device"),
        bw("um.prefetch_h2d_bandwidth", &P::um_prefetch_h2d_bw, "cudaMemPrefetchAsync to the device"),
        bw("um.prefetch_d2h_bandwidth", &P::um_prefetch_d2h_bw, "cudaMemPrefetchAsync to the host"),
        bw("um.cpu_fault_bandwidth", &P::um_cpu_fault_bw, "CPU-fault-driven migration back to the host"),
        sz("device.memory", &P::device_memory, "device memory visible to the program", above(0, 16 * kTiB),
           "over 50x the 288 GB of a B300"),
        real("kernel.peak_flops", &P::peak_flops, "peak FLOP/s for the roofline", above(0, 1e18),
             "100x the 1e16 dense FP4 FLOP/s of a B200"),
        real("host.launch_contention", &P::launch_contention,
             "API calls from several host threads: cost x (1 + this x other threads inside a call)", closed(0, 10),
             "0: no contention; 0.44 measured", "0"),
        real("host.spin_contention", &P::spin_contention,
             "API calls beside host threads that spin in a sync: cost x (1 + this x such threads)", closed(0, 10),
             "0: spinning threads cost the callers nothing", "0"),
        flag("hbm.sharing", &P::hbm_sharing, "memory-bound kernels share HBM bandwidth (true/false)", "true"),
        curve("copy.h2d.efficiency", &P::h2d_eff, "pinned H2D efficiency by size (none, or size:fraction, ...)"),
        curve("copy.d2h.efficiency", &P::d2h_eff, "pinned D2H efficiency by size (none, or size:fraction, ...)"),
        real("copy.duplex_factor", &P::duplex_factor, "H2D and D2H copies at once each take this x longer", closed(1, 10),
             "1: no slow-down, below 1 would be a speed-up; 1.09 measured", "1"),
        real("copy.pageable_contention", &P::pageable_contention,
             "a pinned H2D copy beside a pageable D2H copy takes this x longer", closed(1, 10),
             "1: no slow-down, below 1 would be a speed-up; 2.05 measured", "1"),
        sz("host.staging_pool", &P::staging_pool, "pinned bounce-buffer pool of pageable H2D copies (0: unbounded)",
           closed(0, kTiB), "more pinned memory than a host has"),
        bw("host.pageable_h2d_warm_bandwidth", &P::pageable_h2d_warm_bw,
           "staging speed of a pageable H2D whose source is still in the CPU caches"),
        sz("host.staging_cache", &P::staging_cache,
           "CPU cache bytes: a pageable buffer copied again before this much other pageable data is warm",
           closed(0, kTiB), "more than any CPU cache, HBM caches included"),
        sz("host.staging_cache_near", &P::staging_cache_near,
           "nearer CPU cache level: a pageable buffer copied again before this much pageable data (itself "
           "included) stages at host.pageable_h2d_near_bandwidth (0: no such level)",
           closed(0, kTiB), "more than any CPU cache, HBM caches included"),
        bw("host.pageable_h2d_near_bandwidth", &P::pageable_h2d_near_bw,
           "staging speed of a pageable H2D whose source is in the nearer CPU cache level (host.staging_cache_near)"),
        flag("host.pageable_sync", &P::pageable_sync,
             "documented behaviour: a pageable copy first syncs its stream (false: as measured)", "false"),
        t("host.pageable_d2h_wakeup", &P::pageable_d2h_wakeup, true,
          "a pageable D2H that waited for earlier work of its stream: last chunk drained -> the call returns", kSlow,
          kSlowNote),
        t("host.staging_lock_wakeup", &P::staging_lock_wakeup, true,
          "download staging lock released -> a pageable D2H waiting for it wakes and takes it, unless a call asked "
          "for it sooner (the median of the wake-ups)",
          kSlow, kSlowNote),
        t("host.staging_lock_wakeup_spread", &P::staging_lock_wakeup_spread, true,
          "the wake-ups of host.staging_lock_wakeup spread evenly over its value +- this (0: always the value)",
          kSlow, kSlowNote),
        n("gpu.hw_queues", &P::hw_queues, "hardware queues streams map onto (CUDA_DEVICE_MAX_CONNECTIONS)", closed(1, 32),
          "CUDA_DEVICE_MAX_CONNECTIONS takes 1 to 32; CUDA's default is 8", "8"),
        n("gpu.launch_queue_depth", &P::launch_queue_depth, "queued ops per stream before a launch call blocks",
          closed(1, 1 << 20), "rules.launch_queue: off for unbounded queues; 1000x the 1021 measured"),
        n("gpu.max_kernels", &P::max_kernels, "kernels running at once on the device", closed(1, 4096),
          "32x today's 128"),
        t("host.module_load_cost", &P::module_load_cost, true, "first launch of each kernel: lazy module loading", kSlow,
          kSlowNote),
        t("host.blocking_sync_wakeup", &P::blocking_sync_wakeup, true,
          "GPU work done -> sync returns under blocking-sync scheduling, after the thread slept "
          "host.blocking_sync_sleep_from + host.blocking_sync_sleep_ramp or longer", kSlow, kSlowNote),
        t("host.blocking_sync_wakeup_short", &P::blocking_sync_wakeup_short, true,
          "GPU work done -> sync returns under blocking-sync scheduling, after the thread slept at most "
          "host.blocking_sync_sleep_from", kSlow, kSlowNote),
        t("host.blocking_sync_sleep_from", &P::blocking_sync_sleep_from, false,
          "how long a thread sleeps in a blocking-sync wait (the call's end -> the awaited work done) up to which it "
          "wakes host.blocking_sync_wakeup_short after the work", kSlow, kSlowNote),
        t("host.blocking_sync_sleep_ramp", &P::blocking_sync_sleep_ramp, false,
          "sleep beyond host.blocking_sync_sleep_from over which the blocking-sync wake-up grows linearly to "
          "host.blocking_sync_wakeup", kSlow, kSlowNote),
        t("host.host_func_call_cost", &P::host_func_call_cost, true, "host time of cudaLaunchHostFunc"),
        t("gpu.host_func_latency", &P::host_func_latency, true,
          "preceding work done -> host callback starts, when the driver's callback thread returned from a callback at "
          "most gpu.host_func_idle_from before"),
        t("gpu.host_func_latency_idle", &P::host_func_latency_idle, true,
          "preceding work done -> host callback starts, when the callback thread had been idle gpu.host_func_idle_from + "
          "gpu.host_func_idle_ramp or longer, or ran no callback before"),
        t("gpu.host_func_idle_from", &P::host_func_idle_from, false,
          "callback thread's idle time (last callback's return -> the preceding work done) up to which a callback starts "
          "gpu.host_func_latency after its work"),
        t("gpu.host_func_idle_ramp", &P::host_func_idle_ramp, false,
          "idle time beyond gpu.host_func_idle_from over which the callback latency grows linearly to "
          "gpu.host_func_latency_idle"),
        t("gpu.host_func_gap", &P::host_func_gap, true, "host callback returns -> next op of its stream may start"),
        t("graph.instantiate_per_node", &P::graph_instantiate_per_node, true, "host time of cudaGraphInstantiate per node"),
        t("graph.launch_cost", &P::graph_launch_cost, true, "host time of cudaGraphLaunch"),
        t("graph.launch_per_node", &P::graph_launch_per_node, true, "host time of cudaGraphLaunch per node"),
        t("graph.upload_per_node", &P::graph_upload_per_node, true,
          "extra host time per node of an executable graph's first cudaGraphLaunch (the upload to the device)"),
        t("graph.node_gap", &P::graph_node_gap, true,
          "gap between dependent nodes of a graph, after a kernel node that runs at least kernel.min_duration + "
          "graph.node_gap_ramp (and after a copy, memset or callback node)"),
        t("graph.node_gap_small", &P::graph_node_gap_small, true,
          "gap between dependent nodes of a graph after an empty kernel node (one that runs kernel.min_duration)"),
        t("graph.node_gap_ramp", &P::graph_node_gap_ramp, false,
          "run time of a kernel node beyond kernel.min_duration over which the gap after it grows linearly from "
          "graph.node_gap_small to graph.node_gap"),
        t("graph.copy_node_extra", &P::graph_copy_node_extra, true, "extra GPU time of a copy node in a graph"),
        t("graph.cross_engine_wait", &P::graph_cross_engine_wait, true,
          "added to graph.node_gap when a pinned H2D/D2H copy node follows a kernel node of its graph, or a kernel node "
          "such a copy node"),
        t("graph.relaunch_gap", &P::graph_relaunch_gap, true,
          "previous launch of a graph done -> a launch of it queued meanwhile (another stream) starts its first node"),
        t("host.malloc_cost", &P::malloc_cost, true, "host time of cudaMalloc", kSlow, kSlowNote),
        t("host.free_cost", &P::free_cost, true, "host time of cudaFree after the device is idle", kSlow, kSlowNote),
        t("host.malloc_cost_per_gib", &P::malloc_cost_per_gib, false, "host time of cudaMalloc added per GiB allocated", kSlow,
          kSlowNote),
        t("host.free_cost_per_gib", &P::free_cost_per_gib, false,
          "host time of cudaFree after the device is idle, added per GiB freed", kSlow, kSlowNote),
        t("host.malloc_async_cost", &P::malloc_async_cost, true, "host time of cudaMallocAsync/cudaFreeAsync"),
        bw("host.malloc_host_bandwidth", &P::malloc_host_bw, "cudaMallocHost: bytes pinned per second"),
        bw("host.free_host_bandwidth", &P::free_host_bw, "cudaFreeHost: bytes unpinned per second"),
        bw("host.host_register_bandwidth", &P::host_register_bw, "cudaHostRegister: bytes pinned per second"),
        sz("um.block_size", &P::um_block, "managed-memory residency tracking granularity", closed(4 * kKiB, kGiB),
           "a page at least, as hetsim keeps state per block of every managed buffer; a 1 GiB huge page at most"),
        real("um.prefetch_host_block", &P::um_prefetch_host_block,
             "part (0..1) of its transfer a prefetch to the device holds the calling host thread", closed(0, 1),
             "0: the call returns after its call cost", "0"),
        real("hbm.beside_h2d", &P::hbm_beside_h2d,
             "part (0..1) by which a memory-bound kernel takes longer while an H2D copy engine runs a transfer (the DMA "
             "writes into HBM): it progresses at 1 / (1 + this + hbm.beside_d2h if a D2H runs too) of its speed "
             "(rules.copy_hbm)",
             closed(0, 1), "0: copies do not slow memory-bound kernels", "0"),
        real("hbm.beside_d2h", &P::hbm_beside_d2h,
             "part (0..1) by which a memory-bound kernel takes longer while a D2H copy engine runs a transfer (the DMA "
             "reads HBM) (rules.copy_hbm)",
             closed(0, 1), "0: copies do not slow memory-bound kernels", "0"),
        real("hbm.drain_start", &P::hbm_drain_start,
             "part (0..1) of a memory-bound kernel's wave time at which its first blocks finish and free their SMs; the "
             "rest finish evenly until the wave's end, which does not move (rules.beside_streaming)",
             closed(0.05, 1), "1: every block of a wave finishes at its end", "1"),
        t("kernel.beside_hbm_extra", &P::kernel_beside_hbm, true,
          "added to a kernel that is not memory-bound when it starts while a memory-bound kernel runs (memory latency "
          "under a saturated HBM; rules.beside_streaming)"),
        real("copy.device_room", &P::device_copy_room,
             "part (0..1) of the device's threads a D2D copy or memset needs free to run at full speed; with less "
             "free when it starts it runs at free / copy.device_room of its speed (rules.device_copy_sms)",
             closed(0.01, 1), "1: full speed only on an idle device", "1"),
        real("um.cpu_fault_beside_copies", &P::um_cpu_fault_beside_copies,
             "part (0..1) of um.cpu_fault_bandwidth at which host work migrates device-resident managed memory back "
             "while a copy engine runs a copy", closed(0.001, 1),
             "1: no slow-down; 0 would stop the migration while copies run", "1"),
        t("host.queue_put_cost", &P::queue_put_cost, true, "host time of a put into a host queue with room"),
        t("host.queue_get_cost", &P::queue_get_cost, true, "host time of a get from a host queue holding an item"),
        t("host.queue_wakeup", &P::queue_wakeup, true,
          "a put or get notifies a thread blocked on the queue -> it runs again", kSlow, kSlowNote),
        t("host.flag_wakeup", &P::flag_wakeup, true, "a callback sets a flag -> the host thread waiting on it runs again"),
        t("host.thread_start", &P::thread_start, true, "std::thread created -> the new thread runs its first op", kSlow,
          kSlowNote),
        t("host.join_wakeup", &P::join_wakeup, true, "a thread's last op ends -> the join waiting for it returns", kSlow,
          kSlowNote),
        rule("rules.copy_efficiency", &P::Rules::copy_efficiency, "size-dependent pinned copy efficiency"),
        rule("rules.duplex", &P::Rules::duplex, "H2D beside D2H slow each other (copy.duplex_factor, copy.pageable_contention)"),
        rule("rules.copy_fifo", &P::Rules::copy_fifo, "one copy at a time per direction, FIFO across streams"),
        rule("rules.pageable_staging", &P::Rules::pageable_staging, "pageable copies staged by the host (off: as pinned)"),
        rule("rules.staging_pool", &P::Rules::staging_pool, "pageable H2D blocks when the bounce-buffer pool is full"),
        rule("rules.staging_cache", &P::Rules::staging_cache, "a pageable source still in the CPU caches stages faster"),
        rule("rules.staging_lock", &P::Rules::staging_lock,
             "the pageable copies of all host threads use the bounce buffers one at a time (off: threads stage side by side)"),
        rule("rules.legacy_sync", &P::Rules::legacy_sync, "legacy default stream synchronises with blocking streams"),
        rule("rules.sm_residency", &P::Rules::sm_residency, "kernels share SM block slots (off: each runs as if alone)"),
        rule("rules.kernel_limit", &P::Rules::kernel_limit, "at most gpu.max_kernels kernels at once"),
        rule("rules.priorities", &P::Rules::priorities, "stream priorities pick the next free block slot"),
        rule("rules.small_kernel_floor", &P::Rules::small_kernel_floor, "kernel.min_duration and gpu.launch_latency"),
        rule("rules.hw_queues", &P::Rules::hw_queues, "streams share gpu.hw_queues hardware queues (false dependencies)"),
        rule("rules.launch_queue", &P::Rules::launch_queue, "a full per-stream launch queue blocks the launching thread"),
        rule("rules.launch_contention", &P::Rules::launch_contention, "API calls from several threads contend"),
        rule("rules.module_loading", &P::Rules::module_loading, "first launch of a kernel loads its module"),
        rule("rules.sync_wakeup", &P::Rules::sync_wakeup, "blocked sync calls return a wake-up latency late"),
        rule("rules.host_funcs", &P::Rules::host_funcs, "host callback latencies (off: callbacks run at once)"),
        rule("rules.graphs", &P::Rules::graphs, "CUDA graph costs (off: graph nodes cost what stream launches cost)"),
        rule("rules.um_migration", &P::Rules::um_migration, "managed memory migrates on faults (off: always resident)"),
        rule("rules.alloc_costs", &P::Rules::alloc_costs, "allocation calls cost host time; cudaFree syncs the device"),
        rule("rules.cross_engine_wait", &P::Rules::cross_engine_wait,
             "a copy that waited for a kernel in its stream (or the reverse) starts gpu.cross_engine_wait later"),
        rule("rules.callback_idle", &P::Rules::callback_idle,
             "a callback starts later after its work the longer the driver's callback thread had been idle (off: always "
             "gpu.host_func_latency)"),
        rule("rules.device_copy_sms", &P::Rules::device_copy_sms,
             "D2D copies and memsets are kernels: they start when the SMs have room, and no other kernel starts while "
             "one runs (off: they run beside everything, on no unit)"),
        rule("rules.copy_hbm", &P::Rules::copy_hbm,
             "memory-bound kernels run slower while H2D or D2H copy engines transfer (hbm.beside_h2d, hbm.beside_d2h; off: "
             "copies and kernels do not meet in HBM)"),
        rule("rules.beside_streaming", &P::Rules::beside_streaming,
             "a memory-bound kernel's blocks free their SMs from hbm.drain_start of a wave on, and a kernel starting beside "
             "one takes kernel.beside_hbm_extra longer (off: blocks of a wave free their SMs together, no extra)"),
        rule("rules.refill_deep", &P::Rules::refill_deep,
             "blocks that waited for room fill each SM with room as deep as it holds them before the next (off: "
             "breadth-first, one block per SM in turn, as for a kernel that finds room when it becomes ready)"),
        rule("rules.smem_carveout", &P::Rules::smem_carveout,
             "the first kernel on an idle SM sets its shared memory to that kernel's blocks alone x their shared "
             "memory (none without any); a block with shared memory joins a busy SM only within it (off: up to "
             "sm.shared_memory)"),
        rule("rules.fault_hold", &P::Rules::fault_hold,
             "a kernel that ends while another kernel demand-faults managed memory completes when those faults are served"),
        rule("rules.host_sync", &P::Rules::host_sync,
             "host queue, flag, thread start and join costs and wake-ups (off: hand-offs are instant)"),
    };
    return decls;
}

const ParamDecl* find_param(const std::string& key) {
    for (const auto& d : param_decls())
        if (key == d.key) return &d;
    return nullptr;
}

const char* kind_text(const ParamDecl& d) {
    if (d.flag || d.rule) return "on/off";
    if (d.curve) return "curve";
    if (d.dim == Dim::None) return d.count ? "count" : "number";
    return to_string(d.dim);
}

namespace {
std::string number_text(double v) {  // "0.44", "6.7e13"
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    std::string s = buf;
    if (size_t e = s.find("e+"); e != std::string::npos) s.erase(e + 1, 1);
    if (size_t e = s.find("e0"); e != std::string::npos) s.erase(e + 1, 1);
    return s;
}
}  // namespace

std::string format_quantity(Dim dim, double v) {
    struct Unit {
        const char* name;
        double scale;
    };
    static const Unit times[] = {{"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"ns", 1e3}, {"ps", 1}};
    static const Unit sizes[] = {{"TiB", kTiB}, {"TB", 1e12}, {"GiB", kGiB}, {"GB", 1e9}, {"MiB", kMiB},
                                 {"MB", 1e6},   {"KiB", kKiB}, {"KB", 1e3},  {"B", 1}};
    static const Unit rates[] = {{"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6}, {"KB/s", 1e3}, {"B/s", 1}};
    const Unit* units = nullptr;
    size_t count = 0;
    if (dim == Dim::Time) units = times, count = std::size(times);
    else if (dim == Dim::Bytes) units = sizes, count = std::size(sizes);
    else if (dim == Dim::Bandwidth) units = rates, count = std::size(rates);
    else return number_text(v);
    if (v == 0) return std::string("0") + (dim == Dim::Time ? "us" : units[count - 1].name);
    // The largest unit that states the value exactly in at most 10 digits (a size in at most 4
    // decimals: 1072KiB rather than 1.046875MiB), else the largest unit below it.
    const Unit* fallback = nullptr;
    for (size_t k = 0; k < count; ++k) {
        const Unit& u = units[k];
        if (v < u.scale) continue;
        std::string s = number_text(v / u.scale);
        size_t dot = s.find('.');
        bool short_enough = dim != Dim::Bytes || dot == std::string::npos || s.size() - dot - 1 <= 4;
        if (short_enough && std::llround(std::strtod(s.c_str(), nullptr) * u.scale) == std::llround(v)) return s + u.name;
        if (!fallback) fallback = &u;
    }
    if (!fallback) fallback = &units[count - 1];
    return number_text(v / fallback->scale) + fallback->name;
}

std::string range_text(const ParamDecl& d) {
    if (d.flag) return "true or false";
    if (d.rule) return "on or off";
    if (d.curve) return "none, or size:fraction points with growing sizes and fractions 0 < f <= 1";
    auto bound = [&](double b) { return b == 0 ? std::string("0") : format_quantity(d.dim, b); };
    return bound(d.range.lo) + (d.range.lo_open ? " < x " : " <= x ") + (d.range.hi_open ? "< " : "<= ") + bound(d.range.hi);
}

std::string value_text(const HwProfile& p, const ParamDecl& d) {
    if (d.time) return format_quantity(Dim::Time, static_cast<double>((p.*(d.time)).ps()));
    if (d.count) return d.dim == Dim::None ? std::to_string(p.*(d.count)) : format_quantity(d.dim, static_cast<double>(p.*(d.count)));
    if (d.real) return number_text(p.*(d.real));
    if (d.flag) return p.*(d.flag) ? "true" : "false";
    if (d.rule) return p.rules.*(d.rule) ? "on" : "off";
    if (d.curve) return (p.*(d.curve)).text();
    return "?";
}

std::string profiles_dir() {
    if (const char* env = std::getenv("HETSIM_PROFILES")) return env;
    return std::string(HETSIM_SOURCE_DIR) + "/hw/profiles";
}

}  // namespace hetsim
