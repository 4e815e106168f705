// Unified memory as the driver tracks it: each managed buffer in blocks of um.block_size
// (2 MB on the H200), each block on the device or on the host (rule um_migration).
#pragma once
#include <cstdint>
#include <vector>

#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

class ManagedMemory {
public:
    ManagedMemory(const Program& pg, const HwProfile& hw);
    // Moves the blocks covering the first `upto_bytes` of buffer b to the device (or the host);
    // returns the bytes that moved.
    uint64_t migrate(uint32_t b, bool to_device, uint64_t upto_bytes = UINT64_MAX);
    // The bytes of those blocks not yet where a prefetch would send them.
    uint64_t to_move(uint32_t b, bool to_device, uint64_t upto_bytes) const;

private:
    struct Residency {
        std::vector<uint8_t> on_device;  // per block
        uint64_t device_blocks = 0;
    };
    uint64_t block_bytes(uint32_t b, uint64_t k) const;
    uint64_t blocks_upto(uint32_t b, uint64_t upto_bytes) const;

    const Program& pg_;
    const uint64_t block_;
    const bool enabled_;
    std::vector<Residency> buffers_;  // per program buffer; empty for the unmanaged ones
};

}  // namespace hetsim
