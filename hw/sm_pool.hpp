// The SMs as block slots: per-SM free threads, block slots, registers and shared memory.
// Blocks are placed breadth-first (one per SM in turn, as the hardware block scheduler does),
// so a kernel that needs less than half the device leaves room for another beside it; the
// last partial round goes to the lowest-numbered SMs.
//
// SMs in the same state are kept as contiguous segments [begin, end), so placing and
// releasing a batch of blocks costs O(segments), not O(SMs): the hot path of the engine.
#pragma once
#include <algorithm>
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
    uint32_t place(const BlockNeed& need, uint32_t want, std::vector<SmRun>& out) {
        if (segs_.size() == 1) {  // every SM alike (the usual case): no scan, no search
            Seg& s = segs_[0];
            const uint32_t r = room(s.free, need), n = s.end - s.begin;
            const uint64_t total = static_cast<uint64_t>(r) * n;
            if (total == 0 || want == 0) return 0;
            // As place_any() places them: all the room when it is not enough; when `want` is a
            // whole number of rounds, that many blocks on every SM. Otherwise some SMs take one
            // more than the rest: place_any().
            if (want >= total || want % n == 0) {
                const uint32_t k = want >= total ? r : want / n;
                s.free.threads -= k * need.threads;
                s.free.blocks -= k;
                s.free.regs -= k * need.regs;
                s.free.smem -= k * need.smem;
                out.push_back(SmRun{s.begin, s.end, k});
                used_threads_ += static_cast<uint64_t>(k) * n * need.threads;
                return k * n;
            }
        }
        return place_any(need, want, out);
    }
    void release(const BlockNeed& need, const std::vector<SmRun>& runs) {
        if (segs_.size() == 1 && runs.size() == 1 && runs[0].begin == segs_[0].begin && runs[0].end == segs_[0].end) {
            Seg& s = segs_[0];  // blocks placed on every SM alike go back to every SM: no split, no merge
            const SmRun& r = runs[0];
            s.free.threads += r.blocks * need.threads;
            s.free.blocks += r.blocks;
            s.free.regs += r.blocks * need.regs;
            s.free.smem += r.blocks * need.smem;
            used_threads_ -= static_cast<uint64_t>(r.blocks) * need.threads * (s.end - s.begin);
            return;
        }
        release_any(need, runs);
    }
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
    static uint32_t room(const Free& f, const BlockNeed& n) {
        uint32_t r = std::min(f.threads / n.threads, f.blocks);
        if (n.regs) r = std::min(r, f.regs / n.regs);
        if (n.smem) r = std::min(r, f.smem / n.smem);
        return r;
    }
    // The general cases, out of line: the fast paths above inline into the SM scheduler.
    uint32_t place_any(const BlockNeed& need, uint32_t want, std::vector<SmRun>& out);
    void release_any(const BlockNeed& need, const std::vector<SmRun>& runs);
    size_t split(size_t seg, uint16_t at);  // splits so a segment starts at `at`; returns its index
    void merge();

    std::vector<Seg> segs_;
    std::vector<Seg> scratch_;
    uint64_t used_threads_ = 0, total_threads_ = 0;
};

}  // namespace hetsim
