// Hardware profiles from hw/profiles/<name>.yaml, and overrides of single parameters.
#pragma once
#include <string>
#include <vector>

#include "models/profile.hpp"
#include "core/error.hpp"

namespace hetsim {

// `name` is a shipped profile ("h200") or a path to a profile file. `where` is the referring place.
// A profile file with `base: NAME` starts from that profile's values (a chain of bases is
// followed) and overrides the parameters it gives; one without gives every required parameter.
HwProfile load_profile(const std::string& name, const SourceLoc& where);

// The same with where each value comes from (`hetsim params PROFILE`).
struct ProfileFile {
    std::string name;  // as referenced: "h200", or a path
    std::string path;  // the file read
};
struct LoadedProfile {
    HwProfile profile;
    std::vector<ProfileFile> files;  // the profile itself, then its base, the base's base, ...
    std::vector<int> origin;         // per param_decls() entry: the index in `files` that set it, -1: the declared default
};
LoadedProfile load_profile_sources(const std::string& name, const SourceLoc& where);

// Sets one parameter from its text ("16GB/s", "0", "true"); checks the key, the unit and the range.
void set_profile_param(HwProfile& p, const std::string& key, const std::string& text, const SourceLoc& where);

// Zeroes every parameter declared as a latency or fixed cost (the seed calculators' ideal machine).
void zero_latencies(HwProfile& p);

}  // namespace hetsim
