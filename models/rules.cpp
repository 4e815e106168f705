#include "models/rules.hpp"

namespace hetsim {

HwProfile effective_profile(const HwProfile& in) {
    HwProfile p = in;
    const auto& r = in.rules;
    if (!r.copy_efficiency) p.h2d_eff = p.d2h_eff = Curve{};
    if (!r.duplex) p.duplex_factor = p.pageable_contention = 1;
    if (!r.staging_pool) p.staging_pool = 0;
    if (!r.kernel_limit) p.max_kernels = UINT32_MAX;
    if (!r.small_kernel_floor) p.kernel_min_duration = p.launch_latency = Time{};
    if (!r.launch_queue) p.launch_queue_depth = 0;
    if (!r.hw_queues) p.hw_queues = 0;
    if (!r.launch_contention) p.launch_contention = 0, p.spin_contention = 0;
    if (!r.module_loading) p.module_load_cost = Time{};
    if (!r.sync_wakeup) p.sync_wakeup = p.blocking_sync_wakeup = p.blocking_sync_wakeup_short = p.pageable_d2h_wakeup = p.staging_lock_wakeup =
        p.staging_lock_wakeup_spread = Time{};
    if (!r.host_funcs) {
        p.host_func_latency = p.launch_latency;
        p.host_func_gap = p.stream_gap;
    }
    if (!r.host_funcs || !r.callback_idle) p.host_func_latency_idle = p.host_func_latency;
    if (!r.graphs) {  // a graph costs what launching its nodes one by one costs
        p.graph_instantiate_per_node = p.graph_launch_cost = p.graph_copy_node_extra = p.graph_upload_per_node = Time{};
        p.graph_launch_per_node = p.launch_cost;
        p.graph_node_gap = p.graph_node_gap_small = p.stream_gap;
        p.graph_relaunch_gap = p.event_gap;
        p.graph_cross_engine_wait = p.cross_engine_wait;  // the hand-over of stream launches
    }
    if (!r.cross_engine_wait) p.cross_engine_wait = p.graph_cross_engine_wait = Time{};
    if (!r.host_sync) p.queue_put_cost = p.queue_get_cost = p.queue_wakeup = p.flag_wakeup = p.thread_start = p.join_wakeup = Time{};
    if (!r.alloc_costs) {
        p.malloc_cost = p.free_cost = p.malloc_async_cost = p.malloc_cost_per_gib = p.free_cost_per_gib = Time{};
        p.malloc_host_bw = p.free_host_bw = p.host_register_bw = 0;  // 0 = free
    }
    return p;
}

}  // namespace hetsim
