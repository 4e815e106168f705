#include "hw/profile.hpp"

#include <cstdlib>

namespace hetsim {

const char* to_string(Dim d) {
    switch (d) {
        case Dim::None: return "number";
        case Dim::Time: return "time";
        case Dim::Bytes: return "size";
        case Dim::Bandwidth: return "bandwidth";
    }
    return "?";
}

namespace {
using P = HwProfile;
ParamDecl t(const char* k, Time P::*m, bool lat, const char* d) {
    ParamDecl p{k, Dim::Time, lat, d};
    p.time = m;
    return p;
}
ParamDecl bw(const char* k, uint64_t P::*m, const char* d) {
    ParamDecl p{k, Dim::Bandwidth, false, d};
    p.count = m;
    p.positive = true;
    return p;
}
ParamDecl sz(const char* k, uint64_t P::*m, const char* d) {
    ParamDecl p{k, Dim::Bytes, false, d};
    p.count = m;
    p.positive = true;
    return p;
}
ParamDecl n(const char* k, uint64_t P::*m, const char* d) {
    ParamDecl p{k, Dim::None, false, d};
    p.count = m;
    p.positive = true;
    return p;
}
}  // namespace

const std::vector<ParamDecl>& param_decls() {
    static const std::vector<ParamDecl> decls = [] {
        std::vector<ParamDecl> v{
            t("host.launch_cost", &P::launch_cost, true, "host time of cudaLaunchKernel"),
            t("host.memcpy_call_cost", &P::memcpy_call_cost, true, "host time of a cudaMemcpy(Async) call"),
            t("host.memset_call_cost", &P::memset_call_cost, true, "host time of a cudaMemset(Async) call"),
            t("host.event_record_cost", &P::event_record_cost, true, "host time of cudaEventRecord"),
            t("host.stream_wait_event_cost", &P::stream_wait_event_cost, true, "host time of cudaStreamWaitEvent"),
            t("host.sync_call_cost", &P::sync_call_cost, true, "host time of a sync call with nothing to wait for"),
            t("host.prefetch_call_cost", &P::prefetch_call_cost, true, "host time of cudaMemPrefetchAsync"),
            t("host.sync_wakeup", &P::sync_wakeup, true, "GPU work done -> blocked sync call returns"),
            bw("host.pageable_h2d_bandwidth", &P::pageable_h2d_bw, "host staging speed of pageable H2D copies"),
            bw("host.pageable_d2h_bandwidth", &P::pageable_d2h_bw, "host staging speed of pageable D2H copies"),
            sz("host.staging_chunk", &P::staging_chunk, "pinned bounce-buffer chunk of pageable copies"),
            t("copy.h2d.fixed", &P::h2d_fixed, true, "GPU-side fixed cost of an H2D copy"),
            bw("copy.h2d.bandwidth", &P::h2d_bw, "pinned H2D bandwidth"),
            t("copy.d2h.fixed", &P::d2h_fixed, true, "GPU-side fixed cost of a D2H copy"),
            bw("copy.d2h.bandwidth", &P::d2h_bw, "pinned D2H bandwidth"),
            t("copy.d2d.fixed", &P::d2d_fixed, true, "GPU-side fixed cost of a D2D copy"),
            bw("copy.d2d.bandwidth", &P::d2d_bw, "D2D copy bandwidth, counting read + write"),
            t("copy.memset.fixed", &P::memset_fixed, true, "GPU-side fixed cost of a memset"),
            bw("copy.memset.bandwidth", &P::memset_bw, "memset bandwidth"),
            t("gpu.launch_latency", &P::launch_latency, true, "API call returns -> work starts on an idle stream"),
            t("gpu.stream_gap", &P::stream_gap, true, "gap between dependent ops of one stream"),
            t("gpu.event_gap", &P::event_gap, true, "gap of a dependency through an event or the legacy stream"),
            n("sm.count", &P::sm_count, "number of SMs"),
            n("sm.max_threads", &P::sm_threads, "resident threads per SM"),
            n("sm.max_blocks", &P::sm_blocks, "resident blocks per SM"),
            n("sm.registers", &P::sm_registers, "32-bit registers per SM"),
            sz("sm.shared_memory", &P::sm_shared_memory, "shared memory per SM"),
            bw("hbm.bandwidth", &P::hbm_bw, "HBM bandwidth seen by a memory-bound kernel"),
            t("kernel.min_duration", &P::kernel_min_duration, true, "shortest kernel (empty kernel) on the GPU"),
            bw("um.fault_bandwidth", &P::um_fault_bw, "GPU-fault-driven managed migration to the device"),
            bw("um.prefetch_h2d_bandwidth", &P::um_prefetch_h2d_bw, "cudaMemPrefetchAsync to the device"),
            bw("um.prefetch_d2h_bandwidth", &P::um_prefetch_d2h_bw, "cudaMemPrefetchAsync to the host"),
            bw("um.cpu_fault_bandwidth", &P::um_cpu_fault_bw, "CPU-fault-driven migration back to the host"),
            sz("device.memory", &P::device_memory, "device memory visible to the program"),
        };
        ParamDecl flops{"kernel.peak_flops", Dim::None, false, "peak FLOP/s for the roofline"};
        flops.real = &P::peak_flops;
        flops.positive = true;
        v.push_back(flops);
        ParamDecl contention{"host.launch_contention", Dim::None, false,
                             "API calls from several host threads: cost x (1 + this x other threads inside a call)"};
        contention.real = &P::launch_contention;
        v.push_back(contention);
        ParamDecl share{"hbm.sharing", Dim::None, false, "memory-bound kernels share HBM bandwidth (true/false)"};
        share.flag = &P::hbm_sharing;
        v.push_back(share);
        return v;
    }();
    return decls;
}

const ParamDecl* find_param(const std::string& key) {
    for (const auto& d : param_decls())
        if (key == d.key) return &d;
    return nullptr;
}

std::string profiles_dir() {
    if (const char* env = std::getenv("HETSIM_PROFILES")) return env;
    return std::string(HETSIM_SOURCE_DIR) + "/hw/profiles";
}

}  // namespace hetsim
