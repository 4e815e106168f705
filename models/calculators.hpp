// Closed-form calculators from the seed tutorial page "CPU GPU Heterogeneous Scheduling"
// (shared/seeds/002_117bb79f34b90d66.txt): stage placement, copy/compute overlap, CPU-offload
// ledger and parallelism evidence. They are back-of-the-envelope estimates, not simulations:
// nothing here measures bandwidth or runs a device. Units: time in ms, bandwidth in decimal
// GB/s (1e9 bytes per second), sizes in bytes (stage) or decimal GB (offload).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace hetsim::calc {

// Thrown for an invalid calculator input; the message names the parameter, says what a valid
// value looks like and shows the value received.
class CalcError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Q1: a stage kept on the CPU versus moved to the GPU with a serial round trip of its input
// and output bytes (same bandwidth both ways) plus a fixed per-round-trip overhead.
struct StagePlacement {
    double cpu_path_ms = 0;     // = cpu_ms
    double gpu_compute_ms = 0;  // = gpu_ms
    double transfer_ms = 0;     // (input_bytes + output_bytes) / (bandwidth_gbps * 1e9) * 1e3 + fixed_ms
    double gpu_path_ms = 0;     // gpu_compute_ms + transfer_ms
    std::string shorter;        // "cpu", "gpu" or "equal": the shorter estimated path
};
StagePlacement stage_placement(double cpu_ms, double gpu_ms, double input_bytes,
                               double output_bytes, double bandwidth_gbps, double fixed_ms = 0.0);

// Q2: copy then compute, where the compute must wait for a copy prefix of dependency_ms and the
// rest of the copy may overlap the compute.
struct OverlapTimeline {
    double serial_ms = 0;   // copy_ms + compute_ms
    double elapsed_ms = 0;  // dependency_ms + max(copy_ms - dependency_ms, compute_ms)
    double hidden_ms = 0;   // serial_ms - elapsed_ms
};
OverlapTimeline overlap_timeline(double copy_ms, double compute_ms, double dependency_ms = 0.0);

// Q3: state offloaded to the CPU; one round trip moves the state twice (out and back).
struct OffloadLedger {
    double offloaded_state_gb = 0;    // = state_gb
    double transfer_gb_per_step = 0;  // state_gb * 2 * round_trips
    double transfer_ms = 0;           // transfer_gb_per_step / bandwidth_gbps * 1e3 (per step)
    double estimated_exposed_ms = 0;  // transfer_ms * (1 - overlap_ratio) (per step)
};
OffloadLedger offload_ledger(double state_gb, double bandwidth_gbps, std::int64_t round_trips = 1,
                             double overlap_ratio = 0.0);

// Q4: the same workload run serially and as a candidate timeline. gpu_active_ms is the union of
// GPU-active intervals and exposed_sync_ms the exposed synchronisation wait; the two are
// disjoint and lie inside the elapsed window. active_time_fraction is time coverage, not
// hardware utilisation.
struct ParallelismEvidence {
    double speedup = 0;                // serial_ms / elapsed_ms
    double elapsed_saved_ms = 0;       // serial_ms - elapsed_ms (negative: the candidate is slower)
    double active_time_fraction = 0;   // gpu_active_ms / elapsed_ms
    double exposed_sync_fraction = 0;  // exposed_sync_ms / elapsed_ms
};
ParallelismEvidence parallelism_evidence(double serial_ms, double elapsed_ms, double gpu_active_ms,
                                         double exposed_sync_ms);

// Deterministic text for a double: fixed-point with at most 6 decimals, trailing zeros and a
// trailing '.' trimmed ("8.1", "250", "0.9375"); "-0" becomes "0". Magnitudes below 1e-4 or
// from 1e15 up use 6 significant digits in exponent form ("1.5e-07"); non-finite values are
// "nan", "inf" and "-inf".
std::string format_number(double v);

}  // namespace hetsim::calc
