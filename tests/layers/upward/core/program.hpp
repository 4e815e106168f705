// The core may include only the core: the engine is above it.
#pragma once
#include "sim/engine.hpp"
