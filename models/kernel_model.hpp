// Kernel cost model: SM residency of a block shape and a kernel's stand-alone duration.
#pragma once
#include <string>

#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

// Blocks of `shape` that fit on one empty SM (threads, blocks, registers, shared memory).
// 0 means the block fits no SM; `why` then says which limit it breaks.
uint32_t blocks_per_sm(const HwProfile& p, const KernelShape& shape, std::string* why = nullptr);

struct KernelCost {
    Time duration;        // alone on an idle GPU
    bool memory_bound;    // the roofline's bytes term dominates: shares HBM with other such kernels
};

// kernel_cost() of a kernel with flops or bytes: the roofline.
KernelCost roofline_cost(const HwProfile& p, const Op& op, double flops);
// Fixed `duration`, or the roofline max(flops / peak, bytes / HBM), never below kernel.min_duration
// (`flops` is the kernel's site's). Inline: the engine asks once per kernel, and a fixed
// duration needs no call.
inline KernelCost kernel_cost(const HwProfile& p, const Op& op, double flops) {
    if (flops == 0 && op.bytes == 0) return {max(op.duration, p.kernel_min_duration), false};
    return roofline_cost(p, op, flops);
}

// The waves of a kernel alone on the device (rounds of as many blocks of `shape` as fit on all
// SMs at once), at least 1; one wave takes its duration over this.
uint64_t waves(const HwProfile& p, const KernelShape& shape);

// Gap between graph node `from`, which ran for `ran`, and a node that waits for it (rule 7):
// after a kernel node, graph.node_gap_small if it ran kernel.min_duration (an empty kernel),
// growing linearly to graph.node_gap over the next graph.node_gap_ramp of run time, whatever its
// grid; after copy, memset and callback nodes, graph.node_gap.
Time graph_node_gap(const HwProfile& p, const Op& from, Time ran);

}  // namespace hetsim
