// `hetsim calibrate`: fit hardware-profile parameters from the raw samples of hetsim-microbench
// (validation/microbench, schema hetsim.microbench v1) and write a complete profile.
// Recipes per parameter: validation/microbench/README.md; the model: docs/model.md.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frontend/limits.hpp"

namespace hetsim::calib {

struct MicrobenchFile {
    std::string path;  // as given on the command line
    nlohmann::json doc;
};

// Reads and checks one microbench file (JSON, schema, version); throws InputError.
MicrobenchFile load_microbench(const std::string& path, uint64_t max_memory = default_max_memory());

struct Fitted {
    std::string key;
    std::string value;     // literal with its unit, exact in the parser's integer units
    std::string source;    // "fit: <benchmark> <recipe>, N samples, <inputs>"
    std::string fit;       // method, e.g. "linear least squares, sizes >= 16 MiB"
    std::string residual;  // RMS residual with a unit; "" for values read directly
    size_t samples = 0;
};

struct Calibration {
    std::vector<Fitted> params;       // fitted parameters
    std::vector<std::string> checks;  // cross-checks and notes, one line each
    const Fitted* find(const std::string& key) const;
};

// Fits every parameter the benchmarks inform, pooling the samples of all files. Throws
// InputError on a missing benchmark, a malformed or non-finite sample, or a fit without enough
// points.
Calibration calibrate(const std::vector<MicrobenchFile>& files);

struct BaseEntry {
    std::string key, value, source, status, residual, fit;  // texts as in the file ("" = absent)
};
struct BaseProfile {
    std::string path, name, description;
    std::vector<BaseEntry> params;  // in file order
    const BaseEntry* find(const std::string& key) const;
};

// Reads a profile file (checked with load_profile first) keeping every entry's texts; a profile
// with `base:` gets the entries of its bases, replaced by its own.
BaseProfile read_base_profile(const std::string& path);

// The complete profile: a header naming the command line and the inputs, then every parameter
// in the base's order, fitted ones replaced. Deterministic.
std::string render_profile(const BaseProfile& base, const Calibration& cal, const std::vector<MicrobenchFile>& files,
                           const std::string& command_line);

// Literal formatting (exact: the parser reads back the same integer).
std::string format_time_literal(int64_t ps);          // "2.599527us", "0us", "1.5ms"
std::string format_bandwidth_literal(uint64_t bps);   // "55.51672GB/s", "4.495804TB/s"
std::string format_size_literal(uint64_t bytes);      // "228KiB", "143155.9375MiB", "1000B"
// Rounds a bandwidth to 7 significant digits (the precision written to profiles).
uint64_t round_bandwidth(double bytes_per_s);

}  // namespace hetsim::calib
