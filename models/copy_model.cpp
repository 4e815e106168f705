#include "models/copy_model.hpp"

#include <algorithm>

namespace hetsim {

Time copy_duration(const HwProfile& p, const Op& op) {
    if (op.kind == OpKind::Prefetch)
        return transfer_time(op.bytes, op.to_device ? p.um_prefetch_h2d_bw : p.um_prefetch_d2h_bw);
    if (op.kind == OpKind::Memset) return p.memset_fixed + transfer_time(op.bytes, p.memset_bw);
    switch (op.dir) {
        case CopyDir::H2D: return p.h2d_fixed + transfer_time(op.bytes, p.h2d_bw);
        case CopyDir::D2H: return p.d2h_fixed + transfer_time(op.bytes, p.d2h_bw);
        case CopyDir::D2D: return p.d2d_fixed + transfer_time(2 * op.bytes, p.d2d_bw);  // read + write
    }
    return Time{};
}

Time staging_time(const HwProfile& p, CopyDir dir, uint64_t bytes) {
    return transfer_time(bytes, dir == CopyDir::H2D ? p.pageable_h2d_bw : p.pageable_d2h_bw);
}

uint64_t staging_chunk(const HwProfile& p, uint64_t bytes) { return std::min(bytes, p.staging_chunk); }

}  // namespace hetsim
