// How host threads hand work to each other: bounded host queues (a mutex + condition variable
// queue, a DataLoader's batch queue), flags that host_func callbacks set and host threads wait
// on, and threads joined by another. The unit keeps who waits for what; the engine blocks and
// wakes the threads. A woken thread pays a wake-up latency (host.queue_wakeup, host.flag_wakeup,
// host.join_wakeup) after what released it, then its own call cost.
#pragma once
#include <cstdint>
#include <vector>

#include "hw/fifo.hpp"
#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

// A thread blocked in `op`.
struct Blocked {
    uint32_t thread;
    uint32_t op;
};

// A blocked op to release: it returns at `end`; `cause` is the op that released it.
struct Release {
    bool any = false;
    Blocked who{};
    Time end;
    uint32_t cause = 0;
};

class HostQueues {
public:
    HostQueues(const Program& pg, const HwProfile& hw) : hw_(hw), queues_(pg.queues.size()) {
        for (size_t q = 0; q < pg.queues.size(); ++q) queues_[q].capacity = pg.queues[q].capacity;
    }
    // Thread t calls put (op i) at `now`. Returns false when the queue is full: the thread
    // waits. Otherwise `end` is when the call returns, and `woken` a getter it releases.
    bool put(uint32_t q, Blocked me, Time now, Time& end, Release& woken);
    // The same for get: `end` also covers waiting for an item still being put; `woken` is a
    // putter that the freed slot releases; `from` is the put the item came from.
    bool get(uint32_t q, Blocked me, Time now, Time& end, Release& woken, int32_t& from);
    // For the deadlock message: the queue's items and capacity.
    size_t items(uint32_t q) const { return queues_[q].items.size(); }
    uint32_t capacity(uint32_t q) const { return queues_[q].capacity; }

private:
    struct Item {
        Time ready;   // when its put returns
        uint32_t op;  // that put
    };
    struct Queue {
        uint32_t capacity = 1;
        Fifo<Item> items;  // put (or being put), not yet taken
        Fifo<Blocked> getters, putters;
    };
    const HwProfile& hw_;
    std::vector<Queue> queues_;
};

class Flags {
public:
    Flags(const Program& pg, const HwProfile& hw) : hw_(hw), flags_(pg.flags.size()) {}
    // A callback (op `by`) sets flag f at `now`: the first waiter, if any, is released.
    Release set(uint32_t f, uint32_t by, Time now);
    // Thread t waits on flag f at `now` (op i): false when no set is pending (it waits);
    // otherwise the wait returns at `end`.
    bool wait(uint32_t f, Blocked me, Time now, Time& end);

private:
    struct Flag {
        uint64_t pending = 0;  // sets not taken yet
        Fifo<Blocked> waiters;
    };
    const HwProfile& hw_;
    std::vector<Flag> flags_;
};

}  // namespace hetsim
