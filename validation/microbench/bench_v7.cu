// hetsim-microbench section graph_instantiate: cudaGraphInstantiate host time, without a profiler.
// Validation 60 (2000 empty-ish decode nodes), 61 (full-grid kernel nodes with weights) and 104 are
// 15-24% short on every H200 start; under CUPTI their instantiation takes 6.6-9.5 ms, 1.2-1.4 ms and
// 2.5-3.4 ms against the model's 4.2, 0.21 and 1.25 ms (graph.instantiate_per_node x nodes, fitted
// from the graphs section's captured empty kernels), but the profiler inflates it (graphs of a few
// nodes take 0.8-1.1 ms under it). This section measures, with steady_clock only:
//  - chains of 1, 10, 100, 500, 2000 kernel nodes built by stream capture and by
//    cudaGraphAddKernelNode, for an empty kernel, a 1 us spin kernel with 3 parameters, a 132 x 256
//    kernel with 8 pointer parameters, and 4 distinct kernels of that shape cycled: graph build
//    time and instantiate time of every rep (graph and exec destroyed outside the timed part);
//  - a kernel function's first instantiation in the process (kernels of their own module,
//    kernels_gi.cu, used by no other section) against repeats;
//  - the first three launches after instantiation (the first uploads the graph), at 100 and 2000
//    nodes: host time of the call, call to sync return, and events around the launch.
#include "common.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace {

struct KernelSet {
    const char* name;
    std::vector<int> kinds;  // node i uses kinds[i % size]
    int grid;
};

cudaGraph_t build_graph(cudaStream_t cap, bool capture, const KernelSet& k, int n) {
    cudaGraph_t g = nullptr;
    if (capture) {
        CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < n; ++i) CK(k_gi_launch(cap, k.kinds[size_t(i) % k.kinds.size()], k.grid, i));
        CK(cudaStreamEndCapture(cap, &g));
    } else {
        CK(cudaGraphCreate(&g, 0));
        cudaGraphNode_t prev = nullptr, node = nullptr;
        for (int i = 0; i < n; ++i) {
            CK(k_gi_add_node(g, &node, prev ? &prev : nullptr, k.kinds[size_t(i) % k.kinds.size()], k.grid, i));
            prev = node;
        }
    }
    return g;
}

// One sample: build (timed), instantiate (timed), optionally launches; destroys outside the timing.
struct Sample {
    double build_us = 0, instantiate_us = 0, exec_destroy_us = 0;
    std::vector<double> launch_call_us, launch_total_us, launch_gpu_us;
};

Sample one(Ctx& c, bool capture, const KernelSet& k, int n, int launches, const EventPool& ev) {
    Sample r;
    cudaStream_t s = c.s[0], cap = c.s[1];
    int64_t t0 = now_ns();
    cudaGraph_t g = build_graph(cap, capture, k, n);
    int64_t t1 = now_ns();
    r.build_us = ns_to_us(t1 - t0);
    cudaGraphExec_t x = nullptr;
    t0 = now_ns();
    const cudaError_t e = cudaGraphInstantiate(&x, g, 0);
    t1 = now_ns();
    CK(e);
    r.instantiate_us = ns_to_us(t1 - t0);
    for (int l = 0; l < launches; ++l) {
        CK(cudaEventRecord(ev[0], s));
        t0 = now_ns();
        const cudaError_t le = cudaGraphLaunch(x, s);
        t1 = now_ns();
        CK(le);
        CK(cudaEventRecord(ev[1], s));
        CK(cudaStreamSynchronize(s));
        const int64_t t2 = now_ns();
        r.launch_call_us.push_back(ns_to_us(t1 - t0));
        r.launch_total_us.push_back(ns_to_us(t2 - t0));
        r.launch_gpu_us.push_back(event_us(ev[0], ev[1]));
    }
    t0 = now_ns();
    CK(cudaGraphExecDestroy(x));
    t1 = now_ns();
    r.exec_destroy_us = ns_to_us(t1 - t0);
    CK(cudaGraphDestroy(g));
    return r;
}

json samples_json(const std::vector<Sample>& v) {
    std::vector<double> b, i, d;
    json calls = json::array(), totals = json::array(), gpus = json::array();
    for (const Sample& s : v) {
        b.push_back(s.build_us), i.push_back(s.instantiate_us), d.push_back(s.exec_destroy_us);
        calls.push_back(r3v(s.launch_call_us)), totals.push_back(r3v(s.launch_total_us)), gpus.push_back(r3v(s.launch_gpu_us));
    }
    json j = {{"build_us", r3v(b)}, {"instantiate_us", r3v(i)}, {"exec_destroy_us", r3v(d)}};
    if (!v.empty() && !v[0].launch_call_us.empty()) {
        j["launch_call_us"] = calls;    // [rep][launch 1, 2, 3]
        j["launch_total_us"] = totals;  // call start to cudaStreamSynchronize return
        j["launch_gpu_us"] = gpus;      // events around the launch
    }
    return j;
}

}  // namespace

void bench_graph_instantiate(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int reps = q ? 3 : 5;
    const int launches = 3;
    const int wide_grid = c.sm_count;  // 132 on the H200
    const std::vector<int> sizes = {1, 10, 100, 500, 2000};
    const std::vector<int> launch_sizes = {100, 2000};
    const std::vector<KernelSet> sets = {
        {"empty", {kGiEmpty}, 1},
        {"spin", {kGiSpin}, 1},
        {"wide", {kGiWide}, wide_grid},
        {"distinct4", {kGiD0, kGiD1, kGiD2, kGiD3}, wide_grid},
    };
    json kset = json::array();
    for (const KernelSet& k : sets)
        kset.push_back({{"name", k.name},
                        {"distinct_functions", k.kinds.size()},
                        {"grid", k.grid},
                        {"block", k.kinds[0] == kGiEmpty ? 1 : k.kinds[0] == kGiSpin ? 32 : 256},
                        {"param_bytes", k.kinds[0] == kGiEmpty ? 0 : k.kinds[0] == kGiSpin ? 20 : 72}});
    out["config"] = {
        {"sizes", sizes},
        {"reps", reps},
        {"launch_sizes", launch_sizes},
        {"launches", launches},
        {"kernel_sets", kset},
        {"method",
         "chains of N kernel nodes; per rep the graph is built anew (build_us: stream capture from a non-blocking stream, "
         "or cudaGraphCreate + N cudaGraphAddKernelNode each depending on the previous node), instantiated "
         "(instantiate_us: host steady_clock around cudaGraphInstantiate(flags 0), no profiler), then (N in launch_sizes) "
         "launched 3 times into an idle stream with a sync after each (launch_call_us: the cudaGraphLaunch call; "
         "launch_total_us: call start to cudaStreamSynchronize return; launch_gpu_us: events recorded before and after "
         "the launch); exec_destroy_us: cudaGraphExecDestroy; cudaGraphDestroy untimed. Kernels (kernels_gi.cu, a module "
         "of their own used by no other section): empty = 1 x 1 thread, no parameters; spin = 1 x 32 threads spinning "
         "1 us on %globaltimer, 3 parameters (20 bytes); wide = sm_count x 256 threads, 8 pointers + 2 ints (72 bytes), "
         "does nothing; distinct4 = four distinct functions of the wide shape, node i uses function i % 4. Order: cold "
         "first, then for each kernel set, each build method, each N ascending, reps back to back."}};

    EventPool ev(2);

    // ---- cold: a kernel function's first instantiation in the process, then repeats.
    // cold_empty is the module's first kernel used at all (module + function load); cold_wide the
    // second (function load only, under lazy loading). 10 nodes each.
    json cold = json::array();
    {
        const struct {
            const char* name;
            KernelSet k;
            bool capture;
        } cs[] = {{"cold_empty_capture", {"cold_empty", {kGiColdEmpty}, 1}, true},
                  {"cold_wide_explicit", {"cold_wide", {kGiColdWide}, wide_grid}, false}};
        for (const auto& x : cs) {
            std::vector<Sample> v;
            for (int r = 0; r < reps; ++r) v.push_back(one(c, x.capture, x.k, 10, launches, ev));
            json j = {{"name", x.name}, {"kernel", x.k.name}, {"build", x.capture ? "capture" : "explicit"}, {"nodes", 10},
                      {"grid", x.k.grid}};
            j.update(samples_json(v));  // rep 0 is the function's first use in the process
            cold.push_back(j);
        }
    }
    out["cold"] = {{"method", "10-node chains of a kernel never used before in the process; rep 0 = first use (build "
                              "includes whatever the capture or node creation loads), reps 1.. = repeats"},
                   {"points", cold}};

    // ---- main grid.
    json pts = json::array();
    std::vector<double> n_empty, t_empty;
    double med_wide_1 = 0, med_wide_2000 = 0, med_d4_2000 = 0, med_empty_1 = 0;
    for (const KernelSet& k : sets) {
        for (bool capture : {true, false}) {
            bool first_use = true;  // this kernel set's first samples of the section
            for (int n : sizes) {
                const bool launch = std::find(launch_sizes.begin(), launch_sizes.end(), n) != launch_sizes.end();
                std::vector<Sample> v;
                for (int r = 0; r < reps; ++r) v.push_back(one(c, capture, k, n, launch ? launches : 0, ev));
                json j = {{"kernel", k.name}, {"build", capture ? "capture" : "explicit"}, {"nodes", n},
                          {"first_use_in_rep0", first_use && capture}};
                j.update(samples_json(v));
                pts.push_back(j);
                first_use = false;
                std::vector<double> inst;
                for (const Sample& s : v) inst.push_back(s.instantiate_us);
                const double m = median(inst);
                if (capture && std::string(k.name) == "empty") {
                    for (size_t r = 1; r < inst.size(); ++r) n_empty.push_back(n), t_empty.push_back(inst[r]);
                    if (n == 1) med_empty_1 = m;
                }
                if (capture && std::string(k.name) == "wide" && n == 1) med_wide_1 = m;
                if (capture && std::string(k.name) == "wide" && n == 2000) med_wide_2000 = m;
                if (capture && std::string(k.name) == "distinct4" && n == 2000) med_d4_2000 = m;
            }
        }
    }
    out["points"] = pts;
    if (n_empty.size() >= 2) {
        const LineFit f = fit_line(n_empty, t_empty);
        preview(out, "check.graph_instantiate_per_node_empty", f.slope, "us", "slope, captured empty chains 1-2000, reps 1..");
        preview(out, "check.graph_instantiate_fixed_empty", f.intercept, "us", "intercept of the same fit");
    }
    preview(out, "check.graph_instantiate_1_empty", med_empty_1, "us", "median, 1 captured empty node");
    preview(out, "check.graph_instantiate_1_wide", med_wide_1, "us", "median, 1 captured 132x256 node, 8 ptr args");
    preview(out, "check.graph_instantiate_2000_wide", med_wide_2000, "us", "median, 2000 captured wide nodes");
    preview(out, "check.graph_instantiate_2000_distinct4", med_d4_2000, "us", "median, 2000 captured nodes of 4 kernels");
}
