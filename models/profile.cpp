#include "models/profile.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

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
ParamDecl t(const char* k, Time P::*m, bool lat, const char* d) {
    ParamDecl p{k, Dim::Time, lat, d};
    p.time = m;
    return p;
}
ParamDecl bw(const char* k, uint64_t P::*m, const char* d) {
    ParamDecl p{k, Dim::Bandwidth, false, d};
    p.count = m;
    p.positive = true;
    return p;
}
ParamDecl sz(const char* k, uint64_t P::*m, const char* d) {
    ParamDecl p{k, Dim::Bytes, false, d};
    p.count = m;
    p.positive = true;
    return p;
}
ParamDecl n(const char* k, uint64_t P::*m, const char* d) {
    ParamDecl p{k, Dim::None, false, d};
    p.count = m;
    p.positive = true;
    return p;
}
ParamDecl n0(const char* k, uint64_t P::*m, const char* d) {  // 0 allowed
    ParamDecl p = n(k, m, d);
    p.positive = false;
    return p;
}
ParamDecl sz0(const char* k, uint64_t P::*m, const char* d) {
    ParamDecl p = sz(k, m, d);
    p.positive = false;
    return p;
}
ParamDecl real(const char* k, double P::*m, const char* d) {
    ParamDecl p{k, Dim::None, false, d};
    p.real = m;
    p.positive = true;
    return p;
}
ParamDecl flag(const char* k, bool P::*m, const char* d) {
    ParamDecl p{k, Dim::None, false, d};
    p.flag = m;
    return p;
}
ParamDecl rule(const char* k, bool P::Rules::*m, const char* d) {
    ParamDecl p{k, Dim::None, false, d};
    p.rule = m;
    return p;
}
ParamDecl curve(const char* k, Curve P::*m, const char* d) {
    ParamDecl p{k, Dim::Curve, false, d};
    p.curve = m;
    return p;
}
}  // namespace

const std::vector<ParamDecl>& param_decls() {
    static const std::vector<ParamDecl> decls = [] {
        std::vector<ParamDecl> v{
            t("host.launch_cost", &P::launch_cost, true, "host time of cudaLaunchKernel"),
            t("host.memcpy_call_cost", &P::memcpy_call_cost, true, "host time of a cudaMemcpy(Async) call"),
            t("host.memset_call_cost", &P::memset_call_cost, true, "host time of a cudaMemset(Async) call"),
            t("host.event_record_cost", &P::event_record_cost, true, "host time of cudaEventRecord"),
            t("host.stream_wait_event_cost", &P::stream_wait_event_cost, true, "host time of cudaStreamWaitEvent"),
            t("host.sync_call_cost", &P::sync_call_cost, true, "host time of a sync call with nothing to wait for"),
            t("host.prefetch_call_cost", &P::prefetch_call_cost, true, "host time of cudaMemPrefetchAsync"),
            t("host.sync_wakeup", &P::sync_wakeup, true, "GPU work done -> blocked sync call returns"),
            bw("host.pageable_h2d_bandwidth", &P::pageable_h2d_bw, "host staging speed of pageable H2D copies"),
            bw("host.pageable_d2h_bandwidth", &P::pageable_d2h_bw, "host staging speed of pageable D2H copies"),
            sz("host.staging_chunk", &P::staging_chunk, "pinned bounce-buffer chunk of pageable copies"),
            t("copy.h2d.fixed", &P::h2d_fixed, true, "GPU-side fixed cost of an H2D copy"),
            bw("copy.h2d.bandwidth", &P::h2d_bw, "pinned H2D bandwidth"),
            t("copy.d2h.fixed", &P::d2h_fixed, true, "GPU-side fixed cost of a D2H copy"),
            bw("copy.d2h.bandwidth", &P::d2h_bw, "pinned D2H bandwidth"),
            t("copy.d2d.fixed", &P::d2d_fixed, true, "GPU-side fixed cost of a D2D copy"),
            bw("copy.d2d.bandwidth", &P::d2d_bw, "D2D copy bandwidth, counting read + write"),
            t("copy.memset.fixed", &P::memset_fixed, true, "GPU-side fixed cost of a memset"),
            bw("copy.memset.bandwidth", &P::memset_bw, "memset bandwidth"),
            t("gpu.launch_latency", &P::launch_latency, true, "API call returns -> work starts on an idle stream"),
            t("gpu.stream_gap", &P::stream_gap, true, "gap between dependent ops of one stream"),
            t("gpu.event_gap", &P::event_gap, true, "gap of a dependency through an event or the legacy stream"),
            n("sm.count", &P::sm_count, "number of SMs"),
            n("sm.max_threads", &P::sm_threads, "resident threads per SM"),
            n("sm.max_blocks", &P::sm_blocks, "resident blocks per SM"),
            n("sm.registers", &P::sm_registers, "32-bit registers per SM"),
            sz("sm.shared_memory", &P::sm_shared_memory, "shared memory per SM"),
            bw("hbm.bandwidth", &P::hbm_bw, "HBM bandwidth seen by a memory-bound kernel"),
            t("kernel.min_duration", &P::kernel_min_duration, true, "shortest kernel (empty kernel) on the GPU"),
            bw("um.fault_bandwidth", &P::um_fault_bw, "GPU-fault-driven managed migration to the device"),
            bw("um.prefetch_h2d_bandwidth", &P::um_prefetch_h2d_bw, "cudaMemPrefetchAsync to the device"),
            bw("um.prefetch_d2h_bandwidth", &P::um_prefetch_d2h_bw, "cudaMemPrefetchAsync to the host"),
            bw("um.cpu_fault_bandwidth", &P::um_cpu_fault_bw, "CPU-fault-driven migration back to the host"),
            sz("device.memory", &P::device_memory, "device memory visible to the program"),
        };
        ParamDecl flops{"kernel.peak_flops", Dim::None, false, "peak FLOP/s for the roofline"};
        flops.real = &P::peak_flops;
        flops.positive = true;
        v.push_back(flops);
        ParamDecl contention{"host.launch_contention", Dim::None, false,
                             "API calls from several host threads: cost x (1 + this x other threads inside a call)"};
        contention.real = &P::launch_contention;
        v.push_back(contention);
        ParamDecl share{"hbm.sharing", Dim::None, false, "memory-bound kernels share HBM bandwidth (true/false)"};
        share.flag = &P::hbm_sharing;
        v.push_back(share);
        for (ParamDecl d : {
                 curve("copy.h2d.efficiency", &P::h2d_eff, "pinned H2D efficiency by size (none, or size:fraction, ...)"),
                 curve("copy.d2h.efficiency", &P::d2h_eff, "pinned D2H efficiency by size (none, or size:fraction, ...)"),
                 real("copy.duplex_factor", &P::duplex_factor, "H2D and D2H copies at once each take this x longer"),
                 real("copy.pageable_contention", &P::pageable_contention,
                      "a pinned H2D copy beside a pageable D2H copy takes this x longer"),
                 sz0("host.staging_pool", &P::staging_pool, "pinned bounce-buffer pool of pageable H2D copies"),
                 bw("host.pageable_h2d_warm_bandwidth", &P::pageable_h2d_warm_bw,
                    "staging speed of a pageable H2D whose source is still in the CPU caches"),
                 sz0("host.staging_cache", &P::staging_cache,
                     "CPU cache bytes: a pageable buffer copied again before this much other pageable data is warm"),
                 flag("host.pageable_sync", &P::pageable_sync,
                      "documented behaviour: a pageable copy first syncs its stream (false: as measured)"),
                 n0("gpu.hw_queues", &P::hw_queues, "hardware queues streams map onto (CUDA_DEVICE_MAX_CONNECTIONS)"),
                 n0("gpu.launch_queue_depth", &P::launch_queue_depth, "queued ops per stream before a launch call blocks"),
                 n("gpu.max_kernels", &P::max_kernels, "kernels running at once on the device"),
                 t("host.module_load_cost", &P::module_load_cost, true, "first launch of each kernel: lazy module loading"),
                 t("host.blocking_sync_wakeup", &P::blocking_sync_wakeup, true,
                   "GPU work done -> sync returns under blocking-sync scheduling"),
                 t("host.host_func_call_cost", &P::host_func_call_cost, true, "host time of cudaLaunchHostFunc"),
                 t("gpu.host_func_latency", &P::host_func_latency, true, "preceding work done -> host callback starts"),
                 t("gpu.host_func_gap", &P::host_func_gap, true, "host callback returns -> next op of its stream may start"),
                 t("graph.instantiate_per_node", &P::graph_instantiate_per_node, true, "host time of cudaGraphInstantiate per node"),
                 t("graph.launch_cost", &P::graph_launch_cost, true, "host time of cudaGraphLaunch"),
                 t("graph.launch_per_node", &P::graph_launch_per_node, true, "host time of cudaGraphLaunch per node"),
                 t("graph.node_gap", &P::graph_node_gap, true, "gap between dependent nodes of a graph"),
                 t("graph.copy_node_extra", &P::graph_copy_node_extra, true, "extra GPU time of a copy node in a graph"),
                 t("host.malloc_cost", &P::malloc_cost, true, "host time of cudaMalloc"),
                 t("host.free_cost", &P::free_cost, true, "host time of cudaFree after the device is idle"),
                 t("host.malloc_async_cost", &P::malloc_async_cost, true, "host time of cudaMallocAsync/cudaFreeAsync"),
                 bw("host.malloc_host_bandwidth", &P::malloc_host_bw, "cudaMallocHost: bytes pinned per second"),
                 bw("host.free_host_bandwidth", &P::free_host_bw, "cudaFreeHost: bytes unpinned per second"),
                 bw("host.host_register_bandwidth", &P::host_register_bw, "cudaHostRegister: bytes pinned per second"),
                 sz("um.block_size", &P::um_block, "managed-memory residency tracking granularity"),
                 [] {
                     ParamDecl d{"um.prefetch_host_block", Dim::None, false,
                                 "part (0..1) of its transfer a prefetch to the device holds the calling host thread"};
                     d.real = &P::um_prefetch_host_block;
                     return d;
                 }(),
                 rule("rules.copy_efficiency", &P::Rules::copy_efficiency, "size-dependent pinned copy efficiency"),
                 rule("rules.duplex", &P::Rules::duplex, "H2D beside D2H slow each other (copy.duplex_factor, copy.pageable_contention)"),
                 rule("rules.copy_fifo", &P::Rules::copy_fifo, "one copy at a time per direction, FIFO across streams"),
                 rule("rules.pageable_staging", &P::Rules::pageable_staging, "pageable copies staged by the host (off: as pinned)"),
                 rule("rules.staging_pool", &P::Rules::staging_pool, "pageable H2D blocks when the bounce-buffer pool is full"),
                 rule("rules.staging_cache", &P::Rules::staging_cache, "a pageable source still in the CPU caches stages faster"),
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
             })
            v.push_back(d);
        return v;
    }();
    return decls;
}

const ParamDecl* find_param(const std::string& key) {
    for (const auto& d : param_decls())
        if (key == d.key) return &d;
    return nullptr;
}

std::string profiles_dir() {
    if (const char* env = std::getenv("HETSIM_PROFILES")) return env;
    return std::string(HETSIM_SOURCE_DIR) + "/hw/profiles";
}

}  // namespace hetsim
