// The segment-based SM pool against a plain per-SM reference of breadth-first placement.
#include <catch2/catch.hpp>

#include <array>
#include <random>

#include "frontend/profile_loader.hpp"
#include "hw/sm_pool.hpp"

using namespace hetsim;

namespace {

// One array entry per SM; one block per SM per round, lowest SM first.
struct ReferencePool {
    std::vector<std::array<uint32_t, 4>> free;
    uint32_t room(size_t i, const BlockNeed& n) const {
        uint32_t r = std::min(free[i][0] / n.threads, free[i][1]);
        if (n.regs) r = std::min(r, free[i][2] / n.regs);
        if (n.smem) r = std::min(r, free[i][3] / n.smem);
        return r;
    }
    std::vector<uint32_t> place(const BlockNeed& n, uint32_t want) {
        std::vector<uint32_t> got(free.size(), 0);
        std::vector<uint32_t> r(free.size());
        for (size_t i = 0; i < free.size(); ++i) r[i] = room(i, n);
        bool progress = true;
        while (want && progress) {
            progress = false;
            for (size_t i = 0; i < free.size() && want; ++i)
                if (got[i] < r[i]) { ++got[i]; --want; progress = true; }
        }
        for (size_t i = 0; i < free.size(); ++i) {
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
        }
    }
};

}  // namespace

TEST_CASE("sm pool: segments place and release exactly like per-SM breadth-first placement") {
    HwProfile p = load_profile("h200", {});
    std::mt19937 rng(12345);
    for (int trial = 0; trial < 40; ++trial) {
        SmPool pool(p);
        ReferencePool ref{pool.free_per_sm()};
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
                s.smem_per_block = (rng() % 4) * 16384;
                BlockNeed need = BlockNeed::of(s);
                uint32_t want = 1 + rng() % 700;
                Live l{need, {}, {}};
                uint32_t placed = pool.place(need, want, l.runs);
                l.ref = ref.place(need, want);
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
