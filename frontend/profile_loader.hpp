// Hardware profiles from hw/profiles/<name>.yaml, and overrides of single parameters.
#pragma once
#include <string>

#include "models/profile.hpp"
#include "core/error.hpp"

namespace hetsim {

// `name` is a shipped profile ("h200") or a path to a profile file. `where` is the referring place.
HwProfile load_profile(const std::string& name, const SourceLoc& where);

// Sets one parameter from its text ("16GB/s", "0", "true"); checks the key, the unit and the range.
void set_profile_param(HwProfile& p, const std::string& key, const std::string& text, const SourceLoc& where);

// Zeroes every parameter declared as a latency or fixed cost (the seed calculators' ideal machine).
void zero_latencies(HwProfile& p);

}  // namespace hetsim
