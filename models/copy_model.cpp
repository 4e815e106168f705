#include "models/copy_model.hpp"

#include <algorithm>

namespace hetsim {

// Pinned copies reach `bw` x the efficiency curve at their size (copy.<dir>.efficiency).
static uint64_t effective_bw(uint64_t bw, const Curve& eff, uint64_t bytes) {
    if (eff.points.empty()) return bw;
    return std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(bw) * eff.at(bytes)));
}

Time copy_duration(const HwProfile& p, const Op& op) {
    if (op.kind == OpKind::Prefetch)
        return transfer_time(op.bytes, op.to_device ? p.um_prefetch_h2d_bw : p.um_prefetch_d2h_bw);
    if (op.kind == OpKind::Memset) return p.memset_fixed + transfer_time(op.bytes, p.memset_bw);
    switch (op.dir) {
        case CopyDir::H2D: return p.h2d_fixed + transfer_time(op.bytes, effective_bw(p.h2d_bw, p.h2d_eff, op.bytes));
        case CopyDir::D2H: return p.d2h_fixed + transfer_time(op.bytes, effective_bw(p.d2h_bw, p.d2h_eff, op.bytes));
        case CopyDir::D2D: return p.d2d_fixed + transfer_time(2 * op.bytes, p.d2d_bw);  // read + write
    }
    return Time{};
}

Time staging_time(const HwProfile& p, CopyDir dir, uint64_t bytes) {
    return transfer_time(bytes, dir == CopyDir::H2D ? p.pageable_h2d_bw : p.pageable_d2h_bw);
}

uint64_t staging_chunk(const HwProfile& p, uint64_t bytes) { return std::min(bytes, p.staging_chunk); }

}  // namespace hetsim
