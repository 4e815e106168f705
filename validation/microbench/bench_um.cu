// Managed (unified) memory: first touch, GPU-fault migration, prefetch both ways, CPU-fault migration.
#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <map>

void bench_um(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int reps = q ? 2 : 3;
    const std::vector<size_t> sizes = q ? std::vector<size_t>{256 * MiB} : std::vector<size_t>{256 * MiB, 1 * GiB};
    cudaStream_t s = c.s[0];
    const int dev = c.opt.device;
    const int grid = 2 * c.sm_count, threads = 1024;
    void* sink = nullptr;
    CK(cudaMalloc(&sink, 64));
    EventPool ev(2);
    int cma = 0;
    CK(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, dev));
    out["config"] = {
        {"reps", reps},
        {"sizes", sizes},
        {"concurrent_managed_access", cma},
        {"method",
         "per size: (a) reps x fresh cudaMallocManaged + GPU write kernel (first touch) + GPU read (resident); "
         "(b) one buffer, host writes one byte per 4 KiB page (first touch), then reps x [GPU read kernel "
         "(fault migration), GPU read again (resident), prefetch to host, prefetch to device, host touches "
         "every page (CPU-fault migration back)]; (c) prefetch call time for 2 MiB both ways. Kernel and "
         "prefetch times from events; call_us and total_us (call start to sync return) from steady_clock"}};
    json pts = json::array();
    auto ktime = [&](const std::function<void()>& f) {
        CK(cudaEventRecord(ev[0], s));
        f();
        CK(cudaEventRecord(ev[1], s));
        CK(cudaEventSynchronize(ev[1]));
        return event_us(ev[0], ev[1]);
    };
    std::map<std::string, std::vector<double>> last;  // per quantity, largest size (for the preview)
    for (size_t S : sizes) {
        const size_t usable = usable_device_bytes();
        if (S > usable) {
            progress(c, "um: %s skipped: only %s free beyond the 2 GiB margin", size_str(S).c_str(),
                     size_str(usable).c_str());
            pts.push_back({{"bytes", S}, {"skipped", "not enough free device memory (free - 2 GiB)"}});
            continue;
        }
        json p;
        p["bytes"] = S;
        std::vector<double> alloc_us, gpu_first, gpu_res0;
        for (int r = 0; r < reps; ++r) {
            void* m = nullptr;
            const int64_t t0 = now_ns();
            CK(cudaMallocManaged(&m, S, cudaMemAttachGlobal));
            alloc_us.push_back(ns_to_us(now_ns() - t0));
            gpu_first.push_back(ktime([&] { CK(k_write(s, grid, threads, m, S, 7u)); }));
            gpu_res0.push_back(ktime([&] { CK(k_read(s, grid, threads, m, S, nullptr, sink)); }));
            CK(cudaFree(m));
        }
        p["malloc_managed_us"] = r3v(alloc_us);
        p["gpu_first_touch_us"] = r3v(gpu_first);
        p["gpu_read_after_first_touch_us"] = r3v(gpu_res0);

        char* m = nullptr;
        CK(cudaMallocManaged((void**)&m, S, cudaMemAttachGlobal));
        p["cpu_first_touch_us"] = r3(touch_host(m, S, true, 1));
        std::vector<double> fault, resident, pf_h_call, pf_h_gpu, pf_h_tot, pf_d_call, pf_d_gpu, pf_d_tot, cpu_fault;
        auto prefetch = [&](cudaMemLocation l, size_t off, size_t bytes, std::vector<double>* call,
                            std::vector<double>* gpu, std::vector<double>* tot) {
            CK(cudaEventRecord(ev[0], s));
            const int64_t t0 = now_ns();
            cudaError_t e = cudaMemPrefetchAsync(m + off, bytes, l, 0, s);
            const int64_t t1 = now_ns();
            CK(e);
            CK(cudaEventRecord(ev[1], s));
            CK(cudaStreamSynchronize(s));
            const int64_t t2 = now_ns();
            if (call) call->push_back(ns_to_us(t1 - t0));
            if (gpu) gpu->push_back(event_us(ev[0], ev[1]));
            if (tot) tot->push_back(ns_to_us(t2 - t0));
        };
        for (int r = 0; r < reps; ++r) {
            fault.push_back(ktime([&] { CK(k_read(s, grid, threads, m, S, nullptr, sink)); }));
            resident.push_back(ktime([&] { CK(k_read(s, grid, threads, m, S, nullptr, sink)); }));
            prefetch(loc_host(), 0, S, &pf_h_call, &pf_h_gpu, &pf_h_tot);
            prefetch(loc_device(dev), 0, S, &pf_d_call, &pf_d_gpu, &pf_d_tot);
            cpu_fault.push_back(touch_host(m, S, true, (unsigned char)(r + 2)));
            progress(c, "um: %s rep %d: GPU fault %.2f GB/s, prefetch D->H %.2f GB/s, H->D %.2f GB/s, CPU fault %.2f GB/s",
                     size_str(S).c_str(), r, double(S) / fault.back() * 1e-3, double(S) / pf_h_gpu.back() * 1e-3,
                     double(S) / pf_d_gpu.back() * 1e-3, double(S) / cpu_fault.back() * 1e-3);
        }
        // small prefetches (pages are on the host now)
        std::vector<double> sm_d, sm_h;
        for (int r = 0; r < (q ? 10 : 20); ++r) {
            const size_t off = (size_t(r) * 2 * MiB) % (S - 2 * MiB);
            prefetch(loc_device(dev), off, 2 * MiB, &sm_d, nullptr, nullptr);
            prefetch(loc_host(), off, 2 * MiB, &sm_h, nullptr, nullptr);
        }
        CK(cudaFree(m));
        p["gpu_fault_read_us"] = r3v(fault);
        p["gpu_resident_read_us"] = r3v(resident);
        p["prefetch_to_host"] = {{"call_us", r3v(pf_h_call)}, {"gpu_us", r3v(pf_h_gpu)}, {"total_us", r3v(pf_h_tot)}};
        p["prefetch_to_device"] = {{"call_us", r3v(pf_d_call)}, {"gpu_us", r3v(pf_d_gpu)}, {"total_us", r3v(pf_d_tot)}};
        p["cpu_fault_touch_us"] = r3v(cpu_fault);
        p["prefetch_2MiB"] = {{"to_device_call_us", r3v(sm_d)}, {"to_host_call_us", r3v(sm_h)}};
        pts.push_back(p);
        last["S"] = {double(S)};
        last["fault"] = fault;
        last["pf_d"] = pf_d_gpu;
        last["pf_h"] = pf_h_gpu;
        last["cpu"] = cpu_fault;
        last["first"] = gpu_first;
        last["res"] = resident;
        last["pf_call"] = sm_d;
        last["pf_call"].insert(last["pf_call"].end(), sm_h.begin(), sm_h.end());
        last["pf_d_call"] = pf_d_call;
    }
    out["points"] = pts;
    CK(cudaFree(sink));
    if (last.count("S")) {
        const double S = last["S"][0];
        const std::string sz = " (" + size_str(size_t(S)) + ")";
        auto gbs = [&](const char* k) { return S / median(last[k]) * 1e-3; };
        preview(out, "um.fault_bandwidth", gbs("fault"), "GB/s", "bytes / GPU read kernel time, host-resident" + sz);
        preview(out, "um.prefetch_h2d_bandwidth", gbs("pf_d"), "GB/s", "bytes / prefetch to device, events" + sz);
        preview(out, "um.prefetch_d2h_bandwidth", gbs("pf_h"), "GB/s", "bytes / prefetch to host, events" + sz);
        preview(out, "um.cpu_fault_bandwidth", gbs("cpu"), "GB/s", "bytes / host page-touch time, device-resident" + sz);
        preview(out, "host.prefetch_call_cost", median(last["pf_call"]), "us", "median call time, 2 MiB prefetches");
        preview(out, "check.um_gpu_first_touch", gbs("first"), "GB/s", "GPU write of never-touched managed memory" + sz);
        preview(out, "check.um_resident_read", gbs("res") * 1e-3, "TB/s", "GPU read once resident" + sz);
        preview(out, "check.um_prefetch_h2d_call", median(last["pf_d_call"]), "us",
                "host time of a large prefetch to device call" + sz);
    }
}
