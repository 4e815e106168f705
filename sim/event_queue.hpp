// The one event queue, keyed by (time, priority, insertion sequence), so equal-time events run
// in a fixed order and the same input gives the same output: a 4-ary min-heap of 24-byte
// entries (fewer levels and cache lines per pop than a binary heap) with its earliest event
// kept outside it.
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
    bool before(const SimEvent& o) const { return time != o.time ? time < o.time : key < o.key; }
};

class EventQueue {
public:
    // `type` < 8, `priority` < 4.
    void push(Time t, uint32_t priority, uint32_t type, uint32_t a, uint32_t b = 0) {
        SimEvent e{t.ps(), (static_cast<uint64_t>(priority) << 62) | (seq_++ << 3) | type, a, b};
        // The earliest event waits outside the heap: an event pushed and then popped before any
        // earlier one arrives (a host thread's next call, a copy's end) costs no sift at all.
        if (!has_first_) {
            if (heap_.empty() || e.before(heap_[0])) {
                first_ = e;
                has_first_ = true;
                return;
            }
        } else if (e.before(first_)) {
            std::swap(e, first_);
        }
        heap_push(e);
    }
    bool empty() const { return !has_first_ && heap_.empty(); }
    SimEvent pop() {
        if (has_first_) {
            has_first_ = false;
            return first_;
        }
        return heap_pop();
    }
    void reserve(size_t n) { heap_.reserve(n); }

private:
    void heap_push(const SimEvent& e) {
        size_t i = heap_.size();
        heap_.push_back(e);
        while (i > 0) {
            const size_t parent = (i - 1) / 4;
            if (!e.before(heap_[parent])) break;
            heap_[i] = heap_[parent];
            i = parent;
        }
        heap_[i] = e;
    }
    SimEvent heap_pop() {
        const SimEvent top = heap_[0];
        const SimEvent last = heap_.back();
        heap_.pop_back();
        const size_t n = heap_.size();
        if (n == 0) return top;
        size_t i = 0;
        for (;;) {
            const size_t first = 4 * i + 1;
            if (first >= n) break;
            size_t best = first;
            const size_t end = first + 4 < n ? first + 4 : n;
            for (size_t c = first + 1; c < end; ++c)
                if (heap_[c].before(heap_[best])) best = c;
            if (!heap_[best].before(last)) break;
            heap_[i] = heap_[best];
            i = best;
        }
        heap_[i] = last;
        return top;
    }

    std::vector<SimEvent> heap_;
    SimEvent first_{};      // when has_first_: earlier than every event in the heap
    bool has_first_ = false;
    uint64_t seq_ = 0;
};

}  // namespace hetsim
