// Lowering throughput and memory per op: load_scenario_text (YAML parse and lowering) of the
// pipeline peer model of the issue "The engine as hardware units", part 6:
//
//   repeat n (var c): memcpy_async h2d h_in -> d_buf[c % 4] on s[c % 4]; kernel 0.5ms on s[c % 4];
//                     memcpy_async d2h d_buf[c % 4] -> h_out on s[c % 4]
//   device_sync
//
//   BM_Lowering/<ops>   n = (ops - 1) / 3, so the Args are exact op counts (10^4 .. 10^7: the time
//                       per op should not grow with the count).
//   BM_LoweringGraph/<nodes>  a CUDA graph of `nodes` kernel nodes (a repeat inside the graph: each
//                       node its own name, k[0], k[1], ...), instantiated and launched once; ops =
//                       nodes + 3. Each node is interned twice (its name and site when captured,
//                       its site again when launched).
//   BM_OverCap/<ops>    the same model with 3 * 10^7 + 1 ops, over the default --max-ops (2 * 10^7):
//                       the refusal, which the count before expanding gives without lowering an op.
//
// Counters:
//   ops_per_s             lowered ops per second of CPU time (kIsRate)
//   bytes_per_op          peak heap bytes during one load_scenario_text call, the returned Scenario
//                         included, / ops (global operator new/delete override below)
//   transient_bytes_per_op  that peak less what the returned Scenario still holds, / ops: memory
//                         the lowering took beyond its result
//   program_bytes_per_op  the Program's vectors (ops, thread op lists, loop indices, ...) / ops
//
// Targets: >= 12 M ops/s (3 * 10^6 ops in <= 0.25 s), linear in ops, transient bytes ~0 per op.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "frontend/scenario.hpp"
#include "core/error.hpp"
#include "core/program.hpp"

// Heap accounting (global operator new/delete): bench/heap_accounting.hpp.
#include "bench/heap_accounting.hpp"

namespace {

using namespace hetsim;

std::string pipeline(int64_t chunks) {
    return "name: pipeline peer model\n"
           "hardware: h200\n"
           "params: {n: " + std::to_string(chunks) + "}\n"
           "buffers:\n"
           "  h_in: {kind: pinned, size: 16MiB}\n"
           "  h_out: {kind: pinned, size: 16MiB}\n"
           "  d_buf: {kind: device, size: 16MiB, count: 4}\n"
           "streams: {s: {count: 4}}\n"
           "threads:\n"
           "  main:\n"
           "    - repeat: ${n}\n"
           "      var: c\n"
           "      do:\n"
           "        - memcpy_async: h2d\n"
           "          src: h_in\n"
           "          dst: d_buf[c % 4]\n"
           "          stream: s[c % 4]\n"
           "        - kernel: compute\n"
           "          stream: s[c % 4]\n"
           "          duration: 0.5ms\n"
           "        - memcpy_async: d2h\n"
           "          src: d_buf[c % 4]\n"
           "          dst: h_out\n"
           "          stream: s[c % 4]\n"
           "    - device_sync: {}\n";
}

template <class T>
size_t vec_bytes(const std::vector<T>& v) {
    return v.capacity() * sizeof(T);
}

size_t program_bytes(const Program& pg) {
    size_t b = vec_bytes(pg.ops) + vec_bytes(pg.sites) + vec_bytes(pg.names) + vec_bytes(pg.iter_indices) + vec_bytes(pg.uses) +
               vec_bytes(pg.after) + vec_bytes(pg.locs) + vec_bytes(pg.gpu_tasks);
    for (const auto& t : pg.threads) b += vec_bytes(t.ops);
    return b;
}

LoadOptions options() {
    LoadOptions lo;
    lo.max_memory = 0;  // the memory cap's estimate is not what is measured here
    return lo;
}

void BM_Lowering(benchmark::State& state) {
    const int64_t ops = state.range(0);
    const std::string yaml = pipeline((ops - 1) / 3);
    const LoadOptions lo = options();
    size_t peak = 0, held = 0, prog = 0, lowered = 0;
    for (auto _ : state) {
        heap::reset();
        const size_t before = heap::current;
        Scenario sc = load_scenario_text(yaml, "pipeline.yaml", lo);
        benchmark::DoNotOptimize(sc.program.ops.data());
        state.PauseTiming();  // only load_scenario_text is timed: bookkeeping and freeing the Scenario are not
        peak = std::max(peak, heap::peak - before);
        held = heap::current - before;
        prog = program_bytes(sc.program);
        lowered = sc.program.ops.size();
        { Scenario done = std::move(sc); }
        state.ResumeTiming();
    }
    if (lowered != static_cast<size_t>(ops)) state.SkipWithError("the model did not lower to the expected op count");
    const double n = static_cast<double>(ops);
    state.SetItemsProcessed(state.iterations() * ops);
    state.counters["ops_per_s"] = benchmark::Counter(n * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["bytes_per_op"] = static_cast<double>(peak) / n;
    state.counters["transient_bytes_per_op"] = static_cast<double>(peak - std::min(peak, held)) / n;
    state.counters["program_bytes_per_op"] = static_cast<double>(prog) / n;
}
BENCHMARK(BM_Lowering)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);

std::string big_graph(int64_t nodes) {
    return "name: one big graph\n"
           "hardware: h200\n"
           "streams: [s]\n"
           "graphs:\n"
           "  g:\n"
           "    - repeat: " + std::to_string(nodes) + "\n"
           "      do:\n"
           "        - kernel: k\n"
           "          duration: 5us\n"
           "threads:\n"
           "  main:\n"
           "    - graph_instantiate: g\n"
           "    - graph_launch: g\n"
           "      stream: s\n"
           "    - stream_sync: s\n";
}

void BM_LoweringGraph(benchmark::State& state) {
    const int64_t nodes = state.range(0);
    const std::string yaml = big_graph(nodes);
    const LoadOptions lo = options();
    size_t peak = 0, lowered = 0;
    for (auto _ : state) {
        heap::reset();
        const size_t before = heap::current;
        Scenario sc = load_scenario_text(yaml, "graph.yaml", lo);
        benchmark::DoNotOptimize(sc.program.ops.data());
        state.PauseTiming();
        peak = std::max(peak, heap::peak - before);
        lowered = sc.program.ops.size();
        { Scenario done = std::move(sc); }
        state.ResumeTiming();
    }
    if (lowered != static_cast<size_t>(nodes + 3)) state.SkipWithError("the graph did not lower to nodes + 3 ops");
    const double n = static_cast<double>(nodes);
    state.counters["nodes_per_s"] = benchmark::Counter(n * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["bytes_per_node"] = static_cast<double>(peak) / n;
}
BENCHMARK(BM_LoweringGraph)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_OverCap(benchmark::State& state) {
    const int64_t ops = state.range(0);
    const std::string yaml = pipeline((ops - 1) / 3);
    LoadOptions lo = options();
    size_t peak = 0;
    bool refused = false;
    for (auto _ : state) {
        heap::reset();
        const size_t before = heap::current;
        try {
            Scenario sc = load_scenario_text(yaml, "pipeline.yaml", lo);
            benchmark::DoNotOptimize(sc.program.ops.data());
        } catch (const InputError& e) {
            refused = std::string(e.what()).find("raise the cap with --max-ops") != std::string::npos;
        }
        peak = std::max(peak, heap::peak - before);
    }
    if (!refused) state.SkipWithError("the scenario was not refused over --max-ops");
    state.counters["peak_bytes"] = static_cast<double>(peak);
}
BENCHMARK(BM_OverCap)->Arg(30'000'001)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
