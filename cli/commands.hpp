// Subcommands of the `hetsim` executable. Each returns the process exit code:
// 0 success, 1 a check failed (e.g. compare --max-error), 2 bad input.
#pragma once
#include <string>
#include <vector>

namespace hetsim::cli {

int run_main(const std::vector<std::string>& args);    // hetsim run FILE [options]
int graph_main(const std::vector<std::string>& args);  // hetsim graph FILE
int lower_main(const std::vector<std::string>& args);  // hetsim lower FILE -o program.json
int params_main(const std::vector<std::string>& args); // hetsim params
int calc_main(const std::vector<std::string>& args);   // hetsim calc stage|overlap|offload|evidence

}  // namespace hetsim::cli
