#include "hw/stream_queues.hpp"

namespace hetsim {

HardwareQueues::HardwareQueues(const Program& pg, const HwProfile& hw) : pg_(pg) {
    const uint32_t n = pg.max_connections && hw.hw_queues ? pg.max_connections : static_cast<uint32_t>(hw.hw_queues);
    if (n) queues_.resize(n + 1);
}

bool HardwareQueues::join(uint32_t i, int32_t s) {
    Fifo<Entry>& q = queue_of(s);
    const bool waits = !q.empty() && pg_.ops[q.back().op].stream != s;
    q.push_back(Entry{i, waits});
    return waits;
}

int32_t HardwareQueues::leave(uint32_t i) {
    if (queues_.empty()) return -1;
    Fifo<Entry>& q = queue_of(pg_.ops[i].stream);
    if (q.empty() || q.front().op != i) return -1;  // never joined (a task), or already left
    q.pop_front();
    return !q.empty() && q.front().waits ? static_cast<int32_t>(q.front().op) : -1;
}

}  // namespace hetsim
