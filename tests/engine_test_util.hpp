// Helpers for the engine tests (tests/test_engine*.cpp): load an inline scenario, simulate it,
// and check an op's phases by its name (Program::op_name) to the picosecond.
#pragma once
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "frontend/scenario.hpp"
#include "sim/engine.hpp"

namespace hetsim::enginetest {

struct Sim {
    Scenario sc;
    Timeline tl;

    // The record of the one op named `name`; fails the test if there is not exactly one.
    const OpRecord& op(const std::string& name) const {
        int found = -1, count = 0;
        for (uint32_t i = 0; i < sc.program.ops.size(); ++i)
            if (sc.program.op_name(i) == name) found = static_cast<int>(i), ++count;
        INFO("op '" << name << "'");
        REQUIRE(count == 1);
        return tl.ops[static_cast<size_t>(found)];
    }
};

inline Sim run(const std::string& yaml) {
    Sim s{load_scenario_text(yaml, "engine_test.yaml"), {}};
    s.tl = simulate(s.sc.program, s.sc.profile);
    return s;
}

constexpr Time us(int64_t v) { return Time::us(v); }
constexpr Time ns(int64_t v) { return Time::ns(v); }

// Lossless text of a time, so a failed check prints both values readably: "104.000000us".
inline std::string show(Time t) {
    if (t.ps() == OpRecord::kUnset) return "unset";
    int64_t v = t.ps();
    std::string sign = v < 0 ? "-" : "";
    if (v < 0) v = -v;
    std::string frac = std::to_string(v % 1'000'000);
    return sign + std::to_string(v / 1'000'000) + "." + std::string(6 - frac.size(), '0') + frac + "us";
}

inline void check_host(const Sim& s, const std::string& name, Time start, Time end) {
    const OpRecord& r = s.op(name);
    INFO("host phase of '" << name << "'");
    CHECK(show(r.host_start) == show(start));
    CHECK(show(r.host_end) == show(end));
}

inline void check_gpu(const Sim& s, const std::string& name, Time start, Time end) {
    const OpRecord& r = s.op(name);
    INFO("GPU phase of '" << name << "'");
    CHECK(show(r.gpu_start) == show(start));
    CHECK(show(r.gpu_end) == show(end));
}

inline void check_wait(const Sim& s, const std::string& name, Time wait) {
    INFO("sync wait of '" << name << "'");
    CHECK(show(s.op(name).sync_wait) == show(wait));
}

inline void check_end(const Sim& s, Time end) {
    INFO("end to end");
    CHECK(show(s.tl.end_to_end) == show(end));
}

}  // namespace hetsim::enginetest
