#include "hw/staging.hpp"

#include "models/copy_model.hpp"

namespace hetsim {

void Staging::touch(uint32_t i) {
    const Op& op = pg_.ops[i];
    if (op.buffer >= 0) note(op.buffer, op.dir == CopyDir::H2D ? static_cast<int32_t>(i) : -1);
}

void Staging::note(int32_t b, int32_t upload) {
    if (hw_.staging_cache == 0 || !hw_.rules.staging_cache) return;
    const uint64_t bytes = pg_.buffers[b].bytes;
    uint64_t newer = 0;
    for (size_t k = recent_.size(); k-- > 0;) {
        if (recent_[k] == b) {
            if (upload >= 0 && newer + bytes <= hw_.staging_cache)
                warm_[static_cast<uint32_t>(upload)] = newer + bytes <= hw_.staging_cache_near ? Warmth::Near : Warmth::Warm;
            recent_.erase(recent_.begin() + static_cast<long>(k));
            break;
        }
        newer += pg_.buffers[recent_[k]].bytes;
        if (newer > hw_.staging_cache) break;
    }
    recent_.push_back(b);
    if (recent_.size() > 64) recent_.erase(recent_.begin());
}

Time Staging::stage_time(uint32_t op, uint64_t bytes) const {
    const auto w = warm_.find(op);
    const Time t = staging_time(hw_, CopyDir::H2D, bytes, w == warm_.end() ? Warmth::Cold : w->second);
    // A pitched copy: the host packs its rows as it stages them (copy.row_cost.pageable_h2d),
    // each part of the bytes carrying its share.
    const Op& o = pg_.ops[op];
    const Time rows = pageable_row_time(hw_, CopyDir::H2D, dma_rows(pg_.site(o), o.bytes));
    if (rows == Time{} || o.bytes == 0) return t;
    return t + Time::ps(static_cast<int64_t>(static_cast<u128>(rows.ps()) * bytes / o.bytes));
}

Time Staging::acquire(uint32_t op, uint32_t thread, Time at) {
    if (holder_ >= 0 && held_.count(static_cast<uint32_t>(holder_)) && pg_.ops[op].dir == CopyDir::D2H)
        return at;  // the holder waits for its own DMA to start, which may wait for this download: no cycle
    if (holder_ < 0 && waiters_.empty()) {
        holder_ = static_cast<int32_t>(op);
        return max(at, free_at_);
    }
    waiters_.push_back(Waiter{op, thread, at});
    return Time::max();
}

}  // namespace hetsim
