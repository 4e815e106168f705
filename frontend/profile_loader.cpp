#include "frontend/profile_loader.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "frontend/expr.hpp"
#include "frontend/yaml_util.hpp"

namespace hetsim {

namespace {
// "none", or "size:fraction, size:fraction, ..." with sizes increasing and fractions in (0, 1].
Curve parse_curve(const std::string& key, const std::string& text, const SourceLoc& where) {
    Curve c;
    auto trim = [](std::string s) {
        size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
        return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
    };
    if (trim(text) == "none") return c;
    const std::string want = "; write none, or size:fraction pairs with growing sizes such as '64KiB:0.9, 1MiB:0.98' (';' also separates)";
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t comma = text.find_first_of(",;", pos);  // ';' too, so that a sweep value can hold a curve
        std::string item = trim(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        size_t colon = item.find(':');
        if (colon == std::string::npos)
            throw InputError(where, "hardware parameter '" + key + "': '" + item + "' is not size:fraction" + want);
        Value size, frac;
        try {
            size = parse_literal(trim(item.substr(0, colon)));
            frac = parse_literal(trim(item.substr(colon + 1)));
        } catch (const ExprError& e) {
            throw InputError(where, "hardware parameter '" + key + "': " + e.what() + want);
        }
        if (size.dim != Dim::Bytes || size.i <= 0)
            throw InputError(where, "hardware parameter '" + key + "': '" + item + "' needs a positive size before ':'" + want);
        if (frac.dim != Dim::None || !(frac.as_double() > 0 && frac.as_double() <= 1))
            throw InputError(where, "hardware parameter '" + key + "': '" + item + "' needs a fraction in (0, 1] after ':'" + want);
        if (!c.points.empty() && static_cast<uint64_t>(size.i) <= c.points.back().first)
            throw InputError(where, "hardware parameter '" + key + "': sizes must grow from point to point" + want);
        c.points.emplace_back(static_cast<uint64_t>(size.i), frac.as_double());
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return c;
}
}  // namespace

void set_profile_param(HwProfile& p, const std::string& key, const std::string& text, const SourceLoc& where) {
    const ParamDecl* d = find_param(key);
    if (!d) {
        std::vector<std::string> keys;
        for (const auto& k : param_decls()) keys.push_back(k.key);
        std::string msg = "unknown hardware parameter '" + key + "'";
        std::string near = did_you_mean(key, keys);
        msg += near.empty() ? " (`hetsim params` lists them)" : "; did you mean '" + near + "'?";
        throw InputError(where, msg);
    }
    if (d->flag || d->rule) {
        bool on;
        if (text == "true" || text == "on" || text == "1") on = true;
        else if (text == "false" || text == "off" || text == "0") on = false;
        else throw InputError(where, "hardware parameter '" + key + "' must be true or false (on/off), got '" + text + "'");
        if (d->flag) p.*(d->flag) = on;
        else p.rules.*(d->rule) = on;
        return;
    }
    if (d->curve) {
        p.*(d->curve) = parse_curve(key, text, where);
        return;
    }
    Value v;
    // A literal has no sign: '-5GB/s' is read as 5GB/s negated, so that the range check below
    // says what the value must be (positive, at least 1) instead of "expected a number".
    const bool negative = text.size() > 1 && text[0] == '-' && (std::isdigit(static_cast<unsigned char>(text[1])) || text[1] == '.');
    try {
        v = parse_literal(negative ? text.substr(1) : text);
        if (negative) v.i = -v.i, v.d = -v.d;
    } catch (const ExprError& e) {
        throw InputError(where, "hardware parameter '" + key + "': " + e.what());
    }
    if (v.dim != d->dim) {
        std::string want = d->dim == Dim::Time ? "a time such as 2.5us" : d->dim == Dim::Bytes ? "a size such as 64MiB"
                         : d->dim == Dim::Bandwidth ? "a bandwidth such as 16GB/s" : "a plain number";
        throw InputError(where, "hardware parameter '" + key + "' must be " + want + ", got '" + text + "'");
    }
    double x = v.as_double();
    if (!d->range.contains(x)) {
        const Range& r = d->range;
        auto bound = [&](double b) { return format_quantity(d->dim, b); };
        std::string want;
        if (r.lo_open ? !(x > r.lo) : !(x >= r.lo))
            want = r.lo == 0 ? (r.lo_open ? "positive" : "non-negative") : (r.lo_open ? "more than " : "at least ") + bound(r.lo);
        else
            want = (r.hi_open ? "less than " : "at most ") + bound(r.hi);
        throw InputError(where, "hardware parameter '" + key + "' must be " + want + ", got '" + text + "' (allowed: " +
                                    range_text(*d) + ")");
    }
    if (d->time) p.*(d->time) = Time::ps(v.i);
    else if (d->count) {
        if (!v.integral) throw InputError(where, "hardware parameter '" + key + "' must be a whole number, got '" + text + "'");
        p.*(d->count) = static_cast<uint64_t>(v.i);
    } else if (d->real) p.*(d->real) = x;
}

void zero_latencies(HwProfile& p) {
    for (const auto& d : param_decls())
        if (d.latency && d.time) p.*(d.time) = Time{};
    // The seed calculators' machine also moves every byte at the full bandwidth.
    p.rules.copy_efficiency = false;
    p.rules.duplex = false;
}

namespace {
namespace fs = std::filesystem;

// The file a profile name stands for: a shipped profile (a name without '/' and '.yaml') or a path,
// relative to `dir` (the directory of the profile naming it as its base) or else the working directory.
std::string resolve_profile(const std::string& name, const SourceLoc& where, const std::string& dir, bool base) {
    const char* what = base ? "base profile" : "hardware profile";
    if (name.find('/') == std::string::npos && name.find(".yaml") == std::string::npos) {
        std::string path = profiles_dir() + "/" + name + ".yaml";
        if (fs::exists(path)) return path;
        std::vector<std::string> names;
        std::string list;
        if (fs::is_directory(profiles_dir()))
            for (const auto& e : fs::directory_iterator(profiles_dir()))
                if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
        std::sort(names.begin(), names.end());
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        // Variants of the name come first ('h100' -> 'h100-pcie' or 'h100-sxm'), then near spellings.
        std::string near;
        for (const auto& n : names)
            if (n.rfind(name + "-", 0) == 0) near += (near.empty() ? "'" : " or '") + n + "'";
        if (near.empty() && !(near = did_you_mean(name, names)).empty()) near = "'" + near + "'";
        throw InputError(where, "unknown " + std::string(what) + " '" + name + "'" +
                                    (near.empty() ? "" : "; did you mean " + near + "?") + " (shipped: " + list +
                                    "; or give the path of a profile file)");
    }
    std::string path = dir.empty() || fs::path(name).is_absolute() ? name : (fs::path(dir) / name).string();
    if (!fs::is_regular_file(path))
        throw InputError(where, std::string(what) + " file '" + path + "' " +
                                    (fs::exists(path) ? "is not a regular file" : "does not exist") +
                                    (base ? " (a base with '/' or '.yaml' is a path, relative to the directory of the profile naming it)"
                                          : " (a profile name with '/' or '.yaml' is a path, relative to the working directory)"));
    return path;
}

// Size and modification time of a file, "" when unknown: a profile read before is reused while
// none of the files it was read from changed.
std::string stamp_of(const std::string& path) {
    std::error_code ec;
    auto mtime = fs::last_write_time(path, ec);
    if (ec) return {};
    auto size = fs::file_size(path, ec);
    if (ec) return {};
    return std::to_string(size) + '\n' + std::to_string(mtime.time_since_epoch().count());
}

// The deepest chain of bases a profile may have (each base is read recursively).
constexpr size_t kMaxBaseDepth = 64;

// The profiles being read, outermost first, to catch a chain of bases that comes back to itself.
struct Chain {
    std::vector<std::string> shown;
    SourceLoc top_at;  // the outermost profile's 'base'
    std::vector<std::string> canonical;  // filled in only once a base is met: most loads hit the cache
    void fill() {
        while (canonical.size() < shown.size()) canonical.push_back(fs::weakly_canonical(shown[canonical.size()]).string());
    }
};

LoadedProfile load_file(const std::string& path, const std::string& name, Chain& chain);

LoadedProfile parse_profile_file(const std::string& path, const std::string& name, Chain& chain) {
    YAML::Node root = load_yaml_file(path);
    check_keys(root, path, {"name", "description", "base", "params"}, "profile");
    LoadedProfile lp;
    lp.files.push_back({name, path});
    const auto& decls = param_decls();
    lp.origin.assign(decls.size(), -1);
    YAML::Node base = root["base"];
    if (base) {
        if (!base.IsScalar() || base.Scalar().empty())
            fail(base, path, "'base' must name a profile: a shipped one such as h200, or the path of a profile file");
        const std::string base_name = base.Scalar();
        const SourceLoc at = loc_of(base, path);
        const std::string base_path = resolve_profile(base_name, at, fs::path(path).parent_path().string(), true);
        const std::string canonical = fs::weakly_canonical(base_path).string();
        chain.fill();
        if (auto it = std::find(chain.canonical.begin(), chain.canonical.end(), canonical); it != chain.canonical.end()) {
            std::string cycle;
            for (size_t k = static_cast<size_t>(it - chain.canonical.begin()); k < chain.shown.size(); ++k)
                cycle += chain.shown[k] + " -> ";
            throw InputError(at, "profile bases form a cycle: " + cycle + base_path +
                                     "; a profile's base chain must end in a profile without 'base'");
        }
        // Too deep: said at the outermost profile's 'base', whether the bases were read now or
        // come from the cache.
        if (chain.shown.size() == 1) chain.top_at = at;
        auto too_deep = [&] {
            return InputError(chain.top_at, "profile bases nest more than " + std::to_string(kMaxBaseDepth) + " deep (from " +
                                                chain.shown.front() + "); a profile's base chain must end in a profile without 'base' within " +
                                                std::to_string(kMaxBaseDepth) + " profiles");
        };
        if (chain.shown.size() >= kMaxBaseDepth) throw too_deep();
        chain.shown.push_back(base_path);
        chain.canonical.push_back(canonical);
        LoadedProfile b = load_file(base_path, base_name, chain);
        if (chain.shown.size() - 1 + b.files.size() > kMaxBaseDepth) throw too_deep();
        chain.shown.pop_back();
        chain.canonical.resize(std::min(chain.canonical.size(), chain.shown.size()));
        lp.profile = b.profile;
        lp.files.insert(lp.files.end(), b.files.begin(), b.files.end());
        for (size_t k = 0; k < decls.size(); ++k) lp.origin[k] = b.origin[k] < 0 ? -1 : b.origin[k] + 1;
    }
    lp.profile.name = root["name"] && root["name"].IsScalar() ? root["name"].Scalar() : name;
    YAML::Node params = root["params"];
    if (base && (!params || params.IsNull())) return lp;  // the base under another name
    if (!params || !params.IsMap())
        fail(params && !params.IsNull() ? params : root, path,
             base ? "'params' must map parameter names to the values that differ from the base (`hetsim params` lists them)"
                  : "profile needs a 'params' mapping of parameter names to values (`hetsim params` lists them)");
    std::set<std::string> seen;
    for (auto it = params.begin(); it != params.end(); ++it) {
        if (!it->first.IsScalar()) fail(it->first, path, "profile parameter names must be plain names such as copy.h2d.bandwidth");
        std::string key = it->first.Scalar();
        const YAML::Node v = it->second;
        if (!seen.insert(key).second) fail(it->first, path, "duplicate parameter '" + key + "' in profile; give each parameter once");
        if (v.IsMap()) {
            check_keys(v, path, {"value", "source", "status", "residual", "fit"}, "parameter '" + key + "'");
            if (!v["value"])
                fail(v, path, "parameter '" + key + "' has no 'value'; give it as {value: 3.3us, source: ...} or as a plain value");
        }
        // Constructed, not assigned: assigning one YAML::Node to another rewrites the node they
        // share, which erased the map `v` (and its position) in the parsed document.
        const YAML::Node value = v.IsMap() ? v["value"] : v;
        if (!value.IsScalar())
            fail(value, path, "parameter '" + key + "' must be a single value such as 16GB/s, got " + a_node_type(value));
        set_profile_param(lp.profile, key, value.Scalar(), loc_of(value, path));
        lp.origin[static_cast<size_t>(find_param(key) - decls.data())] = 0;
    }
    if (!base) {
        // Without a base every required parameter is given; the others take their declared default.
        for (const auto& d : decls)
            if (!seen.count(d.key) && !d.default_value)
                throw InputError(loc_of(params, path), std::string("profile is missing parameter '") + d.key + "' (" +
                                                           d.description + ", a " + to_string(d.dim) + "); add it under 'params'");
        for (const auto& d : decls)
            if (!seen.count(d.key)) set_profile_param(lp.profile, d.key, d.default_value, SourceLoc{"default of " + std::string(d.key)});
    }
    return lp;
}

LoadedProfile load_file(const std::string& path, const std::string& name, Chain& chain) {
    // A sweep lowers its scenario once per point: keep each profile read, keyed by its path and
    // checked against the size and modification time of every file of its base chain, so that
    // it is parsed once per process.
    struct Entry {
        std::vector<std::pair<std::string, std::string>> stamps;  // path, stamp
        LoadedProfile profile;
    };
    static std::mutex cache_mu;
    static std::map<std::string, Entry> cache;
    const std::string key = name + '\n' + path;
    std::optional<Entry> seen;
    {
        std::lock_guard<std::mutex> lock(cache_mu);
        if (auto it = cache.find(key); it != cache.end()) seen = it->second;
    }
    if (seen) {
        bool fresh = true;
        for (const auto& [p, s] : seen->stamps) fresh = fresh && !s.empty() && stamp_of(p) == s;
        if (fresh) return std::move(seen->profile);
    }
    Entry e;
    const std::string own = stamp_of(path);  // before reading: a change while it is read shows next time
    e.profile = parse_profile_file(path, name, chain);
    for (const auto& f : e.profile.files) e.stamps.emplace_back(f.path, &f == &e.profile.files.front() ? own : stamp_of(f.path));
    std::lock_guard<std::mutex> lock(cache_mu);
    if (cache.size() > 64) cache.clear();
    cache[key] = e;
    return e.profile;
}
}  // namespace

LoadedProfile load_profile_sources(const std::string& name, const SourceLoc& where) {
    const std::string path = resolve_profile(name, where, "", false);
    Chain chain{{path}, {}};
    return load_file(path, name, chain);
}

HwProfile load_profile(const std::string& name, const SourceLoc& where) { return load_profile_sources(name, where).profile; }

}  // namespace hetsim
