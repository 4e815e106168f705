// Engine throughput and memory per op on a chunked H2D -> kernel -> D2H pipeline over 4 streams.
//
//   BM_EnginePipeline/<ops>     simulate() of a Program built here in C++ (no YAML): one host
//                               thread "main", streams[0] the legacy default stream (unused),
//                               4 non-blocking streams; chunk c issues memcpy_async H2D pinned
//                               1 MiB, a 20 us kernel (grid 132, block 256) and memcpy_async D2H
//                               1 MiB, all on pipeline stream c % 4; then a stream_sync of every
//                               stream. ops = 3 * chunks + 4, so the Args are exact op counts.
//   BM_PlainHeapBaseline/<ops>/<chains>
//                               the same number of events through a plain std::priority_queue of
//                               (time, seq) with no per-op state: 4 chains (one per stream, heap of
//                               4) or one chain per chunk (chains = 0: all chunk heads pushed up
//                               front, heap of ops / 3), each chain 3 events per chunk.
//
// Counters:
//   ops_per_s             simulated ops per second of CPU time (kIsRate)
//   bytes_per_op          peak heap bytes allocated during one simulate() call, the returned
//                         Timeline included, / ops (global operator new/delete override below)
//   allocs_per_op         operator new calls during one simulate() call / ops
//   program_bytes_per_op  size of the Program's vectors (size() * element size, plus string
//                         and per-thread op-list payloads) / ops, for information
//
// Only simulate() is timed; the Program and the profile are built once outside the loop.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "frontend/profile_loader.hpp"
#include "sim/engine.hpp"
#include "core/program.hpp"
#include "core/timeline.hpp"

// Heap accounting (global operator new/delete): bench/heap_accounting.hpp.
#include "bench/heap_accounting.hpp"

namespace {

using namespace hetsim;

constexpr int kStreams = 4;
constexpr uint64_t kChunkBytes = 1ull << 20;  // 1 MiB per copy

// Chunks such that 3 * chunks + kStreams syncs == ops (exact for 10^k, k >= 1).
int64_t chunks_for(int64_t ops) { return (ops - kStreams) / 3; }

Program make_pipeline(int64_t target_ops) {
    const int64_t chunks = chunks_for(target_ops);
    Program pg;
    pg.source = "bench/engine_pipeline.cpp";
    pg.streams.push_back(Stream{"default", StreamKind::Legacy, 0, -1});
    for (int s = 0; s < kStreams; ++s) pg.streams.push_back(Stream{"s" + std::to_string(s), StreamKind::NonBlocking, 0, -1});
    pg.threads.push_back(HostThread{"main", {}});
    pg.names = {"h2d", "kernel", "d2h", "stream_sync"};
    enum : uint32_t { kNameH2D, kNameKernel, kNameD2H, kNameSync };
    pg.locs = {SourceLoc{pg.source}};
    for (uint32_t n : {kNameH2D, kNameKernel, kNameD2H, kNameSync}) {
        Site site;
        site.label = n;
        if (n == kNameKernel) site.shape = KernelShape{132, 256, 32, 0};
        pg.sites.push_back(site);  // site index == name index
    }

    const size_t n_ops = static_cast<size_t>(3 * chunks + kStreams);
    pg.ops.reserve(n_ops);
    pg.threads[0].ops.reserve(n_ops);
    auto emit = [&](const Op& op) {
        pg.threads[0].ops.push_back(static_cast<uint32_t>(pg.ops.size()));
        pg.ops.push_back(op);
    };

    Op copy;
    copy.kind = OpKind::Memcpy;
    copy.sync = false;
    copy.host_mem = MemKind::Pinned;
    copy.thread = 0;
    copy.bytes = kChunkBytes;

    Op kernel;
    kernel.kind = OpKind::Kernel;
    kernel.thread = 0;
    kernel.duration = Time::us(20);
    kernel.site = kNameKernel;

    for (int64_t c = 0; c < chunks; ++c) {
        const int32_t stream = 1 + static_cast<int32_t>(c % kStreams);
        Op h2d = copy;
        h2d.dir = CopyDir::H2D;
        h2d.stream = stream;
        h2d.site = kNameH2D;
        emit(h2d);
        Op k = kernel;
        k.stream = stream;
        emit(k);
        Op d2h = copy;
        d2h.dir = CopyDir::D2H;
        d2h.stream = stream;
        d2h.site = kNameD2H;
        emit(d2h);
    }
    for (int s = 0; s < kStreams; ++s) {
        Op sync;
        sync.kind = OpKind::StreamSync;
        sync.thread = 0;
        sync.stream = 1 + s;
        sync.site = kNameSync;
        emit(sync);
    }
    return pg;
}

template <class T>
size_t vec_bytes(const std::vector<T>& v) {
    return v.size() * sizeof(T);
}
size_t str_bytes(const std::string& s) { return s.size() > 15 ? s.size() + 1 : 0; }  // heap part (SSO: 15 chars)

size_t program_bytes(const Program& pg) {
    size_t b = str_bytes(pg.source);
    b += vec_bytes(pg.buffers) + vec_bytes(pg.streams) + vec_bytes(pg.events) + vec_bytes(pg.threads);
    for (const auto& s : pg.streams) b += str_bytes(s.name);
    for (const auto& t : pg.threads) b += str_bytes(t.name) + vec_bytes(t.ops);
    b += vec_bytes(pg.ops) + vec_bytes(pg.sites) + vec_bytes(pg.names) + vec_bytes(pg.iter_indices) + vec_bytes(pg.uses) + vec_bytes(pg.after) +
         vec_bytes(pg.locs) + vec_bytes(pg.gpu_tasks);
    for (const auto& s : pg.names) b += str_bytes(s);
    return b;
}

const HwProfile& h200() {
    static const HwProfile p = load_profile("h200", {});
    return p;
}

void BM_EnginePipeline(benchmark::State& state) {
    const Program pg = make_pipeline(state.range(0));
    const HwProfile& hw = h200();
    const double ops = static_cast<double>(pg.ops.size());

    size_t peak_bytes = 0, allocs = 0;
    Time end_to_end;
    for (auto _ : state) {
        heap::reset();
        const size_t before = heap::current;
        Timeline tl = simulate(pg, hw);  // the returned Timeline is still live at the peak
        benchmark::DoNotOptimize(tl.ops.data());
        state.PauseTiming();  // only simulate() is timed: bookkeeping and freeing the Timeline are not
        peak_bytes = std::max(peak_bytes, heap::peak - before);
        allocs = heap::allocs;
        end_to_end = tl.end_to_end;
        { Timeline done = std::move(tl); }
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(pg.ops.size()));
    state.counters["ops_per_s"] = benchmark::Counter(ops * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["bytes_per_op"] = static_cast<double>(peak_bytes) / ops;
    state.counters["allocs_per_op"] = static_cast<double>(allocs) / ops;
    state.counters["program_bytes_per_op"] = static_cast<double>(program_bytes(pg)) / ops;
    state.counters["sim_ms"] = static_cast<double>(end_to_end.ps()) / 1e9;  // sanity: simulated end-to-end
}
BENCHMARK(BM_EnginePipeline)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// A plain binary-heap event loop with no per-op state: events are (time, seq) pairs; the low
// two bits of seq name the chain's slot in a tiny per-chain table (at most `chains` entries,
// never one per op). Popping an event "runs" it and pushes the chain's next event (H2D copy,
// kernel, D2H copy of the next chunk, with the pipeline's durations) until `ops` events ran.
struct PlainEvent {
    int64_t time;
    uint64_t seq;
    bool operator>(const PlainEvent& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

void BM_PlainHeapBaseline(benchmark::State& state) {
    const int64_t ops = state.range(0);
    const int64_t chunks = chunks_for(ops);
    const bool stream_chains = state.range(1) != 0;
    // Pipeline-like stage durations in ps (copy ~21 us, kernel 20 us, sync 0.3 us).
    static constexpr int64_t kStage[3] = {21'200'000, 20'000'000, 20'900'000};
    const int64_t n_chains = stream_chains ? kStreams : chunks;

    for (auto _ : state) {
        std::priority_queue<PlainEvent, std::vector<PlainEvent>, std::greater<PlainEvent>> q;
        // Per-chain: events still to run in the chain (tiny with stream chains; one int per
        // chunk otherwise, which a real engine would derive from the event itself).
        std::vector<int64_t> left(static_cast<size_t>(n_chains));
        uint64_t seq = 0;
        for (int64_t c = 0; c < n_chains; ++c) {
            if (stream_chains) left[static_cast<size_t>(c)] = 3 * (chunks / kStreams + (c < chunks % kStreams ? 1 : 0)) + 1;  // + its sync
            else left[static_cast<size_t>(c)] = 3;
            q.push(PlainEvent{c * 7'500'000, (seq++ << 32) | static_cast<uint64_t>(c)});
        }
        int64_t processed = 0, last = 0;
        while (!q.empty()) {
            PlainEvent e = q.top();
            q.pop();
            ++processed;
            last = e.time;
            size_t c = static_cast<size_t>(e.seq & 0xffffffffu);
            int64_t k = --left[c];
            if (k > 0) q.push(PlainEvent{e.time + kStage[k % 3], (seq++ << 32) | c});
        }
        if (!stream_chains) processed += kStreams;  // the 4 syncs (stream chains count them above)
        benchmark::DoNotOptimize(processed);
        benchmark::DoNotOptimize(last);
        if (processed != ops) state.SkipWithError("baseline processed a different number of events than ops");
    }
    state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops) * static_cast<double>(state.iterations()),
                                                     benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PlainHeapBaseline)
    ->ArgNames({"ops", "stream_chains"})
    ->Args({10'000, 1})
    ->Args({100'000, 1})
    ->Args({1'000'000, 1})
    ->Args({10'000, 0})
    ->Args({100'000, 0})
    ->Args({1'000'000, 0})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
