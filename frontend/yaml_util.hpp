// yaml-cpp helpers that turn every problem into an InputError with file:line:col.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hetsim {

// Loads a YAML document from a file (or text, for tests); syntax errors become InputErrors.
// Also refused: a second document, merge keys ('<<'), aliases that expand past max(10^6, the
// file's own nodes), and, when `max_memory` is not 0, a tree whose estimated size passes it.
// CR-only line breaks are read as line breaks (`text` gets them as LF).
YAML::Node load_yaml_file(const std::string& path, std::string* text = nullptr, uint64_t max_memory = 0);  // text: the file's contents
YAML::Node load_yaml_text(const std::string& text, const std::string& file, uint64_t max_memory = 0);
// The text load_yaml_file gives in `text`, without parsing it (the file was parsed already).
std::string read_yaml_text(const std::string& path);

// yaml-cpp's tree takes about this many bytes per byte of text (bench/scenario_parse.cpp's
// bytes_per_text_byte: 84-85 for a flat list of op maps of 0.5 and 5 MB, the text's copies and
// the lowered program included).
constexpr uint64_t kYamlBytesPerTextByte = 90;
inline uint64_t estimated_tree_bytes(uint64_t text_bytes) {
    return text_bytes > UINT64_MAX / kYamlBytesPerTextByte ? UINT64_MAX : text_bytes * kYamlBytesPerTextByte;
}

SourceLoc loc_of(const YAML::Node& n, const std::string& file);

[[noreturn]] void fail(const YAML::Node& n, const std::string& file, const std::string& what);

// Rejects keys not in `allowed` (with a did-you-mean) and duplicate keys. `what` names the map.
void check_keys(const YAML::Node& map, const std::string& file, std::initializer_list<const char*> allowed,
                const std::string& what);
void check_keys(const YAML::Node& map, const std::string& file, const std::vector<std::string>& allowed,
                const std::string& what);

// The closest of `candidates` to `word` within a small edit distance, or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

const char* node_type_name(const YAML::Node& n);
std::string a_node_type(const YAML::Node& n);  // with its article: "a list", "an empty value"

}  // namespace hetsim
