// Pageable staging: the host copies a pageable buffer through a pool of pinned bounce buffers
// (host.staging_pool) while the DMA drains them; a source still in the CPU caches (a pageable
// buffer staged again before host.staging_cache bytes of other pageable data) stages at the
// warm speed. Holds the calls waiting for the pool and when each upload's staging ends, and the
// staging lock (rules.staging_lock): the driver passes the pageable copies of all host threads
// through the bounce buffers one at a time, in the order they ask for them.
#pragma once
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/timeline.hpp"
#include "models/copy_model.hpp"
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

    // The staging lock. A pageable copy issued by a host thread's call takes it: an upload when
    // its call starts staging, a download when its DMA may start (its stream's earlier work is
    // done); either keeps it until its call returns.
    bool locks(const Op& op) const {
        return hw_.rules.staging_lock && hw_.rules.pageable_staging && op.thread >= 0 && !op.graph_node && !pg_.tasks_form;
    }
    struct Waiter {
        uint32_t op;
        uint32_t thread;  // an upload's calling thread
        Time at;          // when it asked
    };
    // Copy `op` (of `thread`) asks for the lock at `at`: returns when it holds it (>= at), or
    // Time::max() when it waits for the holder's call to return (release() grants it then).
    Time acquire(uint32_t op, uint32_t thread, Time at);
    bool holds(uint32_t op) const { return holder_ == static_cast<int32_t>(op); }
    // The op holding the lock, else the one that held it last (-1: none yet).
    int32_t holder() const { return holder_ >= 0 ? holder_ : last_; }
    // Holder `op`'s call returns at `end`: the lock passes to the first waiter, granted at
    // max(end, when it asked); `grant(waiter, at, op)` tells the engine. Granting an upload may
    // release the lock again (its staging's end is known at once).
    template <class Grant>
    void release(uint32_t op, Time end, Grant&& grant) {
        if (!holds(op)) return;
        holder_ = -1;
        last_ = static_cast<int32_t>(op);
        free_at_ = end;
        if (waiters_.empty()) return;
        const Waiter w = waiters_.front();
        waiters_.pop_front();
        holder_ = static_cast<int32_t>(w.op);
        grant(w, max(end, w.at), op);
        // An upload granted the lock that waits for its DMA to start (the pool is full) lets the
        // downloads waiting behind it go: its DMA may wait for one of them (as in acquire()).
        if (holder_ < 0 || !held_.count(static_cast<uint32_t>(holder_))) return;
        for (auto it = waiters_.begin(); it != waiters_.end();) {
            if (pg_.ops[it->op].dir != CopyDir::D2H) {
                ++it;
                continue;
            }
            const Waiter d = *it;
            it = waiters_.erase(it);
            grant(d, max(end, d.at), op);
        }
    }

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
    std::unordered_map<uint32_t, Warmth> warm_;  // uploads whose source is in the CPU caches, and in which level
    std::unordered_map<uint32_t, Time> staged_;  // uploads: when their staging ends
    std::unordered_map<uint32_t, Held> held_;    // uploads whose call waits for the pool
    int32_t holder_ = -1;                        // the staging lock's holder (an op), or -1
    int32_t last_ = -1;                          // the op that held it last
    Time free_at_;                               // when its last holder's call returned
    std::deque<Waiter> waiters_;                 // copies waiting for the lock, in the order they asked
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
