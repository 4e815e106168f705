// Messages for command-line option errors shared by the subcommands.
#include <boost/program_options.hpp>

#include "cli/commands.hpp"
#include "core/error.hpp"
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

void reject_empty_values(const boost::program_options::variables_map& vm, const boost::program_options::options_description& d) {
    for (const auto& o : d.options()) {
        const std::string& name = o->long_name();
        auto it = vm.find(name);
        if (name.empty() || it == vm.end() || it->second.defaulted() || o->semantic()->max_tokens() == 0) continue;  // not a flag
        // A list option (--set, --vary) checks each of its items itself.
        const auto* s = boost::any_cast<std::string>(&it->second.value());
        if (!s || !s->empty()) continue;
        std::string shown = o->canonical_display_name(boost::program_options::command_line_style::allow_dash_for_short);  // "-o"
        if (shown.empty() || shown[0] != '-') shown = "--" + name;
        throw InputError({shown}, "the value is empty; give one, or leave the option out for its default");
    }
}

}  // namespace hetsim::cli
