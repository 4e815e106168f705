// libFuzzer target: a scenario file (YAML text) through parsing, lowering, simulation, analysis
// and the JSON report, with a small op cap and a short simulated-time cap.
//
// Built only on request (the `fuzz` preset of CMakePresets.json, clang with
// -fsanitize=fuzzer,address,undefined); run with `./hetsim fuzz SECONDS`, which seeds the corpus
// with every shipped scenario (scenarios/**/*.yaml).
//
// Bad input is an expected outcome: hetsim::InputError (a file:line:col message) and
// hetsim::DeadlockError (a deadlock or the time cap; both exit 2 in the CLI) are caught. Any
// other exception escapes and libFuzzer reports it as a crash, as it does a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/scenario.hpp"
#include "report/analysis.hpp"
#include "report/json_report.hpp"
#include "sim/engine.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    hetsim::LoadOptions lo;
    lo.max_ops = 10'000;
    hetsim::EngineOptions eo;
    eo.time_limit = hetsim::Time::ps(int64_t{60} * 1'000'000'000'000);  // 60 s of simulated time
    try {
        hetsim::Scenario sc = hetsim::load_scenario_text(text, "fuzz.yaml", lo);
        hetsim::Timeline tl = hetsim::simulate(sc.program, sc.profile, eo);
        hetsim::report::Analysis an = hetsim::report::analyze(sc.program, tl);
        const std::string json = hetsim::report::dump_json(hetsim::report::to_json(sc.program, tl, an));
        if (json.empty()) __builtin_trap();
    } catch (const hetsim::InputError&) {
    } catch (const hetsim::DeadlockError&) {
    }
    return 0;
}
