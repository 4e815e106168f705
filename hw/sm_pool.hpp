// The SMs as block slots: per-SM free threads, block slots, registers and shared memory.
// Blocks are placed breadth-first (one per SM in turn, as the hardware block scheduler does),
// so a kernel that needs less than half the device leaves room for another beside it.
#pragma once
#include <cstdint>
#include <vector>

#include "hw/profile.hpp"
#include "sim/program.hpp"

namespace hetsim {

struct BlockNeed {
    uint32_t threads = 0, regs = 0, smem = 0;
    static BlockNeed of(const KernelShape& s) {
        return BlockNeed{s.block, s.block * s.regs_per_thread, s.smem_per_block};
    }
};

struct SmRun {
    uint16_t sm;
    uint16_t blocks;
};

class SmPool {
public:
    explicit SmPool(const HwProfile& p);
    // Places up to `want` blocks; appends where they went to `out`; returns how many were placed.
    uint32_t place(const BlockNeed& need, uint32_t want, std::vector<SmRun>& out);
    void release(const BlockNeed& need, const std::vector<SmRun>& runs);
    uint64_t used_threads() const { return used_threads_; }
    uint64_t total_threads() const { return static_cast<uint64_t>(threads_.size()) * max_threads_; }

private:
    uint32_t room(size_t sm, const BlockNeed& need) const;
    std::vector<uint32_t> threads_, blocks_, regs_, smem_;  // free amounts per SM
    std::vector<uint32_t> room_;                            // scratch
    uint32_t max_threads_;
    uint64_t used_threads_ = 0;
};

}  // namespace hetsim
