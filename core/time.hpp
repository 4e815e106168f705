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

    constexpr Time operator+(Time o) const { return Time(v_ + o.v_); }
    constexpr Time operator-(Time o) const { return Time(v_ - o.v_); }
    constexpr Time& operator+=(Time o) { v_ += o.v_; return *this; }
    constexpr Time& operator-=(Time o) { v_ -= o.v_; return *this; }
    constexpr auto operator<=>(const Time&) const = default;

private:
    constexpr explicit Time(int64_t v) : v_(v) {}
    int64_t v_ = 0;
};

constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Time min(Time a, Time b) { return a < b ? a : b; }

// Time to move `bytes` at `bytes_per_s`, rounded up to the next picosecond.
inline Time transfer_time(uint64_t bytes, uint64_t bytes_per_s) {
    if (bytes == 0 || bytes_per_s == 0) return Time{};
    u128 num = static_cast<u128>(bytes) * 1'000'000'000'000ULL;
    u128 q = (num + bytes_per_s - 1) / bytes_per_s;
    return Time::ps(static_cast<int64_t>(q));
}

}  // namespace hetsim
