// The one event queue: a binary min-heap keyed by (time, priority, insertion sequence),
// so equal-time events run in a fixed order and the same input gives the same output.
#pragma once
#include <cstdint>
#include <queue>
#include <vector>

#include "sim/time.hpp"

namespace hetsim {

struct SimEvent {
    int64_t time;  // ps
    uint64_t key;  // priority << 48 | sequence
    uint32_t type;
    uint32_t a;
    uint32_t b;
    bool operator>(const SimEvent& o) const { return time != o.time ? time > o.time : key > o.key; }
};

class EventQueue {
public:
    void push(Time t, uint32_t priority, uint32_t type, uint32_t a, uint32_t b = 0) {
        heap_.push(SimEvent{t.ps(), (static_cast<uint64_t>(priority) << 48) | seq_++, type, a, b});
    }
    bool empty() const { return heap_.empty(); }
    SimEvent pop() {
        SimEvent e = heap_.top();
        heap_.pop();
        return e;
    }
    void reserve(size_t n) {
        std::vector<SimEvent> v;
        v.reserve(n);
        heap_ = Heap(std::greater<SimEvent>(), std::move(v));
    }

private:
    using Heap = std::priority_queue<SimEvent, std::vector<SimEvent>, std::greater<SimEvent>>;
    Heap heap_;
    uint64_t seq_ = 0;
};

}  // namespace hetsim
