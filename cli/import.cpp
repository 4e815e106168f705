// `hetsim import TRACE.json [-o workload.yaml]`: a PyTorch profiler (Kineto) trace as a hetsim
// scenario with what-if knobs (docs/import.md).
#include <boost/program_options.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "frontend/expr.hpp"
#include "frontend/profile_loader.hpp"
#include "frontend/scenario.hpp"
#include "import/emit.hpp"
#include "import/kineto_trace.hpp"
#include "import/workload.hpp"
#include "cli/outputs.hpp"
#include "report/output_file.hpp"
#include "core/error.hpp"

namespace po = boost::program_options;

namespace hetsim::cli {

namespace {
const char* kImportUsage = "usage: hetsim import TRACE.json[.gz] [-o workload.yaml] [options]";
}

int import_main(const std::vector<std::string>& args) {
    std::string trace, out, hardware, span_ovh, call_ovh, kernel_exc, max_memory;
    int64_t legacy = 7;
    po::options_description d("import options");
    d.add_options()("help,h", "show this help")
        ("output,o", po::value(&out), "write the scenario here (default: stdout)")
        ("hardware", po::value(&hardware), "hardware profile of the scenario (default: from the trace's device name; h200)")
        ("legacy-stream", po::value(&legacy)->default_value(legacy), "the trace's stream id of the legacy default stream")
        ("span-overhead", po::value(&span_ovh), "the profiler's cost per start or end of a recorded cpu_op / user_annotation span, taken out of the host work (default: the measured one, docs/import.md; 0: none)")
        ("call-overhead", po::value(&call_ovh), "the profiler's cost per start or end of a CUDA call, taken out of the host work (default: the measured one; 0: none)")
        ("kernel-excess", po::value(&kernel_exc), "how much longer CUPTI's kernel record is than the kernel's blocks, taken off each kernel's traced duration (default: the measured one, docs/import.md; 0: none)")
        ("max-memory", po::value(&max_memory), "cap on the memory reading the trace may take, e.g. 8GiB (default: 3/4 of this machine's memory; 0: none)");
    po::options_description all;
    all.add(d).add_options()("trace", po::value(&trace));
    po::positional_options_description pos;
    pos.add("trace", 1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
        po::notify(vm);
        reject_empty_values(vm, d);
    } catch (const po::error& e) {
        std::cerr << "hetsim: error: " << option_error(e, all) << " (" << kImportUsage << "; --help lists the options)\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << kImportUsage << "\n"
                  << "Reads a torch.profiler Chrome trace (export_chrome_trace) and writes a scenario that replays its\n"
                     "profiled steps: measured kernels, copies and host work; modelled CUDA call costs; what-if params.\n"
                  << "exit status: 0 written, 2 bad input\n"
                  << d;
        return 0;
    }
    if (trace.empty()) {
        std::cerr << "hetsim: error: no trace file given (" << kImportUsage << ")\n";
        return 2;
    }
    import::ImportOptions io;
    io.profile = hardware;
    io.legacy_stream = legacy;
    auto overhead = [](const std::string& text, const char* opt) -> int64_t {
        Value v;
        try {
            v = parse_literal(text);
        } catch (const std::exception& e) {
            throw InputError({opt}, e.what());
        }
        if (v.dim == Dim::None && v.as_double() == 0) return 0;  // a plain 0: no correction
        if (v.dim != Dim::Time || v.i < 0)
            throw InputError({opt}, "expected a time of 0 or more such as 0.4us, got '" + text + "'");
        return (v.i + 500) / 1000;  // ps -> ns
    };
    if (!span_ovh.empty()) io.span_overhead = overhead(span_ovh, "--span-overhead");
    if (!call_ovh.empty()) io.call_overhead = overhead(call_ovh, "--call-overhead");
    if (!kernel_exc.empty()) io.kernel_excess = overhead(kernel_exc, "--kernel-excess");
    // Never over the trace or a profile file it reads (--hardware p.yaml -o p.yaml replaced the
    // profile with a scenario naming itself), nor a non-regular file: checked before any work.
    Outputs outs;
    outs.input(trace, "the profiler trace");
    if (!hardware.empty())  // a bad name is bad input here
        for (const ProfileFile& f : load_profile_sources(hardware, SourceLoc{"--hardware " + hardware}).files) outs.input(f.path, "a profile file");
    if (!out.empty() && out != "-") outs.declare("-o", out);
    const uint64_t cap = parse_max_memory(max_memory);
    const import::KinetoTrace t = import::read_kineto_trace(trace, cap);
    const import::Workload w = import::build_workload(t, io);

    import::EmitOptions eo;
    eo.source = trace;
    const LoadedProfile loaded = load_profile_sources(w.profile, SourceLoc{trace});
    for (const ProfileFile& f : loaded.files) outs.input(f.path, "a profile file");
    const HwProfile& prof = loaded.profile;
    import::check_kernels_fit(w, prof, trace);
    eo.pin_bandwidth = prof.pageable_h2d_warm_bw;
    eo.pin_bandwidth_from = "host.pageable_h2d_warm_bandwidth of " + w.profile + " at import time";
    const std::string yaml = import::write_scenario(w, eo);

    // The file must load as it is written.
    try {
        load_scenario_text(yaml, out.empty() ? "<imported>" : out);
    } catch (const InputError& e) {
        throw std::runtime_error(std::string("the imported scenario does not load: ") + e.what());
    }
    if (out.empty() || out == "-") {
        std::cout << yaml;
    } else {
        // Written whole or not at all (cli/outputs).
        outs.set("-o", yaml);
        outs.commit();
        size_t ops = 0;
        for (size_t k = 0; k < w.threads.size(); ++k) ops += w.repeat ? w.body_len[k] : 0;
        std::cerr << "hetsim import: wrote " << out << ": " << w.steps << " steps" << (w.repeat ? " (one repeated body of " + std::to_string(ops) + " ops)" : " (flat)")
                  << ", " << w.threads.size() << " host thread" << (w.threads.size() == 1 ? "" : "s") << "\n";
    }
    return 0;
}

}  // namespace hetsim::cli
