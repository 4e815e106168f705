#include "hw/sm_pool.hpp"

#include <algorithm>

namespace hetsim {

SmPool::SmPool(const HwProfile& p)
    : threads_(p.sm_count, static_cast<uint32_t>(p.sm_threads)),
      blocks_(p.sm_count, static_cast<uint32_t>(p.sm_blocks)),
      regs_(p.sm_count, static_cast<uint32_t>(p.sm_registers)),
      smem_(p.sm_count, static_cast<uint32_t>(std::min<uint64_t>(p.sm_shared_memory, UINT32_MAX))),
      room_(p.sm_count),
      max_threads_(static_cast<uint32_t>(p.sm_threads)) {}

uint32_t SmPool::room(size_t i, const BlockNeed& n) const {
    uint32_t r = std::min(threads_[i] / n.threads, blocks_[i]);
    if (n.regs) r = std::min(r, regs_[i] / n.regs);
    if (n.smem) r = std::min(r, smem_[i] / n.smem);
    return r;
}

uint32_t SmPool::place(const BlockNeed& need, uint32_t want, std::vector<SmRun>& out) {
    const size_t n = threads_.size();
    uint64_t total = 0;
    uint32_t max_room = 0;
    for (size_t i = 0; i < n; ++i) {
        room_[i] = room(i, need);
        total += room_[i];
        max_room = std::max(max_room, room_[i]);
    }
    if (total == 0 || want == 0) return 0;
    // Breadth-first: every SM takes min(room, level) blocks, the lowest level that covers `want`;
    // the last partial round goes to the lowest-numbered SMs.
    uint32_t level = max_room, extra_round = 0;
    if (want < total) {
        uint32_t lo = 0, hi = max_room;  // sum(min(room, lo)) < want <= sum(min(room, hi))
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) / 2;
            uint64_t s = 0;
            for (size_t i = 0; i < n; ++i) s += std::min(room_[i], mid);
            (s >= want ? hi : lo) = mid;
        }
        level = lo;
        uint64_t base = 0;
        for (size_t i = 0; i < n; ++i) base += std::min(room_[i], lo);
        extra_round = static_cast<uint32_t>(want - base);
    }
    uint32_t placed = 0;
    for (size_t i = 0; i < n; ++i) {
        uint32_t k = std::min(room_[i], level);
        if (extra_round && room_[i] > level) {
            ++k;
            --extra_round;
        }
        if (!k) continue;
        threads_[i] -= k * need.threads;
        blocks_[i] -= k;
        regs_[i] -= k * need.regs;
        smem_[i] -= k * need.smem;
        out.push_back(SmRun{static_cast<uint16_t>(i), static_cast<uint16_t>(k)});
        placed += k;
    }
    used_threads_ += static_cast<uint64_t>(placed) * need.threads;
    return placed;
}

void SmPool::release(const BlockNeed& need, const std::vector<SmRun>& runs) {
    for (const SmRun& r : runs) {
        threads_[r.sm] += r.blocks * need.threads;
        blocks_[r.sm] += r.blocks;
        regs_[r.sm] += r.blocks * need.regs;
        smem_[r.sm] += r.blocks * need.smem;
        used_threads_ -= static_cast<uint64_t>(r.blocks) * need.threads;
    }
}

}  // namespace hetsim
