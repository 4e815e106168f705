// hetsim-runner: executes a lowered program on the GPU and times it.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "plan.hpp"

namespace runner {

enum class TimingRequest { Auto, Cupti, Events };

struct Options {
    std::string program_path, out_path, command_line;
    int runs = 5;
    int warmup = 2;
    TimingRequest timing = TimingRequest::Auto;
    double time_limit_s = 120;
    bool check = false, verbose = false;
    double peak_flops = 6.7e13;     // kernel.peak_flops of the h200 profile
    std::string cupti_lib;          // explicit libcupti path
    bool emulate_registers = true;  // shared-memory padding so that residency matches `registers`
    // Cold start (options.cold_start): the parent re-executes the runner once per measured run;
    // a child gets --cold-child instrumented|plain and makes exactly one run of that kind, no warm-up.
    int cold_child = 0;  // 0: not a child, 1: one instrumented run, 2: one uninstrumented run
    // The uninstrumented runs are made by a child process that never loads CUPTI (a process that
    // has had CUPTI attached stays slower: graph instantiation and launches 6-27% on the H200).
    // plain_child: this process is that child (warm-ups and runs, all uninstrumented);
    // plain_elsewhere: this process is the parent (instrumented runs only).
    bool plain_child = false, plain_elsewhere = false;
};

constexpr double kAbsent = NAN;

// One op of one run, ns from time zero; NaN where absent.
struct OpTimes {
    double host_start = kAbsent, host_end = kAbsent;    // host phase (threads, host tasks)
    double gpu_start = kAbsent, gpu_end = kAbsent;      // GPU phase
    double issue_start = kAbsent, issue_end = kAbsent;  // tasks form: the issuing call of a GPU task
};

struct RunResult {
    std::vector<OpTimes> ops;  // every run: host stamps; instrumented runs also GPU times
    // Steady state (Program::warmup > 0): the release of the last barrier between iterations, from
    // time zero; the end-to-end times below are windows from it (0 without warm-up iterations).
    double measured_from_ns = 0;
    double end_to_end_ns = 0;  // instrumented: max over ops of host_end, gpu_end (less measured_from_ns)
    double end_to_end_sync_ns = 0;  // last thread done after its final cudaDeviceSynchronize (less measured_from_ns)
};

struct Measurement {
    std::vector<RunResult> timed;
    std::vector<double> uninstrumented_ns;  // end_to_end_sync_ns of each uninstrumented run
    std::vector<RunResult> plain;           // the uninstrumented runs (host stamps only)
    // Metadata.
    std::string gpu, driver_release, timing, timing_note, register_emulation, cupti_library, clock_note;
    int driver_version = 0, runtime_version = 0, sm_count = 0, cc_major = 0, cc_minor = 0;
    uint32_t cupti_version = 0;
    bool cupti_runtime_records = false, cupti_steady_timestamps = false, wait_value = false;
    int warmup_done = 0;
    double clock_uncertainty_ns = 0;
    std::vector<std::string> warnings;
};

// Runs the warm-ups, the timed instrumented runs and the uninstrumented runs. Exits the process
// on CUDA errors (code 1), on programs that do not fit the device (code 2) and from the watchdog.
Measurement execute(const Program& p, const Plan& plan, const Options& opt);

// Aborts the process with a message naming the phase and the op each thread is executing when
// it runs past `seconds`. Started by main before any CUDA work.
void start_watchdog(double seconds);

// The cold-start child being waited for (killed by the watchdog); 0 when none.
void set_watched_child(int pid);

}  // namespace runner
