// Speed and memory of the analysis (report::analyze: busy and hidden time per resource, the
// overlap metrics, the critical path) on a simulated timeline.
//
//   BM_Analysis/<ops>   analyze() of the timeline of bench/analysis_pipeline.yaml (chunk c: an
//                       H2D copy, a 0.5 ms kernel and a D2H copy on stream c % 4, then a
//                       device sync) with n = ops / 3 chunks, so ops = 3 * (ops / 3) + 1. The
//                       scenario is lowered and simulated once, outside the timed loop.
//
// Counters:
//   ops_per_s                 analysed ops per second of CPU time (kIsRate)
//   transient_bytes_per_op    peak heap bytes allocated during one analyze() call beyond what
//                             its returned Analysis holds, / ops
//   result_bytes_per_op       heap bytes the returned Analysis holds (the critical path, the
//                             resource table), / ops
//   peak_bytes_per_op         peak heap bytes allocated during one analyze() call, the returned
//                             Analysis included, / ops
//   critical_steps            steps on the critical path (sanity)
//
// Measure: cmake --build build --target bench_analysis && build/bench_analysis --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "bench/heap_accounting.hpp"
#include "frontend/scenario.hpp"
#include "report/analysis.hpp"
#include "sim/engine.hpp"

namespace {

using namespace hetsim;

struct Run {
    Scenario sc;
    Timeline tl;
};

const Run& pipeline(int64_t ops) {
    static int64_t cached_ops = -1;
    static Run run;
    if (cached_ops != ops) {
        run = Run{};
        const char* root = std::getenv("HETSIM_SOURCE_DIR");  // the checkout, when not where it was built
        LoadOptions lo;
        lo.sets = {{"n", std::to_string(ops / 3)}};
        lo.max_memory = 0;
        run.sc = load_scenario(std::string(root ? root : HETSIM_SOURCE_DIR) + "/bench/analysis_pipeline.yaml", lo);
        run.tl = simulate(run.sc.program, run.sc.profile);
        cached_ops = ops;
    }
    return run;
}

void BM_Analysis(benchmark::State& state) {
    const Run& r = pipeline(state.range(0));
    const double ops = static_cast<double>(r.sc.program.ops.size());
    size_t transient = 0, result = 0, peak = 0, steps = 0;
    for (auto _ : state) {
        heap::reset();
        const size_t before = heap::current;
        report::Analysis a = report::analyze(r.sc.program, r.tl);
        benchmark::DoNotOptimize(a.critical_path.data());
        state.PauseTiming();
        const size_t held = heap::current - before;
        transient = std::max(transient, heap::peak - before - held);
        peak = std::max(peak, heap::peak - before);
        result = held;
        steps = a.critical_path.size();
        { report::Analysis done = std::move(a); }
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(ops));
    state.counters["ops_per_s"] = benchmark::Counter(ops * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["transient_bytes_per_op"] = static_cast<double>(transient) / ops;
    state.counters["result_bytes_per_op"] = static_cast<double>(result) / ops;
    state.counters["peak_bytes_per_op"] = static_cast<double>(peak) / ops;
    state.counters["critical_steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_Analysis)->Arg(30'000)->Arg(300'000)->Arg(3'000'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
