// Hardware profile: every parameter of the model, declared once (design.md practice 8).
// The same declaration table feeds the profile loader, inline overrides in scenarios,
// `--set hardware.<key>=value`, sweeps and `hetsim params`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace hetsim {

enum class Dim : uint8_t { None, Time, Bytes, Bandwidth };
const char* to_string(Dim d);

struct HwProfile {
    std::string name;
    // Host-side API call costs (time the calling host thread is busy).
    Time launch_cost, memcpy_call_cost, memset_call_cost, event_record_cost, stream_wait_event_cost,
        sync_call_cost, prefetch_call_cost;
    Time sync_wakeup;  // GPU work done -> blocked host call returns
    double launch_contention = 0;  // API call cost x (1 + this x other threads inside API calls)
    // Pageable copies: the host stages through pinned bounce buffers at its own memcpy speed.
    uint64_t pageable_h2d_bw = 0, pageable_d2h_bw = 0, staging_chunk = 0;
    // Pinned copies: fixed cost + bytes / bandwidth, one copy engine queue per direction.
    Time h2d_fixed, d2h_fixed, d2d_fixed, memset_fixed;
    uint64_t h2d_bw = 0, d2h_bw = 0, d2d_bw = 0, memset_bw = 0;
    // GPU-side latencies.
    Time launch_latency;  // API call returns -> GPU work may start on an idle stream
    Time stream_gap;      // dependent ops in one stream: end -> next start
    Time event_gap;       // dependency through an event or the legacy stream
    // SMs and HBM.
    uint64_t sm_count = 0, sm_threads = 0, sm_blocks = 0, sm_registers = 0, sm_shared_memory = 0;
    uint64_t hbm_bw = 0;
    double peak_flops = 0;  // FLOP/s for the roofline
    Time kernel_min_duration;
    bool hbm_sharing = true;  // memory-bound kernels share HBM bandwidth
    // Unified memory.
    uint64_t um_fault_bw = 0, um_prefetch_h2d_bw = 0, um_prefetch_d2h_bw = 0, um_cpu_fault_bw = 0;
    uint64_t device_memory = 0;
};

struct ParamDecl {
    const char* key;          // e.g. "copy.h2d.bandwidth"
    Dim dim;
    bool latency;             // zeroed by `zero_latency: true`
    const char* description;
    // Exactly one of these points into HwProfile.
    Time HwProfile::*time = nullptr;
    uint64_t HwProfile::*count = nullptr;  // bytes, bandwidth (B/s) or a plain count
    double HwProfile::*real = nullptr;
    bool HwProfile::*flag = nullptr;
    bool positive = false;    // must be > 0 (bandwidths, SM resources)
};

const std::vector<ParamDecl>& param_decls();
const ParamDecl* find_param(const std::string& key);

// Returns the directory holding the shipped profiles (hw/profiles).
std::string profiles_dir();

}  // namespace hetsim
