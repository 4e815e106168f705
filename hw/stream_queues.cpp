#include "hw/stream_queues.hpp"

namespace hetsim {

HardwareQueues::HardwareQueues(const Program& pg, const HwProfile& hw) {
    const uint32_t n = pg.max_connections && hw.hw_queues ? pg.max_connections : static_cast<uint32_t>(hw.hw_queues);
    if (!n) return;
    queues_.resize(n + 1);
    // Stream s > 0 shares queue (s - 1) % n; the last one is the legacy default stream's own.
    queue_.resize(pg.streams.size());
    for (size_t s = 0; s < queue_.size(); ++s) queue_[s] = s == 0 ? n : static_cast<uint32_t>((s - 1) % n);
}

bool HardwareQueues::join(uint32_t i, int32_t s) {
    Fifo<Entry>& q = queue_of(s);
    const bool waits = !q.empty() && q.back().stream != s;
    q.push_back(Entry{i, s, waits});
    return waits;
}

int32_t HardwareQueues::leave(uint32_t i, int32_t s) {
    if (queues_.empty() || s < 0) return -1;
    Fifo<Entry>& q = queue_of(s);
    if (q.empty() || q.front().op != i) return -1;  // never joined (a task), or already left
    q.pop_front();
    return !q.empty() && q.front().waits ? static_cast<int32_t>(q.front().op) : -1;
}

}  // namespace hetsim
