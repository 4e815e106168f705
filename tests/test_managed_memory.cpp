// ManagedMemory keeps each managed buffer's residency as runs of blocks. It must count exactly
// what one flag per block counts (the model of docs/model.md rule 8), and stay small and fast
// where there are billions of blocks (16 TiB in 4 KiB blocks: 4 GiB and 20 s before).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "core/program.hpp"
#include "hw/managed_memory.hpp"
#include "models/profile.hpp"

using namespace hetsim;

namespace {
// One flag per block, as the model states the rule.
struct Reference {
    uint64_t bytes, block;
    std::vector<uint8_t> on_device;
    Reference(uint64_t b, uint64_t blk, bool dev) : bytes(b), block(blk), on_device((b + blk - 1) / blk, dev ? 1 : 0) {}
    uint64_t last(uint64_t upto) const {
        const uint64_t n = std::min(upto, bytes);
        return std::min<uint64_t>(on_device.size(), (n + block - 1) / block);
    }
    uint64_t block_bytes(uint64_t k) const { return std::min(block, bytes - k * block); }
    uint64_t to_move(bool dev, uint64_t upto) const {
        uint64_t s = 0;
        for (uint64_t k = 0; k < last(upto); ++k)
            if (on_device[k] != (dev ? 1 : 0)) s += block_bytes(k);
        return s;
    }
    uint64_t migrate(bool dev, uint64_t upto) {
        uint64_t s = 0;
        for (uint64_t k = 0; k < last(upto); ++k)
            if (on_device[k] != (dev ? 1 : 0)) on_device[k] = dev ? 1 : 0, s += block_bytes(k);
        return s;
    }
};
}  // namespace

TEST_CASE("managed residency as runs counts what one flag per block counts", "[managed]") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 200; ++round) {
        const uint64_t block = 4096;
        const uint64_t bytes = 1 + rng() % (block * 64);
        const bool on_dev = rng() % 2;
        Program pg;
        pg.buffers.push_back({"d", MemKind::Device, 1024, false});
        pg.buffers.push_back({"u", MemKind::Managed, bytes, on_dev});
        HwProfile hw;
        hw.um_block = block;
        ManagedMemory um(pg, hw);
        Reference ref(bytes, block, on_dev);
        for (int step = 0; step < 60; ++step) {
            const bool dev = rng() % 2;
            uint64_t upto = rng() % 8 == 0 ? UINT64_MAX : rng() % (bytes + 2 * block);
            INFO("round " << round << " step " << step << " bytes " << bytes << " upto " << upto << " to device " << dev);
            REQUIRE(um.to_move(1, dev, upto) == ref.to_move(dev, upto));
            if (rng() % 3 == 0) upto = UINT64_MAX;
            REQUIRE(um.migrate(1, dev, upto) == ref.migrate(dev, upto));
            REQUIRE(um.migrate(0, dev, upto) == 0);  // not managed
        }
    }
}

TEST_CASE("a 16 TiB managed buffer in 4 KiB blocks takes neither memory nor time per block", "[managed]") {
    Program pg;
    pg.buffers.push_back({"u", MemKind::Managed, uint64_t{16} << 40, false});
    HwProfile hw;
    hw.um_block = 4096;
    const auto t0 = std::chrono::steady_clock::now();
    ManagedMemory um(pg, hw);
    for (int k = 0; k < 1000; ++k) {
        REQUIRE(um.migrate(0, true) == uint64_t{16} << 40);
        REQUIRE(um.to_move(0, false, uint64_t{1} << 40) == uint64_t{1} << 40);
        REQUIRE(um.migrate(0, false, (uint64_t{1} << 40) + 1) == (uint64_t{1} << 40) + 4096);
        REQUIRE(um.migrate(0, false) == (uint64_t{15} << 40) - 4096);
    }
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
}
