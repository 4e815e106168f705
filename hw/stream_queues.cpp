#include "hw/stream_queues.hpp"

namespace hetsim {

HardwareQueues::HardwareQueues(const Program& pg, const HwProfile& hw) : pg_(pg) {
    queues_ = pg.max_connections && hw.hw_queues ? pg.max_connections : static_cast<uint32_t>(hw.hw_queues);
    if (!queues_) return;
    tail_.assign(queues_ + 1, -1);  // the legacy default stream has a queue of its own
    next_.assign(pg.ops.size(), -1);
    left_.assign(pg.ops.size(), 0);
}

bool HardwareQueues::join(uint32_t i, int32_t s) {
    const uint32_t q = s == 0 ? queues_ : static_cast<uint32_t>(s - 1) % queues_;
    const int32_t tail = tail_[q];
    tail_[q] = static_cast<int32_t>(i);
    if (tail >= 0 && !left_[tail] && pg_.ops[tail].stream != s) {
        next_[tail] = static_cast<int32_t>(i);
        return true;
    }
    return false;
}

int32_t HardwareQueues::leave(uint32_t i) {
    if (!queues_ || left_[i]) return -1;
    left_[i] = 1;
    return next_[i];
}

}  // namespace hetsim
