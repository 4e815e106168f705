// Copy cost model: fixed cost + bytes / bandwidth per direction and memory kind, and the
// host staging of pageable copies.
#pragma once
#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

// A copy the host stages through bounce buffers: pageable host memory, unless the rule
// pageable_staging is off (then pageable copies run as pinned ones).
inline bool is_pageable_copy(const HwProfile& p, const Op& op) {
    return op.kind == OpKind::Memcpy && op.host_mem == MemKind::Pageable && op.dir != CopyDir::D2D && p.rules.pageable_staging;
}

// The rows the DMA moves one by one for a copy of site `s`: a pitched copy's rows, contiguous
// or not (the H200 moves rows of a pitched copy one by one even when both pitches equal the
// width); 1 for a linear copy.
uint32_t dma_rows(const Site& s, uint64_t bytes);

// The pitch of a copy's host side (H2D: its source, D2H: its destination); 0 for a linear copy.
uint64_t host_pitch(const Site& s, CopyDir dir);

// GPU-side duration of a copy, memset or prefetch moving `bytes` (DMA part only). A copy of
// `rows` > 1 rows takes at least the direction's fixed cost + rows x its row cost
// (copy.row_cost.*; H2D rows packed densely in host memory cost more: + copy.row_cost.h2d_dense
// x 128 B / `pitch`, the host pitch); narrow rows are bound by the row rate, wide ones by
// bandwidth.
Time copy_duration(const HwProfile& p, const Op& op, uint32_t rows = 1, uint64_t pitch = 0);

// Host time a pageable pitched copy of `rows` rows spends on them beyond staging its bytes
// (copy.row_cost.pageable_h2d / pageable_d2h per row); 0 for a linear copy. A D2H whose rows of
// `width` < 64 B lie apart in host memory (`pitch`, its host pitch, > width) costs
// copy.row_cost.pageable_d2h_sparse x min(pitch, 128 B) / 128 B more per row: the host writes
// part of a cache line per row (H200, 16 B rows: 7 ns at pitch 16 B, 26 ns at 32 B, 90 ns at 128 B
// and above).
Time pageable_row_time(const HwProfile& p, CopyDir dir, uint32_t rows, uint64_t width = 0, uint64_t pitch = 0);

// The share of a pageable D2H's host work that follows its DMA: draining the last chunk from the
// bounce buffers, and for a pitched copy unpacking that chunk's share of its rows
// (pageable_row_time, in proportion to the chunk's bytes).
Time pageable_unstage_time(const HwProfile& p, const Op& op, uint32_t rows = 1, uint64_t pitch = 0);

// Where a pageable upload's source is: not in the CPU caches, in them (staging_cache), or in
// their nearer level (staging_cache_near).
enum class Warmth : uint8_t { Cold, Warm, Near };

// Host time to stage `bytes` of a pageable copy through the bounce buffers; an H2D copy whose
// source is still in the CPU caches stages at host.pageable_h2d_warm_bandwidth, one in their
// nearer level at host.pageable_h2d_near_bandwidth.
Time staging_time(const HwProfile& p, CopyDir dir, uint64_t bytes, Warmth warmth = Warmth::Cold);

// The chunk of a pageable copy that must be staged before its DMA can start / after it ends.
uint64_t staging_chunk(const HwProfile& p, uint64_t bytes);

// GPU time of a pageable copy's DMA, paced by the host: an H2D trails the staging (done at
// `staged_end`) by one chunk (of a pitched copy: the chunk's share of its rows); a D2H's first
// chunk lands at the copy's own speed and every later one waits for the host to drain (a pitched
// one: and unpack the rows of) the chunk before it.
// `now` is its start.
Time pageable_dma_time(const HwProfile& p, const Op& op, Time now, Time staged_end, uint32_t rows = 1, uint64_t pitch = 0);

// cudaMemPrefetchAsync moving `bytes` (the part not yet where it goes).
Time prefetch_time(const HwProfile& p, uint64_t bytes, bool to_device);

// Slow-down of a copy while the opposite direction's engine is busy (rules 1: duplex, and a
// pinned H2D beside a pageable D2H).
double duplex_slowdown(const HwProfile& p, CopyDir self, bool self_pageable, bool other_pageable);

}  // namespace hetsim
