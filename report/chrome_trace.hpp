// Chrome Trace Event Format JSON for chrome://tracing and Perfetto: a "Host" process with one
// track per host thread, a "GPU" process with one track per stream and per engine (copy
// engines, SMs), and flow arrows from each launch to its GPU work and from event records to
// the work they release.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "core/timeline.hpp"

namespace hetsim::report {

constexpr int kHostPid = 1;
constexpr int kGpuPid = 2;

// Track ids: host thread i -> tid i + 1 on kHostPid (0 for host work with no thread);
// stream s -> tid s + 1 on kGpuPid; engine e -> kEngineTidBase + 100 * int(e) + row on kGpuPid.
// Work that overlaps on one engine (concurrent kernels on the SMs) is spread over rows
// "SMs", "SMs (2)", ... so that slices on a track never partially overlap.
constexpr int kEngineTidBase = 10000;

// Deterministic: ts is microseconds printed with 6 decimals (exact picoseconds); dur is such
// that a viewer's ts + dur in double arithmetic lands exactly on the double of the end time
// (format_dur_us), so slices that touch in picoseconds touch in every viewer, never overlap.
void write_chrome_trace(std::ostream& os, const Program& p, const Timeline& t);

// One timeline of a trace holding several timelines of the same program.
struct TraceTimeline {
    const Timeline* timeline = nullptr;
    std::string host_process, gpu_process;  // process names, e.g. "Simulated host", "Simulated GPU"
};

// Several timelines in one trace, each with write_chrome_trace's track layout: timeline k
// (from 0) has its host threads on pid 2k + 1 and its streams and engines on pid 2k + 2,
// processes sorted in that order. Flow ids are unique over the whole trace.
void write_chrome_trace_multi(std::ostream& os, const Program& p, const std::vector<TraceTimeline>& timelines);

// "12.345678": microseconds with 6 decimals, exact for a picosecond time.
std::string format_us(Time t);

// The "dur" of a slice from `start` to `end`: format_us(end - start) when
// double(ts) + double(that) == double(format_us(end)) (almost always), else the shortest text of
// the double x with double(ts) + x == double(end) (or, where none exists, the largest below).
// ("1132.2462939999998" for ts 3500 and end 4632.246294, whose exact 1132.246294 sums to
// 4632.2462940000005 in double and overlapped the next slice.)
std::string format_dur_us(Time start, Time end);

}  // namespace hetsim::report
