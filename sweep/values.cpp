// Value lists and ranges of `--vary`, and the numbers inside value texts (see sweep_spec.hpp).
#include "sweep/spec.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>

#include "frontend/expr.hpp"

namespace hetsim::sweep {
namespace {

constexpr uint64_t kMaxRangeValues = 1'000'000;

struct UnitDef {
    const char* name;
    Dim dim;
    int64_t factor;
    char family;  // 't' time, 'd' decimal sizes, 'b' binary sizes ('B' is in both)
};
constexpr UnitDef kUnits[] = {
    {"s", Dim::Time, 1'000'000'000'000LL, 't'}, {"ms", Dim::Time, 1'000'000'000LL, 't'},
    {"us", Dim::Time, 1'000'000LL, 't'},        {"ns", Dim::Time, 1000, 't'},
    {"ps", Dim::Time, 1, 't'},                  {"TB", Dim::Bytes, 1'000'000'000'000LL, 'd'},
    {"GB", Dim::Bytes, 1'000'000'000LL, 'd'},   {"MB", Dim::Bytes, 1'000'000LL, 'd'},
    {"KB", Dim::Bytes, 1000, 'd'},              {"TiB", Dim::Bytes, 1LL << 40, 'b'},
    {"GiB", Dim::Bytes, 1LL << 30, 'b'},        {"MiB", Dim::Bytes, 1LL << 20, 'b'},
    {"KiB", Dim::Bytes, 1LL << 10, 'b'},        {"B", Dim::Bytes, 1, 'x'},
};

const UnitDef* find_unit(const std::string& unit) {
    std::string base = unit;
    if (base.size() > 2 && base.compare(base.size() - 2, 2, "/s") == 0) base.resize(base.size() - 2);
    for (const UnitDef& u : kUnits)
        if (base == u.name) return &u;
    return nullptr;
}

// A number from a value text: v / 10^scale base units (scale > 0 only for plain decimals).
struct Num {
    Dim dim = Dim::None;
    i128 v = 0;
    int scale = 0;
    std::string unit;  // as written: "MiB", "GB/s", "" for plain numbers
};

std::string trim(const std::string& s) {
    size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

Num parse_num(const std::string& text) {
    size_t p = 0;
    bool neg = p < text.size() && text[p] == '-';
    if (neg) ++p;
    size_t digits_start = p;
    while (p < text.size() && (std::isdigit(static_cast<unsigned char>(text[p])) || text[p] == '.')) ++p;
    if (p == digits_start) bad("'" + text + "' is not a number");
    if (p < text.size() && (text[p] == 'e' || text[p] == 'E')) {
        ++p;
        if (p < text.size() && (text[p] == '+' || text[p] == '-')) ++p;
        while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) ++p;
    }
    Num n;
    n.unit = text.substr(p);
    if (!n.unit.empty()) {
        if (neg) bad("'" + text + "' is negative");
        Value val;
        try {
            val = parse_literal(text);
        } catch (const std::exception& e) {
            bad(e.what());
        }
        n.dim = val.dim;
        n.v = val.i;
        return n;
    }
    // A plain number, kept exact: mantissa and decimal places.
    std::string num = text.substr(digits_start, p - digits_start);
    int exp10 = 0;
    if (size_t e = num.find_first_of("eE"); e != std::string::npos) {
        try {
            exp10 = std::stoi(num.substr(e + 1));
        } catch (const std::exception&) {
            bad("'" + text + "' is not a number");
        }
        num.resize(e);
    }
    size_t dot = num.find('.');
    if (dot != std::string::npos && num.find('.', dot + 1) != std::string::npos) bad("'" + text + "' is not a number");
    std::string frac = dot == std::string::npos ? "" : num.substr(dot + 1);
    std::string whole = (dot == std::string::npos ? num : num.substr(0, dot)) + frac;
    if (whole.empty() || whole.size() > 30) bad("'" + text + "' is not a number of at most 30 digits");
    i128 m = 0;
    for (char c : whole) m = m * 10 + (c - '0');
    int scale = static_cast<int>(frac.size()) - exp10;
    for (; scale < 0; ++scale) m *= 10;
    if (scale > 18 || m > static_cast<i128>(INT64_MAX)) bad("'" + text + "' is out of range");
    n.v = neg ? -m : m;
    n.scale = scale;
    return n;
}

std::string int_text(i128 v) {
    if (v == 0) return "0";
    bool neg = v < 0;
    std::string s;
    for (i128 a = neg ? -v : v; a > 0; a /= 10) s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(a % 10)));
    if (neg) s.insert(s.begin(), '-');
    return s;
}

i128 pow10(int k) {
    i128 r = 1;
    for (int i = 0; i < k; ++i) r *= 10;
    return r;
}

// The text of a generated value: plain decimals exactly; quantities in the start's unit when whole,
// else in the largest unit of its family that divides them.
std::string format_num(i128 v, int scale, Dim dim, const std::string& start_unit) {
    if (dim == Dim::None) {
        i128 p = pow10(scale), a = v < 0 ? -v : v;
        std::string s(v < 0 ? "-" : "");
        s.append(int_text(a / p));  // append, not operator+: GCC 12 -Wrestrict false positive
        std::string frac = int_text(a % p + p).substr(1);  // leading digit 1 keeps the zeros
        while (!frac.empty() && frac.back() == '0') frac.pop_back();
        return frac.empty() ? s : s + "." + frac;
    }
    std::string per_s = dim == Dim::Bandwidth ? "/s" : "";
    const UnitDef* su = find_unit(start_unit);
    // The start's unit when whole (a base unit such as B or ps says nothing: pick the largest).
    if (su && su->factor > 1 && v % su->factor == 0) return int_text(v / su->factor) + start_unit;
    char family = su && su->family != 'x' ? su->family : (dim == Dim::Time ? 't' : 'd');
    for (const UnitDef& u : kUnits)
        if ((u.family == family || u.family == 'x') && v % u.factor == 0) return int_text(v / u.factor) + u.name + per_s;
    return int_text(v) + (dim == Dim::Time ? "ps" : "B" + per_s);
}

const char* dim_word(Dim d) {
    switch (d) {
        case Dim::Time: return "a time";
        case Dim::Bytes: return "a size";
        case Dim::Bandwidth: return "a bandwidth";
        case Dim::None: return "a plain number";
        case Dim::Curve: return "a curve";
    }
    return "?";
}

void expand_range(const std::string& item, std::vector<std::string>& out, bool* log_scale) {
    const std::string form = "expected START..END, START..END+STEP or START..END*FACTOR (e.g. 1..8+2, 1MiB..1GiB*2)";
    size_t dots = item.find("..");
    std::string start = trim(item.substr(0, dots)), rest = item.substr(dots + 2);
    if (rest.find(':') != std::string::npos) bad("'" + item + "': write a step as START..END+STEP (e.g. 1..8+2), not with ':'");
    size_t op = std::string::npos;
    for (size_t i = 0; i < rest.size(); ++i)
        if (rest[i] == '*' || (rest[i] == '+' && !(i > 0 && (rest[i - 1] == 'e' || rest[i - 1] == 'E')))) {
            op = i;
            break;
        }
    if (!rest.empty() && rest[0] == '.') bad("'" + item + "' has more than two dots; a range is START..END, e.g. 1..8");
    std::string end = trim(rest.substr(0, op)), step = op == std::string::npos ? "" : trim(rest.substr(op + 1));
    if (start.empty() || end.empty() || (op != std::string::npos && step.empty()) || rest.find("..") != std::string::npos)
        bad("'" + item + "' is not a range: " + form);
    Num a = parse_num(start), b = parse_num(end);
    if (a.dim != b.dim) bad("'" + item + "': the start is " + dim_word(a.dim) + " but the end is " + dim_word(b.dim));
    bool geometric = op != std::string::npos && rest[op] == '*';
    Num s;
    if (op == std::string::npos) {
        if (a.dim != Dim::None) bad("'" + item + "' needs a step with a unit: write " + start + ".." + end + "+STEP");
        s.v = 1;
    } else {
        s = parse_num(step);
        if (geometric) {
            if (s.dim != Dim::None || s.scale != 0 || s.v < 2)
                bad("'" + item + "': the factor after '*' must be a whole number of at least 2");
        } else if (s.dim != a.dim) {
            bad("'" + item + "': the step is " + dim_word(s.dim) + " but the ends are " + dim_word(a.dim));
        }
    }
    int scale = std::max({a.scale, b.scale, geometric ? 0 : s.scale});
    i128 x = a.v * pow10(scale - a.scale), hi = b.v * pow10(scale - b.scale);
    i128 st = geometric ? s.v : s.v * pow10(scale - s.scale);
    if (x > hi) bad("empty range '" + item + "': the start is past the end");
    if (!geometric && st <= 0) bad("'" + item + "': the step must be positive");
    if (geometric && x <= 0) bad("'" + item + "': a START..END*FACTOR range must start above 0");
    if (!geometric && (hi - x) / st >= static_cast<i128>(kMaxRangeValues))
        bad("'" + item + "' has more than " + std::to_string(kMaxRangeValues) + " values");
    // The next value is computed only when it stays within the end (x * st or x + st past hi
    // could overflow i128), and the count is checked as values are made.
    for (;;) {
        out.push_back(format_num(x, scale, a.dim, a.unit));
        if (out.size() > kMaxRangeValues) bad("'" + item + "' has more than " + std::to_string(kMaxRangeValues) + " values");
        if (geometric ? x > hi / st : hi - x < st) break;
        x = geometric ? x * st : x + st;
    }
    if (geometric && log_scale) *log_scale = true;
}

}  // namespace

std::vector<std::string> expand_values(const std::string& list, bool* log_scale) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (true) {
        size_t comma = list.find(',', pos);
        std::string item = trim(list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        if (item.empty()) bad(list.empty() ? "no values after '='" : "empty value in the list '" + list + "'");
        if (item.find("..") != std::string::npos) expand_range(item, out, log_scale);
        else out.push_back(item);
        if (out.size() > kMaxRangeValues) bad("more than " + std::to_string(kMaxRangeValues) + " values");
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    std::vector<std::string> sorted = out;
    std::sort(sorted.begin(), sorted.end());
    if (auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end()) bad("the value '" + *d + "' appears twice");
    return out;
}


bool numeric_value(const std::string& text, double* base, std::string* dim, std::string* unit) {
    Num n;
    try {
        n = parse_num(trim(text));
    } catch (const std::exception&) {
        return false;
    }
    *base = static_cast<double>(n.v) / static_cast<double>(pow10(n.scale));
    *dim = n.dim == Dim::Time ? "time" : n.dim == Dim::Bytes ? "size" : n.dim == Dim::Bandwidth ? "bandwidth" : "number";
    if (unit) *unit = n.unit;
    return true;
}

std::string format_in_unit(double base, const std::string& unit) {
    const UnitDef* u = find_unit(unit);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", u ? base / static_cast<double>(u->factor) : base);
    return std::string(buf) + (u ? unit : "");
}

}  // namespace hetsim::sweep
