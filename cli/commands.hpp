// Subcommands of the `hetsim` executable. Each returns the process exit code:
// 0 success, 1 a check failed (e.g. compare --max-error), 2 bad input.
#pragma once
#include <boost/program_options/errors.hpp>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <string>
#include <vector>

#include "frontend/scenario.hpp"

namespace hetsim::cli {

// `--set name=value` options, --max-ops and --max-memory (empty: the default) as LoadOptions; a
// malformed --set or --max-memory is an InputError.
LoadOptions load_options(const std::vector<std::string>& sets, uint64_t max_ops, const std::string& max_memory = {});
// `--set name=value` arguments as (name, value) pairs: one without '=' or a name, or a second of
// one name, is an InputError at the argument; `example` ends the first message ("e.g. --set ...").
std::vector<std::pair<std::string, std::string>> parse_set_args(const std::vector<std::string>& sets, const std::string& example);


// A whole number in [lo, hi] given to `option` ("--max-ops"), or InputError({option}, ...): boost
// would read "-5" as 2^64 - 5.
uint64_t parse_count(const std::string& option, const std::string& text, uint64_t lo, uint64_t hi);
// An option parser's error, with "; did you mean '--no-suggest'?" for a long option that is
// not one of `d`'s but near one (cli/options.cpp).
std::string option_error(const boost::program_options::error& e, const boost::program_options::options_description& d);

// An option of `d` given on the command line with an empty value (--trace "", --time-limit "",
// --shard ""): an InputError at the option ("-o" where it has a short name), not the option's absence.
void reject_empty_values(const boost::program_options::variables_map& vm, const boost::program_options::options_description& d);

constexpr uint64_t kMaxOpsLimit = uint64_t{1} << 40;  // the largest --max-ops

int run_main(const std::vector<std::string>& args);    // hetsim run FILE [options]
int graph_main(const std::vector<std::string>& args);  // hetsim graph FILE
int lower_main(const std::vector<std::string>& args);  // hetsim lower FILE -o program.json
int validate_main(const std::vector<std::string>& args);  // hetsim validate MEASUREMENT_DIR...
int params_main(const std::vector<std::string>& args); // hetsim params
int calc_main(const std::vector<std::string>& args);   // hetsim calc stage|overlap|offload|evidence
int sweep_main(const std::vector<std::string>& args); int sweep_merge_main(const std::vector<std::string>& args);  // hetsim sweep FILE --vary ..., hetsim sweep-merge SHARDS...
int compare_main(const std::vector<std::string>& args); // hetsim compare SCENARIO MEASURED.json
int calibrate_main(const std::vector<std::string>& args); // hetsim calibrate MICROBENCH.json ... -o OUT.yaml
int import_main(const std::vector<std::string>& args);  // hetsim import TRACE.json [-o workload.yaml]

}  // namespace hetsim::cli
