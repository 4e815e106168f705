// What a timeline says about overlap: busy time per resource, the parallelism evidence
// (serial vs elapsed work, exposed sync waits, GPU active union) and the critical path.
// Pure functions of (Program, Timeline); every report writer reads the same Analysis.
// analyze() is linear in ops and keeps nothing per op: one pass over the timeline notes which
// phases each lane holds and whether they come in op order (program order, stream order, FIFO
// engines: almost always), then one sweep over the lanes in time order reads each lane's phases
// straight from the timeline, merging them as it goes, and gives the busy and hidden times and
// the unions of the metrics; only a lane whose phases come out of order is folded into a list of
// blocks first.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "core/time.hpp"
#include "core/timeline.hpp"
#include "report/idle.hpp"

namespace hetsim::report {

// A lane a phase can run on: a host thread, a stream, or a hardware engine.
struct Resource {
    std::string name;   // "host:<thread>", "stream:<name>", "copy:h2d", "copy:d2h", "sm", "device_copy"
    std::string kind;   // "host_thread", "stream", "copy_engine", "sm", "device_copy"
    Time busy;          // length of the union of its intervals (host: sync waits excluded)
    double utilization = 0;  // busy / end_to_end; 0 when end_to_end is 0
    Time hidden;        // part of `busy` overlapping busy time of a resource of another kind
};

// The seed's parallelism evidence (Q4). The GPU active fraction is time coverage,
// not SM, bandwidth or instruction utilisation. Every metric is a length of time within
// [0, elapsed] except serial and hidden (which can exceed elapsed) and speedup; none is negative.
// elapsed = serial - hidden + (elapsed - busy_union), the last term the time nothing ran.
struct Metrics {
    Time serial;            // sum of OpRecord::own_time(): the same work done one thing at a time
    Time elapsed;           // end-to-end time of the timeline
    double speedup = 0;     // serial / elapsed (0 when elapsed is 0)
    Time busy_union;        // time any op was doing its own work: the union of every host phase
                            // (sync waits excluded) and every GPU phase
    Time hidden;            // serial - busy_union: work done while other work ran (>= 0)
    Time exposed_sync;      // time at least one host thread waited for the GPU (union of the
                            // sync waits over threads, so at most elapsed)
    Time gpu_active_union;  // length of the union of all GPU phases
    double gpu_active_fraction = 0;
    double exposed_sync_fraction = 0;  // exposed_sync / elapsed, in [0, 1]
};

struct CriticalStep {
    uint32_t op = 0;
    uint32_t resource = 0;   // index into Analysis::resources of the lane it ran on: the engine
                             // lane for GPU work on an engine, else its stream / host lane
    Phase phase = Phase::Host;
    CauseKind cause = CauseKind::None;  // what released this step
    // The part of the phase on the path: from the end of the step before it (its last
    // dependency) to the phase's end; empty at that point when the phase ended earlier. Steps
    // never overlap: each starts at or after the previous one's end.
    Time start, end;
};

struct KindShare {
    std::string kind;  // a resource kind, or "latency" for time between steps
    Time time;
    double share = 0;  // time / end_to_end
};

struct Analysis {
    Time end_to_end;
    // The result: end_to_end less Timeline::measured_from (measure: {warmup: K}: the last of the
    // K + 1 iterations; without warm-up the whole run).
    Time measured;
    uint32_t warmup = 0;
    std::vector<Resource> resources;          // host threads, streams, then engines
    Metrics metrics;
    std::vector<CriticalStep> critical_path;  // in time order, first step first
    std::vector<KindShare> critical_share;    // kinds in order of first appearance, "latency" last
    IdleReport idle;                          // why the GPU and each engine idle (report/idle.hpp)

    const std::string& lane(const CriticalStep& s) const { return resources[s.resource].name; }
    const std::string& kind(const CriticalStep& s) const { return resources[s.resource].kind; }
};

Analysis analyze(const Program& p, const Timeline& t);

// Consecutive critical-path steps on one lane: what the summary prints as one line.
struct PathSegment {
    uint32_t resource = 0;   // index into Analysis::resources
    Time start, end;
    size_t first = 0, last = 0;  // indices into Analysis::critical_path
};
std::vector<PathSegment> path_segments(const Analysis& a);
// "load[1], upload[1], kernel[1]": the ops of a segment, the first `max_names` of a longer one
// followed by " and N more" (all of them when at most max_names + 1).
std::string segment_ops_text(const Program& p, const Analysis& a, const PathSegment& s, size_t max_names = 4);

// Lane names shared by every report.
std::string host_lane(const Program& p, int32_t thread);  // "host:<name>", "host" when unknown
std::string stream_lane(const Program& p, int32_t stream);  // "stream:<name>"
const char* engine_lane(Engine e);   // "copy:h2d", "copy:d2h", "sm", "device_copy", "" for None
const char* engine_kind(Engine e);   // "copy_engine", "sm", "device_copy", "stream" for None
const char* phase_name(Phase ph);    // "host" / "gpu"
// Lane a GPU phase ran on: its engine lane, or its stream lane when it used no engine.
std::string gpu_run_lane(const Program& p, uint32_t op, const OpRecord& r);

// Exact decimal nanoseconds: "1500" for 1.5 us, "0.250" for 250 ps (3 decimals when not whole).
std::string format_ns(Time t);
// Human time with an automatic unit, 3 decimals: "999.000 ns", "2.002 ms", "1.500 s".
std::string format_time(Time t);

}  // namespace hetsim::report
