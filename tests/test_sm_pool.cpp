// The segment-based SM pool against a plain per-SM reference of breadth-first placement.
#include <catch2/catch.hpp>

#include <array>
#include <random>

#include "frontend/profile_loader.hpp"
#include "hw/sm_pool.hpp"

using namespace hetsim;

namespace {

// One array entry per SM {threads, blocks, registers, shared memory free; carveout}. Breadth-first:
// one block per SM per round, lowest SM first; depth-first: each SM, lowest first, as many as it
// holds. An idle SM takes the carveout of the first kernel placed on it (with carveouts on).
struct ReferencePool {
    std::vector<std::array<uint32_t, 5>> free;
    bool carveouts;
    std::array<uint32_t, 5> full = free.at(0);
    uint32_t room(const std::array<uint32_t, 5>& f, const BlockNeed& n) const {
        uint32_t r = std::min(f[0] / n.threads, f[1]);
        if (n.regs) r = std::min(r, f[2] / n.regs);
        if (n.smem) {
            uint32_t used = full[3] - f[3];
            r = std::min(r, f[4] > used ? (f[4] - used) / n.smem : 0);
        }
        return r;
    }
    std::vector<uint32_t> place(const BlockNeed& n, uint32_t want, bool deep) {
        std::vector<uint32_t> got(free.size(), 0);
        std::vector<uint32_t> r(free.size());
        for (size_t i = 0; i < free.size(); ++i) r[i] = room(free[i], n);
        if (deep) {
            for (size_t i = 0; i < free.size() && want; ++i) {
                got[i] = std::min(r[i], want);
                want -= got[i];
            }
        }
        bool progress = true;
        while (want && progress) {
            progress = false;
            for (size_t i = 0; i < free.size() && want; ++i)
                if (got[i] < r[i]) { ++got[i]; --want; progress = true; }
        }
        for (size_t i = 0; i < free.size(); ++i) {
            if (!got[i]) continue;
            if (carveouts && free[i][1] == full[1]) free[i][4] = n.smem ? room(full, n) * n.smem : 0;
            free[i][0] -= got[i] * n.threads;
            free[i][1] -= got[i];
            free[i][2] -= got[i] * n.regs;
            free[i][3] -= got[i] * n.smem;
        }
        return got;
    }
    void release(const BlockNeed& n, const std::vector<uint32_t>& got) {
        for (size_t i = 0; i < free.size(); ++i) {
            free[i][0] += got[i] * n.threads;
            free[i][1] += got[i];
            free[i][2] += got[i] * n.regs;
            free[i][3] += got[i] * n.smem;
            if (free[i][1] == full[1]) free[i][4] = full[4];
        }
    }
};

}  // namespace

TEST_CASE("sm pool: segments place and release exactly like per-SM breadth-first and depth-first placement, "
          "with and without shared-memory carveouts") {
    HwProfile p = load_profile("h200", {});
    std::mt19937 rng(12345);
    for (int trial = 0; trial < 80; ++trial) {
        p.rules.smem_carveout = trial % 2 == 0;
        SmPool pool(p);
        ReferencePool ref{pool.free_per_sm(), p.rules.smem_carveout};
        struct Live { BlockNeed need; std::vector<SmRun> runs; std::vector<uint32_t> ref; };
        std::vector<Live> live;
        for (int step = 0; step < 200; ++step) {
            if (!live.empty() && (rng() % 3 == 0 || live.size() > 12)) {
                size_t k = rng() % live.size();
                pool.release(live[k].need, live[k].runs);
                ref.release(live[k].need, live[k].ref);
                live.erase(live.begin() + static_cast<long>(k));
            } else {
                static const uint32_t blocks[] = {32, 64, 128, 256, 512, 1024};
                KernelShape s;
                s.block = blocks[rng() % 6];
                s.regs_per_thread = 16 + rng() % 64;
                s.smem_per_block = (rng() % 8) * 16384;
                BlockNeed need = BlockNeed::of(s);
                uint32_t want = 1 + rng() % 700;
                const bool deep = rng() % 2 == 0;
                Live l{need, {}, {}};
                uint32_t placed = deep ? pool.place_deep(need, want, l.runs) : pool.place(need, want, l.runs);
                l.ref = ref.place(need, want, deep);
                uint32_t ref_placed = 0;
                for (uint32_t g : l.ref) ref_placed += g;
                REQUIRE(placed == ref_placed);
                if (placed) live.push_back(std::move(l));
            }
            REQUIRE(pool.free_per_sm() == ref.free);
        }
        CHECK(pool.segments() >= 1);
    }
}
