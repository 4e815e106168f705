// Follow-up section for issue 14 (README.md beside this file):
//   um_beside_faults   CPU-fault passes of 8-64 MiB (alone and beside pinned copies), and a kernel
//                      launched beside a kernel that demand-faults managed memory (validation 53, 114).
#include "common.hpp"

#include <algorithm>
#include <string>
#include <vector>

// ---- um_beside_faults ---------------------------------------------------------------------------------
// Two things the validation runs show and the 64-256 MiB sections do not cover:
// - Host passes over 8-32 MiB of device-resident managed memory run at 4-5.7 GB/s in validation 53
//   and 114, against 7.1 GB/s for 64-256 MiB in um_roundtrip (um.cpu_fault_bandwidth). Part A times
//   the same pass at 8, 16, 32 and 64 MiB, alone and while pinned 16 MiB copies run both ways in
//   another stream (114's pipeline).
// - In 114 a 200 us spin kernel launched into another stream while a kernel demand-faults 32 MiB
//   ends only when the faulting kernel ends (4-6 ms, every round of three starts); in 53 a 2 ms spin
//   kernel launched just before the faulting one takes 2.9-3.9 ms. Part B launches the same spin
//   kernel before and 0-2000 us after a faulting kernel, with per-block start/end stamps, and the
//   baselines alone and beside the same kernel on resident pages.
void bench_um_beside_faults(Ctx& c, json& out) {
    if (!managed_ok(c, out)) return;
    const bool q = c.opt.quick;
    const int reps = q ? 1 : 3;
    const int dev = c.opt.device;
    cudaStream_t s = c.s[0], s1 = c.s[1];
    const int grid = 2 * c.sm_count, block = 1024;
    const std::vector<size_t> sizes = q ? std::vector<size_t>{16 * MiB, 64 * MiB}
                                        : std::vector<size_t>{8 * MiB, 16 * MiB, 32 * MiB, 64 * MiB};
    const size_t copy_bytes = 16 * MiB;
    const int copy_pairs = 8;
    const int spin_grid = 66, spin_block = 256;
    const uint64_t spin_ns = 200000;
    const size_t fault_bytes = 32 * MiB;
    const std::vector<double> offsets_us = {-1, 0, 100, 500, 2000};  // -1: the spin kernel first
    out["config"] = {
        {"sizes", sizes},
        {"reps", reps},
        {"grid", grid},
        {"block", block},
        {"copies", {{"bytes", copy_bytes}, {"pairs", copy_pairs}, {"what", "pinned H2D then D2H of 16 MiB, 8 times, in a second stream"}}},
        {"spin", {{"grid", spin_grid}, {"block", spin_block}, {"spin_ns", spin_ns}}},
        {"fault_bytes", fault_bytes},
        {"offsets_us", offsets_us},
        {"method",
         "A (host_pass): a managed buffer first touched by host writes; per sample: prefetched to the host, a sparse GPU "
         "touch (one byte per 4 KiB page, k_touch over grid x block threads; events: gpu_fault_us), then a host read pass "
         "(one byte per 4 KiB page, steady_clock: host_fault_us) and the same pass again on host-resident pages "
         "(host_resident_us). Variant beside_copies: the copies are queued in a second stream right before the host pass "
         "(copies_us: events around them; the pass and the copies start together). "
         "B (kernel_beside): 32 MiB managed, prefetched to the host before every sample; stream A: the faulting touch "
         "kernel (events: fault_kernel_us); stream B: the spin kernel (spin grid x block, each block spinning spin_ns on "
         "%globaltimer, per-block start/end stamps) launched offset_us of host busy-wait after the touch kernel's launch "
         "(-1: launched just before it). spin_kernel_us: events around the spin kernel; first/last block start and last "
         "block end in us from the spin kernel's first block start. Baselines: alone (no other kernel) and resident (the "
         "touch kernel over device-resident pages, offset 0)."}};

    // One device area (c.dev may move it when it grows): the touch kernels' sink, then the stamps.
    char* area = static_cast<char*>(c.dev(4096 + size_t(spin_grid) * 2 * sizeof(unsigned long long)));
    void* sink = area;
    auto* stamps = reinterpret_cast<unsigned long long*>(area + 4096);
    EventPool ev(4);

    // ---- A: host passes by size, alone and beside pinned copies.
    char* hpin = static_cast<char*>(c.pinned(2 * copy_bytes));
    json host_pts = json::array();
    std::vector<double> pv_small, pv_64;
    {
        char* dcopy = nullptr;
        CK(cudaMalloc((void**)&dcopy, copy_bytes));
        for (size_t S : sizes) {
            char* m = host_written_managed(S, host_pts, "not enough free device memory (free - 2 GiB - 1 GiB)");
            if (!m) continue;
            for (const char* variant : {"alone", "beside_copies"}) {
                const bool copies = std::string(variant) == "beside_copies";
                json rj = json::array();
                for (int r = 0; r < reps; ++r) {
                    prefetch_sync(m, S, loc_host(), s);
                    const double gpu = ktime(s, ev, [&] { CK(k_touch(s, grid, block, m, S, 4096, sink)); });
                    if (copies) {
                        CK(cudaEventRecord(ev[2], s1));
                        for (int k = 0; k < copy_pairs; ++k) {
                            CK(cudaMemcpyAsync(dcopy, hpin, copy_bytes, cudaMemcpyHostToDevice, s1));
                            CK(cudaMemcpyAsync(hpin + copy_bytes, dcopy, copy_bytes, cudaMemcpyDeviceToHost, s1));
                        }
                        CK(cudaEventRecord(ev[3], s1));
                    }
                    const double host = touch_host(m, S, false, 0);
                    const double resident = touch_host(m, S, false, 0);
                    json p = {{"gpu_fault_us", r3(gpu)}, {"host_fault_us", r3(host)}, {"host_resident_us", r3(resident)}};
                    if (copies) {
                        CK(cudaEventSynchronize(ev[3]));
                        p["copies_us"] = r3(event_us(ev[2], ev[3]));
                    }
                    rj.push_back(p);
                    if (!copies) (S == 64 * MiB ? pv_64 : pv_small).push_back(double(S) / host * 1e-3);
                    progress(c, "um_beside_faults: host pass %s %s rep %d: GPU faults %.0f us, host faults %.0f us", size_str(S).c_str(),
                             variant, r, gpu, host);
                }
                host_pts.push_back({{"bytes", S}, {"variant", variant}, {"reps", rj}});
            }
            CK(cudaFree(m));
        }
        CK(cudaFree(dcopy));
    }
    out["host_pass"] = host_pts;

    // ---- B: a spin kernel beside a kernel that demand-faults.
    json beside = json::array();
    if (fault_bytes + 1 * GiB > usable_device_bytes()) {
        out["kernel_beside_skipped"] = "not enough free device memory (free - 2 GiB - 1 GiB)";
    } else {
        char* m = nullptr;
        CK(cudaMallocManaged((void**)&m, fault_bytes, cudaMemAttachGlobal));
        touch_host(m, fault_bytes, true, 1);
        std::vector<unsigned long long> st(size_t(spin_grid) * 2);
        struct Case {
            std::string name;
            double offset_us;
            bool fault, other;  // fault: pages host-resident before the touch kernel; other: a touch kernel at all
        };
        std::vector<Case> cases = {{"alone", 0, false, false}, {"resident", 0, false, true}};
        for (double o : offsets_us) cases.push_back({"faulting", o, true, true});
        for (const Case& cs : cases) {
            json rj = json::array();
            for (int r = 0; r < reps; ++r) {
                prefetch_sync(m, fault_bytes, cs.fault ? loc_host() : loc_device(dev), s);
                CK(cudaDeviceSynchronize());
                auto spin = [&] {
                    CK(cudaEventRecord(ev[2], s1));
                    CK(k_spin_stamp(s1, spin_grid, spin_block, spin_ns, 0, stamps, nullptr));
                    CK(cudaEventRecord(ev[3], s1));
                };
                if (cs.other && cs.offset_us < 0) spin();
                if (cs.other) {
                    CK(cudaEventRecord(ev[0], s));
                    CK(k_touch(s, grid, block, m, fault_bytes, 4096, sink));
                    CK(cudaEventRecord(ev[1], s));
                }
                if (!cs.other || cs.offset_us >= 0) {
                    if (cs.offset_us > 0) spin_host_us(cs.offset_us);
                    spin();
                }
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(st.data(), stamps, st.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                unsigned long long first = ~0ull, last_start = 0, last_end = 0;
                for (int b = 0; b < spin_grid; ++b) {
                    first = std::min(first, st[size_t(2 * b)]);
                    last_start = std::max(last_start, st[size_t(2 * b)]);
                    last_end = std::max(last_end, st[size_t(2 * b + 1)]);
                }
                json p = {{"spin_kernel_us", r3(event_us(ev[2], ev[3]))},
                          {"last_block_start_us", r3(double(last_start - first) * 1e-3)},
                          {"last_block_end_us", r3(double(last_end - first) * 1e-3)}};
                if (cs.other) {
                    p["fault_kernel_us"] = r3(event_us(ev[0], ev[1]));
                    // Where the spin kernel ran against the touch kernel: its events' offsets from the touch kernel's start.
                    p["spin_start_from_touch_us"] = r3(event_us(ev[0], ev[2]));
                    p["spin_end_from_touch_us"] = r3(event_us(ev[0], ev[3]));
                }
                rj.push_back(p);
                progress(c, "um_beside_faults: %s offset %.0f us rep %d: spin kernel %.0f us", cs.name.c_str(), cs.offset_us, r,
                         event_us(ev[2], ev[3]));
            }
            beside.push_back({{"case", cs.name}, {"offset_us", cs.offset_us}, {"reps", rj}});
        }
        CK(cudaFree(m));
    }
    out["kernel_beside"] = beside;
    if (!pv_64.empty() && !pv_small.empty()) {
        preview(out, "check.um_cpu_fault_64mib", median(pv_64), "GB/s", "64 MiB / host read pass of device-resident pages");
        preview(out, "check.um_cpu_fault_8_32mib", median(pv_small), "GB/s", "8-32 MiB / host read pass of device-resident pages");
    }
}
