// The one event queue, keyed by (time, priority, insertion sequence), so equal-time events run
// in a fixed order and the same input gives the same output: a small sorted array of the
// nearest 24-byte entries (an insertion moves a few of them, a pop takes the last) in front of
// a 4-ary min-heap (fewer levels and cache lines per pop than a binary heap) for the rest, and
// beside them a few unit slots (one pending event each: a copy engine's or a kernel batch's next
// completion) that are written in place instead of inserted.
#pragma once
#include <cstdint>
#include <vector>

#include "core/time.hpp"

namespace hetsim {

struct SimEvent {
    int64_t time;  // ps
    uint64_t key;  // priority << 62 | sequence << 3 | type: the sequence decides before the type
    uint32_t a;
    uint32_t b;
    uint32_t type() const { return static_cast<uint32_t>(key & 7); }
    // (time, key) as one 128-bit number: one compare-and-borrow, no branch on equal times.
    __extension__ using Order = __int128;
    Order order() const { return (static_cast<Order>(time) << 64) | static_cast<Order>(key); }
    bool before(const SimEvent& o) const { return order() < o.order(); }
};

class EventQueue {
public:
    // `type` < 8, `priority` < 4.
    void push(Time t, uint32_t priority, uint32_t type, uint32_t a, uint32_t b = 0) {
        insert(SimEvent{t.ps(), (static_cast<uint64_t>(priority) << 62) | (seq_++ << 3) | type, a, b});
    }
    // The key push() would give an event now, taken without pushing it: push_keyed() inserts the
    // event later with this key, and it pops where it would have had it been pushed now (the
    // queue's order is (time, key) alone), as long as it goes in before that turn comes.
    uint64_t take_key(uint32_t priority, uint32_t type) { return (static_cast<uint64_t>(priority) << 62) | (seq_++ << 3) | type; }
    void push_keyed(Time t, uint64_t key, uint32_t a, uint32_t b = 0) { insert(SimEvent{t.ps(), key, a, b}); }
    bool empty() const { return busy_ == 0 && n_ == 0 && !heap_any_; }
    SimEvent pop() { return *try_pop(); }
    // Takes the earliest event out of the queue, or returns null when the queue is empty: one
    // call for the run loop's empty() and pop(). Each of the three earliest orders (slots, near,
    // heap) is kNone when that part is empty, so it compares them with no test of which parts
    // hold events. The event is read where it waited, with no copy: the pointer is good until
    // the next push() or set_slot(), which may write there.
    // Every near event is before every heap event (insert() keeps it so), so while near events
    // wait the earliest of them is the queue's: one comparison with the slots' earliest, and the
    // heap's earliest is compared only once the near events are gone.
    const SimEvent* try_pop() {
        if (min_order_ < near_[n_].order() && (n_ != 0 || min_order_ < heap_min_)) {
            const uint32_t k = min_;  // the earliest slot is before the queue's earliest event
            busy_ &= ~(1u << k);
            rescan();
            return &slots_[k];
        }
        if (n_ != 0) return &near_[n_--];
        if (!heap_any_) return nullptr;
        popped_ = heap_pop();
        return &popped_;
    }

    // Unit slots: slot k holds at most one event, taken by pop() in the same (time, key) order as
    // the queue's (its key is made as push() makes it), so where an event waits never changes
    // when it runs. set_slot() replaces the slot's event, if any: a unit that moves its next
    // completion (a rescaled copy or batch) overwrites the superseded one, which never runs.
    static constexpr uint32_t kSlots = 8;
    bool slot_busy(uint32_t k) const { return (busy_ >> k) & 1u; }
    const SimEvent& slot(uint32_t k) const { return slots_[k]; }
    void set_slot(uint32_t k, Time t, uint32_t priority, uint32_t type, uint32_t a, uint32_t b = 0) {
        slots_[k] = SimEvent{t.ps(), (static_cast<uint64_t>(priority) << 62) | (seq_++ << 3) | type, a, b};
        const SimEvent::Order o = slots_[k].order();
        const bool was_min = min_ == k;  // min_ is a busy slot unless none is (min_order_ == kNone)
        busy_ |= 1u << k;
        if (o < min_order_) min_ = k, min_order_ = o;
        else if (was_min) rescan();  // the earliest slot moved later
    }
    // Drops slot k's event, if any: it never pops.
    void clear_slot(uint32_t k) {
        if (!slot_busy(k)) return;
        busy_ &= ~(1u << k);
        if (min_ == k) rescan();
    }
    void reserve(size_t n) { heap_.reserve(n); }

private:
    // min_, min_order_: the earliest busy slot and its order.
    void rescan() {
        uint32_t m = busy_;
        if (!m) {
            min_order_ = kNone;
            return;
        }
        uint32_t best = static_cast<uint32_t>(__builtin_ctz(m));
        SimEvent::Order best_order = slots_[best].order();
        for (m &= m - 1; m; m &= m - 1) {
            const uint32_t k = static_cast<uint32_t>(__builtin_ctz(m));
            const SimEvent::Order o = slots_[k].order();
            if (o < best_order) best = k, best_order = o;
        }
        min_ = best;
        min_order_ = best_order;
    }
    // insert() inlines into push() (it was a call of its own: 16 instructions of entry and exit
    // on each of about 2 pushes an op, 9 instructions an op); the heap's paths, taken only past kNear pending events,
    // stay calls.
    [[gnu::always_inline]] void insert(const SimEvent& e) {
        const SimEvent::Order o = e.order();
        // An event after the heap's earliest goes to the heap (near events stay before heap events).
        if (heap_any_ && heap_min_ < o) return heap_push(e);
        if (n_ < kNear) {  // sorted insertion from the earliest end: few moves, no sift
            uint32_t j = ++n_;  // the sentinel near_[0] stops the loop
            for (; near_[j - 1].order() < o; --j) near_[j] = near_[j - 1];
            near_[j] = e;
            return;
        }
        if (o < near_[1].order()) {  // full: its latest event goes to the heap, e takes its place
            heap_push(near_[1]);
            uint32_t i = 1;
            for (; i < kNear && o < near_[i + 1].order(); ++i) near_[i] = near_[i + 1];
            near_[i] = e;
            return;
        }
        heap_push(e);
    }
    [[gnu::noinline]] void heap_push(const SimEvent& e) {
        size_t i = heap_.size();
        heap_.push_back(e);
        heap_any_ = true;
        while (i > 0) {
            const size_t parent = (i - 1) / 4;
            if (!e.before(heap_[parent])) break;
            heap_[i] = heap_[parent];
            i = parent;
        }
        heap_[i] = e;
        heap_min_ = heap_[0].order();
    }
    [[gnu::noinline]] SimEvent heap_pop() {
        const SimEvent top = heap_[0];
        const SimEvent last = heap_.back();
        heap_.pop_back();
        const size_t n = heap_.size();
        heap_any_ = n != 0;
        if (n == 0) {
            heap_min_ = kNone;
            return top;
        }
        const SimEvent::Order last_order = last.order();
        SimEvent* h = heap_.data();
        size_t i = 0;
        for (;;) {
            const size_t first = 4 * i + 1;
            if (first >= n) break;
            size_t best = first;
            SimEvent::Order best_order = h[first].order();
            const size_t end = first + 4 < n ? first + 4 : n;
            for (size_t c = first + 1; c < end; ++c) {
                const SimEvent::Order o = h[c].order();
                if (o < best_order) best = c, best_order = o;
            }
            if (!(best_order < last_order)) break;
            h[i] = h[best];
            i = best;
        }
        h[i] = last;
        heap_min_ = h[0].order();
        return top;
    }

    // After every event's order: (2^63 - 1 ps, all key bits set), which no pushed key reaches.
    static constexpr SimEvent::Order kNone = (static_cast<SimEvent::Order>(INT64_MAX) << 64) | static_cast<SimEvent::Order>(UINT64_MAX);
    // The near events: up to kNear of them in near_[1..n_], sorted latest first (the earliest is
    // near_[n_]); near_[0] is a sentinel at kNone, which ends insert()'s loop and is what pop()
    // reads when n_ == 0. The others in the heap, all after every near event (a new event after
    // the heap's earliest goes to the heap, and a full near array hands the heap its latest). A
    // simulation keeps few events pending (about 5 in bench/engine_pipeline.cpp), so most never
    // reach the heap.
    static constexpr uint32_t kNear = 16;
    SimEvent near_[kNear + 1] = {SimEvent{INT64_MAX, UINT64_MAX, 0, 0}};
    uint32_t n_ = 0;
    std::vector<SimEvent> heap_;
    bool heap_any_ = false;  // the heap holds events (heap_push, heap_pop)
    SimEvent::Order heap_min_ = kNone;  // heap_[0]'s order, kNone when the heap is empty
    SimEvent slots_[kSlots];
    SimEvent popped_{};  // the event try_pop() last took from the heap
    uint32_t busy_ = 0;  // bit k: slot k holds an event
    uint32_t min_ = 0;
    SimEvent::Order min_order_ = kNone;
    uint64_t seq_ = 0;
};

}  // namespace hetsim
