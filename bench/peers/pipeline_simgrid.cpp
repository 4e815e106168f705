// The pipeline of bench/peers/pipeline.yaml in SimGrid 3.32 S4U (Debian libsimgrid-dev).
//
//   bench_peer_simgrid N      prints the simulated end-to-end time in ns
//
// One host actor issues N chunks round-robin over 4 streams; chunk c is an H2D copy of 16 MiB, a
// 0.5 ms kernel that fills the GPU and a D2H copy of 16 MiB on stream c % 4; then the host waits
// for the device. Actors: the host thread and one per stream. "Sleep mode": every duration is a
// sleep computed from the parameters below; no SimGrid CPU or network model takes part, but the
// engine needs a host for the actors to sleep on, so main() builds a one-host platform in code.
// Units of capacity 1 are mutexes, whose waiters are served FIFO: the H2D copy engine, the D2H
// copy engine, the SMs. The same model and numbers as pipeline_simpy.py; bench/peers/README.md
// explains it.
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <utility>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

// hw/profiles/h200.yaml, in ps (values as fitted there; bandwidths in bytes/s).
constexpr int64_t kLaunchCost = 3'754'000;      // host.launch_cost 3.754us: host time of a kernel launch
constexpr int64_t kMemcpyCallCost = 1'759'000;  // host.memcpy_call_cost 1.759us: cudaMemcpyAsync
constexpr int64_t kSyncCallCost = 435'000;      // host.sync_call_cost 0.435us
constexpr int64_t kSyncWakeup = 3'684'500;      // host.sync_wakeup 3.6845us: GPU done -> sync returns
constexpr int64_t kLaunchLatency = 2'675'500;   // gpu.launch_latency 2.6755us: call returns -> may start
constexpr int64_t kStreamGap = 1'664'000;       // gpu.stream_gap 1.664us: end -> next op of a stream
constexpr int64_t kH2dFixed = 1'001'175;        // copy.h2d.fixed 1.001175us
constexpr uint64_t kH2dBw = 55'482'350'000;     // copy.h2d.bandwidth 55.48235GB/s
constexpr int64_t kD2hFixed = 0;                // copy.d2h.fixed 0us
constexpr uint64_t kD2hBw = 55'342'040'000;     // copy.d2h.bandwidth 55.34204GB/s
using Curve = std::vector<std::pair<uint64_t, double>>;  // (bytes, fraction of the bandwidth)
const Curve kH2dEff{};                          // copy.h2d.efficiency: none
const Curve kD2hEff{};                          // copy.d2h.efficiency: none

constexpr int kStreams = 4;
constexpr uint64_t kChunkBytes = 16ull << 20;
constexpr int64_t kKernel = 500'000'000;        // 0.5 ms

// hw/profile.cpp Curve::at: linear in log2(bytes) between points, flat outside, 1 if none.
double efficiency(const Curve& c, uint64_t bytes) {
    if (c.empty()) return 1.0;
    if (bytes <= c.front().first) return c.front().second;
    if (bytes >= c.back().first) return c.back().second;
    size_t k = 1;
    while (c[k].first < bytes) ++k;
    double f = (std::log2(double(bytes)) - std::log2(double(c[k - 1].first))) /
               (std::log2(double(c[k].first)) - std::log2(double(c[k - 1].first)));
    return c[k - 1].second + f * (c[k].second - c[k - 1].second);
}

// models/copy_model.cpp: fixed + ceil(bytes * 1e12 / (bandwidth x efficiency)) ps, in 128 bits
// as core/time.hpp transfer_time() does (16 MiB x 1e12 overflows 64 bits).
__extension__ typedef unsigned __int128 u128;
int64_t copy_ps(int64_t fixed, uint64_t bw, const Curve& eff, uint64_t bytes) {
    if (!eff.empty()) bw = std::max<uint64_t>(1, uint64_t(double(bw) * efficiency(eff, bytes)));
    u128 num = u128(bytes) * 1'000'000'000'000ull;
    return fixed + int64_t((num + bw - 1) / bw);
}

// SimGrid's clock is double seconds.
double sec(int64_t ps) { return double(ps) * 1e-12; }

struct Op {
    sg4::Mutex* unit;  // the copy engine or the SMs
    double duration;
    double issued;     // when the host's API call returned
};

struct Stream {
    std::deque<Op> queue;  // issued, not yet taken by the stream actor
    sg4::SemaphorePtr pending = sg4::Semaphore::create(0);
    long ops_left = 0;
};

// Runs the ops issued to one stream, in issue order.
void run_stream(Stream& s) {
    double prev_end = -1;
    for (; s.ops_left > 0; --s.ops_left) {
        s.pending->acquire();
        Op op = s.queue.front();
        s.queue.pop_front();
        double ready = op.issued + sec(kLaunchLatency);
        if (prev_end >= 0) ready = std::max(ready, prev_end + sec(kStreamGap));
        sg4::this_actor::sleep_until(ready);
        op.unit->lock();  // FIFO in order of readiness
        sg4::this_actor::sleep_for(op.duration);
        op.unit->unlock();
        prev_end = sg4::Engine::get_clock();
    }
}

}  // namespace

int main(int argc, char** argv) {
    sg4::Engine engine(&argc, argv);
    char* end = nullptr;
    long n = argc == 2 ? std::strtol(argv[1], &end, 10) : -1;
    if (n < 0 || *end != '\0') {
        std::fprintf(stderr, "usage: bench_peer_simgrid N\n");
        return 2;
    }
    auto* zone = sg4::create_full_zone("gpu_box");
    sg4::Host* host = zone->create_host("host", 1e9);
    zone->seal();

    sg4::MutexPtr h2d = sg4::Mutex::create(), sms = sg4::Mutex::create(), d2h = sg4::Mutex::create();
    struct Call {
        int64_t cost;
        sg4::Mutex* unit;
        double duration;
    };
    const Call chunk[] = {{kMemcpyCallCost, h2d.get(), sec(copy_ps(kH2dFixed, kH2dBw, kH2dEff, kChunkBytes))},
                          {kLaunchCost, sms.get(), sec(kKernel)},
                          {kMemcpyCallCost, d2h.get(), sec(copy_ps(kD2hFixed, kD2hBw, kD2hEff, kChunkBytes))}};

    std::vector<Stream> streams(kStreams);
    std::vector<sg4::ActorPtr> actors;
    for (int s = 0; s < kStreams; ++s) {
        streams[s].ops_left = 3 * ((n - s + kStreams - 1) / kStreams);  // chunks s, s + 4, ...
        actors.push_back(sg4::Actor::create("stream" + std::to_string(s), host, [&streams, s] { run_stream(streams[s]); }));
    }
    sg4::Actor::create("host", host, [&] {
        for (long c = 0; c < n; ++c) {
            Stream& s = streams[c % kStreams];
            for (const Call& call : chunk) {
                sg4::this_actor::sleep_for(sec(call.cost));  // the API call
                s.queue.push_back({call.unit, call.duration, sg4::Engine::get_clock()});
                s.pending->release();
            }
        }
        // device_sync: the call cost; if work is left, returns after it ends + the wake-up.
        double called = sg4::Engine::get_clock(), returns = called + sec(kSyncCallCost);
        bool busy = false;
        for (int s = 0; s < kStreams; ++s) {
            if (streams[s].ops_left == 0) continue;
            busy = true;
            actors[s]->join();
        }
        if (busy) returns = std::max(returns, sg4::Engine::get_clock() + sec(kSyncWakeup));
        sg4::this_actor::sleep_until(returns);
    });
    engine.run();
    std::printf("%.3f\n", sg4::Engine::get_clock() * 1e9);
    return 0;
}
