// The SMs as block slots: per-SM free threads, block slots, registers and shared memory.
// Blocks are placed breadth-first (one per SM in turn, as the hardware block scheduler does),
// so a kernel that needs less than half the device leaves room for another beside it; the
// last partial round goes to the lowest-numbered SMs.
//
// SMs in the same state are kept as contiguous segments [begin, end), so placing and
// releasing a batch of blocks costs O(segments), not O(SMs): the hot path of the engine.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

struct BlockNeed {
    uint32_t threads = 0, regs = 0, smem = 0;
    static BlockNeed of(const KernelShape& s) {
        return BlockNeed{s.block, s.block * s.regs_per_thread, s.smem_per_block};
    }
};

// `blocks` blocks on each SM in [begin, end).
struct SmRun {
    uint16_t begin, end;
    uint32_t blocks;
};

class SmPool {
public:
    explicit SmPool(const HwProfile& p);
    // Places up to `want` blocks; appends where they went to `out`; returns how many were placed.
    uint32_t place(const BlockNeed& need, uint32_t want, std::vector<SmRun>& out);
    void release(const BlockNeed& need, const std::vector<SmRun>& runs);
    uint64_t used_threads() const { return used_threads_; }
    uint64_t total_threads() const { return total_threads_; }
    size_t segments() const { return segs_.size(); }
    // Free {threads, blocks, registers, shared memory} of every SM, for tests.
    std::vector<std::array<uint32_t, 4>> free_per_sm() const;

private:
    struct Free {
        uint32_t threads, blocks, regs, smem;
        bool operator==(const Free&) const = default;
    };
    struct Seg {
        uint16_t begin, end;
        Free free;
        uint32_t room;  // scratch: blocks of the current shape that fit on one SM of the segment
    };
    static uint32_t room(const Free& f, const BlockNeed& n);
    size_t split(size_t seg, uint16_t at);  // splits so a segment starts at `at`; returns its index
    void merge();

    std::vector<Seg> segs_;
    std::vector<Seg> scratch_;
    uint64_t used_threads_ = 0, total_threads_ = 0;
};

}  // namespace hetsim
