// The event queue with unit slots against a plain reference: every event that is pushed, or
// written to a slot and not replaced before it runs, pops in (time, priority, sequence) order,
// wherever it waited; a replaced slot event never pops.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "sim/event_queue.hpp"

using namespace hetsim;

namespace {

struct Ref {
    int64_t time;
    uint32_t prio;
    uint64_t seq;
    uint32_t a;
    bool operator<(const Ref& o) const { return std::tie(time, prio, seq) < std::tie(o.time, o.prio, o.seq); }
};

}  // namespace

TEST_CASE("event queue: a slot's event pops by time, then priority, then sequence, as a queued one") {
    EventQueue q;
    // At t = 5: a host step (priority 2) in slot 6 before a copy completion (priority 0) in the
    // queue, then a GPU-ready (priority 1) in slot 0. Order: completion, GPU-ready, host step.
    q.set_slot(6, Time::ps(5), 2, 5, 100);
    q.push(Time::ps(5), 0, 3, 101);
    q.set_slot(0, Time::ps(5), 1, 4, 102);
    // At t = 3 in the queue: first of all. At t = 5, priority 0, in slot 1 after the queued one:
    // second at t = 5 (same priority, later sequence).
    q.push(Time::ps(3), 2, 5, 103);
    q.set_slot(1, Time::ps(5), 0, 3, 104);
    std::vector<uint32_t> order;
    while (!q.empty()) order.push_back(q.pop().a);
    CHECK(order == std::vector<uint32_t>{103, 101, 104, 102, 100});
}

TEST_CASE("event queue: a replaced or cleared slot event never pops") {
    EventQueue q;
    q.set_slot(0, Time::ps(50), 0, 3, 1);  // a copy's completion at 50 ...
    q.push(Time::ps(20), 1, 4, 2);
    q.set_slot(0, Time::ps(10), 0, 3, 3);  // ... rescaled to 10: the one at 50 is gone
    q.set_slot(1, Time::ps(5), 0, 3, 4);   // the earliest slot ...
    q.clear_slot(1);                       // ... cleared (the engine then pushes its event instead)
    q.push(Time::ps(40), 0, 3, 5);
    q.clear_slot(2);                       // an empty slot: nothing happens
    std::vector<std::pair<int64_t, uint32_t>> got;
    while (!q.empty()) {
        const SimEvent e = q.pop();
        got.emplace_back(e.time, e.a);
    }
    CHECK(got == std::vector<std::pair<int64_t, uint32_t>>{{10, 3}, {20, 2}, {40, 5}});
}

TEST_CASE("event queue: random pushes, slot writes, slot clears and pops match a sorted reference") {
    std::mt19937 rng(7);
    for (int round = 0; round < 50; ++round) {
        EventQueue q;
        std::set<Ref> ref;                                     // what must pop, least first
        std::vector<Ref> slot_ref(EventQueue::kSlots);         // each slot's event, as in ref
        std::vector<bool> slot_live(EventQueue::kSlots, false);
        uint64_t seq = 0;
        int64_t now = 0;
        uint32_t next_a = 0;
        size_t pops = 0;
        for (int step = 0; step < 400; ++step) {
            const uint32_t what = rng() % 5;
            const int64_t t = now + static_cast<int64_t>(rng() % 50);
            const uint32_t prio = rng() % 3;
            if (what == 0) {  // into the queue (often more than the near array's 16 entries)
                q.push(Time::ps(t), prio, 1, next_a);
                ref.insert(Ref{t, prio, seq++, next_a++});
            } else if (what == 1) {  // into a slot, replacing what it holds
                const uint32_t k = rng() % EventQueue::kSlots;
                if (slot_live[k]) ref.erase(slot_ref[k]);
                q.set_slot(k, Time::ps(t), prio, 2, next_a);
                slot_ref[k] = Ref{t, prio, seq++, next_a++};
                slot_live[k] = true;
                ref.insert(slot_ref[k]);
            } else if (what == 4) {  // a slot emptied: its event never pops
                const uint32_t k = rng() % EventQueue::kSlots;
                if (slot_live[k]) ref.erase(slot_ref[k]);
                slot_live[k] = false;
                q.clear_slot(k);
            } else if (!ref.empty()) {  // run the earliest event
                REQUIRE(!q.empty());
                const SimEvent e = q.pop();
                const Ref least = *ref.begin();
                ref.erase(ref.begin());
                REQUIRE(e.a == least.a);
                CHECK(e.time == least.time);
                for (uint32_t k = 0; k < EventQueue::kSlots; ++k)
                    if (slot_live[k] && slot_ref[k].a == e.a) slot_live[k] = false;
                now = e.time;
                ++pops;
            }
        }
        while (!ref.empty()) {
            REQUIRE(!q.empty());
            REQUIRE(q.pop().a == ref.begin()->a);
            ref.erase(ref.begin());
        }
        CHECK(q.empty());
        CHECK(pops > 50);
    }
}
