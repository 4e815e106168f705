#include "models/kernel_model.hpp"

#include <algorithm>
#include <cmath>

namespace hetsim {

uint32_t blocks_per_sm(const HwProfile& p, const KernelShape& s, std::string* why) {
    uint64_t regs = static_cast<uint64_t>(s.regs_per_thread) * s.block;
    uint64_t by_threads = p.sm_threads / s.block;
    uint64_t by_regs = regs ? p.sm_registers / regs : p.sm_blocks;
    uint64_t by_smem = s.smem_per_block ? p.sm_shared_memory / s.smem_per_block : p.sm_blocks;
    uint64_t n = std::min({by_threads, static_cast<uint64_t>(p.sm_blocks), by_regs, by_smem});
    if (n == 0 && why) {
        if (by_threads == 0)
            *why = "a block of " + std::to_string(s.block) + " threads exceeds " + std::to_string(p.sm_threads) + " threads per SM";
        else if (by_regs == 0)
            *why = "a block needs " + std::to_string(s.block) + " threads x " + std::to_string(s.regs_per_thread) +
                   " registers = " + std::to_string(regs) + " registers, more than " + std::to_string(p.sm_registers) + " per SM";
        else
            *why = "a block needs " + std::to_string(s.smem_per_block) + " bytes of shared memory, more than " +
                   std::to_string(p.sm_shared_memory) + " per SM";
    }
    return static_cast<uint32_t>(n);
}

// ceil(flops * 10^12 / peak) ps. Exact in integers when both are whole numbers (the usual case):
// flops / peak * 1e12 in doubles can land a hair above a whole number and round up by 1 ps.
static Time compute_time(double flops, double peak) {
    if (flops <= 0) return Time{};
    if (flops == std::floor(flops) && peak == std::floor(peak) && flops < 1e30 && peak >= 1 && peak < 1e19) {
        u128 f = static_cast<u128>(flops), pk = static_cast<u128>(peak), q = f / pk, r = f % pk;
        constexpr u128 kPsPerS = 1'000'000'000'000ULL, kMaxPs = static_cast<u128>(INT64_MAX);
        if (q <= kMaxPs / kPsPerS) {
            u128 ps = q * kPsPerS + (r * kPsPerS + pk - 1) / pk;
            if (ps <= kMaxPs) return Time::ps(static_cast<int64_t>(ps));
        }
    }
    return Time::ps_of(std::ceil(flops / peak * 1e12));
}

KernelCost roofline_cost(const HwProfile& p, const Op& op, double flops) {
    Time mem = transfer_time(op.bytes, p.hbm_bw);
    Time compute = compute_time(flops, p.peak_flops);
    KernelCost c{max(max(mem, compute), p.kernel_min_duration), op.bytes > 0 && mem >= compute};
    return c;
}

uint64_t waves(const HwProfile& p, const KernelShape& shape) {
    const uint64_t wave = static_cast<uint64_t>(blocks_per_sm(p, shape)) * p.sm_count;
    return wave ? std::max<uint64_t>(1, (shape.grid + wave - 1) / wave) : 1;
}

Time graph_node_gap(const HwProfile& p, const Op& from, Time ran) {
    if (from.kind != OpKind::Kernel) return p.graph_node_gap;
    const int64_t over = ran.ps() - p.kernel_min_duration.ps(), ramp = p.graph_node_gap_ramp.ps();
    if (over <= 0) return p.graph_node_gap_small;
    if (over >= ramp) return p.graph_node_gap;
    const int64_t full = p.graph_node_gap.ps(), small = p.graph_node_gap_small.ps();
    // Gaps and the ramp are at most 10 ms (1e10 ps): the product is taken in 128 bits.
    return Time::ps(small + static_cast<int64_t>(static_cast<i128>(full - small) * over / ramp));
}

}  // namespace hetsim
