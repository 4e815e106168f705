// hetsim-microbench section block_placement: which SM each block of a kernel lands on, and when,
// when shared memory limits how many blocks an SM holds. hetsim places blocks breadth-first (one
// per SM before a second on any); validation 30 is predicted +5 % on every start, and its measured
// timeline says the H200 sat two 96 KiB tile blocks deep on half of the SMs, so that a 160 KiB
// kernel found 66 empty SMs at once (docs/model.md Rule 4, limits). Each case launches its kernels
// back to back into its own non-blocking streams (the first one first), each block spinning
// `spin_ns` and recording its %smid and start/end %globaltimer (place_kernel, dynamic shared memory
// held by the block); reps repeat the case after a device sync.
#include "common.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace {

struct KSpec {
    int grid, block;
    size_t smem;
    uint64_t spin_ns;
};

struct Case {
    const char* name;
    const char* why;
    std::vector<KSpec> kernels;  // kernel k in stream c.s[k]
};

}  // namespace

void bench_block_placement(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int reps = q ? 1 : 3;
    const int n = c.sm_count;  // 132 on the H200
    const uint64_t ms = 1000000;
    const std::vector<Case> cases = {
        {"one_96k", "one kernel of sm_count x 256 threads, 96 KiB each: one per SM, or two deep on half of them?",
         {{n, 256, 96 * KiB, ms}}},
        {"one_96k_half", "half as many blocks, 96 KiB each", {{n / 2, 256, 96 * KiB, ms}}},
        {"one_plain", "sm_count x 256 threads, no shared memory", {{n, 256, 0, ms}}},
        {"two_96k", "two such kernels at once in two streams", {{n, 256, 96 * KiB, ms}, {n, 256, 96 * KiB, ms}}},
        {"big_then_two_96k", "a 160 KiB kernel (sm_count x 128, 0.5 ms), then two 96 KiB kernels waiting for its room",
         {{n, 128, 160 * KiB, ms / 2}, {n, 256, 96 * KiB, ms}, {n, 256, 96 * KiB, ms}}},
        {"two_96k_then_big", "two 96 KiB kernels, then a 160 KiB one: does it start before both end (validation 30)?",
         {{n, 256, 96 * KiB, ms}, {n, 256, 96 * KiB, ms}, {n, 128, 160 * KiB, ms / 2}}},
        {"reduce_beside_two_96k", "a 1024-thread kernel without shared memory (0.8 ms), then two 96 KiB kernels",
         {{n, 1024, 0, 8 * ms / 10}, {n, 256, 96 * KiB, ms}, {n, 256, 96 * KiB, ms}}},
    };
    int max_grid = 0;
    for (const Case& cs : cases)
        for (const KSpec& k : cs.kernels) max_grid = std::max(max_grid, k.grid);
    const int max_k = 3;
    unsigned int* d_smid = nullptr;
    unsigned long long* d_stamps = nullptr;
    CK(cudaMalloc(&d_smid, sizeof(unsigned int) * max_grid * max_k));
    CK(cudaMalloc(&d_stamps, sizeof(unsigned long long) * 2 * max_grid * max_k));
    std::vector<unsigned int> h_smid(max_grid * max_k);
    std::vector<unsigned long long> h_stamps(2 * max_grid * max_k);
    json jc = json::array();
    double pv_one = NAN, pv_two_big_start = NAN;
    for (const Case& cs : cases) {
        json jr = json::array();
        for (int r = 0; r < reps; ++r) {
            CK(cudaDeviceSynchronize());
            CK(cudaMemset(d_smid, 0xff, sizeof(unsigned int) * max_grid * max_k));
            CK(cudaMemset(d_stamps, 0, sizeof(unsigned long long) * 2 * max_grid * max_k));
            CK(cudaDeviceSynchronize());
            for (size_t k = 0; k < cs.kernels.size(); ++k) {
                const KSpec& ks = cs.kernels[k];
                CK(k_place(c.s[k], ks.grid, ks.block, ks.smem, ks.spin_ns, d_smid + k * max_grid, d_stamps + 2 * k * max_grid));
            }
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(h_smid.data(), d_smid, sizeof(unsigned int) * h_smid.size(), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(h_stamps.data(), d_stamps, sizeof(unsigned long long) * h_stamps.size(), cudaMemcpyDeviceToHost));
            unsigned long long t0 = ~0ull;
            for (size_t k = 0; k < cs.kernels.size(); ++k)
                for (int b = 0; b < cs.kernels[k].grid; ++b) t0 = std::min(t0, h_stamps[2 * (k * max_grid + b)]);
            json jk = json::array();
            for (size_t k = 0; k < cs.kernels.size(); ++k) {
                const KSpec& ks = cs.kernels[k];
                std::vector<unsigned int> sm;
                std::vector<double> st, en;
                std::map<unsigned int, int> per_sm;
                double first = 1e300;
                for (int b = 0; b < ks.grid; ++b) {
                    const size_t i = k * max_grid + b;
                    sm.push_back(h_smid[i]);
                    ++per_sm[h_smid[i]];
                    st.push_back(double(h_stamps[2 * i] - t0) * 1e-3);
                    en.push_back(double(h_stamps[2 * i + 1] - t0) * 1e-3);
                    first = std::min(first, st.back());
                }
                int deepest = 0;
                for (const auto& [id, cnt] : per_sm) deepest = std::max(deepest, cnt);
                jk.push_back({{"stream", k},
                              {"grid", ks.grid},
                              {"block", ks.block},
                              {"smem", ks.smem},
                              {"spin_ns", ks.spin_ns},
                              {"smid", sm},
                              {"start_us", r3v(st)},
                              {"end_us", r3v(en)},
                              {"sms_used", per_sm.size()},
                              {"most_blocks_on_one_sm", deepest}});
                if (r == 0) {
                    progress(c, "block_placement: %-22s kernel %zu: %3d blocks on %3zu SMs (at most %d on one), first start %8.1f us",
                             cs.name, k, ks.grid, per_sm.size(), deepest, first);
                    if (std::string(cs.name) == "one_96k") pv_one = double(per_sm.size());
                    if (std::string(cs.name) == "two_96k_then_big" && k == 2) pv_two_big_start = first;
                }
            }
            jr.push_back({{"rep", r}, {"kernels", jk}});
        }
        jc.push_back({{"name", cs.name}, {"why", cs.why}, {"reps", jr}});
    }
    CK(cudaFree(d_smid));
    CK(cudaFree(d_stamps));
    out["method"] =
        "per case, kernels launched back to back into non-blocking streams s[0], s[1], s[2] (in that order); each block "
        "holds `smem` bytes of dynamic shared memory, spins spin_ns, records %smid and its start/end %globaltimer; "
        "times in us from the case's first block start; reps after a device sync";
    out["cases"] = jc;
    preview(out, "check.block_placement_one_96k_sms", pv_one, "SMs",
            "SMs used by one sm_count-block kernel of 96 KiB blocks (sm_count: breadth-first; half: two deep)");
    preview(out, "check.block_placement_big_after_two_96k_start", pv_two_big_start, "us",
            "first block start of the 160 KiB kernel queued behind two 96 KiB ones (~1000: after both; earlier: room "
            "left by two-deep packing)");
}
