// Hardware profile: every parameter of the model, declared once (design.md practice 8).
// The same declaration table feeds the profile loader, inline overrides in scenarios,
// `--set hardware.<key>=value`, sweeps and `hetsim params`.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/time.hpp"

namespace hetsim {

enum class Dim : uint8_t { None, Time, Bytes, Bandwidth, Curve };
const char* to_string(Dim d);

// A size-dependent efficiency: points (bytes, fraction of the peak bandwidth), interpolated
// linearly in log2(bytes) and held flat outside the first and last point. Empty = 1 everywhere.
struct Curve {
    std::vector<std::pair<uint64_t, double>> points;
    double at(uint64_t bytes) const;
    std::string text() const;  // "none" or "64KiB:0.9, 1MiB:0.98"
};

struct HwProfile {
    std::string name;
    // Host-side API call costs (time the calling host thread is busy).
    Time launch_cost, memcpy_call_cost, memset_call_cost, event_record_cost, stream_wait_event_cost,
        sync_call_cost, prefetch_call_cost;
    Time sync_wakeup;  // GPU work done -> blocked host call returns
    double launch_contention = 0;  // API call cost x (1 + this x other threads inside API calls)
    double spin_contention = 0;    // ... and x (1 + this x other threads spinning in a sync wait)
    // Pageable copies: the host stages through pinned bounce buffers at its own memcpy speed.
    uint64_t pageable_h2d_bw = 0, pageable_d2h_bw = 0, staging_chunk = 0;
    // Pinned copies: fixed cost + bytes / bandwidth, one copy engine queue per direction.
    Time h2d_fixed, d2h_fixed, d2d_fixed, memset_fixed;
    uint64_t h2d_bw = 0, d2h_bw = 0, d2d_bw = 0, memset_bw = 0;
    // Pitched copies (cudaMemcpy2DAsync): the DMA moves each row on its own, contiguous or not; R
    // rows take at least the direction's fixed cost + R x the row cost (H2D: + R x h2d_dense x
    // 128 B / the host pitch), and a pageable one costs the host R x its pageable row cost more
    // (D2H rows narrower than 64 B that lie apart in host memory: + R x pageable_d2h_sparse x
    // min(host pitch, 128 B) / 128 B, the host's partial writes of cache lines).
    Time row_cost_h2d, row_cost_h2d_dense, row_cost_d2h, row_cost_d2d, row_cost_pageable_h2d, row_cost_pageable_d2h;
    Time row_cost_pageable_d2h_sparse;
    // The row-bound time r and the bandwidth time b of a pitched copy combine as (r^k + b^k)^(1/k)
    // (k = this; a large k is the larger of the two).
    double row_cost_blend = 1000;
    // GPU-side latencies.
    Time launch_latency;  // API call returns -> GPU work may start on an idle stream
    Time stream_gap;      // dependent ops in one stream: end -> next start
    Time event_gap;       // dependency through an event or the legacy stream
    Time cross_engine_wait;  // extra gap when a pinned copy waited in its stream for a kernel, or a kernel for one
    // SMs and HBM.
    uint64_t sm_count = 0, sm_threads = 0, sm_blocks = 0, sm_registers = 0, sm_shared_memory = 0;
    uint64_t hbm_bw = 0;
    double peak_flops = 0;  // FLOP/s for the roofline
    Time kernel_min_duration;
    bool hbm_sharing = true;  // memory-bound kernels share HBM bandwidth
    // A memory-bound kernel takes this much longer (part of its time) while an H2D / a D2H copy engine
    // runs a transfer (rules.copy_hbm): the DMA's writes into / reads from HBM interfere with its reads.
    double hbm_beside_h2d = 0, hbm_beside_d2h = 0;
    // A memory-bound kernel's blocks finish spread from this part of a wave's time to its end
    // (1: all at once), and a kernel that starts beside one takes kernel_beside_hbm longer
    // (rules.beside_streaming).
    double hbm_drain_start = 1;
    Time kernel_beside_hbm;
    // Unified memory.
    uint64_t um_fault_bw = 0, um_prefetch_h2d_bw = 0, um_prefetch_d2h_bw = 0, um_cpu_fault_bw = 0;
    uint64_t device_memory = 0;

    // ---- hardware-fidelity rules (docs/model.md, "Rules"); each has a `rules.*` switch.
    Curve h2d_eff, d2h_eff;           // pinned copy efficiency by size
    double duplex_factor = 1;         // H2D and D2H at once: each takes this x longer
    double pageable_contention = 1;   // a pinned copy beside an opposite-direction pageable copy: x longer
    uint64_t staging_pool = 0;        // bytes of pinned bounce buffers for pageable H2D
    uint64_t pageable_h2d_warm_bw = 0;  // staging speed from a source still in the CPU caches
    uint64_t staging_cache = 0;       // host cache bytes that keep recently copied pageable buffers warm
    uint64_t staging_cache_near = 0;  // the nearer cache level: sources within it stage at pageable_h2d_near_bw (0: none)
    uint64_t pageable_h2d_near_bw = 0;  // staging speed from a source in the nearer cache level
    bool pageable_sync = false;       // documented behaviour: pageable copies sync their stream first
    Time pageable_d2h_wakeup;         // a pageable D2H that waited for its stream returns this after its last chunk drains
    Time staging_lock_wakeup;         // a download waiting for the staging lock wakes this long after its release (median)
    Time staging_lock_wakeup_spread;  // ... spread evenly over staging_lock_wakeup +- this
    uint64_t hw_queues = 8;           // CUDA_DEVICE_MAX_CONNECTIONS default
    uint64_t launch_queue_depth = 0;  // entries per stream before a launch blocks
    uint64_t max_kernels = 128;       // kernels running at once
    Time module_load_cost;            // first launch of each kernel (lazy loading)
    // A sync's wake-up under cudaDeviceScheduleBlockingSync grows with how long the thread slept (rule 6):
    // blocking_sync_wakeup_short up to sleep_from, blocking_sync_wakeup from sleep_from + sleep_ramp.
    Time blocking_sync_wakeup, blocking_sync_wakeup_short, blocking_sync_sleep_from, blocking_sync_sleep_ramp;
    Time host_func_call_cost, host_func_latency, host_func_gap;
    // A callback's start after its work grows with how long the driver's callback thread had been idle
    // (rule 6): host_func_latency up to idle_from, host_func_latency_idle from idle_from + idle_ramp.
    Time host_func_latency_idle, host_func_idle_from, host_func_idle_ramp;
    Time graph_instantiate_per_node, graph_launch_cost, graph_launch_per_node, graph_node_gap, graph_copy_node_extra, graph_relaunch_gap;
    Time graph_upload_per_node;  // first launch of an executable: extra host time per node
    Time graph_cross_engine_wait;  // added to graph.node_gap between a kernel node and a pinned copy node, either order
    Time graph_node_gap_small;        // after an empty kernel node (one that runs kernel.min_duration)
    Time graph_node_gap_ramp;         // run time over which the gap after a kernel node grows from small to full
    Time malloc_cost, free_cost, malloc_async_cost;
    Time malloc_cost_per_gib, free_cost_per_gib;  // added per GiB allocated or freed
    // Host threads handing work to each other (hw/host_sync).
    Time queue_put_cost, queue_get_cost, queue_wakeup, flag_wakeup, thread_start, join_wakeup;
    uint64_t malloc_host_bw = 0, free_host_bw = 0, host_register_bw = 0;
    uint64_t um_block = 2 << 20;      // managed-memory tracking granularity
    double um_prefetch_host_block = 0;  // a prefetch to the device holds the host for this part of its transfer
    double device_copy_room = 1;  // part of the device's threads a D2D copy or memset needs free to run at full speed (rules.device_copy_sms)
    double um_cpu_fault_beside_copies = 1;  // CPU-fault migration runs at this part of its rate while a copy engine is busy

    struct Rules {
        bool copy_efficiency = true, duplex = true, copy_fifo = true, pageable_staging = true, staging_pool = true,
             staging_cache = true, staging_lock = true, legacy_sync = true, sm_residency = true, kernel_limit = true, priorities = true, small_kernel_floor = true,
             hw_queues = true, launch_queue = true, launch_contention = true, module_loading = true,
             sync_wakeup = true, host_funcs = true, graphs = true, um_migration = true, alloc_costs = true,
             host_sync = true, cross_engine_wait = true, fault_hold = true, callback_idle = true,
             device_copy_sms = true, copy_hbm = true, beside_streaming = true, refill_deep = true, smem_carveout = true;
    } rules;
};

// The values a parameter may take, in its base unit (ps, bytes, bytes/s or a plain number).
struct Range {
    double lo = 0, hi = 0;
    bool lo_open = false, hi_open = false;  // exclusive bounds
    bool contains(double x) const { return (lo_open ? x > lo : x >= lo) && (hi_open ? x < hi : x <= hi); }
};

struct ParamDecl {
    const char* key;          // e.g. "copy.h2d.bandwidth"
    Dim dim;
    bool latency;             // zeroed by `zero_latency: true`
    const char* description;
    // Exactly one of these points into HwProfile.
    Time HwProfile::*time = nullptr;
    uint64_t HwProfile::*count = nullptr;  // bytes, bandwidth (B/s) or a plain count
    double HwProfile::*real = nullptr;
    bool HwProfile::*flag = nullptr;
    bool HwProfile::Rules::*rule = nullptr;  // a `rules.*` switch
    Curve HwProfile::*curve = nullptr;
    bool positive = false;    // must be > 0 (bandwidths, SM resources): range.lo is 0, exclusive
    // Times, sizes, bandwidths, counts and numbers: the allowed values. Curves and switches
    // check their own form (fractions in (0, 1]; on/off).
    Range range{};
    const char* range_note = nullptr;  // why the bounds are where they are, when that is not obvious
    // The value (as a profile writes it) that a profile without `base:` gets when it omits the
    // parameter; nullptr: required. Only switches, CUDA's own defaults (gpu.hw_queues) and the
    // neutral value of a rule's parameter have one, never a physical quantity the user must know
    // (a bandwidth, an SM resource, a call cost).
    const char* default_value = nullptr;
};

const std::vector<ParamDecl>& param_decls();
const ParamDecl* find_param(const std::string& key);

// What a parameter holds: "time", "size", "bandwidth", "count" (a whole number), "number", "on/off" or "curve".
const char* kind_text(const ParamDecl& d);
// Its allowed values: "1 <= x <= 32", "0 < x <= 100TB/s", "on or off", ...
std::string range_text(const ParamDecl& d);
// A value in base units as a literal with its unit, shortest exact form first: "3.268us", "228KiB",
// "55.48235GB/s", "132" (Dim::None).
std::string format_quantity(Dim dim, double base_value);
// The parameter's value in `p`, as a profile would write it.
std::string value_text(const HwProfile& p, const ParamDecl& d);

// Returns the directory holding the shipped profiles (hw/profiles).
std::string profiles_dir();

}  // namespace hetsim
