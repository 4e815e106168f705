// Unified memory as the driver tracks it: each managed buffer in blocks of um.block_size
// (2 MB on the H200), each block on the device or on the host (rule um_migration).
#pragma once
#include <cstdint>
#include <map>
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
    // A buffer's blocks as runs of blocks on one side: `runs` maps the first block of each run
    // to 1 (on the device) or 0 (on the host), a run ending where the next begins. Every change
    // moves a prefix of the blocks, so a buffer holds about as many runs as ops touched it, not
    // one entry per block (16 TiB in 4 KiB blocks took 4 GiB and seconds per op before).
    struct Residency {
        uint64_t blocks = 0;
        std::map<uint64_t, uint8_t> runs;
        uint64_t device_blocks = 0;
    };
    // The bytes of blocks [from, to) of buffer b (the last block may be partial).
    uint64_t bytes_between(uint32_t b, uint64_t from, uint64_t to) const;
    uint64_t blocks_upto(uint32_t b, uint64_t upto_bytes) const;

    const Program& pg_;
    const uint64_t block_;
    const bool enabled_;
    std::vector<Residency> buffers_;  // per program buffer; no blocks for the unmanaged ones
};

}  // namespace hetsim
