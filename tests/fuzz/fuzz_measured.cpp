// libFuzzer target: a measured timeline (the JSON that hetsim-runner writes) through `hetsim
// compare`'s reading and comparison: read_measured (JSON syntax, duplicate keys, the schema, op
// indices, names, kinds, phases, end to end, uninstrumented runs and their host stamps), compare_timelines and the JSON
// comparison. The scenario is tests/bad/measured/scenario.yaml (3 ops), loaded once; seeds are
// tests/fuzz/seeds/measured/ and tests/bad/measured/*.json (`./hetsim fuzz measured SECONDS`).
//
// Bad input is an expected outcome (hetsim::InputError); anything else is a crash.
#include "fuzz_input_file.hpp"
#include "core/error.hpp"
#include "frontend/scenario.hpp"
#include "report/compare.hpp"
#include "report/json_report.hpp"
#include "sim/engine.hpp"

namespace {
struct Fixture {
    hetsim::Scenario sc = hetsim::load_scenario("tests/bad/measured/scenario.yaml");
    hetsim::Timeline simulated = hetsim::simulate(sc.program, sc.profile);
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const Fixture fx;
    const std::string& path = hetsim_fuzz::write_input(data, size);
    try {
        hetsim::report::Measured m = hetsim::report::read_measured(path, fx.sc.program);
        hetsim::report::Comparison c = hetsim::report::compare_timelines(fx.sc.program, fx.simulated, m.timeline, 10, m.uninstrumented, &m.unobserved);
        const std::string json =
            hetsim::report::dump_json(hetsim::report::comparison_to_json(fx.sc.program, c, "scenario.yaml", path));
        if (json.empty()) __builtin_trap();
    } catch (const hetsim::InputError&) {
    }
    return 0;
}
