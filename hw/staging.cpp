#include "hw/staging.hpp"

#include "models/copy_model.hpp"

#include <algorithm>
#include <cmath>

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

Time Staging::lock_wakeup() {
    const double k = static_cast<double>(wakes_++);
    const double u = std::fmod(0.5 + k * 0.6180339887498949, 1.0);
    const double ps = static_cast<double>(hw_.staging_lock_wakeup.ps()) + static_cast<double>(hw_.staging_lock_wakeup_spread.ps()) * (2 * u - 1);
    return Time::ps(std::max<int64_t>(0, std::llround(ps)));
}

Time Staging::acquire(uint32_t op, uint32_t thread, Time at) {
    Lock& l = lock(op);
    const bool free = l.holder < 0 && (l.waiters.empty() || (&l == &down_ && at < l.wake_at));
    if (free) {
        l.holder = static_cast<int32_t>(op);
        return max(at, l.free_at);
    }
    l.waiters.push_back(Waiter{op, thread, at});
    return Time::max();
}

}  // namespace hetsim
