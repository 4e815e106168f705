// Pageable staging: the host copies a pageable buffer through a pool of pinned bounce buffers
// (host.staging_pool) while the DMA drains them; a source still in the CPU caches (a pageable
// buffer staged again before host.staging_cache bytes of other pageable data) stages at the
// warm speed. Holds the calls waiting for the pool and when each upload's staging ends.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hw/unit.hpp"
#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

class Staging {
public:
    Staging(const Program& pg, const HwProfile& hw) : pg_(pg), hw_(hw) {}
    // Pageable copy `op` stages its buffer now: the host cache's recency list moves.
    void touch(uint32_t op);
    // Host time to stage `bytes` of pageable upload `op`, at the warm or the cold speed.
    Time stage_time(uint32_t op, uint64_t bytes) const;
    // An upload of more bytes than the pool holds cannot finish staging before its DMA starts.
    bool overfills_pool(const Op& op) const { return hw_.staging_pool && op.bytes > hw_.staging_pool; }
    // The call of `op` on `thread`, made at `called`, waits for the DMA to start.
    void hold(uint32_t op, uint32_t thread, Time called) { held_[op] = Held{thread, called}; }
    void set_staged(uint32_t op, Time end) { staged_[op] = end; }
    bool has_staged(uint32_t op) const { return staged_.count(op) != 0; }
    // The DMA of upload `op` starts now: a held call resumes staging as the DMA frees bounce
    // buffers, and returns (through `sink`) when done. Returns when the staging ends.
    Time dma_starts(uint32_t op, UnitSink& sink);

private:
    struct Held {
        uint32_t thread;
        Time called;
    };
    const Program& pg_;
    const HwProfile& hw_;
    std::vector<int32_t> recent_;               // pageable buffers by last staging, most recent last
    std::unordered_set<uint32_t> warm_;         // uploads whose source is in the CPU caches
    std::unordered_map<uint32_t, Time> staged_;  // uploads: when their staging ends
    std::unordered_map<uint32_t, Held> held_;    // uploads whose call waits for the pool
};

}  // namespace hetsim
