// hetsim-microbench section graph_copy_kernel: the hand-over between a copy node and a kernel node
// of a CUDA graph, against the same copy between two kernels in a stream (issue 14, docs/model.md
// rules 1 and 7). Validation 44 (graphs of H2D 1 MiB -> 3 kernels -> D2H 1 MiB) runs ~13 us a
// launch longer than modelled, at its copy nodes: 3.7-4.0 us from the upload to the first kernel
// and 1.3-3.6 us from the last kernel to the download, where two kernel nodes follow each other
// in 0.06 us; graph_nodes measured copy nodes only after copy nodes (4 KiB).
// Chains K, C, K, C, ..., K: K a spin-stamp kernel (1 x 256 threads, 2 us), C a pinned copy of
// 4 KiB or 1 MiB (H2D or D2H), built as a graph (stream capture) and as stream launches behind a
// 1 ms blocker; per kernel its block's start/end %globaltimer, so the time from one kernel's end
// to the next one's start is the copy with its two hand-overs. Also chains of copies alone (20 of
// 1 MiB) as a graph and in a stream, GPU time by events, for a copy node's own time at 1 MiB.
#include "common.hpp"

#include <algorithm>
#include <string>
#include <vector>

void bench_graph_copy_kernel(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    cudaStream_t s = c.s[0], cap = c.s[1];
    const int reps = q ? 2 : 5;
    const int n = q ? 8 : 20;  // kernels per chain (n - 1 copies between them)
    const uint64_t spin = 2000, blocker = 1000000;
    const size_t big = size_t(1) << 20;
    char *h = nullptr, *d = nullptr;
    CK(cudaMallocHost(&h, big));
    CK(cudaMalloc(&d, big));
    unsigned long long* st = nullptr;
    CK(cudaMalloc(&st, size_t(n) * 2 * sizeof(unsigned long long)));
    std::vector<unsigned long long> hs(size_t(n) * 2);
    EventPool ev(2);
    json pts = json::array();
    for (size_t bytes : {size_t(4096), big})
        for (int h2d : {1, 0})
            for (int graph : {1, 0}) {
                auto issue = [&](cudaStream_t cs) {
                    for (int i = 0; i < n; ++i) {
                        CK(k_spin_stamp(cs, 1, 256, spin, 0, st + size_t(i) * 2, nullptr));
                        if (i + 1 < n)
                            CK(h2d ? cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, cs)
                                   : cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, cs));
                    }
                };
                cudaGraph_t g = nullptr;
                cudaGraphExec_t x = nullptr;
                if (graph) {
                    g = capture_graph(cap, issue);
                    CK(cudaGraphInstantiate(&x, g, 0));
                    CK(cudaGraphLaunch(x, s));  // upload
                    CK(cudaStreamSynchronize(s));
                }
                std::vector<double> between, kern;
                json rj = json::array();
                for (int r = 0; r < reps; ++r) {
                    CK(k_spin(s, blocker));
                    if (graph) CK(cudaGraphLaunch(x, s));
                    else issue(s);
                    CK(cudaStreamSynchronize(s));
                    CK(cudaMemcpy(hs.data(), st, hs.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                    std::vector<long long> a, b;
                    for (int i = 0; i < n; ++i)
                        a.push_back((long long)(hs[size_t(i) * 2] - hs[0])), b.push_back((long long)(hs[size_t(i) * 2 + 1] - hs[0]));
                    for (int i = 0; i + 1 < n; ++i) between.push_back(double(a[size_t(i) + 1] - b[size_t(i)]) * 1e-3);
                    for (int i = 0; i < n; ++i) kern.push_back(double(b[size_t(i)] - a[size_t(i)]) * 1e-3);
                    rj.push_back({{"start_ns", a}, {"end_ns", b}});
                }
                if (graph) {
                    CK(cudaGraphExecDestroy(x));
                    CK(cudaGraphDestroy(g));
                }
                const std::string name = std::string(graph ? "graph" : "stream") + (h2d ? "_h2d_" : "_d2h_") + (bytes == big ? "1mib" : "4kib");
                pts.push_back({{"chain", name}, {"mode", graph ? "graph" : "stream"}, {"dir", h2d ? "h2d" : "d2h"}, {"bytes", bytes},
                               {"kernel_to_kernel_us", r3(median(between))}, {"kernel_us", r3(median(kern))}, {"reps", rj}});
                progress(c, "graph_copy_kernel: %-16s kernel end -> next kernel start across the copy %.3f us", name.c_str(), median(between));
                preview(out, "check.copy_kernel_" + name, median(between), "us",
                        "a kernel's end -> the next kernel's start with the copy between them, " + name);
            }
    // Copies alone: 20 copies of 1 MiB in a chain, a graph against stream launches (events).
    json alone = json::array();
    for (int h2d : {1, 0}) {
        const int m = 20;
        auto issue = [&](cudaStream_t cs) {
            for (int i = 0; i < m; ++i)
                CK(h2d ? cudaMemcpyAsync(d, h, big, cudaMemcpyHostToDevice, cs) : cudaMemcpyAsync(h, d, big, cudaMemcpyDeviceToHost, cs));
        };
        cudaGraph_t g = capture_graph(cap, issue);
        cudaGraphExec_t x = nullptr;
        CK(cudaGraphInstantiate(&x, g, 0));
        CK(cudaGraphLaunch(x, s));
        CK(cudaStreamSynchronize(s));
        std::vector<double> tg, ts;
        for (int r = 0; r < reps; ++r) {
            CK(k_spin(s, blocker));
            tg.push_back(ktime(s, ev, [&] { CK(cudaGraphLaunch(x, s)); }));
            CK(k_spin(s, blocker));
            ts.push_back(ktime(s, ev, [&] { issue(s); }));
        }
        CK(cudaGraphExecDestroy(x));
        CK(cudaGraphDestroy(g));
        alone.push_back({{"dir", h2d ? "h2d" : "d2h"}, {"bytes", big}, {"copies", m}, {"graph_us", r3v(tg)}, {"stream_us", r3v(ts)}});
        progress(c, "graph_copy_kernel: %d x 1 MiB %s: graph %.3f us, stream %.3f us", m, h2d ? "H2D" : "D2H", median(tg), median(ts));
    }
    CK(cudaFree(st));
    CK(cudaFree(d));
    CK(cudaFreeHost(h));
    out["config"] = {{"reps", reps}, {"kernels", n}, {"spin_ns", spin}, {"blocker_ns", blocker}};
    out["points"] = pts;
    out["copies_alone"] = alone;
    out["method"] = "points: a chain of n spin-stamp kernels (1 x 256 threads, spin_ns each, stamped) with a pinned copy of "
                    "bytes (dir) between each two, captured as a graph (mode graph, uploaded first) or launched into the "
                    "stream (mode stream), behind a k_spin blocker of blocker_ns; start_ns/end_ns = each kernel's block "
                    "start/end relative to the first's start; kernel_to_kernel_us = median over reps and copies of the next "
                    "kernel's start - this kernel's end (the copy and its two hand-overs). copies_alone: 20 copies of 1 MiB "
                    "chained, graph vs stream launches behind the blocker, GPU time by events.";
}
