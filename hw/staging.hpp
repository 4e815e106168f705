// Pageable staging: the host copies a pageable buffer through a pool of pinned bounce buffers
// (host.staging_pool) while the DMA drains them; a source still in the CPU caches (a pageable
// buffer staged again before host.staging_cache bytes of other pageable data) stages at the
// warm speed. Holds the calls waiting for the pool and when each upload's staging ends, and the
// staging locks (rules.staging_lock): the driver passes the pageable copies of all host threads
// through the bounce buffers one at a time per direction; a released download lock goes to the
// first waiter once it wakes, unless a call asks for it sooner.
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

    // The staging locks (rules.staging_lock), one per direction. A pageable upload issued by a
    // host thread's call takes the upload lock when its call starts staging and keeps it until
    // staged; a pageable download takes the download lock when its call is made, waits for its
    // stream's earlier work and its DMA holding it, and keeps it until its call returns.
    bool locks(const Op& op) const {
        return hw_.rules.staging_lock && hw_.rules.pageable_staging && op.thread >= 0 && !op.graph_node && !pg_.tasks_form;
    }
    struct Waiter {
        uint32_t op;
        uint32_t thread;  // the calling thread
        Time at;          // when it asked
    };
    // Copy `op` (of `thread`) asks for its direction's lock at `at`: returns when it holds it
    // (>= at), or Time::max() when it waits. Uploads: granted by release() in the order they
    // asked. Downloads: a free lock goes to whoever asks, ahead of waiters not yet awake
    // (host.staging_lock_wakeup after the release); wake() grants the first waiter.
    Time acquire(uint32_t op, uint32_t thread, Time at);
    bool holds(uint32_t op) const {
        // Neither lock held (both holders -1: their AND is negative), the usual case: no look-up.
        return (up_.holder & down_.holder) >= 0 && lock(op).holder == static_cast<int32_t>(op);
    }
    // The op holding op's direction's lock, else the one that held it last (-1: none yet).
    int32_t holder(uint32_t op) const {
        const Lock& l = lock(op);
        return l.holder >= 0 ? l.holder : l.last;
    }
    // Holder `op`'s call returns (an upload: its staging ends) at `end`. The upload lock passes
    // to the first waiter at max(end, when it asked): `grant(waiter, at)`. With downloads
    // waiting, the first wakes host.staging_lock_wakeup later: `wake_at(t)`, then wake().
    template <class Grant, class WakeAt>
    void release(uint32_t op, Time end, Grant&& grant, WakeAt&& wake_at) {
        if (!holds(op)) return;
        Lock& l = lock(op);
        l.holder = -1;
        l.last = static_cast<int32_t>(op);
        l.free_at = end;
        if (l.waiters.empty()) return;
        if (&l == &down_) {
            l.wake_at = end + lock_wakeup();
            return wake_at(l.wake_at);
        }
        const Waiter w = l.waiters.front();
        l.waiters.pop_front();
        l.holder = static_cast<int32_t>(w.op);
        grant(w, max(end, w.at));
    }
    // The first download waiting wakes at `now`: it takes the lock if no call took it since the
    // release (returns true and the waiter in `w`).
    bool wake(Time now, Waiter& w) {
        if (down_.holder >= 0 || down_.waiters.empty() || now != down_.wake_at) return false;
        w = down_.waiters.front();
        down_.waiters.pop_front();
        down_.holder = static_cast<int32_t>(w.op);
        return true;
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
    // The wake-up of the k-th release of the download lock with a waiter: host.staging_lock_wakeup
    // + spread x (2u - 1), u = frac(1/2 + k x 0.618...) (a low-discrepancy sequence: the
    // wake-ups of any run of releases spread evenly over the range; the first gets the median).
    Time lock_wakeup();
    uint64_t wakes_ = 0;
    struct Lock {
        int32_t holder = -1;         // the op holding it, or -1
        int32_t last = -1;           // the op that held it last
        Time free_at;                // when its last holder released it
        Time wake_at;                // downloads: when the first waiter wakes after the last release
        std::deque<Waiter> waiters;  // copies waiting for it, in the order they asked
    };
    Lock& lock(uint32_t op) { return pg_.ops[op].dir == CopyDir::D2H ? down_ : up_; }
    const Lock& lock(uint32_t op) const { return pg_.ops[op].dir == CopyDir::D2H ? down_ : up_; }
    Lock up_, down_;
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
