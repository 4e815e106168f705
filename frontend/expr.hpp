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
#include <vector>

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

// An expression compiled once for evaluation in every iteration of a loop: postfix code over
// constants and loop variables (by slot, the outermost loop's variable in slot 0). Running it
// gives exactly eval_expr's value (one parser and one set of arithmetic rules serve both); where
// eval_expr would throw, run_expr returns false instead, and the caller evaluates the text with
// eval_expr for the message.
struct ExprCode {
    enum Op : uint8_t { kConst, kVar, kNeg, kNot, kOr, kAnd, kEq, kNe, kLe, kGe, kLt, kGt, kAdd, kSub, kMul, kDiv, kMod };
    enum Mode : uint8_t { kBoth, kImmLeft, kImmRight };  // a binary op's operands: the stack, or one is `imm`
    struct Ins {
        Op op = kConst;
        Mode mode = kBoth;
        uint16_t slot = 0;  // kVar
        Value imm;          // kConst, and the immediate operand
    };
    std::vector<Ins> prog;  // empty: the constant `value`
    Value value;
    uint32_t vars = 0;      // bit k: reads the loop variable of slot k
    bool chain = false;     // a loop variable, then + - * / % by whole numbers (c % 4, (i + 1) * 2): run on int64
    bool constant() const { return prog.empty(); }
};

// What a name in a compiled expression stands for: a loop variable (slot >= 0), or the code of a
// param (a constant, or code that reads loop variables, inlined).
struct CompiledName {
    int slot = -1;
    ExprCode code;
};
// nullopt: the name is unknown, and the expression does not compile.
using NameCompiler = std::function<std::optional<CompiledName>(const std::string&)>;

// Compiles `text`; nullopt where eval_expr would throw on any values of the loop variables it can
// tell (syntax, units, unknown names, constant parts that fail) and for code too deep to run.
std::optional<ExprCode> compile_expr(const std::string& text, const NameCompiler& names);

// Evaluates `code` with the loop variable of slot k equal to vars[k]; false where eval_expr throws.
bool run_expr(const ExprCode& code, const int64_t* vars, Value& out);

// Parses one literal with an optional unit ("64MiB", "2.5us", "16GB/s", "7"); throws ExprError.
Value parse_literal(const std::string& text);

// Formats a time / size / bandwidth for messages and reports ("1.500 ms", "64 MiB", "55.5 GB/s").
std::string format_time(Time t);
std::string format_bytes(uint64_t b);
std::string format_bandwidth(uint64_t bytes_per_s);

}  // namespace hetsim
