#include "hw/host_sync.hpp"

namespace hetsim {

bool HostQueues::put(uint32_t q, Blocked me, Time now, Time& end, Release& woken) {
    Queue& s = queues_[q];
    end = now + hw_.queue_put_cost;
    if (!s.getters.empty()) {  // hand the item to the getter that waited longest
        woken = Release{true, s.getters.front(), end + hw_.queue_wakeup + hw_.queue_get_cost, me.op};
        s.getters.pop_front();
        return true;
    }
    if (s.items.size() >= s.capacity) {
        s.putters.push_back(me);
        return false;
    }
    s.items.push_back(Item{end, me.op});
    return true;
}

bool HostQueues::get(uint32_t q, Blocked me, Time now, Time& end, Release& woken, int32_t& from) {
    Queue& s = queues_[q];
    if (s.items.empty()) {
        s.getters.push_back(me);
        return false;
    }
    const Item item = s.items.front();
    s.items.pop_front();
    from = static_cast<int32_t>(item.op);
    // An item whose put has not returned yet: the getter waits for it to be notified.
    end = (item.ready > now ? item.ready + hw_.queue_wakeup : now) + hw_.queue_get_cost;
    if (!s.putters.empty()) {  // the slot goes to the putter that waited longest
        const Blocked p = s.putters.front();
        s.putters.pop_front();
        const Time put_end = end + hw_.queue_wakeup + hw_.queue_put_cost;
        woken = Release{true, p, put_end, me.op};
        s.items.push_back(Item{put_end, p.op});
    }
    return true;
}

Release Flags::set(uint32_t f, uint32_t by, Time now) {
    Flag& s = flags_[f];
    if (s.waiters.empty()) {
        ++s.pending;
        return Release{};
    }
    Release r{true, s.waiters.front(), now + hw_.flag_wakeup, by};
    s.waiters.pop_front();
    return r;
}

bool Flags::wait(uint32_t f, Blocked me, Time now, Time& end) {
    Flag& s = flags_[f];
    if (s.pending == 0) {
        s.waiters.push_back(me);
        return false;
    }
    --s.pending;
    end = now;
    return true;
}

}  // namespace hetsim
