#include "models/host_model.hpp"

#include <algorithm>

namespace hetsim {

Time contended_call(const HwProfile& p, Time base, uint32_t others, uint32_t spinning) {
    const double f = p.launch_contention * others + p.spin_contention * spinning;
    if (f <= 0) return base;
    return Time::ps_of(static_cast<double>(base.ps()) * (1.0 + f));
}

namespace {
// `low` up to x = from, rising linearly over `ramp` to `high`, `high` after.
Time ramp_between(Time low, Time high, Time from, Time ramp, Time x) {
    const int64_t over = x.ps() - from.ps();
    if (over <= 0) return low;
    if (over >= ramp.ps()) return high;
    // Latencies and the ramp are at most 1 s (1e12 ps): the product is taken in 128 bits.
    return Time::ps(low.ps() + static_cast<int64_t>(static_cast<i128>(high.ps() - low.ps()) * over / ramp.ps()));
}
}  // namespace

Time host_func_latency(const HwProfile& p, Time idle) {
    return ramp_between(p.host_func_latency, p.host_func_latency_idle, p.host_func_idle_from, p.host_func_idle_ramp, idle);
}

Time blocking_sync_wakeup(const HwProfile& p, Time slept) {
    return ramp_between(p.blocking_sync_wakeup_short, p.blocking_sync_wakeup, p.blocking_sync_sleep_from,
                        p.blocking_sync_sleep_ramp, slept);
}

Time graph_launch_cost(const HwProfile& p, uint64_t nodes) {
    return p.graph_launch_cost + Time::ps_times(p.graph_launch_per_node.ps(), static_cast<int64_t>(nodes));
}

Time graph_upload_cost(const HwProfile& p, uint64_t nodes) {
    return Time::ps_times(p.graph_upload_per_node.ps(), static_cast<int64_t>(nodes));
}

Time graph_instantiate_cost(const HwProfile& p, uint64_t nodes) {
    return Time::ps_times(p.graph_instantiate_per_node.ps(), static_cast<int64_t>(nodes));
}

Time bytes_call_cost(uint64_t bytes, uint64_t bw) { return bw ? transfer_time(bytes, bw) : Time{}; }

namespace {
// `per_gib` for each GiB of `bytes`, in exact integer steps (saturating at Time::max()).
Time per_gib_cost(Time per_gib, uint64_t bytes) {
    const i128 v = static_cast<i128>(per_gib.ps()) * static_cast<i128>(bytes) / (static_cast<i128>(1) << 30);
    return v >= static_cast<i128>(Time::max().ps()) ? Time::max() : Time::ps(static_cast<int64_t>(v));
}
}  // namespace

Time malloc_cost(const HwProfile& p, uint64_t bytes) { return p.malloc_cost + per_gib_cost(p.malloc_cost_per_gib, bytes); }
Time free_cost(const HwProfile& p, uint64_t bytes) { return p.free_cost + per_gib_cost(p.free_cost_per_gib, bytes); }

Time gpu_fault_time(const HwProfile& p, uint64_t bytes) { return transfer_time(bytes, p.um_fault_bw); }

Time cpu_fault_time(const HwProfile& p, uint64_t bytes) { return transfer_time(bytes, p.um_cpu_fault_bw); }

Time prefetch_host_hold(const HwProfile& p, uint64_t bytes_to_device) {
    if (p.um_prefetch_host_block <= 0) return Time{};
    const double transfer = static_cast<double>(transfer_time(bytes_to_device, p.um_prefetch_h2d_bw).ps());
    return Time::ps_of(transfer * std::min(1.0, p.um_prefetch_host_block));
}

}  // namespace hetsim
