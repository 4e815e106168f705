// What stands between a stream and the GPU: the hardware queues streams share
// (CUDA_DEVICE_MAX_CONNECTIONS: an op leaves its queue only after the op issued before it to that
// queue has left, whatever its stream: a false dependency, hardware-notes #15), and each
// stream's bounded launch queue (a launch into a full one blocks the calling thread, #23).
#pragma once
#include <cstdint>
#include <vector>

#include "hw/fifo.hpp"
#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

class HardwareQueues {
public:
    HardwareQueues(const Program& pg, const HwProfile& hw);
    bool enabled() const { return enabled_; }
    // Op i, issued to stream s, joins its queue; true when it must wait for the op ahead of it.
    bool join(uint32_t i, int32_t s) {
        Fifo<Entry>& q = queue_of(s);
        const Op& op = ops_[i];
        if (op.kind == OpKind::GraphLaunch && !op.graph_node) thread_launch_[static_cast<size_t>(op.thread)] = i;
        // A graph's nodes are issued after its launch, one step each; an op that another thread
        // joined meanwhile is behind the whole launch: the node takes its place right after the
        // launch's last entry still queued (at the front when none is), waiting for nothing there.
        if (op.graph_node && !q.empty() && !member(q.back().op, i, op)) {
            size_t k = q.size();
            while (k > 0 && !member(q[k - 1].op, i, op)) --k;
            q.insert(k, Entry{i, s, false});
            state_[i] = kQueued;
            return false;
        }
        const bool waits = !q.empty() && q.back().stream != s;
        q.push_back(Entry{i, s, waits});
        state_[i] = kQueued;
        return waits;
    }
    // Op i, of stream s, leaves its queue (the GPU takes it); returns the op that waited for it, or -1.
    // An op behind the front leaves early only where its stream does not order it (independent
    // nodes of a graph DAG); it is taken out when it reaches the front. It stayed there before, so
    // that the next op of another stream waited for it without end (a false deadlock).
    int32_t leave(uint32_t i, int32_t s) {
        if (!enabled_ || s < 0 || state_[i] != kQueued) return -1;  // never joined (a task), or already left
        Fifo<Entry>& q = queue_of(s);
        if (q.front().op != i) {
            state_[i] = kLeftEarly;
            return -1;
        }
        state_[i] = kLeft;
        q.pop_front();
        while (!q.empty() && state_[q.front().op] == kLeftEarly) state_[q.front().op] = kLeft, q.pop_front();
        return !q.empty() && q.front().waits ? static_cast<int32_t>(q.front().op) : -1;
    }

private:
    // The ops in a queue that the GPU has not taken yet, in the order they joined: they leave
    // in that order too (one waits for the op ahead of it on another stream, and for the one
    // ahead of it on its own stream through stream order).
    struct Entry {
        uint32_t op;
        int32_t stream;
        bool waits;  // joined behind an op of another stream that had not left
    };
    Fifo<Entry>& queue_of(int32_t stream) { return queues_[queue_[static_cast<size_t>(stream)]]; }
    // Op `o` is graph node i's launch or one of that launch's nodes before it.
    bool member(uint32_t o, uint32_t i, const Op& node) const { return o >= thread_launch_[static_cast<size_t>(node.thread)] && o < i; }
    const Op* ops_ = nullptr;
    std::vector<uint32_t> thread_launch_;  // per host thread: its latest graph launch that joined a queue
    std::vector<Fifo<Entry>> queues_;  // empty: streams do not share queues
    std::vector<uint32_t> queue_;      // per stream: the index of its queue in queues_
    enum : uint8_t { kNotJoined, kQueued, kLeftEarly, kLeft };
    std::vector<uint8_t> state_;       // per op, when enabled
    bool enabled_ = false;             // queues_ is not empty
};

class LaunchQueues {
public:
    LaunchQueues(const Program& pg, const HwProfile& hw) : depth_(hw.launch_queue_depth), lanes_(pg.streams.size()) {}
    bool enabled() const { return depth_ != 0; }
    bool full(int32_t s) const { return depth_ && lanes_[s].ops.size() >= depth_; }
    bool full_enabled(int32_t s) const { return lanes_[s].ops.size() >= depth_; }  // full(s), when enabled()
    uint32_t oldest(int32_t s) const { return lanes_[s].ops.front(); }
    // Host thread `t` waits for an entry of stream s.
    void wait(int32_t s, uint32_t t) { lanes_[s].waiters.push_back(t); }
    void push(int32_t s, uint32_t op) { lanes_[s].ops.push_back(op); }
    // Op i of stream s is taken by the GPU: if it held the oldest entry, the entry frees and the
    // threads waiting for one are handed to `wake`.
    template <class F>
    void take(int32_t s, uint32_t i, F&& wake) {
        Lane& l = lanes_[s];
        if (l.ops.empty() || l.ops.front() != i) return;
        l.ops.pop_front();
        if (l.waiters.empty()) return;
        for (uint32_t t : l.waiters) wake(t);
        l.waiters.clear();
    }

private:
    struct Lane {                       // one stream's
        Fifo<uint32_t> ops;             // issued ops the GPU has not taken
        std::vector<uint32_t> waiters;  // threads blocked on a full queue
    };
    uint64_t depth_;
    std::vector<Lane> lanes_;  // per stream
};

}  // namespace hetsim
