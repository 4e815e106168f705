#include "models/copy_model.hpp"

#include <algorithm>

namespace hetsim {

// Pinned copies reach `bw` x the efficiency curve at their size (copy.<dir>.efficiency).
static uint64_t effective_bw(uint64_t bw, const Curve& eff, uint64_t bytes) {
    if (eff.points.empty()) return bw;
    return std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(bw) * eff.at(bytes)));
}

uint32_t dma_rows(const Site& s, uint64_t bytes) {
    if (s.rows <= 1) return 1;
    const uint64_t width = bytes / s.rows;
    return s.spitch == width && s.dpitch == width ? 1 : s.rows;
}

Time copy_duration(const HwProfile& p, const Op& op, uint32_t rows) {
    if (op.kind == OpKind::Prefetch)
        return transfer_time(op.bytes, op.to_device ? p.um_prefetch_h2d_bw : p.um_prefetch_d2h_bw);
    if (op.kind == OpKind::Memset) return p.memset_fixed + transfer_time(op.bytes, p.memset_bw);
    Time fixed, moved;
    switch (op.dir) {
        case CopyDir::H2D: fixed = p.h2d_fixed, moved = transfer_time(op.bytes, effective_bw(p.h2d_bw, p.h2d_eff, op.bytes)); break;
        case CopyDir::D2H: fixed = p.d2h_fixed, moved = transfer_time(op.bytes, effective_bw(p.d2h_bw, p.d2h_eff, op.bytes)); break;
        case CopyDir::D2D: fixed = p.d2d_fixed, moved = transfer_time(2 * op.bytes, p.d2d_bw); break;  // read + write
    }
    if (rows > 1) moved = max(moved, Time::ps(p.copy_row_cost.ps() * static_cast<int64_t>(rows)));  // pitched: one row at a time
    return fixed + moved;
}

Time staging_time(const HwProfile& p, CopyDir dir, uint64_t bytes, bool warm) {
    if (dir != CopyDir::H2D) return transfer_time(bytes, p.pageable_d2h_bw);
    return transfer_time(bytes, warm && p.pageable_h2d_warm_bw ? p.pageable_h2d_warm_bw : p.pageable_h2d_bw);
}

uint64_t staging_chunk(const HwProfile& p, uint64_t bytes) { return std::min(bytes, p.staging_chunk); }

Time pageable_dma_time(const HwProfile& p, const Op& op, Time now, Time staged_end, uint32_t rows) {
    const Time alone = copy_duration(p, op, rows);
    if (op.dir == CopyDir::H2D) {
        const Time chunk_dma = transfer_time(staging_chunk(p, op.bytes), p.h2d_bw);
        return max(alone, staged_end + p.h2d_fixed + chunk_dma - now);
    }
    // D2H: the first chunk lands in an empty bounce buffer at the copy's own speed; every later
    // chunk waits for the host to drain a buffer, so the rest is paced by the host.
    const uint64_t chunk = staging_chunk(p, op.bytes);
    return max(alone, p.d2h_fixed + transfer_time(chunk, p.d2h_bw) + staging_time(p, op.dir, op.bytes - chunk));
}

Time prefetch_time(const HwProfile& p, uint64_t bytes, bool to_device) {
    return transfer_time(bytes, to_device ? p.um_prefetch_h2d_bw : p.um_prefetch_d2h_bw);
}

double duplex_slowdown(const HwProfile& p, CopyDir self, bool self_pageable, bool other_pageable) {
    // Measured: a pinned H2D halves beside a pageable D2H; a pinned D2H beside a pageable H2D is not slowed.
    if (other_pageable && !self_pageable) return self == CopyDir::H2D ? p.pageable_contention : 1.0;
    return p.duplex_factor;
}

}  // namespace hetsim
