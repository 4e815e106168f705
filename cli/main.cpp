// hetsim: predict CPU-GPU timelines from scenario files.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "sim/engine.hpp"
#include "core/error.hpp"
#include "frontend/yaml_util.hpp"

namespace {

const char* kUsage =
    "usage: hetsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run FILE        simulate a scenario: summary, --format json, --trace, --csv\n"
    "  graph FILE      print the scenario's dependency graph as Graphviz DOT\n"
    "  lower FILE      write the lowered program (JSON) that the GPU runner executes\n"
    "  compare FILE M  simulate FILE and compare with M, a measured timeline (hetsim-runner or a Kineto trace)\n"
    "  import TRACE    a PyTorch profiler (Kineto) trace as a scenario with what-if knobs (-o FILE)\n"
    "  validate DIR... prediction error against committed GPU measurements\n"
    "  calc NAME       the seed calculators: stage, overlap, offload, evidence\n"
    "  calibrate M...  fit a hardware profile from hetsim-microbench samples (-o OUT.yaml)\n"
    "  sweep FILE      run FILE over --vary values in parallel: CSV, plots, shards (sweep-merge joins them)\n"
    "  sweep-merge F...  join the shards' CSVs (sweep --shard) into one (-o FILE)\n"
    "  params [P]      the hardware-profile parameters (unit, default, range), or profile P's values\n"
    "  test            (launcher script) build and run the test suite\n"
    "\n"
    "`hetsim <command> --help` shows a command's options.\n";

}  // namespace

// An error is one line a person reads: a message that echoes a huge input (a 100 KB number, a
// cycle of 300,000 names) keeps its start and its end (the advice), cut at UTF-8 boundaries.
static std::string one_line_of_bounded_length(const std::string& m) {
    constexpr size_t kHead = 1200, kTail = 600;
    if (m.size() <= kHead + kTail + 100) return m;
    size_t head = kHead, tail = m.size() - kTail;
    while (head > 0 && (static_cast<unsigned char>(m[head]) & 0xC0) == 0x80) --head;
    while (tail < m.size() && (static_cast<unsigned char>(m[tail]) & 0xC0) == 0x80) ++tail;
    return m.substr(0, head) + " [... " + std::to_string(tail - head) + " bytes left out ...] " + m.substr(tail);
}

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
        (args.empty() ? std::cerr : std::cout) << kUsage;
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version") {
        std::cout << "hetsim 0.1.0\n";
        return 0;
    }
    std::string cmd = args[0];
    std::vector<std::string> rest(args.begin() + 1, args.end());
    try {
        if (cmd == "run") return hetsim::cli::run_main(rest);
        if (cmd == "graph") return hetsim::cli::graph_main(rest);
        if (cmd == "calc") return hetsim::cli::calc_main(rest);
        if (cmd == "lower") return hetsim::cli::lower_main(rest);
        if (cmd == "validate") return hetsim::cli::validate_main(rest);
        if (cmd == "params") return hetsim::cli::params_main(rest);
        if (cmd == "sweep" || cmd == "sweep-merge") return cmd == "sweep" ? hetsim::cli::sweep_main(rest) : hetsim::cli::sweep_merge_main(rest);
        if (cmd == "compare") return hetsim::cli::compare_main(rest);
        if (cmd == "calibrate") return hetsim::cli::calibrate_main(rest);
        if (cmd == "import") return hetsim::cli::import_main(rest);
        // A near miss ('runn') names the command meant, on one line; anything else gets the usage.
        const std::string near = hetsim::did_you_mean(cmd, {"run", "graph", "lower", "compare", "import", "validate", "calc",
                                                             "calibrate", "sweep", "sweep-merge", "params", "test"});
        if (!near.empty()) {
            std::cerr << "hetsim: error: unknown command '" << cmd << "'; did you mean '" << near << "'?\n";
            return 2;
        }
        std::cerr << "hetsim: error: unknown command '" << cmd << "'\n" << kUsage;
        return 2;
    } catch (const hetsim::InputError& e) {
        std::cerr << one_line_of_bounded_length(hetsim::escape_controls(e.what())) << "\n";
        return 2;
    } catch (const hetsim::DeadlockError& e) {
        std::cerr << "hetsim: error: " << e.what() << "\n";
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "hetsim: error: out of memory; lower --max-ops or simplify the scenario\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "hetsim: internal error: " << e.what() << "\n";
        return 3;
    }
}
