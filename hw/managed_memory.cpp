#include "hw/managed_memory.hpp"

#include <algorithm>
#include <iterator>

namespace hetsim {

ManagedMemory::ManagedMemory(const Program& pg, const HwProfile& hw)
    : pg_(pg), block_(hw.um_block), enabled_(hw.rules.um_migration) {
    buffers_.resize(pg.buffers.size());
    for (size_t b = 0; b < pg.buffers.size(); ++b) {
        const Buffer& buf = pg.buffers[b];
        if (buf.kind != MemKind::Managed) continue;
        Residency& m = buffers_[b];
        m.blocks = buf.bytes / block_ + (buf.bytes % block_ != 0);
        if (m.blocks) m.runs.emplace(0, buf.managed_on_device ? 1 : 0);
        m.device_blocks = buf.managed_on_device ? m.blocks : 0;
    }
}

uint64_t ManagedMemory::bytes_between(uint32_t b, uint64_t from, uint64_t to) const {
    const uint64_t bytes = pg_.buffers[b].bytes, n = buffers_[b].blocks;
    const uint64_t end = to >= n ? bytes : to * block_;  // block n - 1 ends at the buffer's end
    return end - from * block_;
}

uint64_t ManagedMemory::blocks_upto(uint32_t b, uint64_t upto_bytes) const {
    const uint64_t bytes = std::min(upto_bytes, pg_.buffers[b].bytes);
    return std::min<uint64_t>(buffers_[b].blocks, bytes / block_ + (bytes % block_ != 0));
}

uint64_t ManagedMemory::migrate(uint32_t b, bool to_device, uint64_t upto_bytes) {
    Residency& m = buffers_[b];
    if (m.blocks == 0 || !enabled_) return 0;
    if (to_device ? m.device_blocks == m.blocks : m.device_blocks == 0) return 0;  // all there
    const uint64_t last = blocks_upto(b, upto_bytes);
    if (last == 0) return 0;
    const uint8_t want = to_device ? 1 : 0;
    // Split the run that holds block `last`, so that the runs before it cover [0, last) exactly.
    if (last < m.blocks) {
        auto at = m.runs.upper_bound(last);
        const uint8_t side = std::prev(at)->second;
        m.runs.emplace_hint(at, last, side);  // no-op when a run starts there
    }
    uint64_t moved = 0;
    auto stop = last < m.blocks ? m.runs.find(last) : m.runs.end();
    for (auto it = m.runs.begin(); it != stop; ++it) {
        if (it->second == want) continue;
        const uint64_t from = it->first, to = std::next(it) == m.runs.end() ? m.blocks : std::next(it)->first;
        moved += bytes_between(b, from, to);
        if (to_device) m.device_blocks += to - from;
        else m.device_blocks -= to - from;
    }
    // [0, last) is one run on `want`'s side, merged with the run after it when that is too.
    m.runs.erase(m.runs.begin(), stop);
    if (stop != m.runs.end() && stop->second == want) m.runs.erase(stop);
    m.runs.emplace(0, want);
    return moved;
}

uint64_t ManagedMemory::to_move(uint32_t b, bool to_device, uint64_t upto_bytes) const {
    const Residency& m = buffers_[b];
    if (m.blocks == 0 || !enabled_) return 0;
    const uint64_t last = blocks_upto(b, upto_bytes);
    const uint8_t want = to_device ? 1 : 0;
    uint64_t bytes = 0;
    for (auto it = m.runs.begin(); it != m.runs.end() && it->first < last; ++it) {
        if (it->second == want) continue;
        const uint64_t to = std::next(it) == m.runs.end() ? m.blocks : std::min(std::next(it)->first, last);
        bytes += bytes_between(b, it->first, std::min(to, last));
    }
    return bytes;
}

}  // namespace hetsim
