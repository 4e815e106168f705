// Sweep throughput: a 1000-point sweep of a 10^4-op scenario on 2 worker threads, the way
// `hetsim sweep -j 2` runs it (run_points: load, simulate, analyse, format the CSV row).
//
//   BM_Sweep1000/cache:1   scenarios/sweeps/overlap_chunks.yaml with total=3333MiB, chunk=1MiB
//                          (3333 chunks x 3 ops + 1 = 10^4 ops), varying two timing-only profile
//                          parameters: copy.h2d.bandwidth 1..100 GB/s (100 values) x
//                          copy.d2h.bandwidth 10..100 GB/s (10 values). Each worker lowers the
//                          scenario once and reuses the program (sweep_runner's cache).
//   BM_Sweep1000/cache:0   the same sweep, every point lowered from the YAML text (--no-cache):
//                          the cost of any sweep whose points change scenario params.
//
// Counters: points_per_s (wall clock: the workers' time is not the main thread's CPU time) and
// ms_per_point (wall clock / points). Target: the whole sweep in under 10 s on 2 cores.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sweep/runner.hpp"
#include "sweep/spec.hpp"

namespace {

hetsim::sweep::SweepDef make_def(std::string* text) {
    hetsim::sweep::SweepDef def;
    const char* root = std::getenv("HETSIM_SOURCE_DIR");  // the checkout, when not where it was built
    def.scenario = std::string(root ? root : HETSIM_SOURCE_DIR) + "/scenarios/sweeps/overlap_chunks.yaml";
    std::ifstream in(def.scenario);
    std::stringstream ss;
    ss << in.rdbuf();
    *text = ss.str();
    def.scenario_hash = hetsim::sweep::fnv1a_hex(*text);
    def.sets = {{"total", "3333MiB"}, {"chunk", "1MiB"}, {"nstreams", "4"}};
    def.axes.push_back(hetsim::sweep::parse_vary("hardware.copy.h2d.bandwidth=1GB/s..100GB/s+1GB/s"));
    def.axes.push_back(hetsim::sweep::parse_vary("hardware.copy.d2h.bandwidth=10GB/s..100GB/s+10GB/s"));
    def.max_ops = 20'000'000;
    def.check();
    return def;
}

void BM_Sweep1000(benchmark::State& state) {
    std::string text;
    hetsim::sweep::SweepDef def = make_def(&text);
    std::vector<uint64_t> todo(def.points());
    for (uint64_t p = 0; p < todo.size(); ++p) todo[p] = p;
    hetsim::sweep::RunConfig cfg;
    cfg.jobs = 2;
    cfg.cache = state.range(0) != 0;
    uint64_t points = 0;
    double seconds = 0;
    for (auto _ : state) {
        std::vector<std::string> rows(todo.size());
        auto t0 = std::chrono::steady_clock::now();
        hetsim::sweep::RunOutcome out = hetsim::sweep::run_points(def, text, todo, rows, cfg);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (out.error) state.SkipWithError(out.error->message.c_str());
        points += out.computed;
        benchmark::DoNotOptimize(rows.data());
    }
    state.counters["points"] = static_cast<double>(todo.size());
    state.counters["points_per_s"] = benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
    state.counters["ms_per_point"] = points ? seconds * 1000.0 / static_cast<double>(points) : 0.0;
}
BENCHMARK(BM_Sweep1000)->ArgName("cache")->Arg(1)->Arg(0)->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
