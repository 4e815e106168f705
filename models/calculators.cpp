// Calculators of the seed page "CPU GPU Heterogeneous Scheduling"; see calculators.hpp.
// Validation follows the seed's Python functions, with an English message per parameter.
#include "models/calculators.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hetsim::calc {

namespace {

// Requires a finite value >= 0; `unit` completes "a finite non-negative number ..." ("in ms").
void require_non_negative(const char* name, double v, const char* unit) {
    if (!std::isfinite(v) || v < 0) {
        throw CalcError(std::string(name) + " must be a finite non-negative number " + unit +
                        ", got " + format_number(v));
    }
}

void require_bandwidth(double bandwidth_gbps) {
    if (!std::isfinite(bandwidth_gbps) || bandwidth_gbps <= 0) {
        throw CalcError("bandwidth_gbps must be a finite positive number in GB/s, got " +
                        format_number(bandwidth_gbps));
    }
}

// Guards against inputs so large that a result overflows to infinity.
void require_finite_result(const char* name, double v) {
    if (!std::isfinite(v)) {
        throw CalcError(std::string(name) + " is not a finite number (" + format_number(v) +
                        "); the inputs are too large to compute it");
    }
}

}  // namespace

StagePlacement stage_placement(double cpu_ms, double gpu_ms, double input_bytes,
                               double output_bytes, double bandwidth_gbps, double fixed_ms) {
    require_non_negative("cpu_ms", cpu_ms, "in ms");
    require_non_negative("gpu_ms", gpu_ms, "in ms");
    require_non_negative("input_bytes", input_bytes, "of bytes");
    require_non_negative("output_bytes", output_bytes, "of bytes");
    require_non_negative("fixed_ms", fixed_ms, "in ms");
    require_bandwidth(bandwidth_gbps);

    StagePlacement r;
    r.cpu_path_ms = cpu_ms;
    r.gpu_compute_ms = gpu_ms;
    r.transfer_ms = (input_bytes + output_bytes) / (bandwidth_gbps * 1e9) * 1e3 + fixed_ms;
    r.gpu_path_ms = gpu_ms + r.transfer_ms;
    require_finite_result("transfer_ms", r.transfer_ms);
    require_finite_result("gpu_path_ms", r.gpu_path_ms);
    r.shorter = r.gpu_path_ms < cpu_ms ? "gpu" : cpu_ms < r.gpu_path_ms ? "cpu" : "equal";
    return r;
}

OverlapTimeline overlap_timeline(double copy_ms, double compute_ms, double dependency_ms) {
    require_non_negative("copy_ms", copy_ms, "in ms");
    require_non_negative("compute_ms", compute_ms, "in ms");
    require_non_negative("dependency_ms", dependency_ms, "in ms");
    if (dependency_ms > copy_ms) {
        throw CalcError("dependency_ms must not exceed copy_ms (it is the copy prefix the compute "
                        "waits for; set it to copy_ms when the compute needs the whole copy), got "
                        "dependency_ms " + format_number(dependency_ms) + " > copy_ms " +
                        format_number(copy_ms));
    }
    OverlapTimeline r;
    r.serial_ms = copy_ms + compute_ms;
    r.elapsed_ms = dependency_ms + std::max(copy_ms - dependency_ms, compute_ms);
    r.hidden_ms = r.serial_ms - r.elapsed_ms;
    require_finite_result("serial_ms", r.serial_ms);
    require_finite_result("elapsed_ms", r.elapsed_ms);
    return r;
}

OffloadLedger offload_ledger(double state_gb, double bandwidth_gbps, std::int64_t round_trips,
                             double overlap_ratio) {
    require_non_negative("state_gb", state_gb, "in GB");
    require_bandwidth(bandwidth_gbps);
    if (round_trips < 0) {
        throw CalcError("round_trips must be a non-negative integer (round trips per step), got " +
                        std::to_string(round_trips));
    }
    if (!std::isfinite(overlap_ratio) || overlap_ratio < 0 || overlap_ratio > 1) {
        throw CalcError("overlap_ratio must be a finite number in [0, 1] (the assumed hidden "
                        "fraction of the transfer), got " + format_number(overlap_ratio));
    }
    OffloadLedger r;
    r.offloaded_state_gb = state_gb;
    r.transfer_gb_per_step = state_gb * 2 * static_cast<double>(round_trips);
    r.transfer_ms = r.transfer_gb_per_step / bandwidth_gbps * 1e3;
    r.estimated_exposed_ms = r.transfer_ms * (1 - overlap_ratio);
    require_finite_result("transfer_gb_per_step", r.transfer_gb_per_step);
    require_finite_result("transfer_ms", r.transfer_ms);
    return r;
}

ParallelismEvidence parallelism_evidence(double serial_ms, double elapsed_ms, double gpu_active_ms,
                                         double exposed_sync_ms) {
    require_non_negative("serial_ms", serial_ms, "in ms");
    require_non_negative("elapsed_ms", elapsed_ms, "in ms");
    require_non_negative("gpu_active_ms", gpu_active_ms, "in ms");
    require_non_negative("exposed_sync_ms", exposed_sync_ms, "in ms");
    if (serial_ms == 0) {
        throw CalcError("serial_ms must be positive (the serial run of the same workload takes "
                        "time), got 0");
    }
    if (elapsed_ms == 0) {
        throw CalcError("elapsed_ms must be positive (it is the observed window and the divisor "
                        "of every ratio), got 0");
    }
    if (gpu_active_ms + exposed_sync_ms > elapsed_ms) {
        throw CalcError("gpu_active_ms + exposed_sync_ms must not exceed elapsed_ms (they are "
                        "disjoint intervals inside the observed window), got " +
                        format_number(gpu_active_ms) + " + " + format_number(exposed_sync_ms) +
                        " > " + format_number(elapsed_ms));
    }
    ParallelismEvidence r;
    r.speedup = serial_ms / elapsed_ms;
    r.elapsed_saved_ms = serial_ms - elapsed_ms;
    r.active_time_fraction = gpu_active_ms / elapsed_ms;
    r.exposed_sync_fraction = exposed_sync_ms / elapsed_ms;
    require_finite_result("speedup", r.speedup);
    return r;
}

std::string format_number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (v == 0) return "0";
    char buf[512];
    const double a = std::fabs(v);
    if (a < 1e-4 || a >= 1e15) {
        std::snprintf(buf, sizeof buf, "%.6g", v);
        return buf;
    }
    std::snprintf(buf, sizeof buf, "%.6f", v);
    std::string s = buf;
    if (s.find('.') != std::string::npos) {
        while (!s.empty() && s.back() == '0') s.pop_back();
        if (!s.empty() && s.back() == '.') s.pop_back();
    }
    if (s == "-0") s = "0";
    return s;
}

}  // namespace hetsim::calc
