// hetsim-microbench section graph_relaunch: one executable graph launched again while its previous
// launch still runs, into another stream (CUDA orders every launch of a cudaGraphExec_t behind the
// previous launch of it, whatever the stream), against the same launches into one stream and
// against two executables of the same graph in two streams (which do not wait for each other).
// Fits graph.relaunch_gap: the previous launch's last node ends -> the next launch's first node
// starts, when the next launch was queued in another stream meanwhile.
#include "common.hpp"

#include <algorithm>

namespace {
struct Slots {
    unsigned int* counter = nullptr;
    unsigned long long* starts = nullptr;
    unsigned long long* ends = nullptr;
};
}  // namespace

void bench_graph_relaunch(Ctx& c, json& out) {
    const bool q = c.opt.quick;
    const int launches = q ? 12 : 40, reps = q ? 2 : 5;
    const int mid_nodes = 8;
    const std::vector<int> grids = q ? std::vector<int>{16} : std::vector<int>{16, 132};
    const unsigned long long work_ns = 5000;
    cudaStream_t a = c.s[0], b = c.s[1], cap = c.s[2];
    const size_t slots = size_t(launches) * 2 + 8;
    std::vector<Slots> sl(2);
    for (Slots& s : sl) {
        CK(cudaMalloc(&s.counter, sizeof(unsigned int)));
        CK(cudaMalloc(&s.starts, slots * sizeof(unsigned long long)));
        CK(cudaMalloc(&s.ends, slots * sizeof(unsigned long long)));
        CK(cudaMemset(s.counter, 0, sizeof(unsigned int)));
    }
    auto capture = [&](const Slots& s, int grid) {
        cudaGraph_t g = nullptr;
        CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
        CK(k_slot_start(cap, s.counter, s.starts));
        for (int i = 0; i < mid_nodes; ++i) CK(k_spin_stamp(cap, grid, 256, work_ns, 0, nullptr, nullptr));
        CK(k_slot_end(cap, s.counter, s.ends));
        CK(cudaStreamEndCapture(cap, &g));
        cudaGraphExec_t x = nullptr;
        CK(cudaGraphInstantiate(&x, g, 0));
        CK(cudaGraphDestroy(g));
        return x;
    };
    json pts = json::array();
    std::vector<double> relaunch_gaps, stream_gaps;
    for (int grid : grids) {
        cudaGraphExec_t x0 = capture(sl[0], grid), x1 = capture(sl[1], grid);
        for (cudaGraphExec_t x : {x0, x1}) CK(cudaGraphLaunch(x, a));  // upload
        CK(cudaStreamSynchronize(a));
        for (const char* mode : {"one_exec_two_streams", "one_exec_one_stream", "two_execs_two_streams"}) {
            const std::string m = mode;
            json rj = json::array();
            for (int r = 0; r < reps; ++r) {
                for (Slots& s : sl) CK(cudaMemset(s.counter, 0, sizeof(unsigned int)));
                CK(cudaDeviceSynchronize());
                // Both streams start behind a 1 ms blocker, so every launch is queued before any runs.
                CK(k_spin(a, 1000000));
                CK(k_spin(b, 1000000));
                for (int k = 0; k < launches; ++k) {
                    const bool odd = k % 2 == 1;
                    cudaStream_t s = m == "one_exec_one_stream" ? a : (odd ? b : a);
                    cudaGraphExec_t x = m == "two_execs_two_streams" && odd ? x1 : x0;
                    CK(cudaGraphLaunch(x, s));
                }
                CK(cudaDeviceSynchronize());
                json per = json::array();
                for (int e = 0; e < (m == "two_execs_two_streams" ? 2 : 1); ++e) {
                    const int n = m == "two_execs_two_streams" ? launches / 2 : launches;
                    std::vector<unsigned long long> st(static_cast<size_t>(n)), en(static_cast<size_t>(n));
                    CK(cudaMemcpy(st.data(), sl[size_t(e)].starts, size_t(n) * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                    CK(cudaMemcpy(en.data(), sl[size_t(e)].ends, size_t(n) * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
                    const unsigned long long base = st[0];
                    std::vector<long long> rs, re;
                    for (int k = 0; k < n; ++k) rs.push_back((long long)(st[size_t(k)] - base)), re.push_back((long long)(en[size_t(k)] - base));
                    for (int k = 0; k + 1 < n; ++k) {
                        const double gap = double(rs[size_t(k) + 1] - re[size_t(k)]) * 1e-3;
                        if (m == "one_exec_two_streams") relaunch_gaps.push_back(gap);
                        if (m == "one_exec_one_stream") stream_gaps.push_back(gap);
                    }
                    per.push_back({{"exec", e}, {"start_ns", rs}, {"end_ns", re}});
                }
                rj.push_back(per);
            }
            pts.push_back({{"grid", grid}, {"mode", m}, {"reps", rj}});
        }
        CK(cudaGraphExecDestroy(x0));
        CK(cudaGraphExecDestroy(x1));
        progress(c, "graph_relaunch: grid %d: relaunch gap (other stream) %.3f us, same stream %.3f us", grid,
                 median(relaunch_gaps), median(stream_gaps));
    }
    for (Slots& s : sl) {
        CK(cudaFree(s.counter));
        CK(cudaFree(s.starts));
        CK(cudaFree(s.ends));
    }
    out["config"] = {{"launches", launches}, {"reps", reps}, {"nodes", mid_nodes + 2}, {"work_ns", work_ns}, {"grids", grids},
                     {"method",
                      "a chain graph: a 1-block first node (takes the launch's slot from a counter, stamps %globaltimer), "
                      "8 nodes of grid x 256 threads spinning work_ns, a 1-block last node (stamps its end into the slot); "
                      "both streams behind a 1 ms blocker, then `launches` cudaGraphLaunch calls from one thread: "
                      "one_exec_two_streams = the same exec alternately into streams a and b; one_exec_one_stream = all into a; "
                      "two_execs_two_streams = exec 0 into a, exec 1 (same graph, own counter) into b. start_ns/end_ns per "
                      "launch in launch order, relative to the first launch's start; gap = start[k+1] - end[k]"}};
    out["points"] = pts;
    if (!relaunch_gaps.empty())
        preview(out, "graph.relaunch_gap", median(relaunch_gaps), "us",
                "median gap, last node of a launch -> first node of the next launch of the same exec from the other stream");
    if (!stream_gaps.empty())
        preview(out, "check.graph_relaunch_same_stream", median(stream_gaps), "us", "the same, launches into one stream");
}
