// The lowered program as JSON (schema "hetsim.program", version 1): what `hetsim lower`
// writes and the CUDA validation runner executes. docs/program-format.md documents it.
#pragma once
#include <nlohmann/json.hpp>

#include "sim/program.hpp"

namespace hetsim {

constexpr int kProgramSchemaVersion = 2;

nlohmann::json program_to_json(const Program& p, const std::string& scenario_name);

// Reads a lowered program back; throws InputError (file, message) on a wrong schema or version.
Program program_from_json(const nlohmann::json& j, const std::string& file);

}  // namespace hetsim
