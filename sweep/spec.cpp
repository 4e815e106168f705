#include "sweep/spec.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "frontend/profile_loader.hpp"
#include "frontend/yaml_util.hpp"
#include "core/error.hpp"

namespace hetsim::sweep {
namespace {

constexpr uint64_t kMaxPoints = 100'000'000;

std::string trim(const std::string& s) {
    size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

Axis parse_vary(const std::string& arg, const std::string& option) {
    SourceLoc where{option + " " + arg};
    size_t eq = arg.find('=');
    std::string name = trim(arg.substr(0, eq));
    if (eq == std::string::npos || name.empty())
        throw InputError(where, "expected NAME=VALUES, e.g. " + option + " nstreams=1..8 or " + option +
                                    " hardware.copy.h2d.bandwidth=16GB/s,32GB/s");
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (c == '.' && i > 0)))
            throw InputError(where, "'" + name + "' is not a param name (letters, digits, '_' and '.')");
    }
    Axis a;
    a.name = name;
    try {
        a.values = expand_values(arg.substr(eq + 1), &a.log_scale);
    } catch (const std::invalid_argument& e) {
        throw InputError(where, e.what());
    }
    if (name.rfind("hardware.", 0) == 0) check_hardware_axis(a, option);
    return a;
}

void check_hardware_axis(const Axis& a, const std::string& option) {
    std::string key = a.name.substr(9);
    if (key == "zero_latency") {
        for (const auto& v : a.values)
            if (v != "true" && v != "false")
                throw InputError({option + " " + a.name}, "hardware.zero_latency must be true or false, got '" + v + "'");
        return;
    }
    if (!find_param(key)) {
        std::vector<std::string> keys{"zero_latency"};
        for (const ParamDecl& d : param_decls()) keys.push_back(d.key);
        std::string near = did_you_mean(key, keys);
        throw InputError({option + " " + a.name}, "unknown hardware parameter '" + key + "'" +
                                                      (near.empty() ? "" : "; did you mean 'hardware." + near + "'?") +
                                                      " (`hetsim params` lists them)");
    }
    for (const auto& v : a.values) {
        HwProfile scratch;
        set_profile_param(scratch, key, v, SourceLoc{option + " " + a.name + "=" + v});
    }
}

Shard parse_shard(const std::string& text) {
    size_t slash = text.find('/');
    Shard s;
    auto whole = [](const std::string& t, uint64_t* out) {
        if (t.empty() || t.size() > 12 || t.find_first_not_of("0123456789") != std::string::npos) return false;
        *out = std::stoull(t);
        return true;
    };
    if (slash == std::string::npos || !whole(text.substr(0, slash), &s.index) || !whole(text.substr(slash + 1), &s.count) ||
        s.count == 0)
        throw InputError({"--shard " + text}, "expected INDEX/COUNT such as 0/4 (shards are numbered from 0)");
    if (s.index >= s.count)
        throw InputError({"--shard " + text}, "shard index " + std::to_string(s.index) + " is out of range: shards of " +
                                                  std::to_string(s.count) + " are numbered 0.." + std::to_string(s.count - 1));
    return s;
}

void SweepDef::check() const {
    if (axes.empty()) throw InputError({"--vary"}, "nothing to sweep: give at least one --vary NAME=VALUES");
    for (size_t i = 0; i < axes.size(); ++i) {
        for (size_t j = 0; j < i; ++j)
            if (axes[j].name == axes[i].name) throw InputError({"--vary " + axes[i].name}, "'" + axes[i].name + "' is varied twice");
        for (const auto& [k, v] : sets)
            if (k == axes[i].name)
                throw InputError({"--set " + k + "=" + v}, "'" + k + "' is both fixed with --set and varied; drop one");
    }
    size_t nvary = axes.size() - (has_compare ? 1 : 0);
    if (zip)
        for (size_t i = 1; i < nvary; ++i)
            if (axes[i].values.size() != axes[0].values.size())
                throw InputError({"--zip"}, "--zip pairs values, but " + axes[0].name + " has " + std::to_string(axes[0].values.size()) +
                                                " and " + axes[i].name + " has " + std::to_string(axes[i].values.size()));
    u128 n = 1;
    for (size_t i = 0; i < axes.size(); ++i)
        if (!zip || i == 0 || i >= nvary) {
            n *= axes[i].values.size();
            if (n > kMaxPoints) throw InputError({"--vary"}, "the sweep has more than " + std::to_string(kMaxPoints) + " points");
        }
}

uint64_t SweepDef::points() const {
    uint64_t n = 1;
    size_t nvary = axes.size() - (has_compare ? 1 : 0);
    for (size_t i = 0; i < axes.size(); ++i)
        if (!zip || i == 0 || i >= nvary) n *= axes[i].values.size();
    return n;
}

std::vector<size_t> SweepDef::coords(uint64_t point) const {
    std::vector<size_t> c(axes.size());
    if (zip) {
        size_t nvary = axes.size() - (has_compare ? 1 : 0);
        uint64_t inner = has_compare ? axes.back().values.size() : 1;
        for (size_t i = 0; i < nvary; ++i) c[i] = point / inner;
        if (has_compare) c.back() = point % inner;
        return c;
    }
    for (size_t i = axes.size(); i-- > 0;) {
        c[i] = point % axes[i].values.size();
        point /= axes[i].values.size();
    }
    return c;
}

Sets SweepDef::point_sets(uint64_t point) const {
    Sets s = sets;
    std::vector<size_t> c = coords(point);
    for (size_t i = 0; i < axes.size(); ++i) s.emplace_back(axes[i].name, axes[i].values[c[i]]);
    return s;
}

std::string SweepDef::describe_point(uint64_t point) const {
    std::vector<size_t> c = coords(point);
    std::string s;
    for (size_t i = 0; i < axes.size(); ++i) s += (i ? " " : "") + axes[i].name + "=" + axes[i].values[c[i]];
    return s;
}

std::string SweepDef::definition_json() const {
    nlohmann::json j;
    j["format"] = "hetsim-sweep 1";
    j["scenario"] = scenario;
    j["scenario_fnv1a"] = scenario_hash;
    j["sets"] = nlohmann::json::array();
    for (const auto& [k, v] : sets) j["sets"].push_back({k, v});
    j["axes"] = nlohmann::json::array();
    for (const Axis& a : axes) j["axes"].push_back({{"name", a.name}, {"values", a.values}, {"log", a.log_scale}});
    j["compare"] = has_compare;
    j["zip"] = zip;
    j["max_ops"] = max_ops;
    j["points"] = points();
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // argv may hold invalid UTF-8
}

std::string SweepDef::identity_of(const std::string& definition) {
    nlohmann::json j = nlohmann::json::parse(definition);
    if (!j.is_object() || !j.contains("format")) throw std::runtime_error("not a sweep definition");
    j.erase("scenario");
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // argv may hold invalid UTF-8
}

const Axis* SweepDef::axis(const std::string& name) const {
    int i = axis_index(name);
    return i < 0 ? nullptr : &axes[static_cast<size_t>(i)];
}

int SweepDef::axis_index(const std::string& name) const {
    for (size_t i = 0; i < axes.size(); ++i)
        if (axes[i].name == name) return static_cast<int>(i);
    return -1;
}

std::string fnv1a_hex(const std::string& bytes) {
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

}  // namespace hetsim::sweep
