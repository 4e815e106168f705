// The model's rule switches (`rules.*`, docs/model.md): a rule switched off sets its parameters
// to the values that make it vanish, so the units need no test for most switches.
#pragma once
#include "models/profile.hpp"

namespace hetsim {

HwProfile effective_profile(const HwProfile& in);

}  // namespace hetsim
