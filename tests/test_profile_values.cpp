// Every shipped profile keeps the effective value of every parameter: the table
// tests/profiles/shipped_values.txt was generated from the profiles as they were before
// profiles could name a `base:` (each restating every parameter), and any change of a shipped
// profile's values shows up here. Regenerate it only on purpose:
//   build/hetsim-tests '[.regen]' | grep -E '^(h200|h100-sxm|h100-pcie|a100-pcie|gh200) ' > tests/profiles/shipped_values.txt
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "frontend/profile_loader.hpp"

using namespace hetsim;

namespace {

const char* const kShipped[] = {"h200", "h100-sxm", "h100-pcie", "a100-pcie", "gh200"};

// Exact text of one value in base units: integer picoseconds, bytes, bytes/s; doubles to 17 digits.
std::string exact(const HwProfile& p, const ParamDecl& d) {
    char buf[64];
    if (d.time) return std::to_string((p.*(d.time)).ps()) + "ps";
    if (d.count) return std::to_string(p.*(d.count));
    if (d.real) {
        std::snprintf(buf, sizeof buf, "%.17g", p.*(d.real));
        return buf;
    }
    if (d.flag) return p.*(d.flag) ? "true" : "false";
    if (d.rule) return p.rules.*(d.rule) ? "true" : "false";
    if (d.curve) {
        const Curve& c = p.*(d.curve);
        if (c.points.empty()) return "none";
        std::string s;
        for (const auto& [bytes, eff] : c.points) {
            std::snprintf(buf, sizeof buf, "%.17g", eff);
            s += (s.empty() ? "" : ",") + std::to_string(bytes) + ":" + buf;
        }
        return s;
    }
    return "?";
}

}  // namespace

TEST_CASE("profiles: print the effective values of the shipped profiles", "[.regen]") {
    for (const char* name : kShipped) {
        HwProfile p = load_profile(name, {});
        std::cout << name << " name " << p.name << "\n";
        for (const auto& d : param_decls()) std::cout << name << " " << d.key << " " << exact(p, d) << "\n";
    }
}

TEST_CASE("profiles: every shipped profile keeps every effective value") {
    std::ifstream in(std::string(HETSIM_SOURCE_DIR) + "/tests/profiles/shipped_values.txt");
    REQUIRE(in.good());
    std::map<std::string, std::map<std::string, std::string>> want;  // profile -> key -> exact value
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream s(line);
        std::string profile, key, value;
        s >> profile >> key >> value;
        REQUIRE(!value.empty());
        want[profile][key] = value;
    }
    REQUIRE(want.size() == std::size(kShipped));
    for (const char* name : kShipped) {
        INFO("profile " << name);
        HwProfile p = load_profile(name, {});
        auto& w = want[name];
        CHECK(w["name"] == p.name);
        size_t compared = 1;
        for (const auto& d : param_decls()) {
            INFO("parameter " << d.key);
            auto it = w.find(d.key);
            if (it == w.end()) {
                FAIL_CHECK("not in tests/profiles/shipped_values.txt");
                continue;
            }
            CHECK(exact(p, d) == it->second);
            ++compared;
        }
        CHECK(compared == w.size());  // no parameter of the table went missing from the declarations
    }
}

TEST_CASE("profiles: the shipped profiles other than h200 state only what differs from it") {
    const HwProfile h200 = load_profile("h200", {});
    for (const char* name : {"h100-sxm", "h100-pcie", "a100-pcie", "gh200"}) {
        INFO("profile " << name);
        LoadedProfile lp = load_profile_sources(name, {});
        REQUIRE(lp.files.size() == 2);
        CHECK(lp.files[1].name == "h200");
        const auto& decls = param_decls();
        for (size_t k = 0; k < decls.size(); ++k) {
            INFO("parameter " << decls[k].key);
            CHECK(lp.origin[k] >= 0);
            if (lp.origin[k] == 0) CHECK(exact(lp.profile, decls[k]) != exact(h200, decls[k]));
        }
    }
}
