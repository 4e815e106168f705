#include "hw/managed_memory.hpp"

#include <algorithm>

namespace hetsim {

ManagedMemory::ManagedMemory(const Program& pg, const HwProfile& hw)
    : pg_(pg), block_(hw.um_block), enabled_(hw.rules.um_migration) {
    buffers_.resize(pg.buffers.size());
    for (size_t b = 0; b < pg.buffers.size(); ++b) {
        const Buffer& buf = pg.buffers[b];
        if (buf.kind != MemKind::Managed) continue;
        uint64_t blocks = (buf.bytes + block_ - 1) / block_;
        buffers_[b].on_device.assign(blocks, buf.managed_on_device ? 1 : 0);
        buffers_[b].device_blocks = buf.managed_on_device ? blocks : 0;
    }
}

uint64_t ManagedMemory::block_bytes(uint32_t b, uint64_t k) const {
    return std::min(block_, pg_.buffers[b].bytes - k * block_);
}

uint64_t ManagedMemory::blocks_upto(uint32_t b, uint64_t upto_bytes) const {
    uint64_t bytes = std::min(upto_bytes, pg_.buffers[b].bytes);
    return std::min<uint64_t>(buffers_[b].on_device.size(), (bytes + block_ - 1) / block_);
}

uint64_t ManagedMemory::migrate(uint32_t b, bool to_device, uint64_t upto_bytes) {
    Residency& m = buffers_[b];
    if (m.on_device.empty() || !enabled_) return 0;
    if (to_device ? m.device_blocks == m.on_device.size() : m.device_blocks == 0) return 0;  // all there
    const uint64_t last = blocks_upto(b, upto_bytes);
    uint64_t moved = 0;
    for (uint64_t k = 0; k < last; ++k) {
        if (m.on_device[k] == (to_device ? 1 : 0)) continue;
        m.on_device[k] = to_device ? 1 : 0;
        moved += block_bytes(b, k);
        m.device_blocks += to_device ? 1 : static_cast<uint64_t>(-1);
    }
    return moved;
}

uint64_t ManagedMemory::to_move(uint32_t b, bool to_device, uint64_t upto_bytes) const {
    const Residency& m = buffers_[b];
    if (m.on_device.empty() || !enabled_) return 0;
    const uint64_t last = blocks_upto(b, upto_bytes);
    uint64_t bytes = 0;
    for (uint64_t k = 0; k < last; ++k)
        if (m.on_device[k] != (to_device ? 1 : 0)) bytes += block_bytes(b, k);
    return bytes;
}

}  // namespace hetsim
