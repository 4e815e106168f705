// The lowered program as JSON (schema "hetsim.program", docs/program-format.md): what
// `hetsim lower` writes and the CUDA validation runner reads. One codec for both sides: the
// runner compiles this file with nvcc. The fields of each op follow its row of the op table.
#pragma once
#include <nlohmann/json.hpp>

#include "core/program.hpp"

namespace hetsim {

constexpr int kProgramSchemaVersion = 2;

nlohmann::json program_to_json(const Program& p, const std::string& scenario_name);

// Reads a lowered program back, checking every key's type, range and reference; throws
// InputError naming the file and the JSON path of the first problem ("ops[3].stream: ...").
Program program_from_json(const nlohmann::json& j, const std::string& file);

}  // namespace hetsim
