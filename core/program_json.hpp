// The lowered program as JSON (schema "hetsim.program", docs/program-format.md): what
// `hetsim lower` writes and the CUDA validation runner reads. One codec for both sides: the
// runner compiles this file with nvcc. The fields of each op follow its row of the op table.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/program.hpp"

namespace hetsim {

constexpr int kProgramSchemaVersion = 4;
// The oldest version the reader takes: version 3 files lack a launch's "exec", which reading
// gives it by the rule of assign_graph_execs (core/program.hpp).
constexpr int kProgramSchemaOldest = 3;

// How a measured file's metadata.emulation list, written by the validation runner, begins the
// entry that says its copies used the host buffers they name (from 2026-12-03w; the runners
// before made every copy on per-thread scratch). `hetsim validate` tells the two apart by it.
inline constexpr const char* kEmulationNamedHostBuffers = "copies use the host buffer they name";

nlohmann::json program_to_json(const Program& p, const std::string& scenario_name);

// Reads a lowered program back and checks it whole: every key's type and range, unknown keys,
// every reference between ops, threads, streams, events, buffers and graphs, the keys each op
// kind carries, graph launches followed by their nodes, the threads and tasks forms and the
// options. Throws InputError naming `file` and the JSON path of the first problem, e.g.
// "ops[3].stream of kernel 'k[1]': names stream 7, but the program has 2 streams".
// `scenario_name`, when given, receives the program's "scenario".
Program program_from_json(const nlohmann::json& j, const std::string& file, std::string* scenario_name = nullptr);

// program_from_json of the JSON `text` of `file`: empty or malformed text is an InputError too
// (at the line and column of a JSON syntax error).
Program program_from_text(const std::string& text, const std::string& file, std::string* scenario_name = nullptr);

// program_from_text of the file at `path`; an unreadable file or a directory is an InputError.
Program read_program_file(const std::string& path, std::string* scenario_name = nullptr);

}  // namespace hetsim
