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

class Parser {
public:
    Parser(const std::string& s, const NameLookup& l) : s_(s), lookup_(l) {}

    Value parse_all() {
        Value v = parse_or();
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

    static bool truthy(const Value& v) { return v.integral ? v.i != 0 : v.d != 0.0; }

    Value parse_or() {
        Value l = parse_and();
        while (eat("||")) {
            Value r = parse_and();
            l = Value::integer(truthy(l) || truthy(r));
        }
        return l;
    }
    Value parse_and() {
        Value l = parse_cmp();
        while (eat("&&")) {
            Value r = parse_cmp();
            l = Value::integer(truthy(l) && truthy(r));
        }
        return l;
    }
    Value parse_cmp() {
        Value l = parse_add();
        for (;;) {
            size_t at = p_;
            const char* ops[] = {"==", "!=", "<=", ">=", "<", ">"};
            const char* op = nullptr;
            for (const char* o : ops)
                if (eat(o)) { op = o; break; }
            if (!op) return l;
            Value r = parse_add();
            check_same(l, r, at, op);
            double a = l.as_double(), b = r.as_double();
            bool res;
            if (l.integral && r.integral) {
                int64_t x = l.i, y = r.i;
                res = !std::strcmp(op, "==") ? x == y : !std::strcmp(op, "!=") ? x != y : !std::strcmp(op, "<=") ? x <= y
                    : !std::strcmp(op, ">=") ? x >= y : !std::strcmp(op, "<") ? x < y : x > y;
            } else {
                res = !std::strcmp(op, "==") ? a == b : !std::strcmp(op, "!=") ? a != b : !std::strcmp(op, "<=") ? a <= b
                    : !std::strcmp(op, ">=") ? a >= b : !std::strcmp(op, "<") ? a < b : a > b;
            }
            l = Value::integer(res);
        }
    }
    void check_same(const Value& l, const Value& r, size_t at, const char* op) {
        if (l.dim != r.dim)
            throw ExprError(at, std::string("cannot apply '") + op + "' to a " + to_string(l.dim) + " and a " +
                                    to_string(r.dim) + " in '" + s_ + "'");
    }
    Value parse_add() {
        Value l = parse_mul();
        for (;;) {
            size_t at = p_;
            char op;
            if (eat("+")) op = '+';
            else if (peek_minus()) op = '-';
            else return l;
            Value r = parse_mul();
            check_same(l, r, at, op == '+' ? "+" : "-");
            if (l.integral && r.integral) {
                int64_t out;
                bool ovf = op == '+' ? __builtin_add_overflow(l.i, r.i, &out) : __builtin_sub_overflow(l.i, r.i, &out);
                if (ovf) throw ExprError(at, "arithmetic overflows 64 bits in '" + s_ + "'");
                l = Value::integer(out, l.dim);
            } else {
                l = Value::real(op == '+' ? l.as_double() + r.as_double() : l.as_double() - r.as_double());
            }
        }
    }
    bool peek_minus() {
        skip_ws();
        if (p_ < s_.size() && s_[p_] == '-') { ++p_; return true; }
        return false;
    }
    Value parse_mul() {
        Value l = parse_unary();
        for (;;) {
            skip_ws();
            if (p_ >= s_.size()) return l;
            char op = s_[p_];
            if (op != '*' && op != '/' && op != '%') return l;
            size_t at = p_++;
            Value r = parse_unary();
            l = apply_mul(l, r, op, at);
        }
    }
    Value apply_mul(const Value& l, const Value& r, char op, size_t at) {
        Dim dim;
        if (op == '*') {
            if (l.dim != Dim::None && r.dim != Dim::None)
                throw ExprError(at, std::string("cannot multiply a ") + to_string(l.dim) + " by a " + to_string(r.dim));
            dim = l.dim != Dim::None ? l.dim : r.dim;
        } else if (l.dim == r.dim) {
            dim = op == '%' ? l.dim : Dim::None;
        } else if (r.dim == Dim::None) {
            dim = l.dim;
        } else {
            throw ExprError(at, std::string("cannot divide a ") + to_string(l.dim) + " by a " + to_string(r.dim));
        }
        if (l.integral && r.integral) {
            int64_t out = 0;
            if (op == '*') {
                if (__builtin_mul_overflow(l.i, r.i, &out)) throw ExprError(at, "arithmetic overflows 64 bits in '" + s_ + "'");
            } else {
                if (r.i == 0) throw ExprError(at, "division by zero in '" + s_ + "'");
                out = op == '/' ? l.i / r.i : l.i % r.i;
            }
            return Value::integer(out, dim);
        }
        if (op == '%') throw ExprError(at, "'%' needs whole numbers in '" + s_ + "'");
        double a = l.as_double(), b = r.as_double();
        if (op == '/' && b == 0) throw ExprError(at, "division by zero in '" + s_ + "'");
        double res = op == '*' ? a * b : a / b;
        if (dim == Dim::None) return Value::real(res);
        if (!std::isfinite(res) || std::fabs(res) > 9.2e18) throw ExprError(at, "arithmetic overflows 64 bits in '" + s_ + "'");
        return Value::integer(static_cast<int64_t>(std::llround(res)), dim);
    }
    Value parse_unary() {
        Nest guard(*this);
        skip_ws();
        size_t at = p_;
        if (eat("!")) return Value::integer(!truthy(parse_unary()));
        if (peek_minus()) {
            Value v = parse_unary();
            if (v.integral) {
                if (v.i == INT64_MIN) throw ExprError(at, "arithmetic overflows 64 bits");
                v.i = -v.i;
            } else {
                v.d = -v.d;
            }
            return v;
        }
        if (eat("+")) return parse_unary();
        return parse_primary();
    }
    Value parse_primary() {
        skip_ws();
        if (p_ >= s_.size()) throw ExprError(p_, "expression '" + s_ + "' ends too early");
        char c = s_[p_];
        if (c == '(') {
            ++p_;
            Value v = parse_or();
            if (!eat(")")) throw ExprError(p_, "missing ')' in '" + s_ + "'");
            return v;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return parse_number();
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t at = p_;
            while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_')) ++p_;
            std::string name = s_.substr(at, p_ - at);
            if (name == "true") return Value::integer(1);
            if (name == "false") return Value::integer(0);
            if (auto v = lookup_ ? lookup_(name) : std::nullopt) return *v;
            throw ExprError(at, "unknown name '" + name + "' in '" + s_ + "'", name);
        }
        throw ExprError(p_, std::string("unexpected '") + c + "' in '" + s_ + "'");
    }
    Value parse_number() {
        size_t at = p_;
        i128 mant = 0;
        int digits = 0, exp10 = 0;
        bool any = false;
        while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
            if (digits < 30) { mant = mant * 10 + (s_[p_] - '0'); if (mant) ++digits; }
            else ++exp10;
            ++p_;
            any = true;
        }
        if (p_ < s_.size() && s_[p_] == '.') {
            ++p_;
            while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
                if (digits < 30) { mant = mant * 10 + (s_[p_] - '0'); if (mant) ++digits; --exp10; }
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
            double dv = static_cast<double>(mant) * std::pow(10.0, exp10);
            if (exp10 < 0 && std::floor(dv) == dv && dv < 9e18) return Value::integer(static_cast<int64_t>(dv));
            return Value::real(dv);
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
        return scale_literal(mant, exp10, dim, factor, at, lit);
    }

    const std::string& s_;
    const NameLookup& lookup_;
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
    Parser p(text, lookup);
    return p.parse_all();
}

Value parse_literal(const std::string& text) {
    NameLookup none;
    Parser p(text, none);
    return p.literal_only();
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
