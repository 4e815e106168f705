// `hetsim sweep` and `hetsim sweep-merge`: run a scenario over a grid of param and profile values,
// in parallel, resumably, shardable over machines; one CSV row per point, plots, the best point.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.hpp"
#include "cli/outputs.hpp"
#include "frontend/profile_loader.hpp"
#include "frontend/scenario.hpp"
#include "frontend/yaml_util.hpp"
#include "report/analysis.hpp"
#include "report/output_file.hpp"
#include "sweep/plot.hpp"
#include "sweep/runner.hpp"
#include "sweep/table.hpp"
#include "sim/engine.hpp"

namespace po = boost::program_options;

namespace hetsim::cli {
namespace {

std::atomic<bool> g_cancel{false};
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) {
    g_signal = sig;
    g_cancel.store(true);
}

struct SweepArgs {
    std::string file, out, shard, plot, x, series, compare, y = "end_to_end_ns";
    std::vector<std::string> varies, sets;
    bool zip = false, resume = false, overwrite = false, best = false, heatmap = false, no_cache = false;
    std::string jobs, max_ops = "20000000", max_memory;  // max_memory empty: default_max_memory()
    uint64_t stop_after = 0;
};

const char* kUsage =
    "usage: hetsim sweep FILE --vary NAME=VALUES [--vary ...] [options]\n"
    "  VALUES: a list 16GB/s,32GB/s; a range 1..8 (step 1), 1..8+2 (step 2), 1ms..10ms+0.5ms;\n"
    "  a log range 1MiB..1GiB*2; items mix: 1..4,8,16. NAME: a scenario param or hardware.<key>\n"
    "  (`hetsim params`). Points are the cartesian product, first --vary slowest (--zip pairs them).";

// Progress on a terminal only: a bar, points per second and the time left.
class ProgressBar {
public:
    explicit ProgressBar(uint64_t total) : total_(total), on_(total > 0 && ::isatty(STDERR_FILENO)) {}
    void update(uint64_t done) {
        if (!on_) return;
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        double rate = s > 0 ? static_cast<double>(done) / s : 0;
        int width = 30, fill = static_cast<int>(width * static_cast<double>(done) / static_cast<double>(total_));
        std::string bar = std::string(static_cast<size_t>(fill), '#') + std::string(static_cast<size_t>(width - fill), '.');
        char eta[32] = "--:--";
        if (rate > 0) {
            long left = std::lround(static_cast<double>(total_ - done) / rate);
            std::snprintf(eta, sizeof eta, "%ld:%02ld:%02ld", left / 3600, left / 60 % 60, left % 60);
        }
        std::fprintf(stderr, "\r\033[Ksweep [%s] %llu/%llu %5.1f%%  %.1f points/s  ETA %s", bar.c_str(),
                     static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
                     100.0 * static_cast<double>(done) / static_cast<double>(total_), rate, eta);
        std::fflush(stderr);
    }
    void finish() {
        if (on_) std::fputs("\r\033[K", stderr);
    }

private:
    uint64_t total_;
    bool on_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Loads point 0, so that an unknown param or a bad value fails before any work, naming its
// option; returns its host threads' names (the utilisation columns).
// The first point's host threads; `profile_files` gets the profile files it reads.
std::vector<std::string> check_first_point(const sweep::SweepDef& def, const std::string& text, std::vector<std::string>& profile_files) {
    LoadOptions o;
    o.sets = def.point_sets(0);
    o.max_ops = def.max_ops;
    o.max_memory = def.max_memory;
    try {
        std::vector<std::string> threads;
        const Scenario sc = load_scenario_text(text, def.scenario, o);
        for (const HostThread& t : sc.program.threads) threads.push_back(t.name);
        profile_files = sc.profile_files;
        return threads;
    } catch (const InputError& e) {
        for (size_t i = 0; i < def.axes.size(); ++i)
            if (e.where().file.rfind("--set " + def.axes[i].name + "=", 0) == 0 || e.where().file == "--set " + def.axes[i].name)
                throw InputError({std::string(def.has_compare && i + 1 == def.axes.size() ? "--compare-param " : "--vary ") + def.axes[i].name},
                                 e.message());
        throw InputError(e.where(), e.message() + " (at the sweep's first point: " + def.describe_point(0) + ")");
    }
}

// Why an existing CSV's sweep differs from this one, in words.
std::string difference(const std::string& theirs, const std::string& ours) {
    auto a = nlohmann::json::parse(theirs), b = nlohmann::json::parse(ours);
    if (a.value("scenario_fnv1a", "") != b.value("scenario_fnv1a", "")) return "a sweep of different scenario contents";
    if (a.value("axes", nlohmann::json()) != b.value("axes", nlohmann::json())) return "a sweep with other --vary values";
    if (a.value("sets", nlohmann::json()) != b.value("sets", nlohmann::json())) return "a sweep with other --set values";
    return "a different sweep (--zip, --compare-param or --max-ops)";
}

void restore(const sweep::SweepDef& def, const sweep::Shard& shard, const SweepArgs& a, std::vector<std::string>& rows,
             uint64_t& resumed) {
    namespace fs = std::filesystem;
    if (a.out.empty() || !fs::exists(a.out)) {
        if (a.resume) throw InputError({"--resume"}, a.out.empty() ? "needs the CSV to resume: -o FILE" : "no " + a.out + " to resume from");
        return;
    }
    if (a.overwrite) {
        if (a.resume) throw InputError({"--overwrite"}, "--resume continues " + a.out + ", --overwrite starts it over: pick one");
        return;
    }
    const std::string fix = "; choose another -o, or pass --overwrite to replace it";
    if (!sweep::looks_like_sweep_file(a.out)) {
        throw InputError({a.out}, "exists and is not a hetsim sweep CSV" + fix);
    }
    sweep::SweepFile f = sweep::read_sweep_file(a.out);
    std::string ours = def.definition_json(), why;
    if (sweep::SweepDef::identity_of(f.definition) != sweep::SweepDef::identity_of(ours)) why = "holds " + difference(f.definition, ours);
    else if ((f.shard ? f.shard->text() : "") != (shard.active() ? shard.text() : ""))
        why = "holds " + (f.shard ? "shard " + f.shard->text() : std::string("the whole sweep")) + ", not " +
              (shard.active() ? "shard " + shard.text() : std::string("the whole sweep"));
    else if (f.header != sweep::header_row(def)) why = "has other columns (written by another hetsim version?)";
    if (!why.empty()) throw InputError({a.out}, why + fix);
    for (const auto& r : f.rows) {
        if (!shard.owns(r.point)) throw InputError({a.out, r.line, 1}, "point " + std::to_string(r.point) + " is not in shard " + shard.text());
        if (!rows[r.point].empty()) throw InputError({a.out, r.line, 1}, "point " + std::to_string(r.point) + " appears twice");
        rows[r.point] = r.text;
        ++resumed;
    }
}

// The rows of every point are held until the end (the CSV is rewritten whole at each checkpoint),
// in vectors of one entry per point of the whole sweep: refuse a sweep whose bookkeeping alone
// would pass --max-memory before anything is allocated (10^8 points took 4 GB before the first
// was computed, and some 60 GB by the end).
void check_rows_memory(const sweep::SweepDef& def, const sweep::Shard& shard, bool plotting) {
    if (def.max_memory == 0) return;
    const uint64_t total = def.points(), owned = (total + shard.count - 1 - shard.index) / shard.count;
    // A row is about half as long as the header (numbers are shorter than column names), held
    // twice: as computed and in the CSV text written at each checkpoint; plus malloc's overhead.
    const uint64_t row = sweep::header_row(def).size() / 2 + 32;
    const uint64_t per_point = sizeof(std::string) + sizeof(double) * (plotting ? 2 : 1);  // rows, end-to-end times, plotted values
    const uint64_t per_owned = sizeof(uint64_t) + sizeof(void*) + 2 * row;                // to do, the CSV's row list, the texts
    const long double need = static_cast<long double>(total) * per_point + static_cast<long double>(owned) * per_owned;
    if (need <= static_cast<long double>(def.max_memory)) return;
    const uint64_t shown = need >= 1.8e19L ? UINT64_MAX : static_cast<uint64_t>(need);
    throw InputError({"--vary"}, "the sweep's " + std::to_string(total) + " points" +
                                     (shard.active() ? " (" + std::to_string(owned) + " in shard " + shard.text() + ")" : "") +
                                     " would need about " + bytes_text(shown) + " to hold their rows, more than the cap of " +
                                     bytes_text(def.max_memory) + " (--max-memory); vary fewer values, or raise the cap");
}

void report_best(std::ostream& os, const sweep::SweepDef& def, const std::string& text, const std::vector<double>& e2e,
                 const sweep::Shard& shard) {
    int64_t fast = -1, slow = -1;
    for (size_t p = 0; p < e2e.size(); ++p) {
        if (std::isnan(e2e[p])) continue;
        if (fast < 0 || e2e[p] < e2e[static_cast<size_t>(fast)]) fast = static_cast<int64_t>(p);
        if (slow < 0 || e2e[p] > e2e[static_cast<size_t>(slow)]) slow = static_cast<int64_t>(p);
    }
    if (fast < 0) return;
    auto t = [](double ns) { return report::format_time(Time::ps(std::llround(ns * 1000))); };
    double best = e2e[static_cast<size_t>(fast)];
    auto vs = [&](double ns) {
        char buf[96];
        std::snprintf(buf, sizeof buf, " (%.3fx the fastest, %s%s)", best > 0 ? ns / best : 1.0, ns >= best ? "+" : "-",
                      t(std::fabs(ns - best)).c_str());
        return std::string(buf);
    };
    std::string of = shard.active() ? " of shard " + shard.text() : "";
    os << "fastest" << of << ": point " << fast << " (" << def.describe_point(static_cast<uint64_t>(fast)) << "): " << t(best) << "\n";
    os << "slowest" << of << ": point " << slow << " (" << def.describe_point(static_cast<uint64_t>(slow)) << "): "
       << t(e2e[static_cast<size_t>(slow)]) << vs(e2e[static_cast<size_t>(slow)]) << "\n";
    try {
        LoadOptions o;
        o.sets = def.sets;
        o.max_ops = def.max_ops;
        o.max_memory = def.max_memory;
        Scenario sc = load_scenario_text(text, def.scenario, o);
        double own = static_cast<double>(simulate(sc.program, sc.profile).end_to_end.ps()) / 1000.0;
        os << "the file's own values: " << t(own) << vs(own) << "\n";
    } catch (const std::exception& e) {
        os << "the file's own values: cannot be simulated: " << e.what() << "\n";
    }
}

}  // namespace

int sweep_main(const std::vector<std::string>& args) {
    SweepArgs a;
    po::options_description d("sweep options");
    d.add_options()("help,h", "show this help")
        ("vary", po::value(&a.varies)->composing(), "NAME=VALUES: a param or hardware.<key> to vary; repeatable")
        ("zip", po::bool_switch(&a.zip), "pair the --vary lists value by value instead of the cartesian product")
        ("compare-param", po::value(&a.compare), "NAME=V1,V2,..: scenario variants to compare; one line each, crossovers printed")
        ("output,o", po::value(&a.out), "the CSV (written atomically, resumable); stdout when absent")
        ("jobs,j", po::value(&a.jobs), "worker threads (default: all cores); the output does not depend on it")
        ("shard", po::value(&a.shard), "I/N: run only the points p with p % N == I (0 <= I < N); join with sweep-merge")
        ("resume", po::bool_switch(&a.resume), "require -o to exist and continue it (an -o of the same sweep resumes anyway)")
        ("overwrite", po::bool_switch(&a.overwrite), "start over, replacing -o (even one that holds another sweep)")
        ("best", po::bool_switch(&a.best), "print the fastest point against the slowest and the file's own values")
        ("plot", po::value(&a.plot), "write an SVG plot: end-to-end time vs --x, a line per --series value")
        ("x", po::value(&a.x), "the plot's x axis (default: the first --vary)")
        ("series", po::value(&a.series), "the plot's lines or heat-map rows (default: --compare-param, else the next axis)")
        ("heatmap", po::bool_switch(&a.heatmap), "plot a heat map over --x and --series instead of lines")
        ("y", po::value(&a.y), "the CSV column to plot (default end_to_end_ns), e.g. gpu_active_fraction, util:sm; crossovers compare it")
        ("set", po::value(&a.sets)->composing(), "fix a param or hardware.<key> for every point; repeatable")
        ("max-ops", po::value(&a.max_ops)->default_value(a.max_ops), "cap on ops after loop expansion")
        ("max-memory", po::value(&a.max_memory), "cap on the memory of the sweep's rows, checked before any point runs, and of each point's run, e.g. 8GiB (default: 3/4 of this machine's memory; 0: none)")
        ("no-cache", po::bool_switch(&a.no_cache), "lower every point from scratch (slower; for checking)");
    po::options_description all;
    all.add(d).add_options()("file", po::value(&a.file))("stop-after", po::value(&a.stop_after));
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
        po::notify(vm);
        reject_empty_values(vm, d);
    } catch (const po::error& e) {
        std::cerr << "hetsim: error: " << option_error(e, all) << "\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << kUsage << "\n\n" << d;
        return 0;
    }
    if (a.file.empty()) {
        std::cerr << "hetsim: error: no scenario file given\n" << kUsage << "\n";
        return 2;
    }
    const unsigned jobs = a.jobs.empty() ? 0 : static_cast<unsigned>(parse_count("-j", a.jobs, 1, 4096));
    const uint64_t max_ops = parse_count("--max-ops", a.max_ops, 1, kMaxOpsLimit);
    // -o is the sweep's own CSV, read back to resume: it may exist; it may not be the scenario.
    Outputs outs;
    outs.input(a.file, "the scenario");
    sweep::SweepDef def;
    def.scenario = a.file;
    std::string text;
    load_yaml_file(a.file, &text);
    def.scenario_hash = sweep::fnv1a_hex(text);
    def.sets = parse_set_args(a.sets, "e.g. --set chunks=8");
    for (const std::string& v : a.varies) def.axes.push_back(sweep::parse_vary(v));
    if (!a.compare.empty()) {
        def.axes.push_back(sweep::parse_vary(a.compare, "--compare-param"));
        def.has_compare = true;
    }
    def.zip = a.zip;
    def.max_ops = max_ops;
    def.check();
    sweep::Shard shard = a.shard.empty() ? sweep::Shard{} : sweep::parse_shard(a.shard);
    def.max_memory = parse_max_memory(a.max_memory);
    check_rows_memory(def, shard, !a.plot.empty() || def.has_compare);
    std::vector<std::string> profile_files;
    def.host_threads = check_first_point(def, text, profile_files);
    // -o (even with --overwrite) and --plot never replace the scenario's profile or its bases,
    // nor those of a profile that a varied value names (hardware: ${gpu}, --vary gpu=a.yaml,b.yaml).
    for (const sweep::Axis& ax : def.axes)
        for (const std::string& v : ax.values)
            if (std::filesystem::is_regular_file(v)) try {
                    for (const ProfileFile& f : load_profile_sources(v, SourceLoc{"--vary " + ax.name}).files) profile_files.push_back(f.path);
                } catch (const InputError&) {  // not a profile: a point that names it fails on its own
                }
    for (const std::string& f : profile_files) outs.input(f, "a profile file");
    const sweep::PlotRequest plot_req{a.x, a.series, a.heatmap, a.y};
    if (!a.plot.empty() || vm.count("y")) sweep::make_plot(def, {}, plot_req);  // a bad --x / --series / --y fails before any work
    if (a.out == "-") a.out.clear();  // stdout, as without -o
    outs.declare("-o", a.out.empty() ? "-" : a.out);
    outs.declare("--plot", a.plot);

    uint64_t total = def.points(), resumed = 0;
    std::vector<std::string> rows(total);
    restore(def, shard, a, rows, resumed);
    std::vector<uint64_t> todo;
    for (uint64_t p = shard.index; p < total; p += shard.count)
        if (rows[p].empty()) todo.push_back(p);
    std::string definition = def.definition_json(), header = sweep::header_row(def);
    std::optional<sweep::Shard> shard_line = shard.active() ? std::optional(shard) : std::nullopt;
    auto render = [&] {
        std::vector<const std::string*> done;
        for (const std::string& r : rows)
            if (!r.empty()) done.push_back(&r);
        return sweep::render_sweep_csv(definition, shard_line, header, done);
    };
    auto save = [&] {
        if (!a.out.empty()) report::write_file_atomic(a.out, render());
    };
    save();

    sweep::RunConfig cfg;
    cfg.jobs = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
    cfg.stop_after = a.stop_after;
    cfg.cache = !a.no_cache;
    cfg.cancel = &g_cancel;
    ProgressBar bar(todo.size());
    cfg.tick = [&](uint64_t n) { bar.update(n); };
    cfg.checkpoint = save;
    auto t0 = std::chrono::steady_clock::now();
    g_cancel = false;
    g_signal = 0;
    auto old_int = std::signal(SIGINT, on_signal), old_term = std::signal(SIGTERM, on_signal);
    sweep::RunOutcome res = sweep::run_points(def, text, todo, rows, cfg);
    std::signal(SIGINT, old_int);
    std::signal(SIGTERM, old_term);
    bar.finish();
    save();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char summary[256];
    std::snprintf(summary, sizeof summary, "hetsim sweep: %llu points%s: %llu computed, %llu resumed, %llu left in %.2f s (-j %u)",
                  static_cast<unsigned long long>((total + shard.count - 1 - shard.index) / shard.count),
                  shard.active() ? (" of shard " + shard.text()).c_str() : "", static_cast<unsigned long long>(res.computed),
                  static_cast<unsigned long long>(resumed), static_cast<unsigned long long>(todo.size() - res.computed), secs, cfg.jobs);
    if (res.error) {  // the error alone: one line
        std::cerr << res.error->message << "\n";
        return res.error->exit_code;
    }
    std::cerr << summary << (a.out.empty() ? "" : " -> " + a.out) << "\n";
    if (res.stopped) {
        std::cerr << "hetsim sweep: stopped early" << (g_signal ? " by a signal" : " (--stop-after)")
                  << (a.out.empty() ? "" : "; the same command resumes from " + a.out) << "\n";
        return g_signal ? 128 + g_signal : 1;
    }
    if (a.out.empty()) std::cout << render();
    std::ostream& rep = a.out.empty() ? std::cerr : std::cout;
    std::vector<double> e2e(total, NAN);
    for (uint64_t p = 0; p < total; ++p)
        if (!rows[p].empty()) e2e[p] = sweep::row_number(header, rows[p], "end_to_end_ns");
    if (a.best) report_best(rep, def, text, e2e, shard);
    if (!a.plot.empty() || (def.has_compare && !a.heatmap)) {
        sweep::PlotResult pr;
        try {
            std::vector<double> ys = e2e;
            if (a.y != "end_to_end_ns")
                for (uint64_t p = 0; p < total; ++p) ys[p] = rows[p].empty() ? NAN : sweep::row_number(header, rows[p], a.y);
            pr = sweep::make_plot(def, ys, plot_req);
        } catch (const InputError& e) {  // only crossovers were asked for, implicitly
            std::cerr << "hetsim sweep: no crossovers: " << e.message() << "\n";
            return 0;
        }
        for (const std::string& n : pr.notes) std::cerr << "plot: " << n << "\n";
        std::string xname = a.x.empty() ? def.axes[0].name : a.x;
        for (const sweep::Crossover& c : pr.crossovers) rep << sweep::describe(c, xname) << "\n";
        if (pr.crossovers.empty() && def.has_compare && !a.heatmap) rep << "crossover: none in this range\n";
        if (!a.plot.empty()) {
            outs.set("--plot", pr.svg);
            outs.commit();
        }
    }
    return 0;
}

int sweep_merge_main(const std::vector<std::string>& args) {
    std::string out;
    std::vector<std::string> files;
    po::options_description d("sweep-merge options");
    d.add_options()("help,h", "show this help")("output,o", po::value(&out), "write the merged CSV here instead of stdout");
    po::options_description all;
    all.add(d).add_options()("files", po::value(&files)->composing());
    po::positional_options_description pos;
    pos.add("files", -1);
    po::variables_map vm;
    const char* usage = "usage: hetsim sweep-merge [-o merged.csv] SHARD.csv...";
    try {
        po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
        po::notify(vm);
        reject_empty_values(vm, d);
    } catch (const po::error& e) {
        std::cerr << "hetsim: error: " << option_error(e, all) << "\n" << usage << "\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << usage << "\n\n" << d;
        return 0;
    }
    if (files.empty()) {
        std::cerr << "hetsim: error: no shard files given\n" << usage << "\n";
        return 2;
    }
    Outputs outs;
    for (const std::string& f : files) outs.input(f, "a shard");
    outs.declare("-o", out.empty() ? "-" : out);
    sweep::MergeResult m = sweep::merge_sweep_files(files);
    bool ok = m.missing.empty() && m.duplicates.empty();
    if (!m.duplicates.empty()) {
        std::cerr << "hetsim sweep-merge: error: " << m.duplicates.size() << " point(s) doubled: " << m.duplicates[0];
        for (size_t i = 1; i < m.duplicates.size() && i < 5; ++i) std::cerr << "; " << m.duplicates[i];
        std::cerr << (m.duplicates.size() > 5 ? "; ..." : "") << "\n";
    }
    if (!m.missing.empty()) {
        std::cerr << "hetsim sweep-merge: error: " << m.missing.size() << " of " << m.points << " points missing:";
        for (size_t i = 0; i < m.missing.size() && i < 10; ++i) std::cerr << (i ? ", " : " ") << m.missing[i];
        std::cerr << (m.missing.size() > 10 ? ", ..." : "") << " (an unfinished or absent shard: rerun it to resume)\n";
    }
    if (!ok) return 1;
    outs.set("-o", m.csv);
    outs.commit();
    std::cerr << "hetsim sweep-merge: " << m.points << " points from " << m.files << " files" << (out.empty() ? "" : " -> " + out) << "\n";
    return 0;
}

}  // namespace hetsim::cli
