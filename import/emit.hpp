// A workload (import/workload.hpp) written as a hetsim scenario: YAML text that the frontend
// loads, with a header that says what was measured and what is modelled, `steps` recorded, and
// the what-if knobs as params whose `if:` blocks apply each transform (docs/import.md).
#pragma once
#include <cstdint>
#include <string>

#include "import/workload.hpp"
#include "models/profile.hpp"

namespace hetsim::import {

struct EmitOptions {
    std::string source;            // the trace as the user named it (the header says it)
    uint64_t pin_bandwidth = 0;    // bytes/s of a host copy into pinned memory (pin_memory's cost); 0: none
    std::string pin_bandwidth_from;  // where that figure comes from, for the header
};

std::string write_scenario(const Workload& w, const EmitOptions& o);

// Throws InputError naming `trace` when a kernel of the workload, with the shape the scenario
// gives it, cannot run on an SM of `hw` (threads, registers or shared memory per SM): a trace of
// another GPU imported for this one, or a damaged trace; the scenario would not load.
void check_kernels_fit(const Workload& w, const HwProfile& hw, const std::string& trace);

// "12.345us", "30.123456ms", "850ns": exact, in the unit that reads best.
std::string format_ns(int64_t ns);
// "3MiB", "4KiB", "3145729B": exact.
std::string format_size(uint64_t bytes);

}  // namespace hetsim::import
