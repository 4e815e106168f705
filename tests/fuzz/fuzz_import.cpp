// libFuzzer target: a PyTorch profiler (Kineto) trace through `hetsim import` and the trace side
// of `hetsim compare`: read_kineto_trace (gzip detection, JSON syntax, the trace's schema, event
// fields), build_workload (threads, steps, correlation of calls and GPU work, folding),
// write_scenario, then the scenario it writes: it must load (the CLI calls a scenario that does
// not load an internal error), simulate, and read the trace back as its measured timeline
// (read_kineto_measured, step_errors). Seeds are tests/fuzz/seeds/import/ (small traces cut from
// validation/measurements/h200/pytorch/) and tests/bad/import/*.json
// (`./hetsim fuzz import SECONDS`).
//
// Bad input is an expected outcome (hetsim::InputError, and the engine's DeadlockError for the
// simulated-time cap); anything else is a crash, and so is an imported scenario that does not load.
#include <cstdio>

#include "fuzz_input_file.hpp"
#include "core/error.hpp"
#include "frontend/profile_loader.hpp"
#include "frontend/scenario.hpp"
#include "import/emit.hpp"
#include "import/kineto_trace.hpp"
#include "import/measured.hpp"
#include "import/workload.hpp"
#include "sim/engine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string& path = hetsim_fuzz::write_input(data, size);
    hetsim::import::Workload w;
    std::string yaml;
    try {
        const hetsim::import::KinetoTrace t = hetsim::import::read_kineto_trace(path);
        w = hetsim::import::build_workload(t, {});
        hetsim::import::EmitOptions eo;
        eo.source = path;
        const hetsim::HwProfile prof = hetsim::load_profile(w.profile, hetsim::SourceLoc{path});
        hetsim::import::check_kernels_fit(w, prof, path);  // as `hetsim import` does
        eo.pin_bandwidth = prof.pageable_h2d_warm_bw;
        eo.pin_bandwidth_from = "host.pageable_h2d_warm_bandwidth of " + w.profile;
        yaml = hetsim::import::write_scenario(w, eo);
    } catch (const hetsim::InputError&) {
        return 0;
    }
    // What import wrote must load, as `hetsim import` requires.
    hetsim::Scenario sc;
    try {
        sc = hetsim::load_scenario_text(yaml, "imported.yaml");
    } catch (const hetsim::InputError& e) {
        std::fprintf(stderr, "the imported scenario does not load: %s\n", e.what());
        __builtin_trap();
    }
    hetsim::EngineOptions opts;
    opts.time_limit = hetsim::Time::ps(int64_t{3600} * 1'000'000'000'000);  // an hour of simulated time
    try {
        const hetsim::Timeline simulated = hetsim::simulate(sc.program, sc.profile, opts);
        const hetsim::import::MeasuredTrace m = hetsim::import::read_kineto_measured(path, sc.program);
        const std::vector<hetsim::import::StepError> steps = hetsim::import::step_errors(m, simulated);
        if (steps.size() > m.step_length.size()) __builtin_trap();
    } catch (const hetsim::InputError&) {
    } catch (const hetsim::DeadlockError&) {
    }
    return 0;
}
