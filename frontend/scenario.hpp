// Scenario file -> (hardware profile, lowered Program). Parsing, validation and lowering
// (loop expansion, name binding, units) happen here; nothing here simulates.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "frontend/limits.hpp"
#include "models/profile.hpp"
#include "core/program.hpp"

namespace YAML {
class Node;
}

namespace hetsim {

struct LoadOptions {
    // `--set name=value`: a scenario param, or `hardware.<key>` for a profile parameter.
    std::vector<std::pair<std::string, std::string>> sets;
    uint64_t max_ops = 20'000'000;  // cap on expanded ops, checked while expanding
    // Cap on the estimated memory of the run (frontend/limits.hpp), checked while expanding; 0: none.
    uint64_t max_memory = default_max_memory();
    uint64_t run_bytes_per_op = kRunBytesPerOp;  // kJsonRunBytesPerOp when a JSON document of all ops is built
};

// A param the file declares as a design knob (`knobs:`), with the values to try (as written,
// each applied like `--set name=value`). The diagnosis simulates them (sweep/suggest).
struct Knob {
    std::string name;
    std::vector<std::string> values;
    SourceLoc loc;
};

struct Scenario {
    std::string name;
    std::vector<Knob> knobs;
    HwProfile profile;
    Program program;
    std::vector<std::string> profile_files;  // the profile files read: the profile, its base, ...
};

Scenario load_scenario(const std::string& path, const LoadOptions& opts = {});
Scenario load_scenario_text(const std::string& yaml, const std::string& file, const LoadOptions& opts = {});
// The same from YAML already parsed from `yaml` (a sweep parses its scenario once per worker
// and lowers it for every point); `root` is only read.
Scenario load_scenario_node(const YAML::Node& root, const std::string& yaml, const std::string& file,
                            const LoadOptions& opts = {});

}  // namespace hetsim
