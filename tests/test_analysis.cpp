// report::analyze against a plain reference: the busy and hidden time of every resource and the
// GPU active union computed the slow, obvious way (sort every lane's intervals; a phase is
// hidden where work of another category runs), on every shipped scenario and on timelines whose
// phases come out of order, overlap on a stream or repeat.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "frontend/scenario.hpp"
#include "report/analysis.hpp"
#include "sim/engine.hpp"

using namespace hetsim;
namespace fs = std::filesystem;

namespace {

using Iv = std::pair<int64_t, int64_t>;
using Ivs = std::vector<Iv>;

Ivs normalize(Ivs v) {
    std::erase_if(v, [](const Iv& iv) { return iv.second <= iv.first; });
    std::sort(v.begin(), v.end());
    Ivs out;
    for (const Iv& iv : v) {
        if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
        else out.push_back(iv);
    }
    return out;
}
Ivs unite(Ivs a, const Ivs& b) {
    a.insert(a.end(), b.begin(), b.end());
    return normalize(std::move(a));
}
int64_t length(const Ivs& v) {
    int64_t s = 0;
    for (const Iv& iv : v) s += iv.second - iv.first;
    return s;
}
Ivs intersect(const Ivs& a, const Ivs& b) {
    Ivs out;
    for (const Iv& x : a)
        for (const Iv& y : b) {
            int64_t lo = std::max(x.first, y.first), hi = std::min(x.second, y.second);
            if (lo < hi) out.emplace_back(lo, hi);
        }
    return normalize(std::move(out));
}

struct Reference {
    std::map<std::string, std::pair<int64_t, int64_t>> busy_hidden;  // by resource name
    int64_t gpu_union = 0, busy_union = 0, sync_union = 0;
};

// Categories as report/analysis.cpp defines them: host, GPU work on no engine, copies, SMs,
// device copies.
int category(const OpRecord& r, Phase ph) {
    if (ph == Phase::Host) return 0;
    switch (r.engine) {
        case Engine::None: return 1;
        case Engine::H2D: case Engine::D2H: return 2;
        case Engine::Compute: return 3;
        case Engine::DeviceCopy: return 4;
    }
    return 1;
}

Reference reference(const Program& p, const Timeline& t) {
    std::map<std::string, std::map<int, Ivs>> lanes;  // lane -> category -> intervals
    Ivs gpu, any, sync;
    for (uint32_t i = 0; i < t.ops.size(); ++i) {
        const OpRecord& r = t.ops[i];
        const int32_t th = i < p.ops.size() ? p.ops[i].thread : kNone;
        const int32_t st = i < p.ops.size() ? p.ops[i].stream : kNone;
        if (r.has_host()) {
            lanes[report::host_lane(p, th)][0].push_back({r.host_start.ps(), (r.host_end - r.sync_wait).ps()});
            any.push_back({r.host_start.ps(), (r.host_end - r.sync_wait).ps()});
            // Waits for another host thread (host queues, join) are not waits for the GPU.
            const OpKind k = i < p.ops.size() ? p.ops[i].kind : OpKind::HostWork;
            if (k != OpKind::QueuePut && k != OpKind::QueueGet && k != OpKind::Join)
                sync.push_back({(r.host_end - r.sync_wait).ps(), r.host_end.ps()});
        }
        if (r.has_gpu()) {
            Iv iv{r.gpu_start.ps(), r.gpu_end.ps()};
            lanes[report::stream_lane(p, st)][category(r, Phase::Gpu)].push_back(iv);
            if (r.engine != Engine::None) lanes[report::engine_lane(r.engine)][category(r, Phase::Gpu)].push_back(iv);
            gpu.push_back(iv);
            any.push_back(iv);
        }
    }
    Ivs cat[5];
    for (auto& [name, by_cat] : lanes)
        for (auto& [c, v] : by_cat) cat[c] = unite(cat[c], v);
    Reference ref;
    for (auto& [name, by_cat] : lanes) {
        Ivs all, hidden;
        for (auto& [c, v] : by_cat) {
            Ivs others;
            for (int d = 0; d < 5; ++d)
                if (d != c) others = unite(others, cat[d]);
            all = unite(all, v);
            hidden = unite(hidden, intersect(normalize(v), others));
        }
        ref.busy_hidden[name] = {length(all), length(hidden)};
    }
    ref.gpu_union = length(normalize(gpu));
    ref.busy_union = length(normalize(any));
    ref.sync_union = length(normalize(sync));
    return ref;
}

void check_against_reference(const Program& p, const Timeline& t) {
    const report::Analysis a = report::analyze(p, t);
    const Reference ref = reference(p, t);
    for (const report::Resource& r : a.resources) {
        INFO("resource " << r.name);
        auto it = ref.busy_hidden.find(r.name);
        if (it == ref.busy_hidden.end()) {  // a thread with no ops has a row of zeros
            CHECK(r.busy == Time{});
            CHECK(r.hidden == Time{});
            continue;
        }
        CHECK(r.busy.ps() == it->second.first);
        CHECK(r.hidden.ps() == it->second.second);
    }
    for (const auto& [name, bh] : ref.busy_hidden) {
        INFO("lane " << name);
        CHECK(std::any_of(a.resources.begin(), a.resources.end(), [&](const report::Resource& r) { return r.name == name; }));
    }
    const report::Metrics& m = a.metrics;
    CHECK(m.gpu_active_union.ps() == ref.gpu_union);
    CHECK(m.busy_union.ps() == ref.busy_union);
    CHECK(m.exposed_sync.ps() == ref.sync_union);
    // The definitions keep every metric in range (README, "Overlap metrics").
    CHECK(m.hidden >= Time{});
    CHECK(m.hidden == m.serial - m.busy_union);
    CHECK(m.busy_union <= m.elapsed);
    CHECK(m.exposed_sync <= m.elapsed);
    CHECK(m.gpu_active_union <= m.busy_union);
    CHECK((m.exposed_sync_fraction >= 0 && m.exposed_sync_fraction <= 1));
}

}  // namespace

TEST_CASE("analysis: busy, hidden and GPU union equal the reference on every shipped scenario") {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(HETSIM_SOURCE_DIR) / "scenarios"))
        if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 60);
    for (const fs::path& f : files) {
        INFO(f.string());
        const Scenario sc = load_scenario(f.string());
        const Timeline t = simulate(sc.program, sc.profile);
        check_against_reference(sc.program, t);
    }
}

TEST_CASE("analysis: phases out of order, overlapping on a stream, repeated or empty") {
    // Random phases on 2 threads, 3 streams and every engine, in random op order: streams that
    // are not sequential, engines whose phases come far out of order.
    std::mt19937_64 rng(7);
    for (int round = 0; round < 80; ++round) {
        Program p;
        p.threads = {{"a", {}}, {"b", {}}};
        p.streams = {{"default", StreamKind::Legacy, 0, -1}, {"s1", StreamKind::NonBlocking, 0, -1},
                     {"s2", StreamKind::NonBlocking, 0, -1}};
        Timeline t;
        const int n = 1 + static_cast<int>(rng() % 300);
        int64_t clock = 0;
        for (int i = 0; i < n; ++i) {
            Op op;
            op.kind = OpKind::Kernel;
            op.thread = static_cast<int32_t>(rng() % 3) - (round % 4 == 0 ? 1 : 0);  // -1: an unknown thread
            op.stream = static_cast<int32_t>(rng() % 3);
            p.ops.push_back(op);
            OpRecord r;
            // Mostly in time order (with jitter), sometimes far back: the slow paths of the union.
            clock += static_cast<int64_t>(rng() % 1000);
            const int64_t base = rng() % 8 == 0 ? static_cast<int64_t>(rng() % (clock + 1)) : clock;
            if (rng() % 4 != 0) {
                const int64_t s = base + static_cast<int64_t>(rng() % 50), len = static_cast<int64_t>(rng() % 400);
                r.host_start = Time::ps(s);
                r.host_end = Time::ps(s + len);
                // Odd rounds wait nowhere: the sweep then fast-forwards where two categories run.
                r.sync_wait = Time::ps(round % 2 == 0 && rng() % 3 == 0 ? static_cast<int64_t>(rng() % (len + 1)) : 0);
                t.end_to_end = max(t.end_to_end, r.host_end);
            }
            if (rng() % 5 != 0) {
                const int64_t s = base + static_cast<int64_t>(rng() % 300), len = static_cast<int64_t>(rng() % 600);
                r.gpu_start = Time::ps(s);
                r.gpu_end = Time::ps(s + (rng() % 10 == 0 ? 0 : len));
                r.engine = static_cast<Engine>(static_cast<int>(rng() % 5) - 1);
            }
            t.ops.push_back(r);
            t.end_to_end = max(t.end_to_end, r.end());
        }
        INFO("round " << round << ", " << n << " ops");
        check_against_reference(p, t);
    }
}

TEST_CASE("analysis: exposed sync wait counts waits for the GPU, not for another host thread") {
    // A producer makes an item every 1 ms into a queue of capacity 1; the consumer takes it, runs a
    // 3 ms kernel and syncs its stream. The producer's puts wait on the full queue and the
    // consumer's first get waits 1 ms for the first item: neither waits for the GPU. The consumer
    // waits in stream_sync for each kernel (10 x ~3 ms); the producer's put waits overlap them.
    const std::string dir = (fs::temp_directory_path() / "hetsim-exposed-sync").string();
    fs::create_directories(dir);
    const std::string file = dir + "/s.yaml";
    {
        std::ofstream(file) << R"(name: exposed sync
hardware: {profile: h200, zero_latency: true}
queues: {q: {capacity: 1}}
streams: [s]
threads:
  prod:
    - repeat: 10
      do:
        - host: make
          duration: 1ms
        - put: q
  cons:
    - repeat: 10
      do:
        - get: q
        - kernel: k
          stream: s
          duration: 3ms
        - stream_sync: s
)";
    }
    const Scenario sc = load_scenario(file);
    const Timeline t = simulate(sc.program, sc.profile);
    const report::Metrics m = report::analyze(sc.program, t).metrics;
    // With zero latencies: the first get returns at 1 ms; each kernel runs 3 ms right after its
    // get, and the consumer's 10 stream syncs wait 3 ms each: 30 ms; the run ends at 31 ms.
    CHECK(t.end_to_end == Time::ms(31));
    CHECK(m.exposed_sync == Time::ms(30));
    Time queue_waits;
    for (size_t i = 0; i < t.ops.size(); ++i)
        if (sc.program.ops[i].kind == OpKind::QueuePut || sc.program.ops[i].kind == OpKind::QueueGet) queue_waits += t.ops[i].sync_wait;
    // The consumer takes items at 1, 4, 7, ... 28 ms; the producer makes them at 1, 2, 4, 5, 8, ...:
    // its puts of items 3..10 wait 1 + 7 x 2 ms on the full queue, the first get 1 ms. Not counted.
    CHECK(queue_waits == Time::ms(16));
    check_against_reference(sc.program, t);
    fs::remove_all(dir);
}
