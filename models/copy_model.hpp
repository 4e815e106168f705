// Copy cost model: fixed cost + bytes / bandwidth per direction and memory kind, and the
// host staging of pageable copies.
#pragma once
#include "models/profile.hpp"
#include "sim/program.hpp"

namespace hetsim {

// GPU-side duration of a copy, memset or prefetch moving `bytes` (DMA part only).
Time copy_duration(const HwProfile& p, const Op& op);

// Host time to stage `bytes` of a pageable copy through the bounce buffers.
Time staging_time(const HwProfile& p, CopyDir dir, uint64_t bytes);

// The chunk of a pageable copy that must be staged before its DMA can start / after it ends.
uint64_t staging_chunk(const HwProfile& p, uint64_t bytes);

}  // namespace hetsim
