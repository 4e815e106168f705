#include "models/copy_model.hpp"

#include <algorithm>
#include <cmath>

namespace hetsim {

// Pinned copies reach `bw` x the efficiency curve at their size (copy.<dir>.efficiency).
static uint64_t effective_bw(uint64_t bw, const Curve& eff, uint64_t bytes) {
    if (eff.points.empty()) return bw;
    return std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(bw) * eff.at(bytes)));
}

uint32_t dma_rows(const Site& s, uint64_t) { return s.rows <= 1 ? 1 : s.rows; }

uint64_t host_pitch(const Site& s, CopyDir dir) {
    if (s.rows <= 1) return 0;
    return dir == CopyDir::H2D ? s.spitch : dir == CopyDir::D2H ? s.dpitch : 0;
}

// The DMA time of `rows` rows: measured on the H200 (validation/microbench memcpy2d), D2H rows
// take about 1.3 ns whatever their pitch, H2D rows 1.5 ns 32 B apart and 3.5 ns 4 B apart in host
// memory: row_cost + h2d_dense x 128 B / pitch per row.
static Time rows_time(const HwProfile& p, CopyDir dir, uint32_t rows, uint64_t pitch) {
    const int64_t r = static_cast<int64_t>(rows);
    switch (dir) {
        case CopyDir::H2D: {
            Time t = Time::ps_times(p.row_cost_h2d.ps(), r);
            if (pitch > 0 && p.row_cost_h2d_dense.ps() > 0)  // ceil(dense x rows x 128 / pitch)
                t += Time::ps(static_cast<int64_t>((static_cast<u128>(p.row_cost_h2d_dense.ps()) * static_cast<u128>(rows) * 128 +
                                                    pitch - 1) / pitch));
            return t;
        }
        case CopyDir::D2H: return Time::ps_times(p.row_cost_d2h.ps(), r);
        case CopyDir::D2D: return Time::ps_times(p.row_cost_d2d.ps(), r);
    }
    return Time{};
}

// (a^k + b^k)^(1/k), computed as m (1 + (n / m)^k)^(1/k) with m the larger: near the row bound
// a pitched copy takes longer than either bound (H200: 64 B rows of 1 MiB, 26 us D2H against 23 us
// of bandwidth and 21 us of rows).
static Time blend(Time a, Time b, double k) {
    const Time hi = max(a, b), lo = a < b ? a : b;
    if (lo.ps() <= 0 || k >= 1000) return hi;
    const double r = static_cast<double>(lo.ps()) / static_cast<double>(hi.ps());
    return Time::ps_of(std::round(static_cast<double>(hi.ps()) * std::pow(1.0 + std::pow(r, k), 1.0 / k)));
}

Time pageable_row_time(const HwProfile& p, CopyDir dir, uint32_t rows, uint64_t width, uint64_t pitch) {
    if (rows <= 1 || dir == CopyDir::D2D) return Time{};
    const int64_t r = static_cast<int64_t>(rows);
    if (dir == CopyDir::H2D) return Time::ps_times(p.row_cost_pageable_h2d.ps(), r);
    Time t = Time::ps_times(p.row_cost_pageable_d2h.ps(), r);
    // Rows narrower than a cache line, apart in host memory: the host writes part of a line per
    // row, up to one 128 B pair of lines per row (16 B rows at pitch 32 B: a quarter of it).
    if (p.row_cost_pageable_d2h_sparse.ps() > 0 && width > 0 && width < 64 && pitch > width) {
        const uint64_t span = std::min<uint64_t>(pitch, 128);  // ceil(sparse x rows x span / 128)
        t += Time::ps(static_cast<int64_t>(
            (static_cast<u128>(p.row_cost_pageable_d2h_sparse.ps()) * static_cast<u128>(rows) * span + 127) / 128));
    }
    return t;
}

static uint64_t row_width(const Op& op, uint32_t rows) { return rows > 1 ? op.bytes / rows : op.bytes; }

Time pageable_unstage_time(const HwProfile& p, const Op& op, uint32_t rows, uint64_t pitch) {
    const uint64_t chunk = staging_chunk(p, op.bytes);
    Time t = staging_time(p, op.dir, chunk);
    const Time r = pageable_row_time(p, op.dir, rows, row_width(op, rows), pitch);
    if (r.ps() > 0 && op.bytes > 0) t += Time::ps(static_cast<int64_t>(static_cast<u128>(r.ps()) * chunk / op.bytes));
    return t;
}

Time copy_duration(const HwProfile& p, const Op& op, uint32_t rows, uint64_t pitch) {
    if (op.kind == OpKind::Prefetch)
        return transfer_time(op.bytes, op.to_device ? p.um_prefetch_h2d_bw : p.um_prefetch_d2h_bw);
    if (op.kind == OpKind::Memset) return p.memset_fixed + transfer_time(op.bytes, p.memset_bw);
    Time fixed, moved;
    switch (op.dir) {
        case CopyDir::H2D: fixed = p.h2d_fixed, moved = transfer_time(op.bytes, effective_bw(p.h2d_bw, p.h2d_eff, op.bytes)); break;
        case CopyDir::D2H: fixed = p.d2h_fixed, moved = transfer_time(op.bytes, effective_bw(p.d2h_bw, p.d2h_eff, op.bytes)); break;
        case CopyDir::D2D: fixed = p.d2d_fixed, moved = transfer_time(2 * op.bytes, p.d2d_bw); break;  // read + write
    }
    if (rows > 1) moved = blend(moved, rows_time(p, op.dir, rows, pitch), p.row_cost_blend);  // pitched: one row at a time
    return fixed + moved;
}

Time staging_time(const HwProfile& p, CopyDir dir, uint64_t bytes, Warmth warmth) {
    if (dir != CopyDir::H2D) return transfer_time(bytes, p.pageable_d2h_bw);
    if (warmth == Warmth::Near && p.pageable_h2d_near_bw) return transfer_time(bytes, p.pageable_h2d_near_bw);
    return transfer_time(bytes, warmth != Warmth::Cold && p.pageable_h2d_warm_bw ? p.pageable_h2d_warm_bw : p.pageable_h2d_bw);
}

uint64_t staging_chunk(const HwProfile& p, uint64_t bytes) { return std::min(bytes, p.staging_chunk); }

Time pageable_dma_time(const HwProfile& p, const Op& op, Time now, Time staged_end, uint32_t rows, uint64_t pitch) {
    const Time alone = copy_duration(p, op, rows, pitch);
    if (op.dir == CopyDir::H2D) {
        const uint64_t chunk = staging_chunk(p, op.bytes);
        Time chunk_dma = transfer_time(chunk, p.h2d_bw);
        if (rows > 1)  // a pitched copy: the last chunk's share of the pitched DMA
            chunk_dma = max(chunk_dma, Time::ps(static_cast<int64_t>(static_cast<u128>((alone - p.h2d_fixed).ps()) * chunk / op.bytes)));
        return max(alone, staged_end + p.h2d_fixed + chunk_dma - now);
    }
    // D2H: the first chunk lands in an empty bounce buffer at the copy's own speed; every later
    // chunk waits for the host to drain a buffer, so the rest is paced by the host (and, pitched,
    // by the host's per-row cost of unpacking rows).
    const uint64_t chunk = staging_chunk(p, op.bytes);
    Time rest = staging_time(p, op.dir, op.bytes - chunk);
    const Time r = pageable_row_time(p, op.dir, rows, row_width(op, rows), pitch);
    if (r.ps() > 0 && op.bytes > 0)  // the rows of every chunk but the last (unpacked after the DMA ends)
        rest += Time::ps(static_cast<int64_t>(static_cast<u128>(r.ps()) * (op.bytes - chunk) / op.bytes));
    return max(alone, p.d2h_fixed + transfer_time(chunk, p.d2h_bw) + rest);
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
