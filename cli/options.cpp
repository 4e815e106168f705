// Messages for command-line option errors shared by the subcommands.
#include <boost/program_options.hpp>

#include "cli/commands.hpp"
#include "frontend/yaml_util.hpp"

namespace hetsim::cli {

std::string option_error(const boost::program_options::error& e, const boost::program_options::options_description& d) {
    std::string msg = e.what();
    const auto* unknown = dynamic_cast<const boost::program_options::unknown_option*>(&e);
    if (!unknown) return msg;
    const std::string given = unknown->get_option_name();
    if (given.rfind("--", 0) != 0) return msg;  // a short option: too short to guess from
    std::vector<std::string> names;
    for (const auto& o : d.options())
        if (!o->long_name().empty()) names.push_back("--" + o->long_name());
    const std::string near = did_you_mean(given, names);
    return near.empty() ? msg : msg + "; did you mean '" + near + "'?";
}

}  // namespace hetsim::cli
