// Host-side cost models: what a CUDA API call costs the calling thread, and the host time of
// unified-memory faults and allocation calls. Durations only; the host-thread unit (hw/) keeps
// the state they depend on.
#pragma once
#include <cstdint>

#include "models/profile.hpp"

namespace hetsim {

// A call of `base` host time while `others` other host threads are inside API calls: calls
// contend in the driver, host.launch_contention each.
// `spinning` other threads wait in a sync call by spinning (not blocking-sync scheduling), host.spin_contention each.
Time contended_call(const HwProfile& p, Time base, uint32_t others, uint32_t spinning = 0);

// How long after its preceding work a host callback starts, when the driver's callback thread
// returned from its last callback `idle` before that work ended (negative: it was still in one;
// Time::max(): it ran none yet): gpu.host_func_latency up to gpu.host_func_idle_from, rising
// linearly over gpu.host_func_idle_ramp to gpu.host_func_latency_idle (rule 6).
Time host_func_latency(const HwProfile& p, Time idle);

// How long after the awaited work a sync returns under blocking-sync scheduling (or a
// cudaEventBlockingSync event's sync), when the thread slept `slept` (its call's end -> the work
// done): host.blocking_sync_wakeup_short up to host.blocking_sync_sleep_from, rising linearly over
// host.blocking_sync_sleep_ramp to host.blocking_sync_wakeup (rule 6).
Time blocking_sync_wakeup(const HwProfile& p, Time slept);

// cudaGraphLaunch of a graph of `nodes` nodes, and cudaGraphInstantiate's per-node part.
Time graph_launch_cost(const HwProfile& p, uint64_t nodes);
// Extra host time of the first cudaGraphLaunch of an executable (its upload to the device).
Time graph_upload_cost(const HwProfile& p, uint64_t nodes);
Time graph_instantiate_cost(const HwProfile& p, uint64_t nodes);

// An allocation call that pins or unpins `bytes` at `bw` bytes/s (0 = free of charge).
Time bytes_call_cost(uint64_t bytes, uint64_t bw);
// cudaMalloc and cudaFree (its part after the device is idle) of `bytes` device memory:
// host.malloc_cost + host.malloc_cost_per_gib per GiB, host.free_cost + host.free_cost_per_gib per GiB.
Time malloc_cost(const HwProfile& p, uint64_t bytes);
Time free_cost(const HwProfile& p, uint64_t bytes);

// Managed memory: `bytes` migrated by GPU faults, by CPU faults, and the part of a prefetch to
// the device that holds its calling thread.
Time gpu_fault_time(const HwProfile& p, uint64_t bytes);
Time cpu_fault_time(const HwProfile& p, uint64_t bytes);
Time prefetch_host_hold(const HwProfile& p, uint64_t bytes_to_device);

}  // namespace hetsim
