// `hetsim calc stage|overlap|offload|evidence`: the seed page's closed-form calculators
// (models/calculators.hpp). Without value flags a calculator prints the seed page's own
// examples; with flags it computes that one case. Output is text or JSON and byte-identical
// across runs. Every error prints one line `hetsim calc: error: <message>` and returns 2.
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <system_error>
#include <variant>
#include <vector>

#include "cli/commands.hpp"
#include "frontend/expr.hpp"
#include "models/calculators.hpp"

namespace hetsim::cli {

namespace {

namespace po = boost::program_options;
using hetsim::calc::CalcError;
using hetsim::calc::format_number;

const char* const kUsage =
    "usage: hetsim calc <calculator> [flags] [--format text|json]\n"
    "\n"
    "Closed-form estimates from the seed page \"CPU GPU Heterogeneous Scheduling\".\n"
    "Calculators:\n"
    "  stage     CPU time of a stage versus GPU compute plus a serial round-trip transfer\n"
    "  overlap   serial versus dependency-limited overlapped copy and compute\n"
    "  offload   transfer volume and exposed time per step of CPU-offloaded state\n"
    "  evidence  speedup, time saved and active/sync fractions of a candidate timeline\n"
    "\n"
    "With no value flags a calculator prints the seed page's own examples. A value is a plain\n"
    "number in the flag's unit (--copy-ms 3.5) or has a unit as in scenario files (--copy-ms\n"
    "3.5ms, --input-bytes 64MiB, --bandwidth-gbps 16GB/s, --state-gb 4GiB).\n"
    "Run 'hetsim calc <calculator> --help' for its flags.\n";

// One printed quantity: name, value and unit ("" when dimensionless).
struct Field {
    std::string key;
    std::variant<double, std::int64_t, std::string> value;
    std::string unit;
};

struct Case {
    std::string label;  // "seed example: small stage" or "from flags"
    std::vector<Field> inputs;
    std::vector<Field> results;
};

std::string value_text(const Field& f) {
    if (const auto* d = std::get_if<double>(&f.value)) return format_number(*d);
    if (const auto* i = std::get_if<std::int64_t>(&f.value)) return std::to_string(*i);
    return std::get<std::string>(f.value);
}

// Doubles go to JSON through their fixed text form, so JSON shows 8.1 rather than 8.100000000000001.
nlohmann::ordered_json value_json(const Field& f) {
    if (const auto* d = std::get_if<double>(&f.value)) {
        const std::string s = format_number(*d);
        double rounded = 0;
        std::from_chars(s.data(), s.data() + s.size(), rounded);
        return rounded;
    }
    if (const auto* i = std::get_if<std::int64_t>(&f.value)) return *i;
    return std::get<std::string>(f.value);
}

void print_text(const std::vector<Case>& cases, std::ostream& out) {
    bool first = true;
    for (const Case& c : cases) {
        if (!first) out << '\n';
        first = false;
        std::size_t key_w = 0, val_w = 0;
        for (const auto* group : {&c.inputs, &c.results}) {
            for (const Field& f : *group) {
                key_w = std::max(key_w, f.key.size());
                val_w = std::max(val_w, value_text(f).size());
            }
        }
        out << c.label << '\n';
        auto section = [&](const char* title, const std::vector<Field>& fields) {
            out << "  " << title << '\n';
            for (const Field& f : fields) {
                const std::string v = value_text(f);
                std::string line = "    " + f.key + std::string(key_w - f.key.size() + 2, ' ') +
                                   std::string(val_w - v.size(), ' ') + v;
                if (!f.unit.empty()) line += "  " + f.unit;
                out << line << '\n';
            }
        };
        section("inputs", c.inputs);
        section("results", c.results);
    }
}

void print_json(const std::string& calculator, const std::vector<Case>& cases, std::ostream& out) {
    auto one = [&](const Case& c) {
        nlohmann::ordered_json j;
        j["calculator"] = calculator;
        j["label"] = c.label;
        nlohmann::ordered_json in = nlohmann::ordered_json::object();
        for (const Field& f : c.inputs) in[f.key] = value_json(f);
        nlohmann::ordered_json res = nlohmann::ordered_json::object();
        for (const Field& f : c.results) res[f.key] = value_json(f);
        j["inputs"] = std::move(in);
        j["results"] = std::move(res);
        return j;
    };
    nlohmann::ordered_json doc;
    if (cases.size() == 1) {
        doc = one(cases.front());
    } else {
        doc = nlohmann::ordered_json::array();
        for (const Case& c : cases) doc.push_back(one(c));
    }
    out << doc.dump(2) << '\n';
}

// --- parsing flag values -----------------------------------------------------------------

// The unit a value flag is given in, from its name: "-ms" a time in ms, "-bytes" a size in
// bytes, "-gbps" a bandwidth in decimal GB/s, "-gb" a size in decimal GB; others plain numbers.
struct FlagUnit {
    Dim dim;
    double per_unit;   // base units (ps, bytes, bytes/s) per flag unit
    const char* name;  // "ms", "bytes", ...
};
FlagUnit flag_unit(const std::string& flag) {
    auto ends = [&](const char* suf) {
        const std::string s(suf);
        return flag.size() >= s.size() && flag.compare(flag.size() - s.size(), s.size(), s) == 0;
    };
    if (ends("-ms")) return {Dim::Time, 1e9, "ms"};
    if (ends("-bytes")) return {Dim::Bytes, 1, "bytes"};
    if (ends("-gbps")) return {Dim::Bandwidth, 1e9, "GB/s"};
    if (ends("-gb")) return {Dim::Bytes, 1e9, "GB"};
    return {Dim::None, 1, ""};
}

// A plain number in the flag's unit, or a value with a unit as scenario files write them
// ("3.5ms", "64MiB", "16GB/s", "4GB"), converted to the flag's unit.
double parse_number(const std::string& flag, const std::string& text) {
    const char* b = text.data();
    const char* e = text.data() + text.size();
    if (b != e && *b == '+') ++b;
    double v = 0;
    const auto [ptr, ec] = std::from_chars(b, e, v);
    if (b != e && ec == std::errc() && ptr == e) return v;
    const FlagUnit u = flag_unit(flag);
    const std::string want = u.dim == Dim::Time ? "a time such as 3.5ms, or a number of ms"
                             : u.dim == Dim::Bandwidth ? "a bandwidth such as 16GB/s, or a number of GB/s"
                             : u.dim == Dim::Bytes ? std::string("a size such as 64MiB, or a number of ") + u.name
                                                   : std::string("a number");
    Value val;
    try {
        val = parse_literal(text);
    } catch (const std::exception&) {
        throw CalcError("--" + flag + " expects " + want + ", got '" + text + "'");
    }
    if (u.dim == Dim::None || val.dim != u.dim)
        throw CalcError("--" + flag + " expects " + want + ", got '" + text + "'" +
                        (val.dim != Dim::None ? std::string(" (a ") + to_string(val.dim) + ")" : std::string()));
    return val.as_double() / u.per_unit;
}

std::int64_t parse_count(const std::string& flag, const std::string& text) {
    const char* b = text.data();
    const char* e = text.data() + text.size();
    if (b != e && *b == '+') ++b;
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(b, e, v);
    if (b == e || ec != std::errc() || ptr != e) {
        throw CalcError("--" + flag + " expects a non-negative integer (round trips per step), got '" +
                        text + "'");
    }
    return v;
}

// --- the four calculators ------------------------------------------------------------------

struct Flag {
    const char* name;
    const char* value_name;
    const char* help;
};

Case stage_case(std::string label, double cpu, double gpu, double in, double out, double bw,
                double fixed) {
    const auto r = hetsim::calc::stage_placement(cpu, gpu, in, out, bw, fixed);
    return {std::move(label),
            {{"cpu_ms", cpu, "ms"},
             {"gpu_ms", gpu, "ms"},
             {"input_bytes", in, "B"},
             {"output_bytes", out, "B"},
             {"bandwidth_gbps", bw, "GB/s"},
             {"fixed_ms", fixed, "ms"}},
            {{"cpu_path_ms", r.cpu_path_ms, "ms"},
             {"gpu_compute_ms", r.gpu_compute_ms, "ms"},
             {"transfer_ms", r.transfer_ms, "ms"},
             {"gpu_path_ms", r.gpu_path_ms, "ms"},
             {"shorter", r.shorter, ""}}};
}

Case overlap_case(std::string label, double copy, double compute, double dep) {
    const auto r = hetsim::calc::overlap_timeline(copy, compute, dep);
    return {std::move(label),
            {{"copy_ms", copy, "ms"}, {"compute_ms", compute, "ms"}, {"dependency_ms", dep, "ms"}},
            {{"serial_ms", r.serial_ms, "ms"},
             {"elapsed_ms", r.elapsed_ms, "ms"},
             {"hidden_ms", r.hidden_ms, "ms"}}};
}

Case offload_case(std::string label, double state, double bw, std::int64_t trips, double ratio) {
    const auto r = hetsim::calc::offload_ledger(state, bw, trips, ratio);
    return {std::move(label),
            {{"state_gb", state, "GB"},
             {"bandwidth_gbps", bw, "GB/s"},
             {"round_trips", trips, "per step"},
             {"overlap_ratio", ratio, ""}},
            {{"offloaded_state_gb", r.offloaded_state_gb, "GB"},
             {"transfer_gb_per_step", r.transfer_gb_per_step, "GB/step"},
             {"transfer_ms", r.transfer_ms, "ms/step"},
             {"estimated_exposed_ms", r.estimated_exposed_ms, "ms/step"}}};
}

Case evidence_case(std::string label, double serial, double elapsed, double active, double sync) {
    const auto r = hetsim::calc::parallelism_evidence(serial, elapsed, active, sync);
    return {std::move(label),
            {{"serial_ms", serial, "ms"},
             {"elapsed_ms", elapsed, "ms"},
             {"gpu_active_ms", active, "ms"},
             {"exposed_sync_ms", sync, "ms"}},
            {{"speedup", r.speedup, "x"},
             {"elapsed_saved_ms", r.elapsed_saved_ms, "ms"},
             {"active_time_fraction", r.active_time_fraction, "of elapsed"},
             {"exposed_sync_fraction", r.exposed_sync_fraction, "of elapsed"}}};
}

struct Calculator {
    const char* name;
    const char* summary;
    std::vector<Flag> flags;
};

const std::vector<Calculator>& calculators() {
    static const std::vector<Calculator> all = {
        {"stage",
         "Compare a stage kept on the CPU with GPU compute plus a serial round trip of its input\n"
         "and output bytes at one bandwidth plus a fixed overhead.",
         {{"cpu-ms", "MS", "stage time on the CPU, ms (required)"},
          {"gpu-ms", "MS", "stage compute time on the GPU, ms (required)"},
          {"input-bytes", "BYTES", "bytes copied host to device (required)"},
          {"output-bytes", "BYTES", "bytes copied device to host (required)"},
          {"bandwidth-gbps", "GBPS", "effective bandwidth both ways, decimal GB/s (required)"},
          {"fixed-ms", "MS", "fixed overhead of the round trip, ms (default 0)"}}},
        {"overlap",
         "Serial copy + compute versus ideal overlap where the compute first waits for a copy\n"
         "prefix of --dependency-ms.",
         {{"copy-ms", "MS", "total copy time, ms (required)"},
          {"compute-ms", "MS", "compute time, ms (required)"},
          {"dependency-ms", "MS", "copy prefix the compute waits for, ms, <= --copy-ms (default 0)"}}},
        {"offload",
         "Transfer volume and exposed time per step of state offloaded to the CPU; one round\n"
         "trip moves the state twice.",
         {{"state-gb", "GB", "offloaded state size, decimal GB (required)"},
          {"bandwidth-gbps", "GBPS", "effective bandwidth, decimal GB/s (required)"},
          {"round-trips", "N", "round trips per step, non-negative integer (default 1)"},
          {"overlap-ratio", "R", "assumed hidden fraction of the transfer, in [0, 1] (default 0)"}}},
        {"evidence",
         "Speedup, time saved and time fractions of a candidate timeline against the serial run\n"
         "of the same workload. The active fraction is time coverage, not hardware utilisation.",
         {{"serial-ms", "MS", "serial run time, ms (required)"},
          {"elapsed-ms", "MS", "candidate completion time = observed window, ms (required)"},
          {"gpu-active-ms", "MS", "union of GPU-active intervals, ms (required)"},
          {"exposed-sync-ms", "MS", "exposed sync wait, disjoint from the active time, ms (required)"}}},
    };
    return all;
}

std::vector<Case> seed_examples(const std::string& name) {
    const std::string p = "seed example: ";
    if (name == "stage") {
        return {stage_case(p + "small stage", 2.0, 0.4, 64e6, 64e6, 16.0, 0.1),
                stage_case(p + "large stage", 100.0, 8.0, 64e6, 64e6, 16.0, 0.1)};
    }
    if (name == "overlap") {
        return {overlap_case(p + "full overlap", 8.0, 20.0, 0.0),
                overlap_case(p + "dependency-limited", 8.0, 20.0, 5.0),
                overlap_case(p + "compute waits for the whole copy", 8.0, 20.0, 8.0)};
    }
    if (name == "offload") return {offload_case(p + "offload ledger", 4.0, 32.0, 1, 0.75)};
    return {evidence_case(p + "elapsed time shorter", 30.0, 20.0, 18.0, 1.0),
            evidence_case(p + "elapsed time longer", 30.0, 32.0, 18.0, 8.0)};
}

// Builds the one case described by the value flags in `vm`. Every given value is parsed first
// (so a malformed number is reported before a missing flag); missing optional flags take the
// seed functions' defaults.
Case flag_case(const Calculator& calc, const po::variables_map& vm) {
    const std::string name = calc.name;
    std::map<std::string, double> number;
    std::optional<std::int64_t> trips;
    for (const Flag& f : calc.flags) {
        if (!vm.count(f.name)) continue;
        const std::string& text = vm[f.name].as<std::string>();
        if (std::string(f.name) == "round-trips") {
            trips = parse_count(f.name, text);
        } else {
            number[f.name] = parse_number(f.name, text);
        }
    }
    auto required = [&](const char* flag) {
        const auto it = number.find(flag);
        if (it == number.end()) {
            throw CalcError("missing --" + std::string(flag) + " (required by 'calc " + name +
                            "' when any value flag is given; see --help)");
        }
        return it->second;
    };
    auto optional = [&](const char* flag, double def) {
        const auto it = number.find(flag);
        return it == number.end() ? def : it->second;
    };
    const std::string label = "from flags";
    if (name == "stage") {
        const double cpu = required("cpu-ms"), gpu = required("gpu-ms");
        const double in = required("input-bytes"), out = required("output-bytes");
        const double bw = required("bandwidth-gbps"), fixed = optional("fixed-ms", 0.0);
        return stage_case(label, cpu, gpu, in, out, bw, fixed);
    }
    if (name == "overlap") {
        const double copy = required("copy-ms"), compute = required("compute-ms");
        const double dep = optional("dependency-ms", 0.0);
        return overlap_case(label, copy, compute, dep);
    }
    if (name == "offload") {
        const double state = required("state-gb"), bw = required("bandwidth-gbps");
        const double ratio = optional("overlap-ratio", 0.0);
        return offload_case(label, state, bw, trips.value_or(1), ratio);
    }
    const double serial = required("serial-ms"), elapsed = required("elapsed-ms");
    const double active = required("gpu-active-ms"), sync = required("exposed-sync-ms");
    return evidence_case(label, serial, elapsed, active, sync);
}

void print_help(const Calculator& calc, std::ostream& out) {
    out << "usage: hetsim calc " << calc.name << " [flags] [--format text|json]\n\n"
        << calc.summary << "\n\nWith no value flags it prints the seed page's examples.\n\nFlags:\n";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const Flag& f : calc.flags) {
        rows.emplace_back(std::string("--") + f.name + " " + f.value_name, f.help);
    }
    rows.emplace_back("--format text|json", "output format (default text)");
    rows.emplace_back("-h, --help", "show this help");
    std::size_t width = 0;
    for (const auto& row : rows) width = std::max(width, row.first.size());
    for (const auto& [flag, help] : rows) {
        out << "  " << flag << std::string(width - flag.size() + 2, ' ') << help << '\n';
    }
}

std::string one_line(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

int fail(const std::string& message) {
    std::cerr << "hetsim calc: error: " << one_line(message) << '\n';
    return 2;
}

}  // namespace

int calc_main(const std::vector<std::string>& args) {
    if (args.empty()) {
        std::cerr << kUsage;
        return 2;
    }
    const std::string& name = args.front();
    if (name == "-h" || name == "--help" || name == "help") {
        std::cout << kUsage;
        return 0;
    }
    const auto& all = calculators();
    const auto calc = std::find_if(all.begin(), all.end(),
                                   [&](const Calculator& c) { return name == c.name; });
    if (calc == all.end()) {
        return fail("unknown calculator '" + name +
                    "'; expected one of: stage, overlap, offload, evidence");
    }

    po::options_description desc;
    auto add = desc.add_options();
    for (const Flag& f : calc->flags) add(f.name, po::value<std::string>()->value_name(f.value_name), f.help);
    add("format", po::value<std::string>()->value_name("FMT")->default_value("text"),
        "output format: text or json");
    add("help,h", "show this help");

    try {
        const std::vector<std::string> rest(args.begin() + 1, args.end());
        const po::positional_options_description no_positionals;
        po::variables_map vm;
        const int style = po::command_line_style::default_style &
                          ~po::command_line_style::allow_guessing;
        po::store(po::command_line_parser(rest).options(desc).positional(no_positionals)
                      .style(style).run(),
                  vm);
        po::notify(vm);

        if (vm.count("help")) {
            print_help(*calc, std::cout);
            return 0;
        }
        const std::string format = vm["format"].as<std::string>();
        if (format != "text" && format != "json") {
            throw CalcError("--format must be text or json, got '" + format + "'");
        }
        const bool any_value = std::any_of(calc->flags.begin(), calc->flags.end(),
                                           [&](const Flag& f) { return vm.count(f.name) > 0; });
        const std::vector<Case> cases =
            any_value ? std::vector<Case>{flag_case(*calc, vm)} : seed_examples(name);
        if (format == "json") {
            print_json(name, cases, std::cout);
        } else {
            print_text(cases, std::cout);
        }
        std::cout.flush();
        return 0;
    } catch (const po::error& e) {
        return fail(option_error(e, desc) + " (see 'hetsim calc " + name + " --help')");
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}

}  // namespace hetsim::cli
