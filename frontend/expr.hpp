// Values with units and the small expression language of scenario files:
//   literals with units (64MiB, 1.5ms, 16GB/s, 0.75, 1e12), names (loop variables, params),
//   + - * / % (integer arithmetic in base units: ps, bytes, bytes/s), comparisons, && || !, ( ).
// Dimensions are checked: a time plus a size is an error, a size divided by a count is a size.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "models/profile.hpp"

namespace hetsim {

struct Value {
    Dim dim = Dim::None;
    bool integral = true;
    int64_t i = 0;  // when integral: ps, bytes, bytes/s or a plain integer
    double d = 0;   // when not integral (dimensionless only)

    static Value integer(int64_t v, Dim dim = Dim::None) { return Value{dim, true, v, 0}; }
    static Value real(double v) { return Value{Dim::None, false, 0, v}; }
    double as_double() const { return integral ? static_cast<double>(i) : d; }
    std::string describe() const;  // "64MiB (67108864 bytes)" style, for messages
};

// An error inside an expression; `offset` is the 0-based character position in the text.
class ExprError : public std::runtime_error {
public:
    ExprError(size_t at, const std::string& what, std::string unknown = "")
        : std::runtime_error(what), offset(at), unknown_name(std::move(unknown)) {}
    size_t offset;
    std::string unknown_name;  // set when the error is a name the lookup does not know
};

using NameLookup = std::function<std::optional<Value>(const std::string&)>;

// Evaluates `text`; throws ExprError.
Value eval_expr(const std::string& text, const NameLookup& lookup);

// Parses one literal with an optional unit ("64MiB", "2.5us", "16GB/s", "7"); throws ExprError.
Value parse_literal(const std::string& text);

// Formats a time / size / bandwidth for messages and reports ("1.500 ms", "64 MiB", "55.5 GB/s").
std::string format_time(Time t);
std::string format_bytes(uint64_t b);
std::string format_bandwidth(uint64_t bytes_per_s);

}  // namespace hetsim
