// Why the GPU idles: the idle time of the GPU as a whole (no GPU phase running) and of each
// engine (the SMs, each copy engine, the device-copy path), split into causes.
//
// For each idle gap of a lane, the op that starts its next busy block is followed back through
// the causes the engine recorded (OpRecord::host_cause / gpu_cause), the way the critical path
// is: from the gap's end back to its start, each stretch of the gap goes to what was running or
// waited for then: the phase that released the op (host work on a thread, an API call, a copy,
// a kernel, a host queue get ...) or the latency on the edge between them (launch latency, a
// sync wake-up, an event's gap, a hardware queue shared with another stream). The time after a
// lane's last work is "nothing left to do". The stretches partition each gap, so the causes sum
// exactly to the idle time (in picoseconds, and in the integer nanoseconds reported).
// Pure function of (Program, Timeline); linear in ops plus the ops each gap's walk visits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "core/time.hpp"
#include "core/timeline.hpp"

namespace hetsim::report {

struct IdleCause {
    std::string cause;  // one of idle_cause_kinds(): "host_work", "launch_overhead", "copy", ...
    std::string what;   // in the user's words: "load_batch on host:main", "H2D pageable staging of upload on host:main"
    Time time;
    int64_t ns = 0;     // integer nanoseconds; the ns of a lane's causes sum to its idle_ns
};

struct IdleLane {
    std::string name;   // "gpu" (any engine or stream), "sm", "copy:h2d", "copy:d2h", "device_copy"
    Time idle;          // elapsed minus the lane's busy union
    int64_t idle_ns = 0;  // idle rounded to the nearest nanosecond (half up)
    std::vector<IdleCause> causes;  // largest first (ties: cause, then what)
};

struct IdleReport {
    std::vector<IdleLane> lanes;  // "gpu" first, then the engines the run used
    const IdleLane* lane(const std::string& name) const;
};

IdleReport attribute_idle(const Program& p, const Timeline& t);

// Every cause id, in a fixed order (the sweep CSV's columns).
const std::vector<std::string>& idle_cause_kinds();
// "host work", "API calls and launch overhead", ...: the cause in words.
const char* idle_cause_words(const std::string& cause);
// "host work: load_batch on host:main".
std::string idle_cause_text(const IdleCause& c);
// "GPU (no engine or stream busy)", "SMs", "copy engine H2D", ...
std::string idle_lane_words(const std::string& lane);

}  // namespace hetsim::report
