// The discrete-event engine: simulates a lowered Program on a hardware profile and returns
// the timeline. Dependencies are bound the way CUDA binds them, at the simulated time of
// each host call: stream order, event records (the most recent record issued before a wait),
// the legacy default stream's implicit synchronisation, syncs, and `after` lists.
#pragma once
#include <stdexcept>

#include "models/profile.hpp"
#include "core/program.hpp"
#include "core/timeline.hpp"

namespace hetsim {

// Ops left pending when no event remains: names them and what they wait on.
class DeadlockError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct EngineOptions {
    Time time_limit = Time::max();  // stop with an error past this simulated time
};

Timeline simulate(const Program& program, const HwProfile& hw, const EngineOptions& opts = {});

}  // namespace hetsim
