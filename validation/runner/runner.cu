// hetsim-runner: executes a lowered hetsim program (docs/program-format.md) on a CUDA GPU and
// writes the measured timeline ("hetsim.measured" v1). See README.md beside this file.
//
//   hetsim-runner program.json -o measured.json [--runs N] [--warmup N] [--timing auto|cupti|events]
//                 [--time-limit-s S] [--peak-flops F] [--cupti-lib PATH] [--no-register-emulation]
//   hetsim-runner program.json --check [--verbose]     (no CUDA calls: prints the plan)
//
// Exit codes: 0 ok, 1 CUDA/CUPTI/IO failure, 2 bad arguments or program (or does not fit the
// device), 3 time limit exceeded.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <numeric>
#include <string>

#include <nlohmann/json.hpp>

#include "exec.hpp"
#include "plan.hpp"
#include "core/program_json.hpp"

namespace {

using runner::Options;
using ojson = nlohmann::ordered_json;

const char* kUsage =
    "usage: hetsim-runner PROGRAM.json -o MEASURED.json [options]\n"
    "       hetsim-runner PROGRAM.json --check [--verbose]\n"
    "\n"
    "Executes a program written by `hetsim lower` on GPU 0 and writes the measured timeline.\n"
    "\n"
    "  -o, --output PATH        measured timeline (JSON, written to PATH.tmp.PID then renamed)\n"
    "  --runs N                 timed runs, instrumented and uninstrumented each (default 5)\n"
    "  --warmup N               untimed warm-up runs first (default 2)\n"
    "  --timing auto|cupti|events   GPU timestamps: CUPTI activity records, or timing events\n"
    "                           around each op; auto tries CUPTI, then events (default auto)\n"
    "  --time-limit-s S         abort (exit 3) when the whole process runs longer (default 120;\n"
    "                           0 = no limit)\n"
    "  --peak-flops F           FLOP/s for kernels given by flops (default 6.7e13, h200 profile)\n"
    "  --cupti-lib PATH         libcupti to dlopen (else $HETSIM_CUPTI_LIB, then usual places)\n"
    "  --no-register-emulation  do not pad shared memory to emulate `registers`\n"
    "  --check                  validate and print the execution plan; touches no CUDA\n"
    "  --verbose                with --check: list every op\n";

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "hetsim-runner: %s\n\n%s", msg.c_str(), kUsage);
    std::exit(2);
}

long parse_int(const std::string& flag, const char* v, long lo, long hi) {
    char* end = nullptr;
    errno = 0;
    long x = std::strtol(v, &end, 10);
    if (errno || !end || *end || x < lo || x > hi)
        usage_error(flag + " needs an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got '" + v + "'");
    return x;
}

double parse_real(const std::string& flag, const char* v, double lo) {
    char* end = nullptr;
    double x = std::strtod(v, &end);
    if (!end || *end || !std::isfinite(x) || x < lo) usage_error(flag + " needs a number >= " + std::to_string(lo) + ", got '" + v + "'");
    return x;
}

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 0; i < argc; ++i) {
        if (i) o.command_line += ' ';
        o.command_line += argv[i];
    }
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (a == "-o" || a == "--output") o.out_path = value();
        else if (a == "--runs") o.runs = int(parse_int(a, value(), 1, 1000));
        else if (a == "--warmup") o.warmup = int(parse_int(a, value(), 0, 1000));
        else if (a == "--timing") {
            std::string t = value();
            if (t == "auto") o.timing = runner::TimingRequest::Auto;
            else if (t == "cupti") o.timing = runner::TimingRequest::Cupti;
            else if (t == "events") o.timing = runner::TimingRequest::Events;
            else usage_error("--timing must be auto, cupti or events, got '" + t + "'");
        } else if (a == "--time-limit-s") o.time_limit_s = parse_real(a, value(), 0);
        else if (a == "--peak-flops") {
            o.peak_flops = parse_real(a, value(), 1);
        } else if (a == "--cupti-lib") o.cupti_lib = value();
        else if (a == "--no-register-emulation") o.emulate_registers = false;
        else if (a == "--cold-child") {  // hidden: one run of a cold-start program (see run_cold)
            std::string k = value();
            if (k == "instrumented") o.cold_child = 1;
            else if (k == "plain") o.cold_child = 2;
            else usage_error("--cold-child must be instrumented or plain");
        }
        else if (a == "--plain-child") o.plain_child = true;  // hidden: the uninstrumented runs (see run_plain_child)
        else if (a == "--check") o.check = true;
        else if (a == "--verbose") o.verbose = true;
        else if (!a.empty() && a[0] == '-') usage_error("unknown option '" + a + "'");
        else if (o.program_path.empty()) o.program_path = a;
        else usage_error("more than one program given ('" + o.program_path + "' and '" + a + "')");
    }
    if (o.program_path.empty()) usage_error("no program given");
    if (!o.check && o.out_path.empty()) usage_error("no output given (-o measured.json), or use --check");
    return o;
}

// ns rounded to the picosecond: an integer when whole, else a number with at most 3 decimals.
ojson ns_json(double ns) {
    double ps = std::round(ns * 1000.0);
    if (std::fmod(ps, 1000.0) == 0.0 && std::fabs(ps) < 9e18) return int64_t(ps / 1000.0);
    return ps / 1000.0;
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string utc_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char b[32];
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return b;
}

std::string hostname() {
    char b[256] = {0};
    if (gethostname(b, sizeof b - 1) != 0) return "";
    return b;
}

// A phase `name` of op times (name_start_ns, name_end_ns), when the run has it.
void put_phase(ojson& e, const char* name, double start, double end) {
    if (std::isnan(start) || std::isnan(end)) return;
    e[std::string(name) + "_start_ns"] = ns_json(start);
    e[std::string(name) + "_end_ns"] = ns_json(end);
}

// One uninstrumented run's host stamps (no CUPTI, no events: the steady_clock reads around each
// call, and host functions' own stamps), for the ops that have them.
ojson plain_ops_json(const runner::Program& p, const runner::RunResult& r) {
    ojson ops = ojson::array();
    for (uint32_t i = 0; i < p.ops.size() && i < r.ops.size(); ++i) {
        const runner::OpTimes& t = r.ops[i];
        ojson e;
        put_phase(e, "host", t.host_start, t.host_end);
        put_phase(e, "issue", t.issue_start, t.issue_end);
        if (p.ops[i].kind == runner::OpKind::HostFunc) put_phase(e, "gpu", t.gpu_start, t.gpu_end);
        if (e.empty()) continue;
        e["index"] = i;
        ops.push_back(std::move(e));
    }
    return ops;
}

// The uninstrumented runs: their end-to-end times and the median run's host stamps (the lower
// median for an even count).
ojson plain_json(const runner::Program& p, const runner::Measurement& m) {
    ojson j = ojson::object();
    if (m.plain.empty()) return j;
    ojson un = ojson::array();
    for (double u : m.uninstrumented_ns) un.push_back(ns_json(u));
    j["uninstrumented_end_to_end_ns"] = un;
    std::vector<size_t> po(m.plain.size());
    std::iota(po.begin(), po.end(), 0);
    std::sort(po.begin(), po.end(), [&](size_t a, size_t b) { return m.plain[a].end_to_end_sync_ns < m.plain[b].end_to_end_sync_ns; });
    const size_t pm = po[(po.size() - 1) / 2];
    j["uninstrumented_median_run"] = pm;
    if (p.warmup) j["uninstrumented_measured_from_ns"] = ns_json(m.plain[pm].measured_from_ns);
    j["uninstrumented_ops"] = plain_ops_json(p, m.plain[pm]);
    return j;
}

ojson measured_json(const runner::Program& p, const runner::Plan& plan, const runner::Options& o, const runner::Measurement& m) {
    ojson j;
    j["schema"] = "hetsim.measured";
    j["version"] = 1;
    j["scenario"] = plan.scenario;
    j["program"] = plan.file;
    j["source"] = p.source;

    // The median instrumented run (the lower median for an even count): its op times are
    // written, and its end to end is end_to_end_ns.
    std::vector<size_t> order(m.timed.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return m.timed[a].end_to_end_ns < m.timed[b].end_to_end_ns; });
    size_t med = order[(order.size() - 1) / 2];
    const runner::RunResult& r = m.timed[med];

    ojson md;
    md["gpu"] = m.gpu;
    md["driver"] = version_string(m.driver_version);
    if (!m.driver_release.empty()) md["driver_release"] = m.driver_release;
    md["cuda_runtime"] = version_string(m.runtime_version);
    md["date"] = utc_now();
    md["host"] = hostname();
    md["command"] = o.command_line;
    md["runs"] = o.runs;
    md["warmup"] = o.warmup;
    md["options"] = {{"sync", p.blocking_sync ? "blocking" : "spin"},
                     {"cold_start", p.cold_start},
                     {"max_connections", p.max_connections}};
    md["cold_start"] = p.cold_start;
    md["warmup_runs_done"] = m.warmup_done;
    md["timing"] = m.timing;
    if (!m.timing_note.empty()) md["timing_note"] = m.timing_note;
    md["timing_limits"] =
        m.timing == "cupti"
            ? "GPU start/end of kernels, copies and memsets from CUPTI activity records (external correlation id per op); "
              "event record/wait markers get their call's return as GPU start and end; prefetches are timed with events"
            : "GPU start/end from timing events recorded in the op's stream before and after it: a queued op's start is when "
              "its stream reached it (a copy waiting for a copy engine or a kernel waiting for SM room starts late, so the "
              "measured start is early); the end of a blocking call (sync copy/memset, pageable D2H) is capped at its return; "
              "markers get the time of one event recorded after them";
    md["clock"] = m.clock_note;
    md["clock_uncertainty_ns"] = ns_json(m.clock_uncertainty_ns);
    if (m.timing == "cupti") {
        md["cupti_library"] = m.cupti_library;
        md["cupti_version"] = m.cupti_version;
        md["cupti_runtime_records"] = m.cupti_runtime_records;
    }
    md["sm_count"] = m.sm_count;
    md["compute_capability"] = std::to_string(m.cc_major) + "." + std::to_string(m.cc_minor);
    md["median_run"] = med;
    md["peak_flops"] = o.peak_flops;
    md["register_emulation"] = m.register_emulation;
    if (p.tasks_form) md["tasks_host_to_gpu_dependency"] = m.wait_value ? "cuStreamWaitValue32 on a host-written flag" : "one-thread poll kernel on a host-written flag";
    md["emulation"] = ojson::array({
        "kernels with duration: every thread spins on %globaltimer for duration/waves from its block's start "
        "(waves from the CUDA occupancy of the runner's kernel at the given block size and shared memory)",
        "every kernel block stores one 8-byte word at its end (as real kernels write results)",
        "roofline kernels: grid-stride 16-byte streaming read of `bytes` from a device buffer (successive kernels read "
        "different ranges, so none hits the L2 left by the previous), each block also spinning at least flops/peak_flops/waves",
        std::string(hetsim::kEmulationNamedHostBuffers) +
            " (pinned, pageable or managed); anonymous copies use per-thread host scratch, one per memory kind; the device "
            "side of copies and memsets is per-thread device scratch",
        "kernel `uses`: blocks of the first wave read one byte per 4 KiB page of each managed buffer before their work; host "
        "`uses`: the host reads one byte per page before its busy loop",
        "end_to_end_sync_runs_ns and uninstrumented_end_to_end_ns include each thread's final cudaDeviceSynchronize"});

    if (p.warmup)
        md["steady_state"] = "the program runs its body " + std::to_string(p.warmup + 1) +
                             " times with a barrier (cudaDeviceSynchronize, then every host thread meets) between; ops of warm-up "
                             "iterations carry \"warmup\": true; measured_from_ns is the release of the last barrier, and every "
                             "end-to-end time (end_to_end_ns, *_runs_ns, uninstrumented) is the window from it";
    j["metadata"] = md;
    if (p.warmup) j["measured_from_ns"] = ns_json(r.measured_from_ns);
    j["end_to_end_ns"] = ns_json(r.end_to_end_ns);
    ojson runs = ojson::array(), sync_runs = ojson::array(), un = ojson::array();
    for (const auto& t : m.timed) {
        runs.push_back(ns_json(t.end_to_end_ns));
        sync_runs.push_back(ns_json(t.end_to_end_sync_ns));
    }
    for (double u : m.uninstrumented_ns) un.push_back(ns_json(u));
    j["end_to_end_runs_ns"] = runs;
    j["end_to_end_sync_runs_ns"] = sync_runs;
    j["uninstrumented_end_to_end_ns"] = un;
    j.update(plain_json(p, m));

    ojson ops = ojson::array();
    for (uint32_t i = 0; i < p.ops.size(); ++i) {
        const runner::Op& op = p.ops[i];
        const runner::OpTimes& t = r.ops[i];
        ojson e;
        e["index"] = i;
        e["name"] = p.op_name(i);
        e["kind"] = runner::to_string(op.kind);
        e["thread"] = op.thread;
        if (op.stream >= 0) e["stream"] = op.stream;
        if (op.warmup) e["warmup"] = true;
        put_phase(e, "host", t.host_start, t.host_end);
        put_phase(e, "gpu", t.gpu_start, t.gpu_end);
        put_phase(e, "issue", t.issue_start, t.issue_end);
        ops.push_back(std::move(e));
    }
    j["ops"] = std::move(ops);
    ojson w = ojson::array();
    for (const auto& s : m.warnings) w.push_back(s);
    j["warnings"] = w;
    return j;
}

void write_atomically(const std::string& path, const std::string& text) {
    std::string tmp = path + ".tmp." + std::to_string(getpid());
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) {
            std::fprintf(stderr, "hetsim-runner: cannot write %s: %s\n", tmp.c_str(), std::strerror(errno));
            std::exit(1);
        }
        f << text;
        f.flush();
        if (!f) {
            std::fprintf(stderr, "hetsim-runner: writing %s failed: %s\n", tmp.c_str(), std::strerror(errno));
            std::remove(tmp.c_str());
            std::exit(1);
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::fprintf(stderr, "hetsim-runner: cannot rename %s to %s: %s\n", tmp.c_str(), path.c_str(), std::strerror(errno));
        std::remove(tmp.c_str());
        std::exit(1);
    }
}

// options.cold_start: every measured run is a fresh process. The runner re-executes itself once
// per run (--cold-child instrumented, then --cold-child plain for the uninstrumented runs), each
// child making one run with no warm-up, and merges what they write.
// Re-executes this runner (/proc/self/exe) with `args`, waits for it (the watchdog kills it past
// the time limit) and returns the JSON it wrote to `out`. Exits with the child's code on failure.
ojson run_child(std::vector<std::string> args, const std::string& out, const std::string& what) {
    std::vector<char*> av;
    for (auto& a : args) av.push_back(a.data());
    av.push_back(nullptr);
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        std::fprintf(stderr, "hetsim-runner: %s: fork failed: %s\n", what.c_str(), std::strerror(errno));
        std::exit(1);
    }
    if (pid == 0) {
        execv("/proc/self/exe", av.data());
        std::fprintf(stderr, "hetsim-runner: %s: cannot re-execute /proc/self/exe: %s\n", what.c_str(), std::strerror(errno));
        std::_Exit(1);
    }
    runner::set_watched_child(int(pid));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    runner::set_watched_child(0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        std::fprintf(stderr, "hetsim-runner: %s (a child process) failed (%s %d); its message is above\n", what.c_str(),
                     WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? code : WTERMSIG(status));
        std::remove(out.c_str());
        std::exit(code ? code : 1);
    }
    std::ifstream in(out, std::ios::binary);
    ojson j;
    try {
        j = ojson::parse(in);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hetsim-runner: %s: cannot read the child's output %s: %s\n", what.c_str(), out.c_str(), e.what());
        std::exit(1);
    }
    std::remove(out.c_str());
    return j;
}

// The arguments a child runner shares with this one.
std::vector<std::string> child_args(const Options& opt, const std::string& out) {
    std::vector<std::string> args = {"hetsim-runner", opt.program_path, "-o", out, "--time-limit-s", "0", "--timing",
                                      opt.timing == runner::TimingRequest::Cupti ? "cupti"
                                      : opt.timing == runner::TimingRequest::Events ? "events" : "auto",
                                      "--peak-flops", std::to_string(opt.peak_flops)};
    if (!opt.cupti_lib.empty()) args.insert(args.end(), {"--cupti-lib", opt.cupti_lib});
    if (!opt.emulate_registers) args.push_back("--no-register-emulation");
    return args;
}

// The uninstrumented runs, made first by a child process that never loads CUPTI (CUPTI once
// attached leaves a process slower), before this process touches CUDA: warm-ups as asked, then
// --runs runs. Returns what it wrote: uninstrumented_end_to_end_ns, the median run's host stamps.
ojson run_plain_child(const Options& opt) {
    std::string out = opt.out_path + ".plain." + std::to_string(getpid());
    std::vector<std::string> args = child_args(opt, out);
    args.insert(args.end(), {"--plain-child", "--runs", std::to_string(opt.runs), "--warmup", std::to_string(opt.warmup)});
    return run_child(args, out, "the uninstrumented runs");
}

[[noreturn]] void run_cold(const runner::Plan& plan, const Options& opt) {
    runner::start_watchdog(opt.time_limit_s);
    auto child = [&](int k, bool instrumented) -> ojson {
        std::string out = opt.out_path + ".cold" + std::to_string(k) + (instrumented ? "i" : "p") + "." + std::to_string(getpid());
        std::vector<std::string> args = child_args(opt, out);
        args.insert(args.end(), {"--cold-child", instrumented ? "instrumented" : "plain"});
        return run_child(args, out, std::string("cold start: the ") + (instrumented ? "instrumented" : "uninstrumented") + " run " + std::to_string(k));
    };
    std::vector<ojson> timed, plain;
    for (int k = 1; k <= opt.runs; ++k) timed.push_back(child(k, true));
    for (int k = 1; k <= opt.runs; ++k) plain.push_back(child(k, false));
    std::vector<size_t> order(timed.size());
    std::iota(order.begin(), order.end(), 0);
    auto e2e = [&](size_t i) { return timed[i]["end_to_end_ns"].get<double>(); };
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return e2e(a) < e2e(b); });
    size_t med = order[(order.size() - 1) / 2];
    ojson j = timed[med];
    ojson runs = ojson::array(), sync_runs = ojson::array(), un = ojson::array(), warnings = ojson::array();
    std::vector<std::string> seen;
    auto add_warnings = [&](const ojson& c) {
        if (!c.contains("warnings")) return;
        for (const auto& w : c["warnings"]) {
            std::string t = w.get<std::string>();
            if (std::find(seen.begin(), seen.end(), t) == seen.end()) {
                seen.push_back(t);
                warnings.push_back(t);
            }
        }
    };
    for (const auto& c : timed) {
        runs.push_back(c["end_to_end_ns"]);
        sync_runs.push_back(c["end_to_end_sync_runs_ns"].at(0));
        add_warnings(c);
    }
    for (const auto& c : plain) {
        un.push_back(c["uninstrumented_end_to_end_ns"].at(0));
        add_warnings(c);
    }
    j["end_to_end_runs_ns"] = runs;
    j["end_to_end_sync_runs_ns"] = sync_runs;
    j["uninstrumented_end_to_end_ns"] = un;
    {
        // The median uninstrumented child's host stamps.
        std::vector<size_t> po(plain.size());
        std::iota(po.begin(), po.end(), 0);
        auto ue = [&](size_t i) { return plain[i]["uninstrumented_end_to_end_ns"].at(0).get<double>(); };
        std::sort(po.begin(), po.end(), [&](size_t a, size_t b) { return ue(a) < ue(b); });
        const size_t pm = po[(po.size() - 1) / 2];
        j["uninstrumented_median_run"] = pm;
        if (plain[pm].contains("uninstrumented_measured_from_ns")) j["uninstrumented_measured_from_ns"] = plain[pm]["uninstrumented_measured_from_ns"];
        if (plain[pm].contains("uninstrumented_ops")) j["uninstrumented_ops"] = plain[pm]["uninstrumented_ops"];
    }
    j["warnings"] = warnings;
    ojson& md = j["metadata"];
    md["command"] = opt.command_line;
    md["runs"] = opt.runs;
    md["warmup"] = 0;
    md["warmup_runs_done"] = 0;
    md["median_run"] = med;
    md["cold_start"] = true;
    md["cold_start_note"] = "each instrumented and each uninstrumented run was a fresh process (the runner re-executed itself), "
                            "with no warm-up and lazy module loading; --warmup is ignored";
    write_atomically(opt.out_path, j.dump(2) + "\n");
    std::fprintf(stderr, "hetsim-runner: %s: %d cold-start runs, median end to end %.3f us; wrote %s\n", plan.scenario.c_str(), opt.runs,
                 e2e(med) / 1000.0, opt.out_path.c_str());
    for (const auto& w : seen) std::fprintf(stderr, "hetsim-runner: warning: %s\n", w.c_str());
    std::fflush(stderr);
    std::_Exit(0);
}

}  // namespace

int main(int argc, char** argv) {
    Options opt = parse_args(argc, argv);
    runner::Program prog;
    runner::Plan plan;
    try {
        std::string scenario;
        prog = hetsim::read_program_file(opt.program_path, &scenario);
        plan = runner::make_plan(prog, opt.program_path, scenario);
    } catch (const hetsim::InputError& e) {  // "FILE: error: PATH: message"
        std::fprintf(stderr, "hetsim-runner: %s\n", e.what());
        return 2;
    }
    if (opt.check) {
        runner::print_plan(prog, plan, stdout, opt.verbose, opt.peak_flops);
        return 0;
    }
    if (prog.cold_start && !opt.cold_child) run_cold(plan, opt);
    runner::start_watchdog(opt.time_limit_s);
    // With CUPTI possible, the uninstrumented runs come first, from a process that never loads it.
    ojson plain;
    if (!opt.cold_child && !opt.plain_child && opt.timing != runner::TimingRequest::Events) {
        plain = run_plain_child(opt);
        opt.plain_elsewhere = true;
    }
    runner::Measurement m = runner::execute(prog, plan, opt);
    if (opt.plain_child) {
        ojson j = plain_json(prog, m);
        j["schema"] = "hetsim.measured";
        j["warnings"] = ojson::array();
        for (const auto& w : m.warnings) j["warnings"].push_back(w);
        write_atomically(opt.out_path, j.dump() + "\n");
        std::fflush(stderr);
        std::_Exit(0);
    }
    if (opt.cold_child == 2) {
        // An uninstrumented cold run: its end to end and warnings are all the parent merges.
        ojson j;
        j["schema"] = "hetsim.measured";
        j["uninstrumented_end_to_end_ns"] = ojson::array({ns_json(m.uninstrumented_ns.at(0))});
        if (prog.warmup) j["uninstrumented_measured_from_ns"] = ns_json(m.plain.at(0).measured_from_ns);
        j["uninstrumented_ops"] = plain_ops_json(prog, m.plain.at(0));
        j["warnings"] = ojson::array();
        for (const auto& w : m.warnings) j["warnings"].push_back(w);
        write_atomically(opt.out_path, j.dump() + "\n");
        std::fflush(stderr);
        std::_Exit(0);
    }
    ojson out = measured_json(prog, plan, opt, m);
    if (opt.plain_elsewhere) {
        for (const char* k : {"uninstrumented_end_to_end_ns", "uninstrumented_median_run", "uninstrumented_measured_from_ns", "uninstrumented_ops"})
            if (plain.contains(k)) out[k] = plain[k];
        for (const auto& w : plain["warnings"]) {
            const std::string t = "uninstrumented runs: " + w.get<std::string>();
            out["warnings"].push_back(t);
            m.warnings.push_back(t);
        }
        out["metadata"]["uninstrumented_process"] =
            "a child process that never loaded CUPTI (the runner re-executed itself before touching CUDA): " + std::to_string(opt.warmup) +
            " uninstrumented warm-ups, then the " + std::to_string(opt.runs) + " uninstrumented runs";
    }
    std::string text = out.dump(2) + "\n";
    write_atomically(opt.out_path, text);
    std::fprintf(stderr, "hetsim-runner: %s: %d timed runs (%s), median end to end %.3f us; wrote %s\n", plan.scenario.c_str(), opt.runs,
                 m.timing.c_str(), [&] {
                     std::vector<double> e;
                     for (const auto& r : m.timed) e.push_back(r.end_to_end_ns);
                     std::sort(e.begin(), e.end());
                     return e[(e.size() - 1) / 2] / 1000.0;
                 }(),
                 opt.out_path.c_str());
    for (const auto& w : m.warnings) std::fprintf(stderr, "hetsim-runner: warning: %s\n", w.c_str());
    // Leave without static teardown: freeing gigabytes of pinned memory and unloading CUPTI at
    // exit take time and add nothing; the output is written and closed.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(0);
}
