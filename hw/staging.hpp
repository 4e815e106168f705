// Pageable staging: the host copies a pageable buffer through a pool of pinned bounce buffers
// (host.staging_pool) while the DMA drains them; a source still in the CPU caches (a pageable
// buffer staged again before host.staging_cache bytes of other pageable data) stages at the
// warm speed. Holds the calls waiting for the pool and when each upload's staging ends.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/timeline.hpp"
#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

class Staging {
public:
    Staging(const Program& pg, const HwProfile& hw) : pg_(pg), hw_(hw) {}
    // Pageable copy `op` stages its buffer now: the host cache's recency list moves.
    void touch(uint32_t op);
    // Host work reads or writes pageable buffer b: it is the most recent in the host cache.
    void touch_buffer(int32_t b) { note(b, -1); }
    // Host time to stage `bytes` of pageable upload `op`, at the warm or the cold speed.
    Time stage_time(uint32_t op, uint64_t bytes) const;
    // An upload of more bytes than the pool holds cannot finish staging before its DMA starts.
    bool overfills_pool(const Op& op) const { return hw_.staging_pool && op.bytes > hw_.staging_pool; }
    // The call of `op` on `thread`, made at `called`, waits for the DMA to start.
    void hold(uint32_t op, uint32_t thread, Time called) { held_[op] = Held{thread, called}; }
    void set_staged(uint32_t op, Time end) { staged_[op] = end; }
    bool has_staged(uint32_t op) const { return staged_.count(op) != 0; }
    // The DMA of upload `op` starts now: a held call resumes staging as the DMA frees bounce
    // buffers, and returns (through `sink`) when done. Returns when the staging ends.
    template <class Sink>
    Time dma_starts(uint32_t op, Sink& sink);

private:
    // Moves buffer b to the most recent end of the host cache's list; `upload` (an H2D copy
    // op, or -1) finds its source warm if b was among the last staging_cache bytes.
    void note(int32_t b, int32_t upload);
    struct Held {
        uint32_t thread;
        Time called;
    };
    const Program& pg_;
    const HwProfile& hw_;
    std::vector<int32_t> recent_;               // pageable buffers by last staging, most recent last
    std::unordered_set<uint32_t> warm_;         // uploads whose source is in the CPU caches
    std::unordered_map<uint32_t, Time> staged_;  // uploads: when their staging ends
    std::unordered_map<uint32_t, Held> held_;    // uploads whose call waits for the pool
};

template <class Sink>
Time Staging::dma_starts(uint32_t i, Sink& sink) {
    auto h = held_.find(i);
    if (h != held_.end()) {
        // Staging stalled with the pool full until now (the DMA start); it resumes as the DMA
        // frees bounce buffers, at the host's speed.
        const Op& op = pg_.ops[i];
        const Time now = sink.clock();
        const Time staged = max(h->second.called + stage_time(i, op.bytes), now + stage_time(i, op.bytes - hw_.staging_pool));
        staged_[i] = staged;
        OpRecord& r = sink.records()[i];
        const Time unblocked = h->second.called + stage_time(i, op.bytes);
        if (staged > unblocked) {
            r.sync_wait += staged - unblocked;
            r.host_cause = Cause{static_cast<int32_t>(i), Phase::Gpu, CauseKind::Resource};
        }
        const uint32_t t = h->second.thread;
        held_.erase(h);
        sink.host_returns(t, i, staged);
    }
    return staged_.at(i);
}

}  // namespace hetsim
