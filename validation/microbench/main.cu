// hetsim-microbench: measures the parameters of hw/profiles/h200.yaml on a real GPU.
//   hetsim-microbench -o results.json [--quick] [--only name,name] [--device N]
//   hetsim-microbench --list
// Writes one JSON file (schema "hetsim.microbench", version 1; README.md has the layout) through a
// temporary name and a rename. Progress goes to stderr; a table of preview estimates to stdout.
#include "common.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

namespace {

json* g_root = nullptr;
std::string g_out;
bool g_failing = false;

struct PreviewRow {
    std::string bench, param, unit, how;
    double value;
};
std::vector<PreviewRow> g_preview;
std::string g_current_bench;

const char* kSchema = "hetsim.microbench";
constexpr int kVersion = 1;

void dump_pretty(std::string& o, const json& j, int ind) {
    auto pad = [&](int n) { o.append(size_t(n) * 2, ' '); };
    if (j.is_object()) {
        if (j.empty()) {
            o += "{}";
            return;
        }
        o += "{\n";
        size_t i = 0;
        for (auto it = j.begin(); it != j.end(); ++it, ++i) {
            pad(ind + 1);
            o += json(it.key()).dump();
            o += ": ";
            dump_pretty(o, it.value(), ind + 1);
            o += i + 1 < j.size() ? ",\n" : "\n";
        }
        pad(ind);
        o += "}";
    } else if (j.is_array()) {
        bool flat = std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_primitive(); });
        if (flat || j.empty()) {
            o += j.dump();
            return;
        }
        o += "[\n";
        for (size_t i = 0; i < j.size(); ++i) {
            pad(ind + 1);
            dump_pretty(o, j[i], ind + 1);
            o += i + 1 < j.size() ? ",\n" : "\n";
        }
        pad(ind);
        o += "]";
    } else {
        o += j.dump();
    }
}

// Write through a temporary name, then rename. Returns false (with a message) on failure.
bool write_json(const std::string& path, const json& root) {
    std::string text;
    dump_pretty(text, root, 0);
    text += "\n";
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    FILE* f = fopen(tmp.c_str(), "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", tmp.c_str(), strerror(errno));
        return false;
    }
    bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
        fprintf(stderr, "cannot write %s: %s\n", path.c_str(), strerror(errno));
        remove(tmp.c_str());
        return false;
    }
    return true;
}

[[noreturn]] void fail_with(const std::string& msg) {
    fprintf(stderr, "hetsim-microbench: %s\n", msg.c_str());
    if (g_root && !g_failing && !g_out.empty()) {
        g_failing = true;
        (*g_root)["error"] = msg;
        (*g_root)["complete"] = false;
        const std::string partial = g_out + ".partial";
        if (write_json(partial, *g_root)) fprintf(stderr, "hetsim-microbench: partial results in %s\n", partial.c_str());
    }
    exit(1);
}

std::string iso_utc_now() {
    time_t t = time(nullptr);
    struct tm tm {};
    gmtime_r(&t, &tm);
    char buf[32];
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string read_first_line(const char* path) {
    std::ifstream f(path);
    std::string line;
    if (f) std::getline(f, line);
    return line;
}

std::string version_str(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, sep))
        if (!item.empty()) v.push_back(item);
    return v;
}

void usage(FILE* f) {
    fprintf(f,
            "usage: hetsim-microbench -o results.json [--quick] [--only name,name] [--device N]\n"
            "       hetsim-microbench --list\n"
            "Runs CUDA microbenchmarks for the hetsim H200 profile and writes raw samples as JSON.\n"
            "  -o PATH      output file (written to PATH.tmp.<pid>, then renamed)\n"
            "  --quick      fewer sizes and repetitions (under 90 s)\n"
            "  --only LIST  comma-separated benchmark names (see --list)\n"
            "  --device N   CUDA device ordinal (default 0)\n"
            "  --list       print the benchmarks and the parameters they inform; no CUDA\n");
}

void list_benches() {
    for (const auto& b : benches()) {
        printf("%s\n  fits:   ", b.name);
        if (b.fits.empty()) printf("(none)");
        for (size_t i = 0; i < b.fits.size(); ++i) printf("%s%s", i ? ", " : "", b.fits[i]);
        printf("\n");
        if (b.checks && *b.checks) printf("  checks: %s\n", b.checks);
        printf("  what:   %s\n", b.what);
    }
}

json device_attrs(int dev) {
    struct A {
        const char* name;
        cudaDeviceAttr a;
    };
    const A attrs[] = {
        {"compute_capability_major", cudaDevAttrComputeCapabilityMajor},
        {"compute_capability_minor", cudaDevAttrComputeCapabilityMinor},
        {"multiprocessor_count", cudaDevAttrMultiProcessorCount},
        {"max_threads_per_multiprocessor", cudaDevAttrMaxThreadsPerMultiProcessor},
        {"max_blocks_per_multiprocessor", cudaDevAttrMaxBlocksPerMultiprocessor},
        {"max_registers_per_multiprocessor", cudaDevAttrMaxRegistersPerMultiprocessor},
        {"max_shared_memory_per_multiprocessor", cudaDevAttrMaxSharedMemoryPerMultiprocessor},
        {"max_shared_memory_per_block_optin", cudaDevAttrMaxSharedMemoryPerBlockOptin},
        {"reserved_shared_memory_per_block", cudaDevAttrReservedSharedMemoryPerBlock},
        {"l2_cache_size", cudaDevAttrL2CacheSize},
        {"clock_rate_khz", cudaDevAttrClockRate},
        {"memory_clock_rate_khz", cudaDevAttrMemoryClockRate},
        {"global_memory_bus_width", cudaDevAttrGlobalMemoryBusWidth},
        {"async_engine_count", cudaDevAttrAsyncEngineCount},
        {"concurrent_kernels", cudaDevAttrConcurrentKernels},
        {"concurrent_managed_access", cudaDevAttrConcurrentManagedAccess},
        {"pageable_memory_access", cudaDevAttrPageableMemoryAccess},
        {"direct_managed_mem_access_from_host", cudaDevAttrDirectManagedMemAccessFromHost},
        {"can_map_host_memory", cudaDevAttrCanMapHostMemory},
        {"unified_addressing", cudaDevAttrUnifiedAddressing},
        {"pci_bus_id", cudaDevAttrPciBusId},
        {"pci_device_id", cudaDevAttrPciDeviceId},
    };
    json j;
    for (const auto& a : attrs) {
        int v = 0;
        CK(cudaDeviceGetAttribute(&v, a.a, dev));
        j[a.name] = v;
    }
    return j;
}

// %globaltimer update step: one thread reads it back to back.
json measure_timer(Ctx& c) {
    const int n = 4096;
    unsigned long long* d = nullptr;
    CK(cudaMalloc(&d, n * sizeof(unsigned long long)));
    std::vector<unsigned long long> h(n);
    CK(k_timer_reads(c.s[0], d, n));
    CK(cudaStreamSynchronize(c.s[0]));
    CK(k_timer_reads(c.s[0], d, n));  // second run: warm
    CK(cudaMemcpyAsync(h.data(), d, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost, c.s[0]));
    CK(cudaStreamSynchronize(c.s[0]));
    CK(cudaFree(d));
    std::map<unsigned long long, int> hist;
    std::vector<double> steps;
    for (int i = 1; i < n; ++i) {
        unsigned long long dlt = h[i] - h[i - 1];
        if (dlt) {
            hist[dlt]++;
            steps.push_back(double(dlt));
        }
    }
    json j;
    j["reads"] = n;
    j["span_ns"] = (long long)(h[n - 1] - h[0]);
    j["nonzero_steps"] = steps.size();
    j["min_step_ns"] = steps.empty() ? 0.0 : vmin(steps);
    j["median_step_ns"] = steps.empty() ? 0.0 : median(steps);
    json hj = json::object();
    for (auto& [k, v] : hist) hj[std::to_string(k)] = v;
    j["step_histogram_ns"] = hj;
    c.timer_tick_ns = steps.empty() ? 1000.0 : median(steps);
    j["tick_used_ns"] = c.timer_tick_ns;
    return j;
}

}  // namespace

[[noreturn]] void mb_fail(const char* err_name, const char* err_str, const char* call, const char* file, int line) {
    char buf[1024];
    snprintf(buf, sizeof buf, "CUDA error %s (%s) in %s at %s:%d%s%s", err_name, err_str, call, file, line,
             g_current_bench.empty() ? "" : " during ", g_current_bench.c_str());
    fail_with(buf);
}

[[noreturn]] void mb_die(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fail_with(buf);
}

void preview(json& bench, const std::string& param, double value, const char* unit, const std::string& how) {
    bench["preview"][param] = {{"value", std::isfinite(value) ? json(value) : json(nullptr)},
                               {"unit", unit},
                               {"how", how}};
    g_preview.push_back({g_current_bench, param, unit, how, value});
}

const std::vector<Bench>& benches() {
    static const std::vector<Bench> v = {
        {"device",
         {"sm.count", "sm.max_threads", "sm.max_blocks", "sm.registers", "sm.shared_memory", "device.memory"},
         "",
         "device attributes and memory (no timing)",
         bench_device},
        {"copy_sweep",
         {"copy.h2d.fixed", "copy.h2d.bandwidth", "copy.d2h.fixed", "copy.d2h.bandwidth", "host.memcpy_call_cost"},
         "",
         "pinned H2D/D2H cudaMemcpyAsync 4 KiB..1 GiB: GPU time of batches of back-to-back copies (events), "
         "host time of every call",
         bench_copy_sweep},
        {"pageable_sweep",
         {"host.pageable_h2d_bandwidth", "host.pageable_d2h_bandwidth", "host.staging_chunk"},
         "pageable H2D returns once staged, blocks when the staging pool is full; pageable D2H blocks",
         "pageable (malloc, touched) H2D/D2H cudaMemcpyAsync + stream sync 64 KiB..256 MiB: call and total "
         "host time, idle stream, stream busy behind a kernel, cache-warm source",
         bench_pageable_sweep},
        {"d2d_memset",
         {"copy.d2d.fixed", "copy.d2d.bandwidth", "copy.memset.fixed", "copy.memset.bandwidth",
          "host.memset_call_cost"},
         "",
         "device-to-device cudaMemcpyAsync and cudaMemsetAsync 4 KiB..1 GiB: GPU time of batches, host call time",
         bench_d2d_memset},
        {"duplex",
         {},
         "H2D and D2H run side by side (no duplex penalty in the model)",
         "256 MiB H2D and 256 MiB D2H in two streams at once, and each alone",
         bench_duplex},
        {"same_direction",
         {},
         "one FIFO per direction: same-direction copies from different streams run one at a time",
         "2, 4, 8 streams each with one 64 MiB H2D at once (and 4 x D2H, and a small copy behind a big one): "
         "per-copy end times and order",
         bench_same_direction},
        {"launch",
         {"host.launch_cost", "kernel.min_duration", "gpu.launch_latency", "host.sync_wakeup", "host.sync_call_cost",
          "host.event_record_cost", "host.stream_wait_event_cost"},
         "",
         "host cost of empty launches, GPU period of queued empty kernels, launch->start latency and sync "
         "wake-up through a %globaltimer/steady_clock alignment, small-call costs",
         bench_launch},
        {"gaps",
         {"gpu.stream_gap", "gpu.event_gap", "kernel.min_duration"},
         "",
         "GPU gap between dependent kernels in one stream and across two streams through events "
         "(%globaltimer stamps; and chain-vs-fused timing with events)",
         bench_gaps},
        {"coresidency",
         {},
         "block residency and scheduling: kernels that each need <= half the device overlap, full ones "
         "serialise; at most 128 kernels at once",
         "two spin kernels in two streams with g = 66..264 blocks of 1024 threads; 128 and 129 one-block kernels",
         bench_coresidency},
        {"hbm",
         {"hbm.bandwidth", "hbm.sharing"},
         "",
         "read-only streaming kernel over 1 and 4 GiB; two half-device streaming kernels at once vs alone",
         bench_hbm},
        {"um",
         {"um.fault_bandwidth", "um.prefetch_h2d_bandwidth", "um.prefetch_d2h_bandwidth", "um.cpu_fault_bandwidth",
          "host.prefetch_call_cost"},
         "",
         "managed memory 256 MiB and 1 GiB: GPU first touch, GPU-fault migration, prefetch to device and host, "
         "CPU-fault migration back, prefetch call time",
         bench_um},
        {"hw_queues",
         {"gpu.hw_queues"},
         "streams share a few hardware queues; a waiting item at a queue's head blocks the streams behind it",
         "child process per CUDA_DEVICE_MAX_CONNECTIONS (default, 1..32): 32 streams x 2 dependent 1 ms kernels issued "
         "stream by stream; GPU span and per-kernel %globaltimer stamps",
         bench_hw_queues},
        {"launch_queue",
         {"gpu.launch_queue_depth"},
         "a full launch queue blocks launches into that stream only",
         "40 ms blocker then 2000 empty launches into one stream: host time of each call (depth = first blocking call); "
         "launches into a second stream while the first is full",
         bench_launch_queue},
        {"module_load",
         {"host.module_load_cost"},
         "",
         "fresh child processes (lazy loading): first and second launch of a kernel from an unused module, first launch of "
         "another kernel of it",
         bench_module_load},
        {"host_func",
         {"host.host_func_call_cost", "gpu.host_func_latency", "gpu.host_func_gap"},
         "",
         "cudaLaunchHostFunc call cost; callback start after the preceding kernel's end stamp; next kernel start after "
         "the callback (clocks aligned by ping-pong)",
         bench_host_func},
        {"graphs",
         {"graph.instantiate_per_node", "graph.launch_cost", "graph.launch_per_node", "graph.node_gap", "graph.copy_node_extra"},
         "",
         "graphs of 10/100/1000 captured empty kernels: instantiate and launch host time, GPU time vs stream launches; "
         "100 pinned 4 KiB H2D copy nodes vs the same copies in a stream",
         bench_graphs},
        {"alloc",
         {"host.malloc_cost", "host.free_cost", "host.malloc_async_cost", "host.malloc_host_bandwidth",
          "host.free_host_bandwidth", "host.host_register_bandwidth"},
         "",
         "cudaMalloc/cudaFree 1 MiB..1 GiB (idle device), cudaMallocHost/cudaFreeHost and cudaHostRegister 64 MiB..1 GiB, "
         "cudaMallocAsync/cudaFreeAsync from a warm pool; sizes limited by free memory",
         bench_alloc},
        {"blocking_sync",
         {"host.blocking_sync_wakeup", "host.blocking_sync_wakeup_short", "host.blocking_sync_sleep_from",
          "host.blocking_sync_sleep_ramp"},
         "an event without cudaEventBlockingSync still spins under cudaDeviceScheduleBlockingSync",
         "child process with cudaDeviceScheduleBlockingSync: stream sync and event sync (with and without "
         "cudaEventBlockingSync) wake-up after a 1 ms kernel's end stamp; stream sync wake-up after kernels of 5 us .. 2 ms "
         "(how long the thread slept)",
         bench_blocking_sync},
        {"pageable_contention",
         {"copy.pageable_contention"},
         "",
         "256 MiB pinned H2D (D2H) alone vs beside a 256 MiB pageable D2H (H2D) in another stream: pinned copy duration (events)",
         bench_pageable_contention},
        {"um_blocks",
         {},
         "managed memory migrates in blocks: a kernel over a half-prefetched buffer faults only the other half; a prefetch "
         "to the device blocks the host for part of the transfer",
         "256 MiB managed buffer none/half/all prefetched, then a read kernel over all of it; cudaMemPrefetchAsync host "
         "time vs GPU time at 256 MiB and 1 GiB",
         bench_um_blocks},
        // Issue 14 (bench_v3.cu): behaviours predicted worst on composed programs; raw data for model fixes.
        {"um_roundtrip",
         {},
         "managed memory migrating GPU -> CPU -> GPU in round trips: per-direction speed of each pass (um.fault_bandwidth, "
         "um.cpu_fault_bandwidth in the model)",
         "64-256 MiB managed: GPU pass (sparse one byte per 4 KiB page, or dense read), host pass (read or write one byte "
         "per page), 3 round trips; GPU times from events, host passes from steady_clock",
         bench_um_roundtrip},
        {"um_prefetch_host",
         {},
         "cudaMemPrefetchAsync to the host: its speed alone and beside a kernel and host work, and what the host reads "
         "cost afterwards (um.prefetch_d2h_bandwidth, um.cpu_fault_bandwidth)",
         "64-256 MiB device-resident managed: host reads without prefetch; prefetch to host alone, beside a half-device "
         "kernel, beside a kernel and host work, after a kernel in the same stream; then host reads",
         bench_um_prefetch_host},
        {"um_sparse",
         {},
         "GPU fault migration of a sparse touch (one byte per 4 KiB page) against a dense read (um.fault_bandwidth; the "
         "runner's `uses` is a sparse touch)",
         "64-256 MiB host-resident managed: fault kernel time for strides 4 KiB (two grids), 64 KiB, 2 MiB, dense read and "
         "dense write; the same kernel again on resident data",
         bench_um_sparse},
        {"um_partial_prefetch",
         {},
         "a large partial prefetch to the device beside compute: prefetch speed and host blocking (um.prefetch_h2d_bandwidth, "
         "um.prefetch_host_block), then faults of the rest",
         "1.5 GiB host-resident managed (768 MiB if memory is short): a quarter, half or all prefetched alone or beside a "
         "half-device spin kernel, then a read kernel over all of it",
         bench_um_partial_prefetch},
        {"alloc_streams",
         {},
         "cudaFree waits for the whole device, then costs host.free_cost; what that does inside a two-stream step "
         "(host.malloc_cost, host.free_cost)",
         "cudaMalloc/cudaFree of 16 and 256 MiB idle, beside one and two busy streams (return after the last kernel end, "
         "clock-aligned stamps); a 10-iteration two-stream step loop without allocation, with cudaMalloc/cudaFree, with "
         "cudaMallocAsync/cudaFreeAsync",
         bench_alloc_streams},
        {"host_register_copies",
         {},
         "cudaHostRegister cost (first and repeated registration) and the copy speed of registered memory against "
         "cudaMallocHost memory (host.host_register_bandwidth, copy.*.bandwidth)",
         "64-256 MiB: register, stream H2D in 16 MiB chunks, whole-buffer H2D and D2H, unregister, per rep; the same copies "
         "from cudaMallocHost memory",
         bench_host_register_copies},
        {"hbm_beside_copies",
         {},
         "memory-bound kernels (read, triad) on one and two streams beside pinned H2D and D2H copies: the kernels' and the "
         "copies' slowdown (hbm.bandwidth, hbm.sharing, copy bandwidths)",
         "series of 64/256 MiB read or triad kernels (half or full grid) in 1-2 streams, with and without a 256 MiB H2D, "
         "D2H, or both, all released together; per-stream checkpoints and copy ends from events",
         bench_hbm_beside_copies},
        {"graph_nodes",
         {},
         "the GPU spacing of graph kernel nodes: empty kernels up to 2000 nodes, and full-grid spin kernels of 132-1056 "
         "blocks (graph.node_gap, graph.launch_*)",
         "graphs (chains) of 10-2000 empty kernels: instantiate, launch call, GPU time vs stream launches; graphs of 20 and "
         "200 spin kernels of 132/264/528/1056 x 256 threads: per-node start/end stamps, graph vs stream",
         bench_graph_nodes},
        {"pageable_small",
         {},
         "small pageable copies (4 KiB-1 MiB): host call time, time to the sync's return and GPU time, both directions, "
         "warm and cold host memory (host.pageable_*_bandwidth, host.staging_*)",
         "cudaMemcpyAsync + sync and cudaMemcpy of 4 KiB-1 MiB pageable, H2D and D2H, warm and cold; beside a busy stream; "
         "32 back-to-back H2D",
         bench_pageable_small},
        {"thread_launch_sync",
         {},
         "1, 2, 4, 8 host threads each launching + copying + syncing in a loop: per-call and per-iteration time vs threads "
         "(host.launch_contention, host.sync_wakeup, call costs)",
         "T threads, own streams: iters x [launch (empty or 20 us spin), 4 KiB pinned D2H, stream sync], host time of every "
         "call and iteration",
         bench_thread_launch_sync},
        {"queues_streams",
         {},
         "8/16/32 streams of dependent kernels over the default hardware queues and over 32 (gpu.hw_queues, the "
         "stream-to-queue mapping)",
         "child process per CUDA_DEVICE_MAX_CONNECTIONS (default, 32): 8, 16, 32 streams x 2 dependent 1/4/10 ms one-block "
         "kernels, issued stream by stream or breadth first; per-kernel stamps",
         bench_queues_streams},
        {"priority_hbm",
         {},
         "stream priorities with memory-bound kernels: a low- and a high-priority stream each given a series at once "
         "(rules.priorities, hbm.sharing)",
         "two streams (least and greatest priority, or both least) each with 16 read or triad kernels of 64/256 MiB, half "
         "or full grid, released together, either issued first; per-kernel end events",
         bench_priority_hbm},
        // Issue 11 (bench_host_sync.cu): host queues, a callback's flag, threads started and joined.
        {"host_sync",
         {"host.queue_put_cost", "host.queue_get_cost", "host.queue_wakeup", "host.flag_wakeup", "host.thread_start",
          "host.join_wakeup"},
         "",
         "a bounded mutex + condition-variable host queue (the runner's): uncontended put/get cost, the wake-up of a thread "
         "asleep in get or put; a cudaLaunchHostFunc callback's flag seen by a spinning and a sleeping waiter; std::thread "
         "start and join wake-up",
         bench_host_sync},
        {"pipeline_chunks",
         {},
         "pinned chunked pipelines with a light kernel: per-chunk period in 1 and 4 streams (copy.*.bandwidth, "
         "copy.duplex_factor, gaps between copies)",
         "512 MiB in 16/32/64 MiB chunks: H2D, light kernel (50 us spin or triad over the chunk), D2H (or none), 1 or 4 "
         "streams; per-op end events",
         bench_pipeline_chunks},
        {"memcpy2d",
         {},
         "pitched copies (memcpy2d_async, cudaMemcpy2DAsync): GPU time against the number of rows at fixed bytes, pinned "
         "and pageable, both directions, pitch 2 x width and contiguous (copy.row_cost; whether contiguous rows merge)",
         "rows of 4 B-16 KiB, 1-64 MiB moved (at most 256 Ki rows), pitch 2 x width or = width, H2D and D2H, pinned (events "
         "around the copy) and pageable (call and sync return too)",
         bench_memcpy2d},
        // bench_graph_relaunch.cu: one executable graph launched again from another stream while it runs.
        {"graph_relaunch",
         {"graph.relaunch_gap"},
         "",
         "a 10-node chain graph (1-block stamp nodes around 8 nodes of 16 or 132 x 256 threads spinning 5 us) launched 40 "
         "times behind a blocker: the same exec alternately into two streams (CUDA runs one launch of an exec at a time), "
         "into one stream, and two execs of the graph into two streams; per-launch first-node start and last-node end stamps",
         bench_graph_relaunch},
        // bench_v4.cu: follow-ups for the calibration of graph.node_gap* and copy.row_cost.*.
        {"graph_node_grids",
         {"graph.node_gap", "graph.node_gap_small"},
         "the gap between graph kernel nodes depends on the grid of the node before (or after) it: 0.68 us per node of "
         "one-block empty kernels, 0.86 us between spin kernels on every SM",
         "chains of 100 spin-stamp kernels (2 us, 256 threads) of 1..264 blocks, and chains alternating two grids, as a "
         "graph and as stream launches; per-node first block start and last block end",
         bench_graph_node_grids},
        {"memcpy2d_pitches",
         {},
         "which pitch (host or device side) sets the per-row cost of a pitched copy; the pageable per-row host cost against "
         "the host pitch",
         "1 MiB in 4 and 16 B rows, pinned H2D/D2H with spitch != dpitch; pageable 16 B rows with host pitch 16-256 B",
         bench_memcpy2d_pitches},
        // bench_v5.cu: small pageable copies from several host threads (validation 64, 76, 107).
        {"pageable_threads",
         {},
         "whether 64 KiB pageable copies issued by several host threads at once are served one at a time (host.pageable_*, "
         "host.staging_*)",
         "1, 2, 4, 8 threads, own streams and pageable buffers: iters x [64 KiB pageable H2D, 40 us kernel, 64 KiB pageable "
         "D2H, sync] and variants without the kernel or one copy; every call stamped on one clock",
         bench_pageable_threads},
        // bench_graph_node_work.cu: what the 0.68 us per empty node against 0.86 us between spin kernels depends on.
        {"graph_node_work",
         {"graph.node_gap", "graph.node_gap_small", "graph.node_gap_ramp"},
         "",
         "chains of 20 and 200 graph kernel nodes: empty kernels, spin-stamp kernels of 1 block (1 or 256 threads) and of "
         "every SM spinning 0-2000 ns, with and without stamp stores, behind a 1 ms (some also a 20 ms) blocker; GPU time "
         "per node and per-node first block start / last block end",
         bench_graph_node_work},
        // bench_v6.cu: validation 53 and 114 (host passes of 8-32 MiB; a kernel held beside faults).
        {"um_beside_faults",
         {"um.cpu_fault_beside_copies"},
         "um.cpu_fault_bandwidth below 64 MiB and beside pinned copies; whether a kernel launched beside a kernel that "
         "demand-faults managed memory waits for its faults",
         "host read passes over 8, 16, 32, 64 MiB of device-resident managed memory, alone and beside 16 MiB pinned copies "
         "both ways; a 200 us spin kernel of 66 x 256 threads launched before and 0-2000 us after a kernel that faults "
         "32 MiB, per-block stamps, and alone / beside the same kernel on resident pages",
         bench_um_beside_faults},
        // bench_v7.cu: validation 60, 61, 104 (cudaGraphInstantiate longer than graph.instantiate_*).
        {"graph_instantiate",
         {"graph.upload_per_node"},
         "cudaGraphInstantiate host time vs nodes, kernel shape, distinct functions, build method and a kernel's first use "
         "(graph.instantiate_per_node, which has no fixed term, and host.module_load_cost); the first launch (upload) vs later",
         "chains of 1-2000 kernel nodes (empty, 1 us spin, 132 x 256 with 8 pointer args, 4 distinct kernels cycled), built "
         "by stream capture and by cudaGraphAddKernelNode: build and instantiate host time per rep, no profiler; cold "
         "kernels' first instantiation; first three launches (host call, to sync return, events) at 100 and 2000 nodes",
         bench_graph_instantiate},
        // bench_graph_copy_kernel.cu: validation 44 (copy nodes beside kernel nodes, ~13 us a launch unplaced).
        {"graph_copy_kernel",
         {"graph.cross_engine_wait"},
         "how much longer than a kernel-to-kernel node gap the hand-over between a copy node and a kernel node of a "
         "graph takes, against the same copy between two kernels in a stream (gpu.cross_engine_wait); a 1 MiB copy "
         "node's own time against a stream copy",
         "chains of 20 spin-stamp kernels (1 x 256, 2 us) with a pinned 4 KiB or 1 MiB H2D or D2H copy between each "
         "two, as a graph and as stream launches, per-kernel block stamps; 20 chained 1 MiB copies alone, graph vs "
         "stream, events",
         bench_graph_copy_kernel},
        // bench_host_func_wait.cu: validation 45/82/83 (callbacks start later after longer waits).
        {"host_func_wait",
         {"gpu.host_func_latency"},
         "how long after its preceding kernel a host callback starts, against how long the callback thread had "
         "nothing to do",
         "per kernel length 10 us .. 1 ms: 12 x (1 x 32 spin-stamp kernel, host callback stamping its start and end) "
         "on one stream, enqueued back to back, then one at a time (sync and a 30 us host spin after each); clocks "
         "aligned by ping-pong",
         bench_host_func_wait},
        // bench_pageable_turn.cu: validation 62/76/99/104/107 (uploads after pageable downloads).
        {"pageable_turnaround",
         {},
         "a pageable H2D call costs the same after a pageable D2H into another buffer as after an upload",
         "per size 4 KiB .. 4 MiB: n x (first copy, sync, host spin, timed pageable copy, sync): H2D or D2H after "
         "an H2D or a D2H of the same size, after a 4 KiB D2H, after a D2H and 500 us of host spin, and an H2D of the "
         "bytes the D2H wrote",
         bench_pageable_turnaround},
        {"pageable_steady",
         {"host.pageable_h2d_warm_bandwidth", "host.pageable_h2d_near_bandwidth"},
         "",
         "pageable H2D from a program's own buffer copied again and again (12 copies, 256 KiB .. 32 MiB): touched once "
         "a page, memset whole, first copies of fresh buffers, and h2d_warm's 512 MiB source for comparison",
         bench_pageable_steady},
        {"block_placement",
         {},
         "",
         "which SM each block lands on (%smid) and when, for kernels limited by shared memory (96 and 160 KiB blocks) "
         "alone, side by side and queued behind each other (validation 30)",
         bench_block_placement},
        // bench_v9.cu: validation 49/57/75/99/100 (cudaMalloc / cudaFree of 16-128 MiB in programs).
        {"alloc_sizes",
         {"host.malloc_cost", "host.malloc_cost_per_gib", "host.free_cost", "host.free_cost_per_gib"},
         "",
         "cudaMalloc / cudaFree of 4 .. 512 MiB: on an idle device, and in a step loop (malloc, a 0.3 ms kernel, free "
         "after it, 100 us host work) with the free's return after the kernel's end (clock-aligned stamps)",
         bench_alloc_sizes},
        {"copy_stream_switch",
         {},
         "",
         "32 pinned copies of 1 or 4 MiB, one direction, released at once and issued round robin over 1-16 streams: "
         "the extra time a copy takes when the copy before it on its engine came from another stream (validation 03/04/109)",
         bench_copy_stream_switch},
        {"call_after_host_work",
         {},
         "",
         "kernel launch, cudaMemcpyAsync and cudaEventRecord call times after 0 .. 1000 us of host spin: do calls cost "
         "more after host work (validation 09/49/75: launches of 9-10 us against 4-5 us back to back)",
         bench_call_after_host_work},
        // bench_v10.cu: what makes a call slow after a gap (the edge, and what runs during the gap).
        {"call_gap",
         {},
         "",
         "kernel launch, cudaMemcpyAsync and cudaEventRecord call times after host spin gaps of 0 .. 5000 us, and "
         "after 100 / 500 / 1000 us gaps spent asleep, beside a kernel, beside D2H copies, beside another thread's "
         "launches, entering the driver every 50 us, or writing a 1 / 4 MiB host buffer",
         bench_call_gap},
        {"um_tail_faults",
         {},
         "",
         "GPU faults (one byte per 4 KiB page) of a 128 MiB managed tail after a 0 / 256 / 768 MiB head was prefetched to "
         "the device: alone, beside a spin kernel, and with a spin kernel launched right after (validation 52/56/97)",
         bench_um_tail_faults},
        {"call_context",
         {},
         "",
         "API call times in the context programs make them: a launch, copy or event record into a stream whose last op "
         "runs on another engine (running or done), big and small copies, event and stream syncs of done work, and "
         "validation 09's iteration call by call",
         bench_call_context},
    };
    return v;
}

void bench_device(Ctx& c, json& out) {
    int dev = c.opt.device;
    json a = device_attrs(dev);
    out["attributes"] = a;
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    out["total_global_mem"] = c.prop.totalGlobalMem;
    out["mem_get_info"] = {{"free", free_b}, {"total", total_b}};
    out["shared_mem_per_block"] = c.prop.sharedMemPerBlock;
    out["regs_per_block"] = c.prop.regsPerBlock;
    preview(out, "sm.count", a["multiprocessor_count"].get<int>(), "", "cudaDevAttrMultiProcessorCount");
    preview(out, "sm.max_threads", a["max_threads_per_multiprocessor"].get<int>(), "",
            "cudaDevAttrMaxThreadsPerMultiProcessor");
    preview(out, "sm.max_blocks", a["max_blocks_per_multiprocessor"].get<int>(), "",
            "cudaDevAttrMaxBlocksPerMultiprocessor");
    preview(out, "sm.registers", a["max_registers_per_multiprocessor"].get<int>(), "",
            "cudaDevAttrMaxRegistersPerMultiprocessor");
    preview(out, "sm.shared_memory", a["max_shared_memory_per_multiprocessor"].get<int>() / 1024.0, "KiB",
            "cudaDevAttrMaxSharedMemoryPerMultiprocessor");
    preview(out, "device.memory", double(total_b) / double(MiB), "MiB", "cudaMemGetInfo total");
}

int main(int argc, char** argv) {
    Options opt;
    bool list = false;
    for (int i = 0; i < argc; ++i) opt.command += (i ? " " : "") + std::string(argv[i]);
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto need = [&](const char* what) -> std::string {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s needs %s\n", a.c_str(), what);
                usage(stderr);
                exit(2);
            }
            return argv[++i];
        };
        if (a == "-o" || a == "--output")
            opt.out = need("a path");
        else if (a == "--quick")
            opt.quick = true;
        else if (a == "--only")
            opt.only = split(need("a list of names"), ',');
        else if (a == "--device")
            opt.device = std::atoi(need("a number").c_str());
        else if (a == "--list")
            list = true;
        else if (a == "--child")
            opt.child = need("a section");
        else if (a == "--child-arg")
            opt.child_arg = need("a value");
        else if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "unknown argument %s\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    for (const auto& n : opt.only) {
        bool known = std::any_of(benches().begin(), benches().end(), [&](const Bench& b) { return n == b.name; });
        if (!known) {
            fprintf(stderr, "unknown benchmark '%s'; --list shows the names\n", n.c_str());
            return 2;
        }
    }
    if (list) {
        list_benches();
        return 0;
    }
    if (opt.out.empty()) {
        usage(stderr);
        return 2;
    }

    Ctx c;
    c.opt = opt;
    c.t0_ns = now_ns();
    json root;
    root["schema"] = kSchema;
    root["version"] = kVersion;
    root["complete"] = false;
    g_root = &root;
    g_out = opt.out;
    json& md = root["metadata"];
    md["date"] = iso_utc_now();
    {
        char host[256] = {0};
        gethostname(host, sizeof host - 1);
        md["host"] = host;
    }
    md["command"] = opt.command;

    if (!opt.child.empty()) child_prepare(opt);  // environment / device flags before the context
    else progress(c, "hetsim-microbench%s: initialising device %d", opt.quick ? " --quick" : "", opt.device);
    const int64_t ti = now_ns();
    CK(cudaSetDevice(opt.device));
    CK(cudaFree(nullptr));  // create the context
    const double init_ms = double(now_ns() - ti) * 1e-6;
    CK(cudaGetDeviceProperties(&c.prop, opt.device));
    c.sm_count = c.prop.multiProcessorCount;
    int drv = 0, rt = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    unsigned flags = 0;
    CK(cudaGetDeviceFlags(&flags));
    md["gpu"] = c.prop.name;
    std::string drv_line = read_first_line("/proc/driver/nvidia/version");
    md["driver"] = drv_line.empty() ? "CUDA driver API " + version_str(drv) : drv_line;
    md["driver_cuda_version"] = version_str(drv);
    md["cuda_runtime"] = version_str(rt);
    md["device_ordinal"] = opt.device;
    md["pci_bus_id"] = c.prop.pciBusID;
    md["sm_count"] = c.sm_count;
    md["device_flags"] = flags;
    md["context_init_ms"] = r3(init_ms);
    md["quick"] = opt.quick;
    {
        struct utsname u {};
        if (uname(&u) == 0) md["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
        md["host_cpus"] = sysconf(_SC_NPROCESSORS_ONLN);
        json env;
        for (const char* e : {"CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MODULE_LOADING", "CUDA_VISIBLE_DEVICES",
                              "CUDA_LAUNCH_BLOCKING"}) {
            const char* v = getenv(e);
            env[e] = v ? json(v) : json(nullptr);
        }
        md["env"] = env;
    }
    md["units"] = "times in microseconds (suffix _us) or nanoseconds (suffix _ns); sizes in bytes";

    for (auto& s : c.s) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    {
        void* p = nullptr;
        CK(cudaHostAlloc(&p, Ctx::kMappedBytes, cudaHostAllocMapped));
        memset(p, 0, Ctx::kMappedBytes);
        c.mapped = (unsigned char*)p;
        void* d = nullptr;
        CK(cudaHostGetDevicePointer(&d, p, 0));
        c.mapped_d = (unsigned char*)d;
    }
    warm_kernels(c.s[0]);
    md["globaltimer"] = measure_timer(c);
    if (!opt.child.empty()) {
        // A child process: one section's measurement, written as {"result", "context_init_ms"}.
        g_current_bench = opt.child + " (child)";
        json child;
        child["context_init_ms"] = r3(init_ms);
        run_child(c, child["result"]);
        CK(cudaDeviceSynchronize());
        child["result"]["clock_syncs"] = c.clock_syncs;
        if (!write_json(opt.out, child)) return 1;
        fflush(stdout);
        fflush(stderr);
        _exit(0);  // no teardown: the parent reads the file
    }
    md["kernel_occupancy"] = kernel_occupancy();
    progress(c, "%s, driver %s, runtime %s; %%globaltimer step %.0f ns", c.prop.name,
             md["driver_cuda_version"].get<std::string>().c_str(), md["cuda_runtime"].get<std::string>().c_str(),
             c.timer_tick_ns);

    const double budget_s = opt.quick ? 85.0 : 225.0;
    root["benchmarks"] = json::object();
    json skipped = json::array();
    for (const auto& b : benches()) {
        if (!opt.only.empty() && std::find(opt.only.begin(), opt.only.end(), b.name) == opt.only.end()) continue;
        if (c.elapsed_s() > budget_s) {
            progress(c, "%s: skipped, time budget of %.0f s spent", b.name, budget_s);
            skipped.push_back(b.name);
            continue;
        }
        g_current_bench = b.name;
        json& out = root["benchmarks"][b.name];
        out["fits"] = json::array();
        for (const char* f : b.fits) out["fits"].push_back(f);
        if (*b.checks) out["checks"] = b.checks;
        out["what"] = b.what;
        progress(c, "%s: start", b.name);
        const int64_t tb = now_ns();
        b.run(c, out);
        CK(cudaDeviceSynchronize());
        CK(cudaGetLastError());
        out["elapsed_s"] = r3(double(now_ns() - tb) * 1e-9);
        progress(c, "%s: done in %.1f s", b.name, double(now_ns() - tb) * 1e-9);
        g_current_bench.clear();
    }
    if (!skipped.empty()) root["skipped"] = skipped;
    root["clock_syncs"] = c.clock_syncs;
    c.release();
    for (auto& s : c.s) CK(cudaStreamDestroy(s));
    CK(cudaFreeHost(c.mapped));
    root["run_time_s"] = r3(c.elapsed_s());
    root["complete"] = skipped.empty();
    if (!write_json(opt.out, root)) return 1;
    progress(c, "wrote %s", opt.out.c_str());

    printf("%-16s %-30s %14s  %s\n", "benchmark", "parameter", "preview", "how");
    for (const auto& r : g_preview)
        printf("%-16s %-30s %10.4g %-4s  %s\n", r.bench.c_str(), r.param.c_str(), r.value, r.unit.c_str(),
               r.how.c_str());
    return 0;
}
