#include "frontend/expr.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace hetsim {

namespace {

struct Unit {
    const char* name;
    Dim dim;
    int64_t factor;
};

constexpr Unit kUnits[] = {
    {"ps", Dim::Time, 1}, {"ns", Dim::Time, 1000}, {"us", Dim::Time, 1000000},
    {"ms", Dim::Time, 1000000000LL}, {"s", Dim::Time, 1000000000000LL},
    {"B", Dim::Bytes, 1}, {"KB", Dim::Bytes, 1000}, {"MB", Dim::Bytes, 1000000},
    {"GB", Dim::Bytes, 1000000000LL}, {"TB", Dim::Bytes, 1000000000000LL},
    {"KiB", Dim::Bytes, 1LL << 10}, {"MiB", Dim::Bytes, 1LL << 20}, {"GiB", Dim::Bytes, 1LL << 30},
    {"TiB", Dim::Bytes, 1LL << 40},
};

const char* unit_names() {
    return "ps ns us ms s, B KB MB GB TB KiB MiB GiB TiB, or a size unit followed by /s";
}

Value scale_literal(i128 mantissa, int exp10, Dim dim, int64_t factor, size_t at, const std::string& text) {
    const i128 limit = static_cast<i128>(INT64_MAX);
    const char* base = dim == Dim::Time ? "picoseconds" : dim == Dim::Bytes ? "bytes" : "bytes per second";
    const std::string overflow = "'" + text + "' overflows 64 bits after unit scaling";
    if (mantissa == 0) return Value::integer(0, dim);
    while (mantissa % 10 == 0) {
        mantissa /= 10;
        ++exp10;
    }
    i128 v;
    if (__builtin_mul_overflow(mantissa, static_cast<i128>(factor), &v)) {
        // Only possible with many significant digits; estimate to tell an overflow from a fraction.
        long double est = static_cast<long double>(mantissa) * factor * std::pow(10.0L, exp10);
        if (est > static_cast<long double>(INT64_MAX)) throw ExprError(at, overflow);
        throw ExprError(at, "'" + text + "' is not a whole number of " + base);
    }
    if (exp10 >= 0) {
        if (v > limit) throw ExprError(at, overflow);
        for (; exp10 > 0; --exp10) {
            v *= 10;
            if (v > limit) throw ExprError(at, overflow);
        }
        return Value::integer(static_cast<int64_t>(v), dim);
    }
    // v has no factor 10^38 or more (it is below 2^127), so a larger divisor leaves a fraction.
    if (-exp10 > 38) throw ExprError(at, "'" + text + "' is not a whole number of " + base);
    i128 div = 1;
    for (; exp10 < 0; ++exp10) div *= 10;
    if (v % div != 0) throw ExprError(at, "'" + text + "' is not a whole number of " + base);
    v /= div;
    if (v > limit) throw ExprError(at, overflow);
    return Value::integer(static_cast<int64_t>(v), dim);
}

// The unit at the start of `rest` ("GB/s", "ms"), or "" if `rest` does not start with a known unit.
std::string leading_unit(const std::string& rest) {
    size_t n = 0;
    while (n < rest.size() && (std::isalpha(static_cast<unsigned char>(rest[n])) || rest[n] == '/')) ++n;
    std::string u = rest.substr(0, n);
    std::string b = u.size() > 2 && u.compare(u.size() - 2, 2, "/s") == 0 ? u.substr(0, u.size() - 2) : u;
    for (const Unit& k : kUnits)
        if (b == k.name && (b == u || k.dim == Dim::Bytes)) return u;
    return "";
}

using Op = ExprCode::Op;

bool truthy(const Value& v) { return v.integral ? v.i != 0 : v.d != 0.0; }

// Why an operation has no value; the parser words the message.
enum class Fault : uint8_t { None, Dims, Overflow, MulDims, DivDims, DivZero, ModReal };

// The arithmetic of the language, shared by the evaluator and compiled code.
Fault apply_binary(Op op, const Value& l, const Value& r, Value& out) {
    switch (op) {
        case ExprCode::kOr: out = Value::integer(truthy(l) || truthy(r)); return Fault::None;
        case ExprCode::kAnd: out = Value::integer(truthy(l) && truthy(r)); return Fault::None;
        case ExprCode::kEq: case ExprCode::kNe: case ExprCode::kLe: case ExprCode::kGe: case ExprCode::kLt: case ExprCode::kGt: {
            if (l.dim != r.dim) return Fault::Dims;
            bool res;
            if (l.integral && r.integral) {
                const int64_t x = l.i, y = r.i;
                res = op == ExprCode::kEq ? x == y : op == ExprCode::kNe ? x != y : op == ExprCode::kLe ? x <= y
                    : op == ExprCode::kGe ? x >= y : op == ExprCode::kLt ? x < y : x > y;
            } else {
                const double a = l.as_double(), b = r.as_double();
                res = op == ExprCode::kEq ? a == b : op == ExprCode::kNe ? a != b : op == ExprCode::kLe ? a <= b
                    : op == ExprCode::kGe ? a >= b : op == ExprCode::kLt ? a < b : a > b;
            }
            out = Value::integer(res);
            return Fault::None;
        }
        case ExprCode::kAdd: case ExprCode::kSub: {
            if (l.dim != r.dim) return Fault::Dims;
            if (l.integral && r.integral) {
                int64_t v;
                bool ovf = op == ExprCode::kAdd ? __builtin_add_overflow(l.i, r.i, &v) : __builtin_sub_overflow(l.i, r.i, &v);
                if (ovf) return Fault::Overflow;
                out = Value::integer(v, l.dim);
            } else {
                const double res = op == ExprCode::kAdd ? l.as_double() + r.as_double() : l.as_double() - r.as_double();
                if (!std::isfinite(res)) return Fault::Overflow;  // never an infinity or NaN
                out = Value::real(res);
            }
            return Fault::None;
        }
        case ExprCode::kMul: case ExprCode::kDiv: case ExprCode::kMod: {
            Dim dim;
            if (op == ExprCode::kMul) {
                if (l.dim != Dim::None && r.dim != Dim::None) return Fault::MulDims;
                dim = l.dim != Dim::None ? l.dim : r.dim;
            } else if (l.dim == r.dim) {
                dim = op == ExprCode::kMod ? l.dim : Dim::None;
            } else if (r.dim == Dim::None) {
                dim = l.dim;
            } else {
                return Fault::DivDims;
            }
            if (l.integral && r.integral) {
                int64_t v = 0;
                if (op == ExprCode::kMul) {
                    if (__builtin_mul_overflow(l.i, r.i, &v)) return Fault::Overflow;
                } else {
                    if (r.i == 0) return Fault::DivZero;
                    if (l.i == INT64_MIN && r.i == -1) return Fault::Overflow;  // the one quotient past 64 bits
                    v = op == ExprCode::kDiv ? l.i / r.i : l.i % r.i;
                }
                out = Value::integer(v, dim);
                return Fault::None;
            }
            if (op == ExprCode::kMod) return Fault::ModReal;
            const double a = l.as_double(), b = r.as_double();
            if (op == ExprCode::kDiv && b == 0) return Fault::DivZero;
            const double res = op == ExprCode::kMul ? a * b : a / b;
            if (dim == Dim::None) {
                if (!std::isfinite(res)) return Fault::Overflow;  // never an infinity or NaN
                out = Value::real(res);
                return Fault::None;
            }
            if (!std::isfinite(res) || std::fabs(res) > 9.2e18) return Fault::Overflow;
            out = Value::integer(static_cast<int64_t>(std::llround(res)), dim);
            return Fault::None;
        }
        default: return Fault::None;
    }
}

// kNeg and kNot, in place.
Fault apply_unary(Op op, Value& v) {
    if (op == ExprCode::kNot) {
        v = Value::integer(!truthy(v));
        return Fault::None;
    }
    if (v.integral) {
        if (v.i == INT64_MIN) return Fault::Overflow;
        v.i = -v.i;
    } else {
        v.d = -v.d;
    }
    return Fault::None;
}

const char* op_text(Op op) {
    switch (op) {
        case ExprCode::kEq: return "==";
        case ExprCode::kNe: return "!=";
        case ExprCode::kLe: return "<=";
        case ExprCode::kGe: return ">=";
        case ExprCode::kLt: return "<";
        case ExprCode::kGt: return ">";
        case ExprCode::kAdd: return "+";
        case ExprCode::kSub: return "-";
        default: return "?";
    }
}

std::string fault_message(Fault f, Op op, const Value& l, const Value& r, const std::string& s) {
    switch (f) {
        case Fault::Dims:
            return std::string("cannot apply '") + op_text(op) + "' to a " + to_string(l.dim) + " and a " + to_string(r.dim) + " in '" + s + "'";
        case Fault::MulDims: return std::string("cannot multiply a ") + to_string(l.dim) + " by a " + to_string(r.dim);
        case Fault::DivDims: return std::string("cannot divide a ") + to_string(l.dim) + " by a " + to_string(r.dim);
        case Fault::DivZero: return "division by zero in '" + s + "'";
        case Fault::ModReal: return "'%' needs whole numbers in '" + s + "'";
        default: return "arithmetic overflows 64 bits in '" + s + "'";
    }
}

// Semantics for Parser: evaluate as it parses.
struct Evaluate {
    using V = Value;
    const NameLookup& lookup;
    V literal(const Value& v) { return v; }
    V name(const std::string& name, size_t at, const std::string& s) {
        if (auto v = lookup ? lookup(name) : std::nullopt) return *v;
        throw ExprError(at, "unknown name '" + name + "' in '" + s + "'", name);
    }
    V binary(Op op, const V& l, const V& r, size_t at, const std::string& s) {
        Value out;
        if (Fault f = apply_binary(op, l, r, out); f != Fault::None) throw ExprError(at, fault_message(f, op, l, r, s));
        return out;
    }
    V unary(Op op, V v, size_t at, const std::string&) {
        if (apply_unary(op, v) != Fault::None) throw ExprError(at, "arithmetic overflows 64 bits");
        return v;
    }
};

ExprCode::Ins instruction(Op op) {
    ExprCode::Ins ins;
    ins.op = op;
    return ins;
}

// Semantics for Parser: emit postfix code, folding constant parts.
struct NoCode {};  // thrown where the expression does not compile
struct Compile {
    struct V {
        bool dynamic = false;  // its code is on the stack; otherwise the constant `c`
        Value c;
    };
    ExprCode& code;
    const NameCompiler& names;
    V literal(const Value& v) { return V{false, v}; }
    V name(const std::string& name, size_t, const std::string&) {
        std::optional<CompiledName> n = names ? names(name) : std::nullopt;
        if (!n) throw NoCode{};
        if (n->slot >= 0) {
            if (n->slot >= 32) throw NoCode{};
            ExprCode::Ins ins = instruction(ExprCode::kVar);
            ins.slot = static_cast<uint16_t>(n->slot);
            code.prog.push_back(ins);
            code.vars |= 1u << n->slot;
            return V{true, {}};
        }
        if (n->code.constant()) return V{false, n->code.value};
        code.prog.insert(code.prog.end(), n->code.prog.begin(), n->code.prog.end());
        code.vars |= n->code.vars;
        return V{true, {}};
    }
    V binary(Op op, const V& l, const V& r, size_t, const std::string&) {
        if (!l.dynamic && !r.dynamic) {
            Value out;
            if (apply_binary(op, l.c, r.c, out) != Fault::None) throw NoCode{};
            return V{false, out};
        }
        ExprCode::Ins ins = instruction(op);
        if (!l.dynamic) ins.mode = ExprCode::kImmLeft, ins.imm = l.c;
        else if (!r.dynamic) ins.mode = ExprCode::kImmRight, ins.imm = r.c;
        code.prog.push_back(ins);
        return V{true, {}};
    }
    V unary(Op op, V v, size_t, const std::string&) {
        if (!v.dynamic) {
            if (apply_unary(op, v.c) != Fault::None) throw NoCode{};
            return v;
        }
        code.prog.push_back(instruction(op));
        return v;
    }
};

template <class Sem>
class Parser {
public:
    using V = typename Sem::V;
    Parser(const std::string& s, Sem& sem) : s_(s), sem_(sem) {}

    V parse_all() {
        V v = parse_or();
        skip_ws();
        if (p_ != s_.size()) leftover("in expression");
        return v;
    }

    Value literal_only() {
        skip_ws();
        Value v = parse_number();
        skip_ws();
        if (p_ != s_.size()) leftover("after number in");
        return v;
    }

private:
    [[noreturn]] void leftover(const char* where) {
        std::string rest = s_.substr(p_);
        std::string unit = leading_unit(rest);
        size_t q = p_;  // `2 ms`: the end of the number before the space
        while (q > 0 && std::isspace(static_cast<unsigned char>(s_[q - 1]))) --q;
        if (!unit.empty() && q < p_ && q > 0 && (std::isdigit(static_cast<unsigned char>(s_[q - 1])) || s_[q - 1] == '.')) {
            throw ExprError(p_, "unit '" + unit + "' must follow its number without a space: write '" + s_.substr(0, q) +
                                    s_.substr(p_) + "', not '" + s_ + "'");
        }
        throw ExprError(p_, "unexpected '" + rest + "' " + where + " '" + s_ + "'");
    }
    // Bounds the recursion of ( ) ! and unary minus, so hostile input cannot overflow the stack.
    struct Nest {
        Parser& p;
        explicit Nest(Parser& q) : p(q) {
            if (++p.depth_ > 200) throw ExprError(p.p_, "expression '" + p.s_.substr(0, 40) + "...' nests too deeply (more than 200 levels)");
        }
        ~Nest() { --p.depth_; }
        Nest(const Nest&) = delete;
        Nest& operator=(const Nest&) = delete;
    };
    void skip_ws() {
        while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_]))) ++p_;
    }
    bool eat(const char* tok) {
        skip_ws();
        size_t n = std::strlen(tok);
        if (s_.compare(p_, n, tok) == 0) {
            p_ += n;
            return true;
        }
        return false;
    }

    V parse_or() {
        V l = parse_and();
        while (eat("||")) {
            V r = parse_and();
            l = sem_.binary(ExprCode::kOr, l, r, p_, s_);
        }
        return l;
    }
    V parse_and() {
        V l = parse_cmp();
        while (eat("&&")) {
            V r = parse_cmp();
            l = sem_.binary(ExprCode::kAnd, l, r, p_, s_);
        }
        return l;
    }
    V parse_cmp() {
        V l = parse_add();
        for (;;) {
            size_t at = p_;
            static constexpr std::pair<const char*, Op> ops[] = {{"==", ExprCode::kEq}, {"!=", ExprCode::kNe}, {"<=", ExprCode::kLe},
                                                                 {">=", ExprCode::kGe}, {"<", ExprCode::kLt},  {">", ExprCode::kGt}};
            const std::pair<const char*, Op>* op = nullptr;
            for (const auto& o : ops)
                if (eat(o.first)) { op = &o; break; }
            if (!op) return l;
            V r = parse_add();
            l = sem_.binary(op->second, l, r, at, s_);
        }
    }
    V parse_add() {
        V l = parse_mul();
        for (;;) {
            size_t at = p_;
            Op op;
            if (eat("+")) op = ExprCode::kAdd;
            else if (peek_minus()) op = ExprCode::kSub;
            else return l;
            V r = parse_mul();
            l = sem_.binary(op, l, r, at, s_);
        }
    }
    bool peek_minus() {
        skip_ws();
        if (p_ < s_.size() && s_[p_] == '-') { ++p_; return true; }
        return false;
    }
    V parse_mul() {
        V l = parse_unary();
        for (;;) {
            skip_ws();
            if (p_ >= s_.size()) return l;
            char c = s_[p_];
            if (c != '*' && c != '/' && c != '%') return l;
            size_t at = p_++;
            V r = parse_unary();
            l = sem_.binary(c == '*' ? ExprCode::kMul : c == '/' ? ExprCode::kDiv : ExprCode::kMod, l, r, at, s_);
        }
    }
    V parse_unary() {
        Nest guard(*this);
        skip_ws();
        size_t at = p_;
        if (eat("!")) return sem_.unary(ExprCode::kNot, parse_unary(), at, s_);
        if (peek_minus()) return sem_.unary(ExprCode::kNeg, parse_unary(), at, s_);
        if (eat("+")) return parse_unary();
        return parse_primary();
    }
    V parse_primary() {
        skip_ws();
        if (p_ >= s_.size()) throw ExprError(p_, "expression '" + s_ + "' ends too early");
        char c = s_[p_];
        if (c == '(') {
            ++p_;
            V v = parse_or();
            if (!eat(")")) throw ExprError(p_, "missing ')' in '" + s_ + "'");
            return v;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return sem_.literal(parse_number());
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t at = p_;
            while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_')) ++p_;
            std::string name = s_.substr(at, p_ - at);
            if (name == "true") return sem_.literal(Value::integer(1));
            if (name == "false") return sem_.literal(Value::integer(0));
            return sem_.name(name, at, s_);
        }
        throw ExprError(p_, std::string("unexpected '") + c + "' in '" + s_ + "'");
    }
    Value parse_number() {
        size_t at = p_;
        i128 mant = 0;
        int digits = 0, exp10 = 0;
        bool any = false, dropped = false;  // dropped: a non-zero digit past the 30 kept in `mant`
        while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
            if (digits < 30) { mant = mant * 10 + (s_[p_] - '0'); if (mant) ++digits; }
            else { ++exp10; dropped |= s_[p_] != '0'; }
            ++p_;
            any = true;
        }
        if (p_ < s_.size() && s_[p_] == '.') {
            ++p_;
            while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
                if (digits < 30) { mant = mant * 10 + (s_[p_] - '0'); if (mant) ++digits; --exp10; }
                else dropped |= s_[p_] != '0';
                ++p_;
                any = true;
            }
        }
        if (!any) throw ExprError(at, "expected a number in '" + s_ + "'");
        if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E') && p_ + 1 < s_.size() &&
            (std::isdigit(static_cast<unsigned char>(s_[p_ + 1])) ||
             ((s_[p_ + 1] == '-' || s_[p_ + 1] == '+') && p_ + 2 < s_.size() &&
              std::isdigit(static_cast<unsigned char>(s_[p_ + 2]))))) {
            ++p_;
            int sign = 1;
            if (s_[p_] == '-' || s_[p_] == '+') { sign = s_[p_] == '-' ? -1 : 1; ++p_; }
            int e = 0;
            while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
                e = std::min(e * 10 + (s_[p_] - '0'), 400);
                ++p_;
            }
            exp10 += sign * e;
        }
        size_t ustart = p_;
        while (p_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[p_])) || s_[p_] == '/')) ++p_;
        std::string unit = s_.substr(ustart, p_ - ustart);
        std::string lit = s_.substr(at, p_ - at);
        if (unit.empty()) {
            if (exp10 >= 0 && exp10 < 19) {
                i128 v = mant;  // up to 30 digits: stop scaling once past 64 bits (no i128 overflow)
                for (int k = 0; k < exp10 && v <= static_cast<i128>(INT64_MAX); ++k) v *= 10;
                if (v <= static_cast<i128>(INT64_MAX)) return Value::integer(static_cast<int64_t>(v));
            }
            if (exp10 > 300) throw ExprError(at, "'" + lit + "' is out of range (values must fit in 64 bits)");
            // A whole number written with a fraction ("3.0", "2.50e1") is an integer; the test is
            // on the digits, not the double: 2.9999999999999999999 rounds to 3.0 but is not 3.
            if (exp10 < 0 && !dropped && (mant == 0 || -exp10 <= 30)) {
                i128 div = 1;
                for (int k = 0; k < -exp10 && mant != 0; ++k) div *= 10;
                if (mant % div == 0 && mant / div <= static_cast<i128>(INT64_MAX))
                    return Value::integer(static_cast<int64_t>(mant / div));
            }
            return Value::real(static_cast<double>(mant) * std::pow(10.0, exp10));
        }
        Dim dim = Dim::None;
        int64_t factor = 0;
        std::string base = unit;
        bool per_s = unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/s") == 0;
        if (per_s) base = unit.substr(0, unit.size() - 2);
        for (const Unit& u : kUnits)
            if (base == u.name && (!per_s || u.dim == Dim::Bytes)) { dim = u.dim; factor = u.factor; }
        if (base == "\xC2\xB5s") { dim = Dim::Time; factor = 1000000; }
        if (factor == 0)
            throw ExprError(ustart, "unknown unit '" + unit + "' in '" + lit + "' (use " + unit_names() + ")");
        if (per_s) dim = Dim::Bandwidth;
        if (exp10 < -40) throw ExprError(at, "'" + lit + "' has too many decimal places (no value is finer than 1ps or 1B)");
        // A quantity is exact: a digit past the 30 kept would be lost, not rounded to 1ps or 1B.
        if (dropped) throw ExprError(at, "'" + lit + "' has more than 30 significant digits");
        return scale_literal(mant, exp10, dim, factor, at, lit);
    }

    const std::string& s_;
    Sem& sem_;
    size_t p_ = 0;
    int depth_ = 0;
};

std::string fmt3(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

}  // namespace

Value eval_expr(const std::string& text, const NameLookup& lookup) {
    Evaluate sem{lookup};
    Parser<Evaluate> p(text, sem);
    return p.parse_all();
}

Value parse_literal(const std::string& text) {
    NameLookup none;
    Evaluate sem{none};
    Parser<Evaluate> p(text, sem);
    return p.literal_only();
}

namespace {
constexpr int kMaxStack = 32;
}

std::optional<ExprCode> compile_expr(const std::string& text, const NameCompiler& names) {
    ExprCode code;
    try {
        Compile sem{code, names};
        Parser<Compile> p(text, sem);
        Compile::V v = p.parse_all();
        if (!v.dynamic) {
            code.prog.clear();
            code.vars = 0;
            code.value = v.c;
        }
    } catch (const ExprError&) {
        return std::nullopt;
    } catch (const NoCode&) {
        return std::nullopt;
    }
    int sp = 0;
    for (const ExprCode::Ins& ins : code.prog) {
        if (ins.op == ExprCode::kConst || ins.op == ExprCode::kVar) ++sp;
        else if (ins.op != ExprCode::kNeg && ins.op != ExprCode::kNot && ins.mode == ExprCode::kBoth) --sp;
        if (sp > kMaxStack) return std::nullopt;
    }
    code.chain = !code.prog.empty() && code.prog[0].op == ExprCode::kVar;
    for (size_t k = 1; k < code.prog.size() && code.chain; ++k) {
        const ExprCode::Ins& ins = code.prog[k];
        code.chain = ins.op >= ExprCode::kAdd && ins.op <= ExprCode::kMod && ins.mode == ExprCode::kImmRight && ins.imm.integral &&
                     ins.imm.dim == Dim::None;
    }
    return code;
}

namespace {
// run_expr of a chain: apply_binary's whole-number rules for two plain numbers.
bool run_chain(const ExprCode& code, const int64_t* vars, Value& out) {
    int64_t a = vars[code.prog[0].slot];
    for (size_t k = 1; k < code.prog.size(); ++k) {
        const int64_t b = code.prog[k].imm.i;
        switch (code.prog[k].op) {
            case ExprCode::kAdd: if (__builtin_add_overflow(a, b, &a)) return false; break;
            case ExprCode::kSub: if (__builtin_sub_overflow(a, b, &a)) return false; break;
            case ExprCode::kMul: if (__builtin_mul_overflow(a, b, &a)) return false; break;
            case ExprCode::kDiv:
                if (b == 0 || (a == INT64_MIN && b == -1)) return false;
                a /= b;
                break;
            default:
                if (b == 0 || (a == INT64_MIN && b == -1)) return false;
                a %= b;
                break;
        }
    }
    out = Value::integer(a);
    return true;
}
}  // namespace

bool run_expr(const ExprCode& code, const int64_t* vars, Value& out) {
    if (code.chain) return run_chain(code, vars, out);
    if (code.prog.empty()) {
        out = code.value;
        return true;
    }
    union Slot {
        Value v;
        Slot() {}
    };
    Slot st[kMaxStack];
    int sp = 0;
    for (const ExprCode::Ins& ins : code.prog) {
        switch (ins.op) {
            case ExprCode::kConst: st[sp++].v = ins.imm; break;
            case ExprCode::kVar: st[sp++].v = Value::integer(vars[ins.slot]); break;
            case ExprCode::kNeg:
            case ExprCode::kNot:
                if (apply_unary(ins.op, st[sp - 1].v) != Fault::None) return false;
                break;
            default: {
                Fault f;
                if (ins.mode == ExprCode::kBoth) {
                    --sp;
                    f = apply_binary(ins.op, st[sp - 1].v, st[sp].v, st[sp - 1].v);
                } else if (ins.mode == ExprCode::kImmLeft) {
                    f = apply_binary(ins.op, ins.imm, st[sp - 1].v, st[sp - 1].v);
                } else {
                    f = apply_binary(ins.op, st[sp - 1].v, ins.imm, st[sp - 1].v);
                }
                if (f != Fault::None) return false;
            }
        }
    }
    out = st[0].v;
    return true;
}

std::string format_time(Time t) {
    double ps = static_cast<double>(t.ps());
    double a = std::fabs(ps);
    if (a >= 1e12) return fmt3(ps / 1e12) + " s";
    if (a >= 1e9) return fmt3(ps / 1e9) + " ms";
    if (a >= 1e6) return fmt3(ps / 1e6) + " us";
    return fmt3(ps / 1e3) + " ns";
}

std::string format_bytes(uint64_t b) {
    const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(b);
    int k = 0;
    while (v >= 1024 && k < 4) { v /= 1024; ++k; }
    if (k == 0) return std::to_string(b) + " B";
    return fmt3(v) + " " + names[k];
}

std::string format_bandwidth(uint64_t bps) {
    return fmt3(static_cast<double>(bps) / 1e9) + " GB/s";
}

std::string Value::describe() const {
    if (!integral) return fmt3(d);
    switch (dim) {
        case Dim::Time: return format_time(Time::ps(i));
        case Dim::Bytes: return std::to_string(i) + " bytes";
        case Dim::Bandwidth: return format_bandwidth(static_cast<uint64_t>(i));
        case Dim::None: return std::to_string(i);
        case Dim::Curve: break;
    }
    return "?";
}

}  // namespace hetsim
