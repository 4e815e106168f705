// Time::ps_ceil, the integer form of Time::ps_of(std::ceil(v)) that the copy engines' rescale
// uses: the same value for every double, the range ends and NaN included.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "core/time.hpp"

using namespace hetsim;

TEST_CASE("time: ps_ceil(v) is ps_of(ceil(v)) for every double") {
    auto same = [](double v) { return Time::ps_ceil(v) == Time::ps_of(std::ceil(v)); };
    const double special[] = {0.0, -0.0, 0.5, -0.5, 1.0, 1.000001, -1.000001, 2.5, 4503599627370495.5, 4503599627370496.0,
                              9007199254740993.0, 9.2e18, 9.2e18 - 1024, -9.2e18, -9.2e18 + 1024, 9.3e18, -9.3e18, 1e300, -1e300,
                              std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::denorm_min()};
    for (double v : special) CHECK(same(v));
    std::mt19937_64 rng(11);
    for (int k = 0; k < 200000; ++k) {
        const uint64_t bits = rng();
        double v;
        std::memcpy(&v, &bits, sizeof v);  // any double, every exponent
        REQUIRE(same(v));
        const double scaled = static_cast<double>(rng() >> (rng() % 64)) * (1.0 + static_cast<double>(rng() % 1000) / 997.0);
        REQUIRE(same(scaled));  // copy-engine-like values: a time in ps times a slowdown factor
        REQUIRE(same(-scaled));
    }
}
