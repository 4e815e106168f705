#include "hw/stream_queues.hpp"

namespace hetsim {

HardwareQueues::HardwareQueues(const Program& pg, const HwProfile& hw) {
    const uint32_t n = pg.max_connections && hw.hw_queues ? pg.max_connections : static_cast<uint32_t>(hw.hw_queues);
    // Streams that each have a queue of their own (no more streams besides the legacy one than
    // queues) never wait behind another stream's op: no queue is kept, as with none.
    if (!n || pg.streams.size() - 1 <= n) return;
    queues_.resize(n + 1);
    enabled_ = true;
    // Stream s > 0 shares queue (s - 1) % n; the last one is the legacy default stream's own.
    queue_.resize(pg.streams.size());
    state_.assign(pg.ops.size(), kNotJoined);
    ops_ = pg.ops.data();
    thread_launch_.assign(pg.threads.size(), 0);
    for (size_t s = 0; s < queue_.size(); ++s) queue_[s] = s == 0 ? n : static_cast<uint32_t>((s - 1) % n);
}

}  // namespace hetsim
