// Simulated time: a strong type over int64 picoseconds (design.md practice 1).
// Never a double: the same input must give byte-identical output.
#pragma once
#include <compare>
#include <cstdint>
#include <limits>

namespace hetsim {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

class Time {
public:
    constexpr Time() = default;
    static constexpr Time ps(int64_t v) { return Time(v); }
    static constexpr Time ns(int64_t v) { return Time(v * 1000); }
    static constexpr Time us(int64_t v) { return Time(v * 1000'000); }
    static constexpr Time ms(int64_t v) { return Time(v * 1000'000'000); }
    static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

    constexpr int64_t ps() const { return v_; }
    // Nanoseconds as a double for reports only; never fed back into the simulation.
    constexpr double ns_f() const { return static_cast<double>(v_) / 1000.0; }

    // Saturating: a sum past the int64 range is Time::max() (or its negative), never a wrap; the
    // engine refuses a time of Time::max() as an overflow (sim/engine.cpp), naming the op.
    constexpr Time operator+(Time o) const { return Time(sat_add(v_, o.v_)); }
    constexpr Time operator-(Time o) const { return Time(sat_sub(v_, o.v_)); }
    constexpr Time& operator+=(Time o) { v_ = sat_add(v_, o.v_); return *this; }
    constexpr Time& operator-=(Time o) { v_ = sat_sub(v_, o.v_); return *this; }
    // Picoseconds from a double, saturating (a cost model's product past the range, or NaN, is
    // Time::max(); the cast alone would be undefined).
    static constexpr Time ps_of(double v) {
        if (!(v < 9.2e18)) return max();
        if (v <= -9.2e18) return Time(std::numeric_limits<int64_t>::min());
        return Time(static_cast<int64_t>(v));
    }
    // ps_of(std::ceil(v)), the same value for every v, in integer steps: without SSE4.1's
    // roundsd (the build's baseline x86-64 lacks it) std::ceil inlines as a dozen instructions.
    // Past 2^52 every double is a whole number, so truncating and adding one when the fraction
    // was positive is exact over the whole range ps_of accepts.
    static constexpr Time ps_ceil(double v) {
        if (!(v < 9.2e18)) return max();
        if (v <= -9.2e18) return Time(std::numeric_limits<int64_t>::min());
        const int64_t t = static_cast<int64_t>(v);  // toward zero
        return Time(t + (static_cast<double>(t) < v ? 1 : 0));
    }
    // v * n, saturating the same way.
    static constexpr Time ps_times(int64_t v, int64_t n) {
        int64_t r = 0;
        if (__builtin_mul_overflow(v, n, &r)) r = (v < 0) != (n < 0) ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
        return Time(r);
    }
    constexpr auto operator<=>(const Time&) const = default;

private:
    constexpr explicit Time(int64_t v) : v_(v) {}
    static constexpr int64_t sat_add(int64_t a, int64_t b) {
        int64_t r = 0;
        if (__builtin_add_overflow(a, b, &r)) r = b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
        return r;
    }
    static constexpr int64_t sat_sub(int64_t a, int64_t b) {
        int64_t r = 0;
        if (__builtin_sub_overflow(a, b, &r)) r = b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
        return r;
    }
    int64_t v_ = 0;
};

constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Time min(Time a, Time b) { return a < b ? a : b; }

// Time to move `bytes` at `bytes_per_s`, rounded up to the next picosecond.
inline Time transfer_time(uint64_t bytes, uint64_t bytes_per_s) {
    if (bytes == 0 || bytes_per_s == 0) return Time{};
    u128 num = static_cast<u128>(bytes) * 1'000'000'000'000ULL;
    u128 q = (num + bytes_per_s - 1) / bytes_per_s;
    if (q > static_cast<u128>(std::numeric_limits<int64_t>::max())) return Time::max();  // saturates, as Time's sums do
    return Time::ps(static_cast<int64_t>(q));
}

}  // namespace hetsim
