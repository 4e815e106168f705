#include "hw/sm_pool.hpp"

#include <algorithm>

namespace hetsim {

SmPool::SmPool(const HwProfile& p) : carveouts_(p.rules.smem_carveout) {
    const auto smem = static_cast<uint32_t>(std::min<uint64_t>(p.sm_shared_memory, UINT32_MAX));
    full_ = Free{static_cast<uint32_t>(p.sm_threads), static_cast<uint32_t>(p.sm_blocks), static_cast<uint32_t>(p.sm_registers), smem, smem};
    segs_.push_back(Seg{0, static_cast<uint16_t>(p.sm_count), full_, 0});
    total_threads_ = p.sm_count * p.sm_threads;
}

size_t SmPool::split(size_t i, uint16_t at) {
    if (segs_[i].begin == at) return i;
    Seg tail = segs_[i];
    tail.begin = at;
    segs_[i].end = at;
    segs_.insert(segs_.begin() + static_cast<long>(i) + 1, tail);
    return i + 1;
}

void SmPool::merge() {
    size_t w = 0;
    for (size_t r = 1; r < segs_.size(); ++r) {
        if (segs_[r].free == segs_[w].free) segs_[w].end = segs_[r].end;
        else segs_[++w] = segs_[r];
    }
    segs_.resize(w + 1);
}

[[gnu::flatten]] uint32_t SmPool::place_any(const BlockNeed& need, uint32_t want, std::vector<SmRun>& out) {
    uint64_t total = 0, with_room = 0;  // blocks that fit; SMs with room for one
    uint32_t max_room = 0;
    for (Seg& s : segs_) {
        s.room = room(s.free, need);
        total += static_cast<uint64_t>(s.room) * (s.end - s.begin);
        if (s.room) with_room += s.end - s.begin;
        max_room = std::max(max_room, s.room);
    }
    if (total == 0 || want == 0) return 0;
    // Every SM takes min(room, level) blocks, `level` the highest with sum < want; the
    // `extra` blocks left go one each to the lowest-numbered SMs with room > level.
    uint32_t level = max_room;
    uint64_t extra = 0;
    if (want < total && want <= with_room) {  // one round: level 0 (sum(min(room, 1)) >= want)
        level = 0;
        extra = want;
    } else if (want < total) {
        uint32_t lo = 0, hi = max_room;  // sum(min(room, lo)) < want <= sum(min(room, hi))
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) / 2;
            uint64_t sum = 0;
            for (const Seg& s : segs_) sum += static_cast<uint64_t>(std::min(s.room, mid)) * (s.end - s.begin);
            (sum >= want ? hi : lo) = mid;
        }
        level = lo;
        uint64_t base = 0;
        for (const Seg& s : segs_) base += static_cast<uint64_t>(std::min(s.room, lo)) * (s.end - s.begin);
        extra = want - base;
    }
    uint32_t placed = 0;
    for (size_t i = 0; i < segs_.size(); ++i) {
        uint32_t k = std::min(segs_[i].room, level);
        if (extra && segs_[i].room > level) {
            uint16_t len = segs_[i].end - segs_[i].begin;
            if (extra < len) split(i, static_cast<uint16_t>(segs_[i].begin + extra));  // tail keeps `level`
            extra -= std::min<uint64_t>(extra, len);
            ++k;
        }
        if (!k) continue;
        Seg& s = segs_[i];
        take(s, need, k);
        out.push_back(SmRun{s.begin, s.end, k});
        placed += k * (s.end - s.begin);
    }
    merge();
    used_threads_ += static_cast<uint64_t>(placed) * need.threads;
    return placed;
}

[[gnu::flatten]] void SmPool::release_any(const BlockNeed& need, const std::vector<SmRun>& runs) {
    size_t i = 0;
    for (const SmRun& r : runs) {  // runs are in SM order, as place() wrote them
        while (segs_[i].end <= r.begin) ++i;
        i = split(i, r.begin);
        for (; i < segs_.size() && segs_[i].begin < r.end; ++i) {
            if (segs_[i].end > r.end) split(i, r.end);
            Seg& s = segs_[i];
            s.free.threads += r.blocks * need.threads;
            s.free.blocks += r.blocks;
            s.free.regs += r.blocks * need.regs;
            s.free.smem += r.blocks * need.smem;
            if (s.free.blocks == full_.blocks) s.free.carveout = full_.carveout;  // idle again
            used_threads_ -= static_cast<uint64_t>(r.blocks) * need.threads * (s.end - s.begin);
        }
        if (i > 0) --i;
    }
    merge();
}

[[gnu::flatten]] uint32_t SmPool::place_deep(const BlockNeed& need, uint32_t want, std::vector<SmRun>& out) {
    uint32_t placed = 0;
    for (size_t i = 0; i < segs_.size() && want > 0; ++i) {
        const uint32_t r = room(segs_[i].free, need);
        if (!r) continue;
        const uint16_t begin = segs_[i].begin;
        uint32_t len = segs_[i].end - begin, k = r;
        if (static_cast<uint64_t>(r) * len > want) {
            // The first want / r SMs take r each (the next segment, their tail, takes the rest);
            // with fewer than r blocks left, one SM takes them.
            const uint32_t full = want / r;
            if (full == 0) k = want, len = 1;
            else len = full;
            if (begin + len < segs_[i].end) split(i, static_cast<uint16_t>(begin + len));
        }
        take(segs_[i], need, k);
        out.push_back(SmRun{begin, static_cast<uint16_t>(begin + len), k});
        placed += k * len;
        want -= k * len;
    }
    if (placed == 0) return 0;
    merge();
    used_threads_ += static_cast<uint64_t>(placed) * need.threads;
    return placed;
}

std::vector<std::array<uint32_t, 5>> SmPool::free_per_sm() const {
    std::vector<std::array<uint32_t, 5>> v;
    for (const Seg& s : segs_)
        for (uint16_t k = s.begin; k < s.end; ++k)
            v.push_back({s.free.threads, s.free.blocks, s.free.regs, s.free.smem, s.free.carveout});
    return v;
}

}  // namespace hetsim
