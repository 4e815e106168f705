// Benchmarks for issue 14 ("accuracy where the model is still weak"): each section isolates one
// behaviour that hetsim predicted wrong on composed programs, with the sizes and repetitions a later
// model fit needs. Raw samples only; the fit is done offline (README.md beside this file says what
// each section measures and which parameter or rule it informs).
//   um_roundtrip, um_prefetch_host, um_sparse, um_partial_prefetch   unified memory
//   alloc_streams, host_register_copies                               allocation calls
//   hbm_beside_copies, priority_hbm                                   memory-bound kernels
//   graph_nodes                                                       CUDA graph node spacing
//   pageable_small                                                    small pageable copies
//   thread_launch_sync                                                several host threads
//   queues_streams (child processes)                                  hardware queues
//   pipeline_chunks                                                   pinned chunked pipelines
//   memcpy2d                                                          pitched copies (per-row cost)
#include "common.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>

namespace {

// Mapped-area offsets used here (clock alignment: the first 8 KiB; launch/v2: 16 KiB + 192 B).
constexpr size_t kOffStampA = 32 * KiB;
constexpr size_t kOffStampB = 32 * KiB + 64;


size_t mem_available() {
    std::ifstream mi("/proc/meminfo");
    std::string k, unit;
    size_t v = 0;
    while (mi >> k >> v >> unit)
        if (k == "MemAvailable:") return v * 1024;
    return 0;
}

// Device memory of a section: allocated once, freed at the end of the section.
struct DevArena {
    char* p = nullptr;
    explicit DevArena(size_t bytes) {
        CK(cudaMalloc(&p, bytes));
        CK(cudaMemset(p, 0x11, bytes));
        CK(cudaDeviceSynchronize());
    }
    ~DevArena() {
        if (p) cudaFree(p);  // destructor: an error here is not actionable
    }
    DevArena(const DevArena&) = delete;
    DevArena& operator=(const DevArena&) = delete;
};

std::string mib(size_t b) { return std::to_string(b / MiB) + "MiB"; }

// A memory-bound kernel of `kind` ("read": streaming read of `bytes`; "triad": a = b + s c, arrays of
// `bytes`) on the region base (which must hold 3 x bytes for triad).
void mem_kernel(cudaStream_t s, const std::string& kind, int grid, char* base, size_t bytes, void* sink) {
    if (kind == "read") CK(k_read(s, grid, 1024, base, bytes, nullptr, sink));
    else CK(k_triad(s, grid, 1024, base, base + bytes, base + 2 * bytes, bytes));
}

}  // namespace

// ---- 1. unified memory round trips ----------------------------------------------------------------
void bench_um_roundtrip(Ctx& c, json& out) {
    if (!managed_ok(c, out)) return;
    const bool q = c.opt.quick;
    const std::vector<size_t> sizes = q ? std::vector<size_t>{128 * MiB} : std::vector<size_t>{64 * MiB, 128 * MiB, 256 * MiB};
    const int reps = q ? 1 : 2, trips = 3;
    cudaStream_t s = c.s[0];
    const int grid = 2 * c.sm_count, block = 1024;
    void* sink = c.dev(4096);
    EventPool ev(2);
    struct Variant {
        const char* name;
        bool dense, host_write;
    };
    std::vector<Variant> variants = {{"sparse_gpu_read_host", false, false}, {"dense_gpu_read_host", true, false}};
    if (!q) variants.push_back({"sparse_gpu_write_host", false, true});
    out["config"] = {
        {"sizes", sizes},
        {"reps", reps},
        {"trips", trips},
        {"grid", grid},
        {"block", block},
        {"method",
         "managed buffer, first touched by host writes; per sample: prefetched to the host (the state the validation runner "
         "restores between runs), then GPU pass, [host pass, GPU pass] x trips. GPU pass: sparse = one byte per 4 KiB page "
         "(k_touch over all grid threads, as the runner's `uses`), dense = streaming read of every byte; after the first GPU "
         "pass the same kernel again on resident data (its own cost). Host pass: one byte per 4 KiB page, read (as the "
         "runner's host work with `uses`) or written. GPU times from events, host times from steady_clock; total = first "
         "launch to the end of the last GPU pass"}};
    json pts = json::array();
    std::vector<double> last_gpu, last_host;
    for (size_t S : sizes) {
        char* m = host_written_managed(S, pts, "not enough free device memory (free - 2 GiB - 1 GiB)");
        if (!m) continue;
        for (const auto& v : variants) {
            json rj = json::array();
            for (int r = 0; r < reps; ++r) {
                prefetch_sync(m, S, loc_host(), s);
                std::vector<double> gpu, host;
                double resident = 0;
                auto pass = [&] {
                    if (v.dense) CK(k_read(s, grid, block, m, S, nullptr, sink));
                    else CK(k_touch(s, grid, block, m, S, 4096, sink));
                };
                const int64_t t0 = now_ns();
                for (int k = 0; k <= trips; ++k) {
                    gpu.push_back(ktime(s, ev, pass));
                    if (k == 0) resident = ktime(s, ev, pass);
                    if (k < trips) host.push_back(touch_host(m, S, v.host_write, (unsigned char)(k + 2)));
                }
                const double total = ns_to_us(now_ns() - t0);
                rj.push_back({{"gpu_pass_us", r3v(gpu)}, {"gpu_resident_us", r3(resident)}, {"host_pass_us", r3v(host)}, {"total_us", r3(total)}});
                if (S == sizes.back() && !v.dense && !v.host_write) {
                    last_gpu.insert(last_gpu.end(), gpu.begin() + 1, gpu.end());
                    last_host.insert(last_host.end(), host.begin(), host.end());
                }
                progress(c, "um_roundtrip: %s %s rep %d: GPU passes %.0f/%.0f us, host passes %.0f us, total %.1f ms", size_str(S).c_str(),
                         v.name, r, gpu.front(), gpu.back(), host.front(), total * 1e-3);
            }
            pts.push_back({{"bytes", S}, {"variant", v.name}, {"gpu", v.dense ? "dense_read" : "sparse_touch_4k"},
                           {"host", v.host_write ? "write_4k" : "read_4k"}, {"reps", rj}});
        }
        CK(cudaFree(m));
    }
    out["points"] = pts;
    if (!last_gpu.empty()) {
        const double S = double(sizes.back());
        preview(out, "check.um_roundtrip_gpu_fault", S / median(last_gpu) * 1e-3, "GB/s",
                "bytes / sparse GPU pass after a host pass, " + size_str(sizes.back()) + " (um.fault_bandwidth in the model)");
        preview(out, "check.um_roundtrip_cpu_read_fault", S / median(last_host) * 1e-3, "GB/s",
                "bytes / host read pass of device-resident pages (um.cpu_fault_bandwidth in the model)");
    }
}

// ---- 2. prefetch to the host beside a kernel and host work ------------------------------------------
void bench_um_prefetch_host(Ctx& c, json& out) {
    if (!managed_ok(c, out)) return;
    const bool q = c.opt.quick;
    const std::vector<size_t> sizes = q ? std::vector<size_t>{128 * MiB} : std::vector<size_t>{64 * MiB, 128 * MiB, 256 * MiB};
    const int reps = q ? 1 : 3;
    const double host_work_us = 3000;
    cudaStream_t s = c.s[0], s1 = c.s[1];
    const int dev = c.opt.device;
    EventPool ev(4);  // prefetch start/end in s, kernel start/end in s1
    const std::vector<std::string> cases = {"no_prefetch", "alone", "beside_kernel", "beside_kernel_host_work", "after_kernel_same_stream"};
    out["config"] = {
        {"sizes", sizes},
        {"reps", reps},
        {"cases", cases},
        {"host_work_us", host_work_us},
        {"method",
         "managed buffer made device-resident (prefetch to the device, then a GPU write kernel) before every sample. "
         "no_prefetch: the host reads one byte per 4 KiB page (CPU faults). alone: cudaMemPrefetchAsync to the host in "
         "stream A (events around it), stream sync, host read pass. beside_kernel: a spin kernel of SMs x 1024 threads "
         "(half the device) in stream B first, longer than the prefetch, then the same. beside_kernel_host_work: as "
         "beside_kernel with host work (a busy loop) between the prefetch call and the sync. after_kernel_same_stream: a "
         "2 ms full-device spin kernel then the prefetch in stream A, host work, sync, read pass. call_us = prefetch call, "
         "sync_us = the stream sync call, read_us = host read pass, total_us = first call to the end of the read pass"}};
    json pts = json::array();
    std::vector<double> pv_alone, pv_read, pv_beside;
    for (size_t S : sizes) {
        char* m = host_written_managed(S, pts, "not enough free device memory");
        if (!m) continue;
        const uint64_t spin_ns = uint64_t(std::max(4000.0, 1.5 * double(S) / 8000.0 + 2000.0) * 1000.0);  // > prefetch at 8 GB/s
        for (const auto& cs : cases) {
            json rj = json::array();
            for (int r = 0; r < reps; ++r) {
                prefetch_sync(m, S, loc_device(dev), s);
                CK(k_write(s, 2 * c.sm_count, 1024, m, S, unsigned(r + 3)));
                CK(cudaStreamSynchronize(s));
                json p;
                const int64_t t0 = now_ns();
                if (cs == "no_prefetch") {
                    p["read_us"] = r3(touch_host(m, S, false, 0));
                } else {
                    const bool kern = cs.find("beside_kernel") == 0;
                    if (kern) {
                        CK(cudaEventRecord(ev[2], s1));
                        CK(k_spin_stamp(s1, c.sm_count, 1024, spin_ns, 0, nullptr, nullptr));
                        CK(cudaEventRecord(ev[3], s1));
                    }
                    if (cs == "after_kernel_same_stream") CK(k_spin_stamp(s, 2 * c.sm_count, 1024, 2000000, 0, nullptr, nullptr));
                    CK(cudaEventRecord(ev[0], s));
                    p["call_us"] = r3(time_us([&] { return cudaMemPrefetchAsync(m, S, loc_host(), 0, s); }));
                    CK(cudaEventRecord(ev[1], s));
                    if (cs == "beside_kernel_host_work" || cs == "after_kernel_same_stream") spin_host_us(host_work_us);
                    p["sync_us"] = r3(time_us([&] { return cudaStreamSynchronize(s); }));
                    p["read_us"] = r3(touch_host(m, S, false, 0));
                    p["total_us"] = r3(ns_to_us(now_ns() - t0));
                    p["prefetch_gpu_us"] = r3(event_us(ev[0], ev[1]));
                    if (kern) {
                        CK(cudaStreamSynchronize(s1));
                        p["kernel_us"] = r3(event_us(ev[2], ev[3]));
                        p["kernel_spin_us"] = r3(double(spin_ns) * 1e-3);
                    }
                }
                if (!p.contains("total_us")) p["total_us"] = r3(ns_to_us(now_ns() - t0));
                CK(cudaDeviceSynchronize());
                rj.push_back(p);
                if (S == sizes.back()) {
                    if (cs == "alone") pv_alone.push_back(p["prefetch_gpu_us"].get<double>()), pv_read.push_back(p["read_us"].get<double>());
                    if (cs == "beside_kernel") pv_beside.push_back(p["prefetch_gpu_us"].get<double>());
                }
            }
            pts.push_back({{"bytes", S}, {"case", cs}, {"reps", rj}});
            progress(c, "um_prefetch_host: %s %-26s total %.1f ms", size_str(S).c_str(), cs.c_str(), rj.back()["total_us"].get<double>() * 1e-3);
        }
        CK(cudaFree(m));
    }
    out["points"] = pts;
    if (!pv_alone.empty()) {
        const double S = double(sizes.back());
        preview(out, "check.um_prefetch_d2h_alone", S / median(pv_alone) * 1e-3, "GB/s", "prefetch to host, events (um.prefetch_d2h_bandwidth)");
        preview(out, "check.um_prefetch_d2h_beside_kernel", S / median(pv_beside) * 1e-3, "GB/s", "the same beside a half-device spin kernel");
        preview(out, "check.um_read_after_prefetch", median(pv_read), "us", "host read pass after the prefetch, " + size_str(sizes.back()));
    }
}

// ---- 3. sparse vs dense GPU faults ------------------------------------------------------------------
void bench_um_sparse(Ctx& c, json& out) {
    if (!managed_ok(c, out)) return;
    const bool q = c.opt.quick;
    const std::vector<size_t> sizes = q ? std::vector<size_t>{256 * MiB} : std::vector<size_t>{64 * MiB, 128 * MiB, 256 * MiB};
    const int reps = q ? 1 : 3;
    cudaStream_t s = c.s[0];
    void* sink = c.dev(4096);
    EventPool ev(2);
    struct Mode {
        const char* name;
        const char* kernel;  // touch / read / write
        size_t stride;
        int grid, block;
    };
    const int g2 = 2 * c.sm_count;
    const std::vector<Mode> modes = {{"sparse_4k", "touch", 4096, g2, 1024},       {"sparse_4k_grid32x256", "touch", 4096, 32, 256},
                                     {"sparse_64k", "touch", 64 * KiB, g2, 1024},  {"sparse_2m", "touch", 2 * MiB, g2, 1024},
                                     {"dense_read", "read", 16, g2, 1024},         {"dense_write", "write", 16, g2, 1024}};
    json mj = json::array();
    for (const auto& m : modes) mj.push_back({{"mode", m.name}, {"kernel", m.kernel}, {"stride", m.stride}, {"grid", m.grid}, {"block", m.block}});
    out["config"] = {
        {"sizes", sizes},
        {"reps", reps},
        {"modes", mj},
        {"method",
         "managed buffer, first touched by host writes, prefetched to the host before every sample (host-resident, as the "
         "runner leaves it); fault_us = events around one kernel: touch = one byte every `stride` bytes over all grid "
         "threads, read = streaming read of every byte, write = streaming write; resident_us = the same kernel again"}};
    json pts = json::array();
    std::vector<double> pv_sparse, pv_dense;
    for (size_t S : sizes) {
        char* mm = host_written_managed(S, pts, "not enough free device memory");
        if (!mm) continue;
        for (const auto& m : modes) {
            std::vector<double> fault, res;
            auto run = [&] {
                const std::string k = m.kernel;
                if (k == "touch") CK(k_touch(s, m.grid, m.block, mm, S, m.stride, sink));
                else if (k == "read") CK(k_read(s, m.grid, m.block, mm, S, nullptr, sink));
                else CK(k_write(s, m.grid, m.block, mm, S, 5u));
            };
            for (int r = 0; r < reps; ++r) {
                prefetch_sync(mm, S, loc_host(), s);
                fault.push_back(ktime(s, ev, run));
                res.push_back(ktime(s, ev, run));
            }
            pts.push_back({{"bytes", S}, {"mode", m.name}, {"fault_us", r3v(fault)}, {"resident_us", r3v(res)}});
            progress(c, "um_sparse: %s %-22s fault %.0f us (%.2f GB/s), resident %.1f us", size_str(S).c_str(), m.name, median(fault),
                     double(S) / median(fault) * 1e-3, median(res));
            if (S == sizes.back() && std::string(m.name) == "sparse_4k") pv_sparse = fault;
            if (S == sizes.back() && std::string(m.name) == "dense_read") pv_dense = fault;
        }
        CK(cudaFree(mm));
    }
    out["points"] = pts;
    if (!pv_sparse.empty() && !pv_dense.empty()) {
        const double S = double(sizes.back());
        preview(out, "check.um_fault_sparse_4k", S / median(pv_sparse) * 1e-3, "GB/s", "bytes / sparse (one byte per 4 KiB page) fault kernel, " + size_str(sizes.back()));
        preview(out, "check.um_fault_dense", S / median(pv_dense) * 1e-3, "GB/s", "bytes / dense read fault kernel");
        preview(out, "check.um_fault_sparse_over_dense", median(pv_sparse) / median(pv_dense), "x", "time sparse / time dense");
    }
}

// ---- 4. a large partial prefetch beside compute --------------------------------------------------
void bench_um_partial_prefetch(Ctx& c, json& out) {
    if (!managed_ok(c, out)) return;
    const bool q = c.opt.quick;
    size_t B = q ? 768 * MiB : 1536 * MiB;
    if (B + 1 * GiB > usable_device_bytes()) B = 768 * MiB;
    if (B + 1 * GiB > usable_device_bytes()) {
        out["skipped"] = "not enough free device memory for a 768 MiB managed buffer (free - 2 GiB - 1 GiB)";
        progress(c, "um_partial_prefetch: skipped, only %s usable", size_str(usable_device_bytes()).c_str());
        return;
    }
    const std::vector<size_t> parts = q ? std::vector<size_t>{B / 2} : std::vector<size_t>{B / 4, B / 2, B};
    const int reps = q ? 1 : 2;
    cudaStream_t s = c.s[0], s1 = c.s[1];
    const int dev = c.opt.device;
    void* sink = c.dev(4096);
    EventPool ev(5);  // s: prefetch start, prefetch end, read end; s1: kernel start, end
    out["config"] = {
        {"buffer_bytes", B},
        {"prefetch_bytes", parts},
        {"reps", reps},
        {"modes", {"alone", "beside_compute"}},
        {"method",
         "managed buffer of buffer_bytes, first touched by host writes, prefetched to the host before every sample. "
         "beside_compute: a spin kernel of SMs x 1024 threads (half the device) in stream B, longer than the prefetch, "
         "issued first. Then in stream A: event, cudaMemPrefetchAsync of the first prefetch_bytes to the device (call_us), "
         "event, a streaming read kernel over the whole buffer (the rest faults in), event; the read kernel again on "
         "resident data (read_resident_us). GPU times from events"}};
    char* m = nullptr;
    CK(cudaMallocManaged((void**)&m, B, cudaMemAttachGlobal));
    touch_host(m, B, true, 1);
    json pts = json::array();
    for (size_t P : parts) {
        for (const char* mode : {"alone", "beside_compute"}) {
            const bool comp = mode[0] == 'b';
            const uint64_t spin_ns = uint64_t((double(P) / 30000.0 + 3000.0) * 1000.0);  // prefetch at 30 GB/s + 3 ms
            json rj = json::array();
            for (int r = 0; r < reps; ++r) {
                prefetch_sync(m, B, loc_host(), s);
                json p;
                const int64_t t0 = now_ns();
                if (comp) {
                    CK(cudaEventRecord(ev[3], s1));
                    CK(k_spin_stamp(s1, c.sm_count, 1024, spin_ns, 0, nullptr, nullptr));
                    CK(cudaEventRecord(ev[4], s1));
                }
                CK(cudaEventRecord(ev[0], s));
                p["call_us"] = r3(time_us([&] { return cudaMemPrefetchAsync(m, P, loc_device(dev), 0, s); }));
                CK(cudaEventRecord(ev[1], s));
                CK(k_read(s, 2 * c.sm_count, 1024, m, B, nullptr, sink));
                CK(cudaEventRecord(ev[2], s));
                CK(cudaDeviceSynchronize());
                p["total_us"] = r3(ns_to_us(now_ns() - t0));
                p["prefetch_gpu_us"] = r3(event_us(ev[0], ev[1]));
                p["read_us"] = r3(event_us(ev[1], ev[2]));
                if (comp) {
                    p["kernel_us"] = r3(event_us(ev[3], ev[4]));
                    p["kernel_spin_us"] = r3(double(spin_ns) * 1e-3);
                    p["prefetch_start_after_kernel_start_us"] = r3(event_us(ev[3], ev[0]));
                }
                CK(cudaEventRecord(ev[0], s));
                CK(k_read(s, 2 * c.sm_count, 1024, m, B, nullptr, sink));
                CK(cudaEventRecord(ev[1], s));
                CK(cudaEventSynchronize(ev[1]));
                p["read_resident_us"] = r3(event_us(ev[0], ev[1]));
                rj.push_back(p);
            }
            pts.push_back({{"prefetch_bytes", P}, {"mode", mode}, {"reps", rj}});
            const json& l = rj.back();
            progress(c, "um_partial_prefetch: %s of %s %-14s call %.1f ms, prefetch %.1f ms (%.1f GB/s), read %.1f ms", size_str(P).c_str(),
                     size_str(B).c_str(), mode, l["call_us"].get<double>() * 1e-3, l["prefetch_gpu_us"].get<double>() * 1e-3,
                     double(P) / l["prefetch_gpu_us"].get<double>() * 1e-3, l["read_us"].get<double>() * 1e-3);
            if (P == B / 2) {
                std::vector<double> g;
                for (const auto& x : rj) g.push_back(x["prefetch_gpu_us"].get<double>());
                preview(out, std::string("check.um_partial_prefetch_") + mode, double(P) / median(g) * 1e-3, "GB/s",
                        "half of " + size_str(B) + " prefetched to the device, events");
            }
        }
    }
    CK(cudaFree(m));
    out["points"] = pts;
}

// ---- 5. cudaMalloc / cudaFree inside a two-stream step ----------------------------------------------
void bench_alloc_streams(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int reps = q ? 2 : 5;
    const std::vector<size_t> sizes = {16 * MiB, 256 * MiB};
    cudaStream_t s0 = c.s[0], s1 = c.s[1];
    volatile unsigned long long* ea = c.mapped_host<unsigned long long>(kOffStampA);
    volatile unsigned long long* eb = c.mapped_host<unsigned long long>(kOffStampB);
    std::vector<ClockSync> syncs;
    syncs.push_back(clock_sync(c, "alloc_streams/a"));
    // A. free beside work: kernels on both streams (or one), then cudaMalloc, 200 us host work, cudaFree.
    struct Raw {
        std::string mode;
        size_t bytes;
        double malloc_us, free_us;
        int64_t t_free_call;
        long long ga, gb;
    };
    std::vector<Raw> raw;
    const int half = std::max(1, c.sm_count / 2);
    for (size_t S : sizes) {
        if (S > usable_device_bytes()) continue;
        for (const char* mode : {"idle", "one_stream_busy", "two_streams_busy"}) {
            for (int r = 0; r < reps; ++r) {
                CK(cudaDeviceSynchronize());
                *ea = 0;
                *eb = 0;
                const std::string md = mode;
                if (md == "two_streams_busy") CK(k_spin_stamp(s0, half, 1024, 2000000, 0, nullptr, c.mapped_dev<unsigned long long>(kOffStampA)));
                if (md != "idle") CK(k_spin_stamp(s1, half, 1024, 3000000, 0, nullptr, c.mapped_dev<unsigned long long>(kOffStampB)));
                void* p = nullptr;
                const double mu = time_us([&] { return cudaMalloc(&p, S); });
                spin_host_us(200);
                const int64_t tf = now_ns();
                const double fu = time_us([&] { return cudaFree(p); });
                raw.push_back({md, S, mu, fu, tf, (long long)*ea, (long long)*eb});
            }
        }
    }
    syncs.push_back(clock_sync(c, "alloc_streams/b"));
    json a = json::array();
    std::vector<double> pv_wait;
    for (const auto& x : raw) {
        json p = {{"mode", x.mode}, {"bytes", x.bytes}, {"malloc_us", r3(x.malloc_us)}, {"free_us", r3(x.free_us)}};
        double last_end = -1e300;
        if (x.ga) last_end = std::max(last_end, gpu_to_host_ns(syncs, double(x.ga)));
        if (x.gb) last_end = std::max(last_end, gpu_to_host_ns(syncs, double(x.gb)));
        if (x.ga || x.gb) {
            const double ret = double(x.t_free_call) + x.free_us * 1000.0;
            p["free_call_before_last_kernel_end_us"] = r3((last_end - double(x.t_free_call)) * 1e-3);
            p["free_return_after_last_kernel_end_us"] = r3((ret - last_end) * 1e-3);
            if (x.mode == "two_streams_busy") pv_wait.push_back((ret - last_end) * 1e-3);
        }
        a.push_back(p);
    }
    out["free_beside_work"] = {
        {"method",
         "idle: cudaMalloc, 200 us host work, cudaFree on an idle device. one_stream_busy: a 3 ms spin kernel (SMs/2 x 1024 "
         "threads) in non-blocking stream B first; two_streams_busy: also a 2 ms one in stream A. Kernels write their end "
         "%globaltimer stamp to mapped memory (clock alignment: clock_syncs); free_return_after_last_kernel_end_us = "
         "cudaFree's return - the host time of the last kernel end (the free's own cost after its device-wide wait)"},
        {"samples", a}};
    // B. a step loop with a workspace allocated per iteration.
    const int iters = q ? 5 : 10;
    void* h = c.pinned(4 * MiB);
    char* d = static_cast<char*>(c.dev(4 * MiB + 4096));
    json loops = json::array();
    std::vector<double> pv_none, pv_mf, pv_async;
    for (size_t S : sizes) {
        if (S > usable_device_bytes()) continue;
        for (const char* variant : {"none", "malloc_free", "malloc_async"}) {
            const std::string v = variant;
            for (int r = 0; r < (q ? 1 : 3); ++r) {
                CK(cudaDeviceSynchronize());
                std::vector<double> iter_end, alloc_us, free_us;
                const int64_t t0 = now_ns();
                for (int i = 0; i < iters; ++i) {
                    void* p = nullptr;
                    if (v == "malloc_free") alloc_us.push_back(time_us([&] { return cudaMalloc(&p, S); }));
                    if (v == "malloc_async") alloc_us.push_back(time_us([&] { return cudaMallocAsync(&p, S, s0); }));
                    CK(k_spin_stamp(s0, c.sm_count, 1024, 1000000, 0, nullptr, nullptr));
                    CK(k_spin_stamp(s1, c.sm_count, 1024, 1500000, 0, nullptr, nullptr));
                    CK(cudaMemcpyAsync(h, d, 4 * MiB, cudaMemcpyDeviceToHost, s0));
                    if (v == "malloc_free") free_us.push_back(time_us([&] { return cudaFree(p); }));
                    if (v == "malloc_async") free_us.push_back(time_us([&] { return cudaFreeAsync(p, s0); }));
                    spin_host_us(200);
                    iter_end.push_back(ns_to_us(now_ns() - t0));
                }
                CK(cudaDeviceSynchronize());
                const double total = ns_to_us(now_ns() - t0);
                loops.push_back({{"variant", v}, {"bytes", S}, {"rep", r}, {"iter_end_us", r3v(iter_end)}, {"alloc_us", r3v(alloc_us)},
                                 {"free_us", r3v(free_us)}, {"total_us", r3(total)}});
                if (S == sizes.front()) (v == "none" ? pv_none : v == "malloc_free" ? pv_mf : pv_async).push_back(total);
            }
        }
    }
    out["step_loop"] = {
        {"method",
         "iters x [alloc?; 1 ms spin kernel (SMs x 1024 threads) in stream A; 1.5 ms one in stream B; 4 MiB pinned D2H in "
         "A; free?; 200 us host work], then cudaDeviceSynchronize. variant none: no allocation; malloc_free: cudaMalloc / "
         "cudaFree of bytes; malloc_async: cudaMallocAsync / cudaFreeAsync in A (default pool). iter_end_us = host time "
         "at the end of each iteration from the loop start; total_us includes the final sync"},
        {"iters", iters},
        {"runs", loops}};
    if (!pv_wait.empty()) preview(out, "check.free_after_two_stream_work", median(pv_wait), "us", "cudaFree return - last kernel end, two busy streams");
    if (!pv_none.empty() && !pv_mf.empty())
        preview(out, "check.step_loop_malloc_free_extra", (median(pv_mf) - median(pv_none)) / iters, "us",
                "per-iteration cost of cudaMalloc + cudaFree of 16 MiB in the two-stream step");
    if (!pv_none.empty() && !pv_async.empty())
        preview(out, "check.step_loop_malloc_async_extra", (median(pv_async) - median(pv_none)) / iters, "us",
                "the same with cudaMallocAsync + cudaFreeAsync");
}

// ---- 6. cudaHostRegister, then copies from registered memory ------------------------------------------
void bench_host_register_copies(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const std::vector<size_t> sizes = q ? std::vector<size_t>{256 * MiB} : std::vector<size_t>{64 * MiB, 128 * MiB, 256 * MiB};
    const int reps = q ? 2 : 3;
    const size_t chunk = 16 * MiB;
    const size_t avail = mem_available();
    cudaStream_t s = c.s[0];
    EventPool ev(2 + 16);
    char* d = static_cast<char*>(c.dev(sizes.back()));
    out["config"] = {
        {"sizes", sizes},
        {"reps", reps},
        {"chunk", chunk},
        {"method",
         "per size: pageable memory (mmap, every page written) registered with cudaHostRegister (default flags) in every "
         "rep (rep 0: never registered before; later reps: registered and unregistered before, as the validation runner "
         "does once per run). After each registration: the whole buffer streamed H2D in 16 MiB cudaMemcpyAsync chunks "
         "(events after each chunk: chunk_end_us, from an event before the first), stream sync (register_stream_total_us "
         "= register call start to the sync's return), then 2 whole-buffer H2D and 2 D2H copies (events), then "
         "cudaHostUnregister. The same copies from cudaMallocHost memory of the same size (pinned)"}};
    json pts = json::array();
    std::vector<double> pv_reg_h2d, pv_pin_h2d, pv_reg0, pv_reg1;
    for (size_t S : sizes) {
        if (avail && 2 * S > avail / 4) {
            pts.push_back({{"bytes", S}, {"skipped", "not enough available host memory"}});
            continue;
        }
        const int nch = int(S / chunk);
        auto copies = [&](char* host, json& p, int64_t t_reg) {
            CK(cudaEventRecord(ev[0], s));
            for (int i = 0; i < nch; ++i) {
                CK(cudaMemcpyAsync(d + size_t(i) * chunk, host + size_t(i) * chunk, chunk, cudaMemcpyHostToDevice, s));
                if (i < 16) CK(cudaEventRecord(ev[2 + size_t(i)], s));
            }
            CK(cudaEventRecord(ev[1], s));
            CK(cudaStreamSynchronize(s));
            if (t_reg) p["register_stream_total_us"] = r3(ns_to_us(now_ns() - t_reg));
            std::vector<double> ends;
            for (int i = 0; i < std::min(nch, 16); ++i) ends.push_back(event_us(ev[0], ev[2 + size_t(i)]));
            p["chunk_end_us"] = r3v(ends);
            p["chunks_total_us"] = r3(event_us(ev[0], ev[1]));
            std::vector<double> h2d, d2h;
            for (int k = 0; k < 2; ++k) {
                h2d.push_back(ktime(s, ev, [&] { CK(cudaMemcpyAsync(d, host, S, cudaMemcpyHostToDevice, s)); }));
                d2h.push_back(ktime(s, ev, [&] { CK(cudaMemcpyAsync(host, d, S, cudaMemcpyDeviceToHost, s)); }));
            }
            p["h2d_us"] = r3v(h2d);
            p["d2h_us"] = r3v(d2h);
            return h2d;
        };
        char* hm = static_cast<char*>(mmap(nullptr, S, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (hm == MAP_FAILED) mb_die("host_register_copies: cannot map %zu bytes", S);
        for (size_t o = 0; o < S; o += 4096) hm[o] = 1;
        json reg = json::array();
        for (int r = 0; r < reps; ++r) {
            json p;
            CK(cudaDeviceSynchronize());
            const int64_t t0 = now_ns();
            const double ru = time_us([&] { return cudaHostRegister(hm, S, cudaHostRegisterDefault); });
            p["register_us"] = r3(ru);
            auto h2d = copies(hm, p, t0);
            p["unregister_us"] = r3(time_us([&] { return cudaHostUnregister(hm); }));
            reg.push_back(p);
            if (S == sizes.back()) {
                pv_reg_h2d.insert(pv_reg_h2d.end(), h2d.begin(), h2d.end());
                (r == 0 ? pv_reg0 : pv_reg1).push_back(ru);
            }
        }
        munmap(hm, S);
        char* hp = nullptr;
        CK(cudaMallocHost((void**)&hp, S));
        memset(hp, 2, S);
        json pin = json::array();
        for (int r = 0; r < reps; ++r) {
            json p;
            auto h2d = copies(hp, p, 0);
            pin.push_back(p);
            if (S == sizes.back()) pv_pin_h2d.insert(pv_pin_h2d.end(), h2d.begin(), h2d.end());
        }
        CK(cudaFreeHost(hp));
        pts.push_back({{"bytes", S}, {"registered", reg}, {"pinned", pin}});
        progress(c, "host_register_copies: %s register %.1f ms (first) / %.1f ms (again), H2D registered %.2f GB/s", size_str(S).c_str(),
                 reg[0]["register_us"].get<double>() * 1e-3, reg.back()["register_us"].get<double>() * 1e-3,
                 double(S) / reg.back()["h2d_us"][0].get<double>() * 1e-3);
    }
    out["points"] = pts;
    if (!pv_reg_h2d.empty()) {
        const double S = double(sizes.back());
        preview(out, "check.register_first", median(pv_reg0), "us", "cudaHostRegister of never-registered memory, " + size_str(sizes.back()));
        if (!pv_reg1.empty()) preview(out, "check.register_again", median(pv_reg1), "us", "cudaHostRegister of memory registered before");
        preview(out, "check.h2d_registered", S / median(pv_reg_h2d) * 1e-3, "GB/s", "whole-buffer H2D from registered memory");
        preview(out, "check.h2d_malloc_host", S / median(pv_pin_h2d) * 1e-3, "GB/s", "whole-buffer H2D from cudaMallocHost memory");
    }
}

// ---- 7. memory-bound kernels on two streams beside H2D and D2H copies ---------------------------------
void bench_hbm_beside_copies(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const size_t cb = q ? 128 * MiB : 256 * MiB;  // each copy
    const std::vector<size_t> sizes = q ? std::vector<size_t>{256 * MiB} : std::vector<size_t>{64 * MiB, 256 * MiB};
    const std::vector<std::string> kinds = {"read", "triad"};
    const std::vector<int> grids = q ? std::vector<int>{2 * c.sm_count} : std::vector<int>{c.sm_count, 2 * c.sm_count};
    const int reps = q ? 2 : 3;
    const size_t region = 3 * sizes.back();  // per stream: a triad's three arrays, or read rotation ranges
    const size_t need = 2 * region + 2 * cb;
    if (need > usable_device_bytes()) {
        out["skipped"] = "not enough free device memory (" + size_str(need) + " needed beyond the 2 GiB margin)";
        return;
    }
    DevArena arena(need);
    char* kbase[2] = {arena.p, arena.p + region};
    char* dcopy = arena.p + 2 * region;
    char* h = static_cast<char*>(c.pinned(2 * cb));
    void* sink = nullptr;
    CK(cudaMalloc(&sink, 64));
    cudaStream_t st[4] = {c.s[0], c.s[1], c.s[2], c.s[3]};  // kernels A, B; H2D; D2H
    constexpr int kCk = 16;                                  // checkpoints per kernel stream
    EventPool ev(1 + 2 * (kCk + 1) + 2);
    const size_t e_go = 0, e_h = 1 + 2 * (kCk + 1), e_d = e_h + 1;
    auto n_of = [&](const std::string& kind, size_t A) {
        const double traffic = kind == "read" ? double(A) : 3.0 * double(A);
        const double est_us = traffic / 4.4e6;  // at ~4.4 TB/s
        return int(std::clamp(std::lround(4000.0 / est_us), 8l, 200l));
    };
    json cfg_n = json::object();
    for (const auto& k : kinds)
        for (size_t A : sizes) cfg_n[k + "_" + mib(A)] = n_of(k, A);
    out["config"] = {
        {"copy_bytes", cb},
        {"kernel_bytes", sizes},
        {"kinds", kinds},
        {"grids", grids},
        {"block", 1024},
        {"reps", reps},
        {"series_length", cfg_n},
        {"method",
         "everything released together by one event behind a blocker kernel: K1 = a series of n memory-bound kernels in "
         "stream A, K2 = series in streams A and B at once, H = one pinned H2D of copy_bytes in stream C, D = one pinned "
         "D2H in stream D. read = streaming read of kernel_bytes (ranges rotate so that consecutive kernels do not hit "
         "L2), triad = a = b + s c over three arrays of kernel_bytes (3 x kernel_bytes of traffic). n is chosen so a series "
         "alone takes about 4 ms. Times from events, from the release event: k_end_us per kernel stream, checkpoints = "
         "(kernel index, end) every n/16 kernels, h2d_us / d2h_us = the copies' ends"}};
    auto run_case = [&](const std::string& cs, const std::string& kind, size_t A, int grid, int n) {
        const bool k1 = cs.find("K1") != std::string::npos, k2 = cs.find("K2") != std::string::npos;
        const bool hh = cs.find('H') != std::string::npos, dd = cs.find('D') != std::string::npos;
        const int nk = k2 ? 2 : k1 ? 1 : 0;
        const int step = std::max(1, (n + kCk - 1) / kCk);  // at most kCk checkpoints, the last at kernel n
        const size_t rot = kind == "read" ? std::max<size_t>(1, region / A) : 1;
        json rj = json::array();
        for (int r = 0; r < reps; ++r) {
            CK(cudaDeviceSynchronize());
            CK(k_spin(st[0], uint64_t(1500000 + 2 * n * 5000)));
            CK(cudaEventRecord(ev[e_go], st[0]));
            for (int i = 1; i < 4; ++i) CK(cudaStreamWaitEvent(st[i], ev[e_go], 0));
            if (hh) CK(cudaMemcpyAsync(dcopy, h, cb, cudaMemcpyHostToDevice, st[2]));
            if (dd) CK(cudaMemcpyAsync(h + cb, dcopy + cb, cb, cudaMemcpyDeviceToHost, st[3]));
            CK(cudaEventRecord(ev[e_h], st[2]));
            CK(cudaEventRecord(ev[e_d], st[3]));
            std::vector<std::vector<int>> ck_idx(2);
            for (int i = 0; i < n; ++i)
                for (int k = 0; k < nk; ++k) {
                    char* base = kbase[k] + (kind == "read" ? (size_t(i) % rot) * A : 0);
                    mem_kernel(st[k], kind, grid, base, A, sink);
                    if (((i + 1) % step == 0 || i + 1 == n) && int(ck_idx[size_t(k)].size()) <= kCk) {
                        CK(cudaEventRecord(ev[1 + size_t(k) * (kCk + 1) + ck_idx[size_t(k)].size()], st[k]));
                        ck_idx[size_t(k)].push_back(i + 1);
                    }
                }
            CK(cudaDeviceSynchronize());
            json p = {{"rep", r}};
            if (hh) p["h2d_us"] = r3(event_us(ev[e_go], ev[e_h]));
            if (dd) p["d2h_us"] = r3(event_us(ev[e_go], ev[e_d]));
            json kend = json::array(), cks = json::array();
            for (int k = 0; k < nk; ++k) {
                std::vector<double> t;
                for (size_t j = 0; j < ck_idx[size_t(k)].size(); ++j) t.push_back(event_us(ev[e_go], ev[1 + size_t(k) * (kCk + 1) + j]));
                kend.push_back(r3(t.back()));
                cks.push_back({{"kernels_done", ck_idx[size_t(k)]}, {"end_us", r3v(t)}});
            }
            if (nk) {
                p["k_end_us"] = kend;
                p["checkpoints"] = cks;
            }
            rj.push_back(p);
        }
        json pt = {{"case", cs}};
        if (nk) pt.update({{"kind", kind}, {"kernel_bytes", A}, {"grid", grid}, {"n", n}});
        pt["reps"] = rj;
        return pt;
    };
    json pts = json::array();
    for (const char* cs : {"H", "D", "HD"}) pts.push_back(run_case(cs, "read", sizes.back(), grids.back(), 0));
    std::map<std::string, double> med;
    for (const auto& kind : kinds)
        for (size_t A : sizes)
            for (int grid : grids) {
                const int n = n_of(kind, A);
                for (const char* cs : {"K1", "K2", "K1+H", "K1+D", "K1+HD", "K2+H", "K2+D", "K2+HD"}) {
                    json pt = run_case(cs, kind, A, grid, n);
                    std::vector<double> e;
                    for (const auto& x : pt["reps"]) e.push_back(x["k_end_us"][0].get<double>());
                    med[kind + mib(A) + std::to_string(grid) + cs] = median(e);
                    pts.push_back(pt);
                }
                progress(c, "hbm_beside_copies: %-5s %s grid %d x %d: series K1 %.0f us, K2 %.0f us, K2+HD %.0f us", kind.c_str(),
                         size_str(A).c_str(), grid, n, med[kind + mib(A) + std::to_string(grid) + "K1"],
                         med[kind + mib(A) + std::to_string(grid) + "K2"], med[kind + mib(A) + std::to_string(grid) + "K2+HD"]);
            }
    out["points"] = pts;
    CK(cudaFree(sink));
    const std::string key = "triad" + mib(sizes.back()) + std::to_string(grids.back());
    if (med.count(key + "K2") && med[key + "K2"] > 0)
        preview(out, "check.hbm_triad_two_streams_beside_copies", med[key + "K2+HD"] / med[key + "K2"], "x",
                "series end with H2D + D2H / without, triad " + size_str(sizes.back()) + ", two streams");
}

// ---- 8. CUDA graph node spacing ---------------------------------------------------------------------
void bench_graph_nodes(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    cudaStream_t s = c.s[0], cap = c.s[1];
    const int reps = q ? 2 : 5;
    EventPool ev(2);
    auto capture = [&](const std::function<void(cudaStream_t)>& issue) { return capture_graph(cap, issue); };
    // A. empty-kernel graphs
    const std::vector<int> ns = q ? std::vector<int>{10, 200, 2000} : std::vector<int>{10, 50, 100, 200, 500, 1000, 2000};
    json pe = json::array();
    std::vector<double> xs, ys;
    for (int n : ns) {
        cudaGraph_t g = capture([&](cudaStream_t cs) {
            for (int i = 0; i < n; ++i) CK(k_empty(cs));
        });
        std::vector<double> inst, launch, gg, gs;
        cudaGraphExec_t x = nullptr;
        for (int r = 0; r < (q ? 1 : 3); ++r) {
            if (x) CK(cudaGraphExecDestroy(x));
            inst.push_back(time_us([&] { return cudaGraphInstantiate(&x, g, 0); }));
        }
        CK(cudaGraphLaunch(x, s));  // upload
        CK(cudaStreamSynchronize(s));
        for (int r = 0; r < 2 * reps; ++r) {
            launch.push_back(time_us([&] { return cudaGraphLaunch(x, s); }));
            CK(cudaStreamSynchronize(s));
        }
        for (int r = 0; r < reps; ++r) {
            CK(k_spin(s, 1000000));
            gg.push_back(ktime(s, ev, [&] { CK(cudaGraphLaunch(x, s)); }));
            xs.push_back(n);
            ys.push_back(gg.back());
            if (n <= 1000) {
                CK(k_spin(s, uint64_t(n) * 5000 + 1000000));
                gs.push_back(ktime(s, ev, [&] {
                    for (int i = 0; i < n; ++i) CK(k_empty(s));
                }));
            }
        }
        CK(cudaGraphExecDestroy(x));
        CK(cudaGraphDestroy(g));
        pe.push_back({{"nodes", n}, {"instantiate_us", r3v(inst)}, {"launch_call_us", r3v(launch)}, {"gpu_graph_us", r3v(gg)}, {"gpu_stream_us", r3v(gs)}});
        progress(c, "graph_nodes: %4d empty nodes: %.3f us/node on the GPU, instantiate %.0f us", n, median(gg) / n, median(inst));
    }
    out["empty"] = {{"method",
                     "graph of N empty kernels captured from a stream (a chain): cudaGraphInstantiate host time; cudaGraphLaunch call "
                     "time on an idle stream (sync after each, after one upload launch); gpu_graph_us = events around the launch "
                     "behind a 1 ms blocker; gpu_stream_us = the same N kernels launched into a stream behind a blocker (N <= 1000)"},
                    {"points", pe}};
    const LineFit f = fit_line(xs, ys);
    preview(out, "check.graph_empty_node_period", f.slope, "us", "slope of graph GPU time vs nodes, empty kernels, 10-2000 nodes");
    // B. spin-kernel graphs of 132..1056 blocks: per-node start/end from %globaltimer stamps.
    const std::vector<int> grids = q ? std::vector<int>{132, 1056} : std::vector<int>{132, 264, 528, 1056};
    const std::vector<uint64_t> spins = q ? std::vector<uint64_t>{2000} : std::vector<uint64_t>{2000, 10000};
    const std::vector<int> nn = q ? std::vector<int>{200} : std::vector<int>{20, 200};
    const int gmax = *std::max_element(grids.begin(), grids.end()), nmax = *std::max_element(nn.begin(), nn.end());
    unsigned long long* st = nullptr;
    CK(cudaMalloc(&st, size_t(gmax) * size_t(nmax) * 2 * sizeof(unsigned long long)));
    std::vector<unsigned long long> hs(size_t(gmax) * size_t(nmax) * 2);
    json pk = json::array();
    std::map<int, std::vector<double>> gap_graph, gap_stream;
    for (int grid : grids)
        for (uint64_t spin : spins)
            for (int n : nn) {
                auto issue = [&](cudaStream_t cs) {
                    for (int i = 0; i < n; ++i) CK(k_spin_stamp(cs, grid, 256, spin, 0, st + size_t(i) * size_t(grid) * 2, nullptr));
                };
                cudaGraph_t g = capture(issue);
                cudaGraphExec_t x = nullptr;
                CK(cudaGraphInstantiate(&x, g, 0));
                CK(cudaGraphLaunch(x, s));
                CK(cudaStreamSynchronize(s));
                json modes = json::array();
                for (const char* mode : {"graph", "stream"}) {
                    json rj = json::array();
                    for (int r = 0; r < reps; ++r) {
                        const bool gr = mode[0] == 'g';
                        CK(k_spin(s, gr ? 1000000 : uint64_t(n) * 6000 + 1000000));
                        const double gpu = ktime(s, ev, [&] {
                            if (gr) CK(cudaGraphLaunch(x, s));
                            else issue(s);
                        });
                        CK(cudaMemcpy(hs.data(), st, size_t(n) * size_t(grid) * 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                        std::vector<unsigned long long> s0(size_t(n), ~0ull), e0(size_t(n), 0);
                        for (int i = 0; i < n; ++i)
                            for (int b = 0; b < grid; ++b) {
                                const size_t o = (size_t(i) * size_t(grid) + size_t(b)) * 2;
                                s0[size_t(i)] = std::min(s0[size_t(i)], hs[o]);
                                e0[size_t(i)] = std::max(e0[size_t(i)], hs[o + 1]);
                            }
                        const unsigned long long base = s0[0];
                        std::vector<long long> rs, re;
                        for (int i = 0; i < n; ++i) rs.push_back((long long)(s0[size_t(i)] - base)), re.push_back((long long)(e0[size_t(i)] - base));
                        // Blocks of a node that started more than half the spin after its first block:
                        // a second wave (issue 14: full-grid graph nodes of validation 61/105 last 2x).
                        std::vector<int> late(size_t(n), 0);
                        for (int i = 0; i < n; ++i)
                            for (int b = 0; b < grid; ++b)
                                late[size_t(i)] += hs[(size_t(i) * size_t(grid) + size_t(b)) * 2] - s0[size_t(i)] > spin / 2 ? 1 : 0;
                        for (int i = 0; i + 1 < n; ++i) (gr ? gap_graph : gap_stream)[grid].push_back(double(rs[size_t(i) + 1] - re[size_t(i)]) * 1e-3);
                        rj.push_back({{"gpu_us", r3(gpu)}, {"node_start_ns", rs}, {"node_end_ns", re}, {"late_blocks", late}});
                    }
                    modes.push_back({{"mode", mode}, {"reps", rj}});
                }
                CK(cudaGraphExecDestroy(x));
                CK(cudaGraphDestroy(g));
                pk.push_back({{"grid", grid}, {"block", 256}, {"spin_ns", spin}, {"nodes", n}, {"modes", modes}});
            }
    CK(cudaFree(st));
    out["spin_kernels"] = {{"method",
                            "graph of N spin kernels (grid x 256 threads, every block spins spin_ns from its own start on %globaltimer; "
                            "132..1056 blocks are one wave) captured from a stream, vs the same N launches into a stream; behind a "
                            "blocker; node start = first block start, node end = last block end (stamps relative to node 0's start); "
                            "gap = start[i+1] - end[i]; late_blocks[i] = blocks of node i starting more than spin_ns/2 after its "
                            "first block (a second wave)"},
                           {"points", pk}};
    for (int grid : grids)
        if (!gap_graph[grid].empty())
            preview(out, "check.graph_node_gap_grid" + std::to_string(grid), median(gap_graph[grid]), "us",
                    "median gap between spin-kernel nodes of " + std::to_string(grid) + " x 256 (stream: " +
                        std::to_string(median(gap_stream[grid])).substr(0, 5) + " us)");
}

// ---- 9. small pageable copies -----------------------------------------------------------------------
void bench_pageable_small(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const std::vector<size_t> sizes = {4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB};
    const int reps = q ? 10 : 30;
    const size_t hbytes = 512 * MiB;
    char* h = static_cast<char*>(aligned_alloc(4096, hbytes));
    if (!h) mb_die("pageable_small: cannot allocate %zu bytes of host memory", hbytes);
    memset(h, 0x3c, hbytes);
    char* d = static_cast<char*>(c.dev(32 * MiB));
    cudaStream_t s = c.s[0], s1 = c.s[1];
    EventPool ev(2);
    size_t cursor = 0;
    auto cold = [&](size_t b) {  // a source / destination not touched since the memset of the whole buffer
        const size_t step = std::max<size_t>(b, 1 * MiB);
        if (cursor + step > hbytes) cursor = 0;
        char* p = h + cursor;
        cursor += step;
        return p;
    };
    out["config"] = {
        {"sizes", sizes},
        {"reps", reps},
        {"host_buffer_bytes", hbytes},
        {"modes",
         {{"async", "event; t0; cudaMemcpyAsync (pageable) in an idle non-blocking stream; t1; event; cudaStreamSynchronize; t2"},
          {"sync", "event in the legacy stream; t0; cudaMemcpy; t1; event; cudaDeviceSynchronize; t2"},
          {"batch32", "warm source, 32 back-to-back cudaMemcpyAsync H2D (call_us each), then sync; gpu_us = events around the 32"},
          {"beside_kernel", "async, while another stream is kept busy with 1 ms spin kernels of SMs x 1024 threads (one issued per copy)"}}},
        {"warmth", "warm = the same host buffer every time (in the CPU caches); cold = a part of a 512 MiB buffer not touched since it was written"},
        {"fields", "call_us = t1 - t0, total_us = t2 - t0, gpu_us = event to event"}};
    json pts = json::array();
    std::map<std::string, std::vector<double>> pv;
    CK(cudaMemcpy(d, h, 4 * KiB, cudaMemcpyHostToDevice));  // warm-up
    for (size_t b : sizes)
        for (const char* dir : {"h2d", "d2h"})
            for (const char* mode : {"async", "sync", "beside_kernel"})
                for (const char* warmth : {"warm", "cold"}) {
                    const std::string md = mode;
                    if (md == "beside_kernel" && std::string(warmth) == "cold") continue;
                    const bool h2d = dir[0] == 'h';
                    std::vector<double> call, total, gpu;
                    for (int r = 0; r < reps; ++r) {
                        char* hp = warmth[0] == 'w' ? h : cold(b);
                        // 1 ms kernels queue up in the other stream faster than the copies finish: it stays busy.
                        if (md == "beside_kernel") CK(k_spin_stamp(s1, c.sm_count, 1024, 1000000, 0, nullptr, nullptr));
                        cudaStream_t cs = md == "sync" ? cudaStream_t(0) : s;
                        CK(cudaEventRecord(ev[0], cs));
                        const int64_t t0 = now_ns();
                        cudaError_t e;
                        if (md == "sync") e = h2d ? cudaMemcpy(d, hp, b, cudaMemcpyHostToDevice) : cudaMemcpy(hp, d, b, cudaMemcpyDeviceToHost);
                        else e = h2d ? cudaMemcpyAsync(d, hp, b, cudaMemcpyHostToDevice, s) : cudaMemcpyAsync(hp, d, b, cudaMemcpyDeviceToHost, s);
                        const int64_t t1 = now_ns();
                        CK(e);
                        CK(cudaEventRecord(ev[1], cs));
                        if (md == "sync") CK(cudaEventSynchronize(ev[1]));
                        else CK(cudaStreamSynchronize(s));
                        const int64_t t2 = now_ns();
                        call.push_back(ns_to_us(t1 - t0));
                        total.push_back(ns_to_us(t2 - t0));
                        gpu.push_back(event_us(ev[0], ev[1]));
                    }
                    if (md == "beside_kernel") CK(cudaStreamSynchronize(s1));
                    pts.push_back({{"dir", dir}, {"mode", mode}, {"warmth", warmth}, {"bytes", b}, {"call_us", r3v(call)}, {"total_us", r3v(total)}, {"gpu_us", r3v(gpu)}});
                    if (b == 64 * KiB && md == "async") pv[std::string(dir) + warmth] = total;
                }
    // back-to-back H2D batches
    for (size_t b : sizes) {
        std::vector<double> call, gpu, total;
        for (int r = 0; r < (q ? 2 : 5); ++r) {
            CK(cudaEventRecord(ev[0], s));
            const int64_t t0 = now_ns();
            for (int i = 0; i < 32; ++i) call.push_back(time_us([&] { return cudaMemcpyAsync(d + size_t(i) * b, h + size_t(i) * b, b, cudaMemcpyHostToDevice, s); }));
            CK(cudaEventRecord(ev[1], s));
            CK(cudaStreamSynchronize(s));
            total.push_back(ns_to_us(now_ns() - t0));
            gpu.push_back(event_us(ev[0], ev[1]));
        }
        pts.push_back({{"dir", "h2d"}, {"mode", "batch32"}, {"warmth", "warm"}, {"bytes", b}, {"call_us", r3v(call)}, {"total_us", r3v(total)}, {"gpu_us", r3v(gpu)}});
    }
    free(h);
    out["points"] = pts;
    for (const char* k : {"h2dwarm", "h2dcold", "d2hwarm", "d2hcold"})
        if (pv.count(k)) preview(out, std::string("check.pageable_64KiB_") + k, median(pv[k]), "us", "cudaMemcpyAsync + sync of 64 KiB pageable, call start to sync return");
}

// ---- 10. several host threads: launch + small D2H + sync -----------------------------------------------
void bench_thread_launch_sync(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int iters = q ? 30 : 100, reps = q ? 1 : 2;
    const int tmax = 8;
    const size_t xfer = 4 * KiB, slot = 64 * KiB;
    char* h = static_cast<char*>(c.pinned(size_t(tmax) * slot));
    char* d = static_cast<char*>(c.dev(size_t(tmax) * slot));
    std::vector<cudaStream_t> st(tmax);
    for (auto& x : st) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
    out["config"] = {
        {"threads", {1, 2, 4, 8}},
        {"iters", iters},
        {"reps", reps},
        {"d2h_bytes", xfer},
        {"kernels", {"empty", "spin20us"}},
        {"method",
         "T host threads released together (spinning barrier), each with its own non-blocking stream: iters x [launch "
         "(empty kernel, or a 20 us spin kernel of 16 x 256 threads); cudaMemcpyAsync of 4 KiB pinned D2H; "
         "cudaStreamSynchronize]; steady_clock around each call (launch_us, d2h_us, sync_us) and per iteration (iter_us); "
         "total_us = the thread's loop"}};
    json pts = json::array();
    std::map<std::string, double> pv;
    for (const char* kern : {"empty", "spin20us"})
        for (int T : {1, 2, 4, 8})
            for (int r = 0; r < reps; ++r) {
                struct Rec {
                    std::vector<double> launch, d2h, sync, iter;
                    double total = 0;
                    cudaError_t err = cudaSuccess;
                    const char* call = "";
                };
                std::vector<Rec> rec(static_cast<size_t>(T));
                std::atomic<int> ready{0};
                std::atomic<bool> go{false};
                const bool spin = kern[0] == 's';
                auto body = [&](int t) {
                    Rec& R = rec[size_t(t)];
                    cudaError_t e = cudaSetDevice(c.opt.device);
                    ready.fetch_add(1);
                    while (!go.load(std::memory_order_acquire)) {
                    }
                    if (e != cudaSuccess) {
                        R.err = e;
                        R.call = "cudaSetDevice";
                        return;
                    }
                    const int64_t t0 = now_ns();
                    for (int i = 0; i < iters; ++i) {
                        const int64_t a = now_ns();
                        e = spin ? k_spin_stamp(st[size_t(t)], 16, 256, 20000, 0, nullptr, nullptr) : k_empty(st[size_t(t)]);
                        const int64_t b = now_ns();
                        if (e != cudaSuccess) {
                            R.err = e;
                            R.call = "launch";
                            return;
                        }
                        e = cudaMemcpyAsync(h + size_t(t) * slot, d + size_t(t) * slot, xfer, cudaMemcpyDeviceToHost, st[size_t(t)]);
                        const int64_t cc = now_ns();
                        if (e != cudaSuccess) {
                            R.err = e;
                            R.call = "cudaMemcpyAsync";
                            return;
                        }
                        e = cudaStreamSynchronize(st[size_t(t)]);
                        const int64_t dd = now_ns();
                        if (e != cudaSuccess) {
                            R.err = e;
                            R.call = "cudaStreamSynchronize";
                            return;
                        }
                        R.launch.push_back(ns_to_us(b - a));
                        R.d2h.push_back(ns_to_us(cc - b));
                        R.sync.push_back(ns_to_us(dd - cc));
                        R.iter.push_back(ns_to_us(dd - a));
                    }
                    R.total = ns_to_us(now_ns() - t0);
                };
                CK(cudaDeviceSynchronize());
                std::vector<std::thread> th;
                for (int t = 0; t < T; ++t) th.emplace_back(body, t);
                while (ready.load() < T) {
                }
                go.store(true, std::memory_order_release);
                for (auto& x : th) x.join();
                json tj = json::array();
                std::vector<double> all_iter;
                for (int t = 0; t < T; ++t) {
                    const Rec& R = rec[size_t(t)];
                    if (R.err != cudaSuccess) mb_fail(cudaGetErrorName(R.err), cudaGetErrorString(R.err), R.call, __FILE__, __LINE__);
                    tj.push_back({{"launch_us", r3v(R.launch)}, {"d2h_us", r3v(R.d2h)}, {"sync_us", r3v(R.sync)}, {"iter_us", r3v(R.iter)}, {"total_us", r3(R.total)}});
                    all_iter.insert(all_iter.end(), R.iter.begin(), R.iter.end());
                }
                pts.push_back({{"kernel", kern}, {"threads", T}, {"rep", r}, {"per_thread", tj}});
                pv[std::string(kern) + std::to_string(T)] = median(all_iter);
                if (r == 0) progress(c, "thread_launch_sync: %-8s %d threads: median iteration %.1f us", kern, T, median(all_iter));
            }
    for (auto& x : st) CK(cudaStreamDestroy(x));
    out["points"] = pts;
    for (int T : {1, 4, 8}) preview(out, "check.thread_iter_empty_t" + std::to_string(T), pv["empty" + std::to_string(T)], "us", "median launch + 4 KiB D2H + sync iteration, empty kernel");
}

// ---- 11. many streams over the hardware queues (child processes) ------------------------------------------
json child_queues_streams(Ctx& c) {
    const bool q = c.opt.quick;
    const int reps = q ? 1 : 2;
    const std::vector<int> nss = {8, 16, 32};
    const std::vector<uint64_t> spins = q ? std::vector<uint64_t>{1000000, 10000000} : std::vector<uint64_t>{1000000, 4000000, 10000000};
    const int nmax = 32;
    std::vector<cudaStream_t> st(nmax);
    for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned long long* d = nullptr;
    CK(cudaMalloc(&d, size_t(nmax) * 2 * 2 * sizeof(unsigned long long)));
    json runs = json::array();
    for (int ns : nss)
        for (uint64_t spin : spins)
            for (const char* order : {"stream_by_stream", "breadth_first"}) {
                json rj = json::array();
                for (int r = 0; r < reps; ++r) {
                    CK(cudaDeviceSynchronize());
                    const int64_t t0 = now_ns();
                    if (order[0] == 's') {
                        for (int i = 0; i < ns; ++i)
                            for (int k = 0; k < 2; ++k) CK(k_spin_stamp(st[size_t(i)], 1, 32, spin, 0, d + 2 * (2 * i + k), nullptr));
                    } else {
                        for (int k = 0; k < 2; ++k)
                            for (int i = 0; i < ns; ++i) CK(k_spin_stamp(st[size_t(i)], 1, 32, spin, 0, d + 2 * (2 * i + k), nullptr));
                    }
                    const int64_t t1 = now_ns();
                    CK(cudaDeviceSynchronize());
                    const int64_t t2 = now_ns();
                    std::vector<unsigned long long> h(size_t(ns) * 4);
                    CK(cudaMemcpy(h.data(), d, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                    unsigned long long lo = ~0ull, hi = 0;
                    for (size_t i = 0; i < h.size(); i += 2) lo = std::min(lo, h[i]), hi = std::max(hi, h[i + 1]);
                    std::vector<long long> s0, e0;
                    for (size_t i = 0; i < h.size(); i += 2) s0.push_back((long long)(h[i] - lo)), e0.push_back((long long)(h[i + 1] - lo));
                    rj.push_back({{"gpu_span_us", r3(double(hi - lo) * 1e-3)}, {"issue_us", r3(ns_to_us(t1 - t0))}, {"host_us", r3(ns_to_us(t2 - t0))},
                                  {"start_ns", s0}, {"end_ns", e0}});
                }
                runs.push_back({{"streams", ns}, {"spin_ns", spin}, {"order", order}, {"reps", rj}});
            }
    // Copies beside the queues (validation 67): per stream a 1 MiB pinned H2D, 2 dependent
    // 3 ms one-block kernels, a 1 MiB D2H, issued stream by stream; copy ends from events
    // (relative to an event recorded before the first upload), kernel stamps as above. Do
    // stream k + 8's copies wait behind stream k's work in a shared hardware queue?
    const size_t cb = 1 << 20;
    const int ncs = 16;
    CK(cudaFree(d));
    char* hbuf = nullptr;
    char* dbuf = nullptr;
    CK(cudaMallocHost(&hbuf, 2 * size_t(ncs) * cb));
    CK(cudaMalloc(&dbuf, 2 * size_t(ncs) * cb));
    CK(cudaMalloc(&d, size_t(ncs) * 2 * 2 * sizeof(unsigned long long)));
    EventPool cev(1 + 2 * size_t(ncs));
    json crj = json::array();
    const uint64_t cspin = 3000000;
    for (int r = 0; r < reps; ++r) {
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(cev[0], st[0]));
        for (int i = 0; i < ncs; ++i) {
            cudaStream_t s = st[size_t(i)];
            CK(cudaMemcpyAsync(dbuf + 2 * size_t(i) * cb, hbuf + 2 * size_t(i) * cb, cb, cudaMemcpyHostToDevice, s));
            CK(cudaEventRecord(cev[1 + 2 * size_t(i)], s));
            for (int k = 0; k < 2; ++k) CK(k_spin_stamp(s, 1, 32, cspin, 0, d + 2 * (2 * i + k), nullptr));
            CK(cudaMemcpyAsync(hbuf + (2 * size_t(i) + 1) * cb, dbuf + (2 * size_t(i) + 1) * cb, cb, cudaMemcpyDeviceToHost, s));
            CK(cudaEventRecord(cev[2 + 2 * size_t(i)], s));
        }
        CK(cudaDeviceSynchronize());
        std::vector<double> up, down;
        for (int i = 0; i < ncs; ++i) {
            up.push_back(event_us(cev[0], cev[1 + 2 * size_t(i)]));
            down.push_back(event_us(cev[0], cev[2 + 2 * size_t(i)]));
        }
        std::vector<unsigned long long> h(size_t(ncs) * 4);
        CK(cudaMemcpy(h.data(), d, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        unsigned long long lo = ~0ull;
        for (size_t i = 0; i < h.size(); i += 2) lo = std::min(lo, h[i]);
        std::vector<long long> s0, e0;
        for (size_t i = 0; i < h.size(); i += 2) s0.push_back((long long)(h[i] - lo)), e0.push_back((long long)(h[i + 1] - lo));
        crj.push_back({{"upload_end_us", r3v(up)}, {"download_end_us", r3v(down)}, {"start_ns", s0}, {"end_ns", e0}});
    }
    CK(cudaFree(d));
    CK(cudaFree(dbuf));
    CK(cudaFreeHost(hbuf));
    for (auto& s : st) CK(cudaStreamDestroy(s));
    const char* env = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    return {{"max_connections", env ? json(env) : json("default")},
            {"runs", runs},
            {"copies", {{"streams", ncs}, {"bytes", cb}, {"spin_ns", cspin}, {"reps", crj}}}};
}

void bench_queues_streams(Ctx& c, json& out) {
    out["method"] = "child process per CUDA_DEVICE_MAX_CONNECTIONS (unset = default, and 32): 8, 16, 32 non-blocking streams, "
                    "each 2 dependent one-block (32-thread) %globaltimer spin kernels of spin_ns, issued stream by stream "
                    "(A0 B0 A1 B1 ...) or breadth first (A0 A1 ... B0 B1 ...); per-kernel start/end stamps relative to the "
                    "earliest start (kernel index = 2 x stream + k); gpu_span_us = last end - first start, issue_us = the "
                    "launch loop, host_us = launch loop + device sync. copies: 16 streams each [1 MiB pinned H2D, 2 dependent "
                    "3 ms one-block kernels, 1 MiB D2H] stream by stream; upload/download ends from events after each copy "
                    "(relative to an event before the first upload), kernel stamps as above (index = 2 x stream + k)";
    json children = json::array();
    for (const char* n : {"default", "32"}) children.push_back(spawn_child(c, "queues_streams", n));
    out["children"] = children;
    for (const auto& ch : children)
        for (const auto& r : ch["runs"])
            if (r["streams"] == 32 && r["spin_ns"] == 10000000 && r["order"] == "stream_by_stream") {
                std::vector<double> t;
                for (const auto& x : r["reps"]) t.push_back(x["gpu_span_us"].get<double>());
                preview(out, "check.queues_32x2x10ms_" + ch["max_connections"].get<std::string>(), median(t), "us",
                        "32 streams x 2 dependent 10 ms kernels, stream by stream");
            }
}

// ---- 12. priority streams each given memory-bound kernels ---------------------------------------------
void bench_priority_hbm(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const std::vector<size_t> sizes = q ? std::vector<size_t>{256 * MiB} : std::vector<size_t>{64 * MiB, 256 * MiB};
    const std::vector<std::string> kinds = {"read", "triad"};
    const std::vector<int> grids = q ? std::vector<int>{2 * c.sm_count} : std::vector<int>{c.sm_count, 2 * c.sm_count};
    const int n = q ? 8 : 16, reps = q ? 2 : 3;
    const size_t region = 3 * sizes.back();
    if (2 * region > usable_device_bytes()) {
        out["skipped"] = "not enough free device memory";
        return;
    }
    int least = 0, greatest = 0;
    CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    DevArena arena(2 * region);
    void* sink = nullptr;
    CK(cudaMalloc(&sink, 64));
    cudaStream_t lo = nullptr, hi = nullptr, lo2 = nullptr;
    CK(cudaStreamCreateWithPriority(&lo, cudaStreamNonBlocking, least));
    CK(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, greatest));
    CK(cudaStreamCreateWithPriority(&lo2, cudaStreamNonBlocking, least));
    cudaStream_t rel = c.s[3];
    EventPool ev(1 + 2 * size_t(n));
    out["config"] = {
        {"priority_least", least},
        {"priority_greatest", greatest},
        {"kernel_bytes", sizes},
        {"kinds", kinds},
        {"grids", grids},
        {"block", 1024},
        {"n", n},
        {"reps", reps},
        {"method",
         "two non-blocking streams, each given n memory-bound kernels (read: streaming read of kernel_bytes, two rotating "
         "ranges; triad: a = b + s c over arrays of kernel_bytes), released together by an event behind a blocker in a third "
         "stream; issued all of the first stream's kernels, then all of the second's. priorities differ: stream 0 = least "
         "(low), stream 1 = greatest (high); equal: both least. order low_first / high_first says which stream's kernels "
         "are issued first. end_us[stream][i] = event after kernel i, from the release event"}};
    json pts = json::array();
    std::map<std::string, double> pv;
    for (const auto& kind : kinds)
        for (size_t A : sizes)
            for (int grid : grids)
                for (const char* prio : {"differ", "equal"})
                    for (const char* order : {"low_first", "high_first"}) {
                        cudaStream_t ss[2] = {lo, prio[0] == 'd' ? hi : lo2};
                        const int first = order[0] == 'l' ? 0 : 1;
                        json rj = json::array();
                        for (int r = 0; r < reps; ++r) {
                            CK(cudaDeviceSynchronize());
                            CK(k_spin(rel, 1000000 + uint64_t(n) * 2 * 6000));
                            CK(cudaEventRecord(ev[0], rel));
                            for (int k = 0; k < 2; ++k) CK(cudaStreamWaitEvent(ss[k], ev[0], 0));
                            for (int kk = 0; kk < 2; ++kk) {
                                const int k = kk == 0 ? first : 1 - first;
                                for (int i = 0; i < n; ++i) {
                                    char* base = arena.p + size_t(k) * region + (kind == "read" ? size_t(i % 2) * A : 0);
                                    mem_kernel(ss[k], kind, grid, base, A, sink);
                                    CK(cudaEventRecord(ev[1 + size_t(k) * size_t(n) + size_t(i)], ss[k]));
                                }
                            }
                            CK(cudaDeviceSynchronize());
                            json ends = json::array();
                            for (int k = 0; k < 2; ++k) {
                                std::vector<double> e;
                                for (int i = 0; i < n; ++i) e.push_back(event_us(ev[0], ev[1 + size_t(k) * size_t(n) + size_t(i)]));
                                ends.push_back(r3v(e));
                            }
                            rj.push_back({{"rep", r}, {"end_us", ends}});
                            const std::string key = kind + mib(A) + std::to_string(grid) + prio + order;
                            pv[key + "lo"] += ends[0].back().get<double>() / reps;
                            pv[key + "hi"] += ends[1].back().get<double>() / reps;
                        }
                        pts.push_back({{"kind", kind}, {"kernel_bytes", A}, {"grid", grid}, {"priorities", prio}, {"order", order}, {"reps", rj}});
                    }
    out["points"] = pts;
    CK(cudaStreamDestroy(lo));
    CK(cudaStreamDestroy(hi));
    CK(cudaStreamDestroy(lo2));
    CK(cudaFree(sink));
    const std::string key = "triad" + mib(sizes.back()) + std::to_string(grids.back()) + "differlow_first";
    preview(out, "check.priority_triad_low_end", pv[key + "lo"], "us", "low-priority series end, triad " + size_str(sizes.back()) + ", low issued first");
    preview(out, "check.priority_triad_high_end", pv[key + "hi"], "us", "high-priority series end, same run");
}

// ---- 13. pinned chunked pipelines with a light kernel --------------------------------------------------
void bench_pipeline_chunks(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const size_t total = q ? 256 * MiB : 512 * MiB;
    const std::vector<size_t> chunks = q ? std::vector<size_t>{16 * MiB, 64 * MiB} : std::vector<size_t>{16 * MiB, 32 * MiB, 64 * MiB};
    const int reps = q ? 2 : 3;
    const int smax = 4;
    const size_t cmax = chunks.back();
    const size_t need = size_t(smax) * 3 * cmax;
    if (need > usable_device_bytes()) {
        out["skipped"] = "not enough free device memory";
        return;
    }
    DevArena arena(need);
    char* h = static_cast<char*>(c.pinned(2 * total));
    EventPool ev(1 + 3 * (total / chunks.front()));
    struct Pattern {
        const char* name;
        const char* kernel;  // spin50us / triad
        bool d2h;
    };
    const std::vector<Pattern> pats = {{"h2d_spin_d2h", "spin50us", true}, {"h2d_triad_d2h", "triad", true}, {"h2d_triad", "triad", false}};
    out["config"] = {
        {"total_bytes", total},
        {"chunks", chunks},
        {"streams", {1, 4}},
        {"reps", reps},
        {"patterns", {"h2d_spin_d2h", "h2d_triad_d2h", "h2d_triad"}},
        {"method",
         "total_bytes of pinned host memory streamed in chunks: chunk i in stream i % streams: cudaMemcpyAsync H2D into "
         "the stream's input slot, a light kernel (spin50us: a 50 us spin of SMs x 256 threads; triad: a = b + s c over the "
         "chunk, 2 x SMs x 1024 threads), cudaMemcpyAsync D2H of the output slot (except h2d_triad); an event after every "
         "op. Released by one event behind a blocker; end_us[chunk] = [h2d, kernel, d2h] ends from the release event"}};
    json pts = json::array();
    std::map<std::string, double> pv;
    for (const auto& pat : pats)
        for (size_t C : chunks)
            for (int ns : {1, 4}) {
                const int nch = int(total / C);
                json rj = json::array();
                for (int r = 0; r < reps; ++r) {
                    CK(cudaDeviceSynchronize());
                    CK(k_spin(c.s[0], 500000 + uint64_t(nch) * 3 * 6000));
                    CK(cudaEventRecord(ev[0], c.s[0]));
                    for (int k = 1; k < ns; ++k) CK(cudaStreamWaitEvent(c.s[k], ev[0], 0));
                    for (int i = 0; i < nch; ++i) {
                        const int k = i % ns;
                        cudaStream_t s = c.s[k];
                        char* din = arena.p + size_t(k) * 3 * cmax;
                        char* dtmp = din + cmax;
                        char* dout = din + 2 * cmax;
                        CK(cudaMemcpyAsync(din, h + size_t(i) * C, C, cudaMemcpyHostToDevice, s));
                        CK(cudaEventRecord(ev[1 + 3 * size_t(i)], s));
                        if (pat.kernel[0] == 's') CK(k_spin_stamp(s, c.sm_count, 256, 50000, 0, nullptr, nullptr));
                        else CK(k_triad(s, 2 * c.sm_count, 1024, dout, din, dtmp, C));
                        CK(cudaEventRecord(ev[2 + 3 * size_t(i)], s));
                        if (pat.d2h) CK(cudaMemcpyAsync(h + total + size_t(i) * C, dout, C, cudaMemcpyDeviceToHost, s));
                        CK(cudaEventRecord(ev[3 + 3 * size_t(i)], s));
                    }
                    CK(cudaDeviceSynchronize());
                    json ends = json::array();
                    double last = 0;
                    for (int i = 0; i < nch; ++i) {
                        std::vector<double> e;
                        for (int j = 0; j < (pat.d2h ? 3 : 2); ++j) e.push_back(event_us(ev[0], ev[1 + 3 * size_t(i) + size_t(j)]));
                        last = std::max(last, e.back());
                        ends.push_back(r3v(e));
                    }
                    rj.push_back({{"rep", r}, {"end_us", ends}, {"total_us", r3(last)}});
                    pv[std::string(pat.name) + mib(C) + std::to_string(ns)] += last / nch / reps;
                }
                pts.push_back({{"pattern", pat.name}, {"chunk", C}, {"streams", ns}, {"chunks_n", nch}, {"reps", rj}});
                progress(c, "pipeline_chunks: %-14s %s x %d, %d stream(s): %.1f us per chunk", pat.name, size_str(C).c_str(), nch, ns,
                         pv[std::string(pat.name) + mib(C) + std::to_string(ns)]);
            }
    out["points"] = pts;
    preview(out, "check.pipeline_64MiB_4streams_period", pv["h2d_triad_d2h" + mib(cmax) + "4"], "us",
            "per-chunk period, H2D + triad + D2H, " + size_str(cmax) + " chunks, 4 streams");
    preview(out, "check.pipeline_64MiB_1stream_period", pv["h2d_triad_d2h" + mib(cmax) + "1"], "us", "the same in one stream");
}

// ---- 14. pitched copies: the per-row cost of cudaMemcpy2DAsync ----------------------------------------
// At fixed bytes moved, a copy of narrow rows is bound by the rate at which the copy engine takes
// rows, a copy of wide rows by bandwidth: the GPU time per row of the narrowest rows is
// copy.row_cost. A pitch equal to the width (a contiguous range) checks whether the driver then
// moves the rows as one linear copy, as the model assumes.
void bench_memcpy2d(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const std::vector<size_t> widths = q ? std::vector<size_t>{4, 64, 1024, 16 * KiB} : std::vector<size_t>{4, 16, 64, 256, 1024, 4 * KiB, 16 * KiB};
    const std::vector<size_t> moved = q ? std::vector<size_t>{1 * MiB} : std::vector<size_t>{1 * MiB, 16 * MiB, 64 * MiB};
    const size_t max_rows = 256 * KiB;
    const int reps = q ? 3 : 7;
    const size_t span = 2 * 64 * MiB;  // the largest copy at pitch 2 x width
    char* pinned = nullptr;
    CK(cudaMallocHost(&pinned, span));
    memset(pinned, 0x5a, span);
    char* pageable = static_cast<char*>(aligned_alloc(4096, span));
    if (!pageable) mb_die("memcpy2d: cannot allocate %zu bytes of host memory", span);
    memset(pageable, 0x5a, span);
    DevArena dev(span);
    cudaStream_t s = c.s[0];
    EventPool ev(2);
    out["config"] = {{"widths", widths},
                     {"moved_bytes", moved},
                     {"max_rows", max_rows},
                     {"reps", reps},
                     {"pitches", {"2x: spitch = dpitch = 2 x width", "1x: spitch = dpitch = width (contiguous)"}},
                     {"fields", "gpu_us = events around cudaMemcpy2DAsync in an idle stream; call_us = the call; total_us = call start "
                                "to cudaStreamSynchronize return"}};
    json pts = json::array();
    std::map<std::string, double> pv;
    CK(cudaMemcpy2DAsync(dev.p, 64, pinned, 64, 4, 16, cudaMemcpyHostToDevice, s));  // warm-up
    CK(cudaStreamSynchronize(s));
    for (const char* mem : {"pinned", "pageable"})
        for (const char* dir : {"h2d", "d2h"})
            for (size_t m : moved)
                for (size_t w : widths)
                    for (int pf : {2, 1}) {
                        const size_t rows = m / w;
                        if (rows < 1 || rows > max_rows) continue;
                        const size_t pitch = w * size_t(pf);
                        char* host = mem[1] == 'i' ? pinned : pageable;
                        const bool h2d = dir[0] == 'h';
                        std::vector<double> call, total, gpu;
                        for (int r = 0; r < reps; ++r) {
                            timed_copy(s, ev, call, total, gpu, [&] {
                                return h2d ? cudaMemcpy2DAsync(dev.p, pitch, host, pitch, w, rows, cudaMemcpyHostToDevice, s)
                                           : cudaMemcpy2DAsync(host, pitch, dev.p, pitch, w, rows, cudaMemcpyDeviceToHost, s);
                            });
                        }
                        pts.push_back({{"memory", mem}, {"dir", dir}, {"width", w}, {"height", rows}, {"pitch", pitch}, {"bytes", w * rows},
                                       {"call_us", r3v(call)}, {"total_us", r3v(total)}, {"gpu_us", r3v(gpu)}});
                        if (m == 1 * MiB && w == 4 && pf == 2) pv[std::string(mem) + "_" + dir] = median(gpu) * 1000.0 / double(rows);
                        if (m == 1 * MiB && w == 4 && pf == 1) pv[std::string(mem) + "_" + dir + "_contiguous"] = median(gpu);
                    }
    CK(cudaFreeHost(pinned));
    free(pageable);
    out["points"] = pts;
    for (const char* k : {"pinned_h2d", "pinned_d2h", "pageable_h2d", "pageable_d2h"})
        if (pv.count(k)) preview(out, std::string("check.row_ns_4B_") + k, pv[k], "ns", "GPU time per row of 1 MiB in 4-byte rows at pitch 8 B");
    if (pv.count("pinned_h2d_contiguous"))
        preview(out, "check.contiguous_4B_pinned_h2d", pv["pinned_h2d_contiguous"], "us", "1 MiB in 4-byte rows at pitch 4 B (contiguous)");
}
