// The SMs as block slots: per-SM free threads, block slots, registers and shared memory.
// A kernel that finds room when it becomes ready is placed breadth-first (one block per SM in
// turn, as the hardware block scheduler does), so a kernel that needs less than half the device
// leaves room for another beside it; the last partial round goes to the lowest-numbered SMs.
// Blocks that waited for room are placed depth-first (place_deep: each SM with room, lowest
// first, takes as many as it holds before the next; rules.refill_deep). With
// rules.smem_carveout, an SM's shared memory is configured by the first kernel that lands on it
// while it is idle: that kernel's blocks alone x their shared memory (none for a kernel without
// any); a block with shared memory joins a busy SM only within that carveout.
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
    // Places up to `want` blocks breadth-first; appends where they went to `out`; returns how
    // many were placed.
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
                take(s, need, k);
                out.push_back(SmRun{s.begin, s.end, k});
                used_threads_ += static_cast<uint64_t>(k) * n * need.threads;
                return k * n;
            }
        }
        return place_any(need, want, out);
    }
    // Places up to `want` blocks depth-first: each SM with room, lowest-numbered first, takes as
    // many as it holds before the next; the last one the rest. Appends where they went to `out`
    // (in SM order); returns how many were placed.
    uint32_t place_deep(const BlockNeed& need, uint32_t want, std::vector<SmRun>& out);
    void release(const BlockNeed& need, const std::vector<SmRun>& runs) {
        if (segs_.size() == 1 && runs.size() == 1 && runs[0].begin == segs_[0].begin && runs[0].end == segs_[0].end) {
            Seg& s = segs_[0];  // blocks placed on every SM alike go back to every SM: no split, no merge
            const SmRun& r = runs[0];
            s.free.threads += r.blocks * need.threads;
            s.free.blocks += r.blocks;
            s.free.regs += r.blocks * need.regs;
            s.free.smem += r.blocks * need.smem;
            if (s.free.blocks == full_.blocks) s.free.carveout = full_.carveout;  // idle again
            used_threads_ -= static_cast<uint64_t>(r.blocks) * need.threads * (s.end - s.begin);
            return;
        }
        release_any(need, runs);
    }
    uint64_t used_threads() const { return used_threads_; }
    uint64_t total_threads() const { return total_threads_; }
    size_t segments() const { return segs_.size(); }
    // Free {threads, blocks, registers, shared memory} of every SM and its shared-memory
    // carveout (sm.shared_memory while idle), for tests.
    std::vector<std::array<uint32_t, 5>> free_per_sm() const;

private:
    struct Free {
        uint32_t threads, blocks, regs, smem;
        uint32_t carveout;  // shared memory the SM's blocks may use in all (sm.shared_memory while idle)
        bool operator==(const Free&) const = default;
    };
    struct Seg {
        uint16_t begin, end;
        Free free;
        uint32_t room;  // scratch: blocks of the current shape that fit on one SM of the segment
    };
    uint32_t room(const Free& f, const BlockNeed& n) const {
        uint32_t r = std::min(f.threads / n.threads, f.blocks);
        if (n.regs) r = std::min(r, f.regs / n.regs);
        if (n.smem) {
            // Within the carveout of a busy SM: its blocks use full_.smem - f.smem of it.
            const uint32_t used = full_.smem - f.smem;
            r = std::min(r, f.carveout > used ? (f.carveout - used) / n.smem : 0);
        }
        return r;
    }
    // k blocks of `need` on every SM of segment s; an idle one takes the kernel's carveout.
    void take(Seg& s, const BlockNeed& need, uint32_t k) {
        if (carveouts_ && s.free.blocks == full_.blocks) s.free.carveout = carveout_of(need);
        s.free.threads -= k * need.threads;
        s.free.blocks -= k;
        s.free.regs -= k * need.regs;
        s.free.smem -= k * need.smem;
    }
    // The shared memory an idle SM is configured with for a kernel of `need`: its blocks alone
    // on the SM x their shared memory.
    uint32_t carveout_of(const BlockNeed& need) const { return need.smem ? room(full_, need) * need.smem : 0; }
    // The general cases, out of line: the fast paths above inline into the SM scheduler.
    uint32_t place_any(const BlockNeed& need, uint32_t want, std::vector<SmRun>& out);
    void release_any(const BlockNeed& need, const std::vector<SmRun>& runs);
    size_t split(size_t seg, uint16_t at);  // splits so a segment starts at `at`; returns its index
    void merge();

    std::vector<Seg> segs_;
    std::vector<Seg> scratch_;
    Free full_;               // an idle SM
    bool carveouts_ = false;  // rules.smem_carveout
    uint64_t used_threads_ = 0, total_threads_ = 0;
};

}  // namespace hetsim
