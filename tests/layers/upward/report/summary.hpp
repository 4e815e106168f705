// Allowed: a report includes the layers below it and the core.
#pragma once
#include "frontend/scenario.hpp"
#include "core/program.hpp"
