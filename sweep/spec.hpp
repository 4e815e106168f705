// What a sweep is: the scenario, the fixed `--set`s, the axes (`--vary NAME=VALUES`, one optional
// `--compare-param`), cartesian or zipped, and which points a shard runs. Pure data and parsing;
// running points is sweep_runner, the CSV is sweep_table, plots are sweep_plot.
//
// Value syntax of `--vary NAME=ITEM[,ITEM...]` (an item is a value or a range):
//   16GB/s,32GB/s        a list, each value passed to `--set NAME=value` as written
//   1..8                 1, 2, ..., 8 (step 1; dimensionless)
//   1..8+2               1, 3, 5, 7 (START..END+STEP; END is included when the steps land on it)
//   1ms..10ms+0.5ms      the step has the ends' unit
//   0..1+0.25            decimals are exact: 0, 0.25, 0.5, 0.75, 1
//   1MiB..1GiB*2         1MiB, 2MiB, 4MiB, ... 1024MiB (START..END*FACTOR, a whole FACTOR >= 2)
// Generated values keep the start's unit when they are whole multiples of it, else the largest
// unit of the same family that divides them (2.5ms -> 2500us).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hetsim::sweep {

using Sets = std::vector<std::pair<std::string, std::string>>;

struct Axis {
    std::string name;                 // a scenario param, or hardware.<profile key>
    std::vector<std::string> values;  // texts passed to --set, in sweep order
    bool log_scale = false;           // from a START..END*FACTOR range (plots use a log axis)
};

// Parses `--vary NAME=ITEM[,ITEM...]`. Throws InputError({"--vary <arg>"}, what is wrong).
// `option` names the flag in messages ("--vary" or "--compare-param").
Axis parse_vary(const std::string& arg, const std::string& option = "--vary");

// Expands one value list (the part after '='); throws std::invalid_argument with the reason.
std::vector<std::string> expand_values(const std::string& list, bool* log_scale = nullptr);

// Checks a hardware.<key> axis against the profile parameters (unknown key, wrong unit, out of
// range), value by value. Throws InputError naming the option and the value.
void check_hardware_axis(const Axis& a, const std::string& option);

struct Shard {
    uint64_t index = 0, count = 1;  // runs the points p with p % count == index
    bool active() const { return count > 1; }
    bool owns(uint64_t point) const { return point % count == index; }
    std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};
Shard parse_shard(const std::string& text);  // "i/N", 0 <= i < N; throws InputError

struct SweepDef {
    std::string scenario;       // path as given (informative: not part of the identity)
    std::string scenario_hash;  // FNV-1a 64 of the file's bytes, hex
    Sets sets;                  // fixed --set overrides, in command-line order
    std::vector<Axis> axes;     // --vary axes in order; the compare axis last when present
    bool has_compare = false;   // axes.back() came from --compare-param
    bool zip = false;           // --vary axes paired value by value (the compare axis stays cartesian)
    uint64_t max_ops = 0;
    uint64_t max_memory = 0;    // --max-memory for each point's run (0: none); not part of the identity
    // The scenario's host threads (as lowered at the first point): one utilisation column each.
    // Derived from the scenario, so not part of the definition.
    std::vector<std::string> host_threads;

    // Validates the shape (zip lengths, duplicate names, point-count cap); throws InputError.
    void check() const;
    uint64_t points() const;
    // Index of each axis's value at `point`. Cartesian: the first axis varies slowest.
    std::vector<size_t> coords(uint64_t point) const;
    // The --set list of one point: the fixed sets, then one per axis.
    Sets point_sets(uint64_t point) const;
    std::string describe_point(uint64_t point) const;  // "chunk=4MiB nstreams=2"
    // One line of canonical JSON; `identity_of` drops the path from one, for comparing two sweeps.
    std::string definition_json() const;
    static std::string identity_of(const std::string& definition_json);  // throws std::exception on bad JSON
    const Axis* axis(const std::string& name) const;
    int axis_index(const std::string& name) const;  // -1 when absent
};

std::string fnv1a_hex(const std::string& bytes);

// The number inside a value text, for plots: base units (ps, bytes, bytes/s, plain) as a
// double, and the dimension ("time", "size", "bandwidth", "number"). False when not a number.
bool numeric_value(const std::string& text, double* base, std::string* dim, std::string* unit = nullptr);
// Formats a base-unit quantity in `unit` ("GB/s", "ms", "" for plain numbers), 6 significant digits.
std::string format_in_unit(double base, const std::string& unit);

}  // namespace hetsim::sweep
