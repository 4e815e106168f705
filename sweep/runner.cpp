#include "sweep/runner.hpp"

#include <malloc.h>
#include <yaml-cpp/yaml.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

#include "frontend/profile_loader.hpp"
#include "frontend/scenario.hpp"
#include "frontend/yaml_util.hpp"
#include "report/analysis.hpp"
#include "sweep/table.hpp"
#include "sim/engine.hpp"
#include "core/error.hpp"

namespace hetsim::sweep {

bool timing_only_key(const std::string& key) {
    for (const char* prefix : {"host.", "copy.", "gpu.", "hbm.", "kernel.", "um."})
        if (key.rfind(prefix, 0) == 0) return true;
    return false;
}

namespace {

LoadOptions load_options(const SweepDef& def, Sets sets) {
    LoadOptions o;
    o.sets = std::move(sets);
    o.max_ops = def.max_ops;
    o.max_memory = def.max_memory;
    return o;
}

std::string row_of(const SweepDef& def, uint64_t point, const Program& program, const HwProfile& profile) {
    Timeline tl = simulate(program, profile);
    return format_row(def, point, report::analyze(program, tl));
}

// The last few lowered scenarios of one worker, keyed by the sets that can change the lowering.
class ScenarioCache {
public:
    ScenarioCache(const SweepDef& def, const std::string& text) : def_(def), text_(text) {}

    std::string evaluate(uint64_t point) {
        Sets sets = def_.point_sets(point);
        std::string key;
        Sets timing;
        for (const auto& [k, v] : sets) {
            if (k.rfind("hardware.", 0) == 0 && timing_only_key(k.substr(9))) timing.emplace_back(k, v);
            else key.append(k).append(1, '=').append(v).append(1, '\n');
        }
        for (const Entry& e : entries_)
            if (e.key == key) {
                HwProfile profile = e.scenario->profile;
                for (const auto& [k, v] : timing) set_profile_param(profile, k.substr(9), v, SourceLoc{"--set " + k + "=" + v});
                return row_of(def_, point, e.scenario->program, profile);
            }
        if (!parsed_) {  // parse the YAML once per worker; every point lowers the same tree
            root_ = load_yaml_text(text_, def_.scenario);
            parsed_ = true;
        }
        auto sc = std::make_shared<const Scenario>(load_scenario_node(root_, text_, def_.scenario, load_options(def_, sets)));
        if (entries_.size() == kEntries) entries_.pop_front();
        entries_.push_back({key, sc});
        return row_of(def_, point, sc->program, sc->profile);
    }

private:
    static constexpr size_t kEntries = 4;
    struct Entry {
        std::string key;
        std::shared_ptr<const Scenario> scenario;
    };
    const SweepDef& def_;
    const std::string& text_;
    std::deque<Entry> entries_;
    YAML::Node root_;
    bool parsed_ = false;
};

}  // namespace

std::string compute_point(const SweepDef& def, const std::string& scenario_text, uint64_t point) {
    Scenario sc = load_scenario_text(scenario_text, def.scenario, load_options(def, def.point_sets(point)));
    return row_of(def, point, sc.program, sc.profile);
}

RunOutcome run_points(const SweepDef& def, const std::string& scenario_text, const std::vector<uint64_t>& todo,
                      std::vector<std::string>& rows, const RunConfig& cfg) {
    // Every point builds and frees programs and timelines of the same size: keep that memory in
    // the heap instead of mapping and unmapping (and page-faulting) it for every point.
    static const bool heap_tuned = [] {
        mallopt(M_MMAP_THRESHOLD, 256 << 20);
        mallopt(M_TRIM_THRESHOLD, 512 << 20);
        return true;
    }();
    (void)heap_tuned;
    RunOutcome out;
    uint64_t limit = todo.size();
    if (cfg.stop_after > 0 && cfg.stop_after < limit) limit = cfg.stop_after;
    std::atomic<uint64_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::pair<uint64_t, std::string>> inbox;  // finished rows not yet stored
    unsigned running = 0;

    auto fail = [&](uint64_t point, std::string message, int code) {
        std::lock_guard<std::mutex> lock(mu);
        if (!out.error || point < out.error->point) out.error = PointError{point, std::move(message), code};
        stop = true;
    };
    auto worker = [&] {
        ScenarioCache cache(def, scenario_text);
        while (!stop.load(std::memory_order_relaxed)) {
            uint64_t k = next.fetch_add(1);
            if (k >= limit) break;
            uint64_t point = todo[k];
            std::string prefix = "point " + std::to_string(point) + " (" + def.describe_point(point) + "): ";
            try {
                std::string row = cfg.cache ? cache.evaluate(point) : compute_point(def, scenario_text, point);
                std::lock_guard<std::mutex> lock(mu);
                inbox.emplace_back(point, std::move(row));
            } catch (const InputError& e) {
                fail(point, escape_controls(prefix + e.what()), 2);  // one line, whatever the names hold
            } catch (const DeadlockError& e) {
                fail(point, prefix + "error: " + e.what(), 2);
            } catch (const std::bad_alloc&) {
                fail(point, prefix + "error: out of memory; lower --max-ops or -j", 2);
            } catch (const std::exception& e) {
                fail(point, prefix + "internal error: " + e.what(), 3);
            }
        }
        std::lock_guard<std::mutex> lock(mu);
        --running;
        cv.notify_all();
    };

    unsigned jobs = cfg.jobs == 0 ? 1 : cfg.jobs;
    if (jobs > limit) jobs = static_cast<unsigned>(limit == 0 ? 1 : limit);
    std::vector<std::thread> threads;
    running = jobs;
    for (unsigned i = 0; i < jobs; ++i) threads.emplace_back(worker);

    using clock = std::chrono::steady_clock;
    auto last_checkpoint = clock::now();
    auto interval = cfg.interval;
    uint64_t unsaved = 0;
    std::vector<std::pair<uint64_t, std::string>> batch;
    std::exception_ptr failed;
    while (true) {
        bool finished;
        {
            std::unique_lock<std::mutex> lock(mu);
            cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return running == 0; });
            batch.swap(inbox);
            finished = running == 0;
        }
        for (auto& [point, row] : batch) rows[point] = std::move(row);
        out.computed += batch.size();
        unsaved += batch.size();
        batch.clear();
        if (cfg.cancel && cfg.cancel->load()) stop = true;
        if (cfg.tick) cfg.tick(out.computed);
        if (finished) break;
        if (cfg.checkpoint && unsaved > 0 && clock::now() - last_checkpoint >= interval && !failed) {
            auto t0 = clock::now();
            try {
                cfg.checkpoint();
            } catch (...) {  // e.g. the disk is full: stop the workers, then report it
                failed = std::current_exception();
                stop = true;
            }
            last_checkpoint = clock::now();
            interval = std::max(cfg.interval, std::chrono::duration_cast<std::chrono::milliseconds>(20 * (last_checkpoint - t0)));
            unsaved = 0;
        }
    }
    for (std::thread& t : threads) t.join();
    if (failed) std::rethrow_exception(failed);
    out.stopped = !out.error && out.computed < todo.size();
    return out;
}

}  // namespace hetsim::sweep
