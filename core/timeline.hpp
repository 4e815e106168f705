// The simulated (or measured) timeline: one record per op, parallel to Program::ops.
// An op has up to two phases: the host phase (the API call or host work on its thread) and
// the GPU phase (its work on a stream, possibly on a copy engine or the SMs).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/large_alloc.hpp"
#include "core/time.hpp"

namespace hetsim {

enum class Phase : uint8_t { Host = 0, Gpu = 1 };

// Why a phase started when it did: the dependency or resource that released it last.
enum class CauseKind : uint8_t {
    None,          // started at time zero / as soon as issued, nothing held it back
    ProgramOrder,  // previous op of the same host thread
    Submit,        // GPU phase waited for its own API call (launch latency)
    StreamOrder,   // previous op of the same stream
    Event,         // a stream wait on an event record
    Legacy,        // legacy default stream implicit synchronisation
    Sync,          // host waited for GPU work (stream/event/device sync, blocking copy)
    After,         // tasks form `after:` dependency
    Resource,      // copy engine or SM room held by another op
    Queue,         // hardware queue shared with another stream (false dependency)
    HostQueue,     // a host queue: the put that brought the item, or the get that made room
    Flag,          // a flag set by a host_func callback
    Thread,        // another host thread: the op that created this one, or the end of one joined
    GraphExec,     // the previous launch of the same graph (an executable graph runs one launch at a time)
};
const char* to_string(CauseKind k);

struct Cause {
    int32_t op = -1;  // op index, -1 = none
    Phase phase = Phase::Host;
    CauseKind kind = CauseKind::None;
};

// Hardware resources with their own track in the trace.
enum class Engine : int8_t { None = -1, H2D = 0, D2H = 1, Compute = 2, DeviceCopy = 3 };
const char* to_string(Engine e);

struct OpRecord {
    static constexpr int64_t kUnset = -1;
    Time host_start = Time::ps(kUnset), host_end = Time::ps(kUnset);  // host phase, if any
    Time gpu_start = Time::ps(kUnset), gpu_end = Time::ps(kUnset);    // GPU phase, if any
    Time sync_wait;       // part of the host phase spent blocked waiting for the GPU
    Cause host_cause;
    // The engine sits in gpu_cause's tail padding (no_unique_address lets the compiler reuse
    // it): 56 bytes a record instead of 64, an eighth of the timeline's memory.
    [[no_unique_address]] Cause gpu_cause;
    Engine engine = Engine::None;

    bool has_host() const { return host_start.ps() != kUnset; }
    bool has_gpu() const { return gpu_start.ps() != kUnset; }
    Time end() const { return has_gpu() && gpu_end > host_end ? gpu_end : host_end; }
    // Work this op itself does (host work or API call cost, GPU duration), excluding waits.
    // Where the host's busy time overlaps the op's own GPU phase (a pageable copy: the host
    // stages while the DMA runs) the overlap counts once.
    Time own_time() const {
        Time host = has_host() ? (host_end - host_start) - sync_wait : Time{};
        Time gpu = has_gpu() ? gpu_end - gpu_start : Time{};
        if (!has_host() || !has_gpu()) return host + gpu;
        Time overlap = min(host_start + host, gpu_end) - max(host_start, gpu_start);
        return overlap > Time{} ? host + gpu - overlap : host + gpu;
    }
};

static_assert(sizeof(OpRecord) == 56, "OpRecord: 5 times, 2 causes, the engine in the second cause's padding");

struct Timeline {
    std::vector<OpRecord, LargeAlloc<OpRecord>> ops;  // parallel to Program::ops (huge pages when large)
    Time end_to_end;                    // latest end of any phase (time zero = start)
    // Steady state (Program::warmup > 0): when the measured iteration began, the release of the
    // last barrier between iterations; its ops are those without Op::warmup. Zero otherwise.
    Time measured_from;
    // Per-SM block-slot occupancy integral (sum over time of used-thread fraction), for utilisation.
    double sm_thread_occupancy_ps = 0;  // integral of (used threads / total threads) dt
    std::vector<std::string> warnings;  // e.g. a wait on an event that was never recorded
};

}  // namespace hetsim
