// Reading JSON input files (measured timelines, microbenchmark samples) so that every error names
// file:line:col. nlohmann::json keeps no source positions, so the position of a value is found
// again in the text by its path when an error is reported (errors only; no cost otherwise).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "frontend/limits.hpp"

namespace hetsim::report {

// Every reader here takes a gzip-compressed file (gzip's magic bytes first) as well as plain
// text: measured timelines are committed as .json.gz, profiler traces come as .json.gz.
bool gzip_magic(const std::string& bytes);
// The text of a gzip (or concatenated gzip) stream. One that expands past json_text_cap(max_memory)
// is refused as it expands ("...; <smaller>, or raise the cap"); a truncated or corrupt one is an
// InputError ending "it should be <expected>".
std::string gunzip(const std::string& data, const std::string& file, uint64_t max_memory, const std::string& expected,
                   const std::string& smaller = "give a smaller file");
// Up to the first `n` bytes of the text of `path`, decompressed where it is gzip (`*gzip` says
// so); "" where it cannot be read. For telling kinds of input apart, never for reading them.
std::string read_text_head(const std::string& path, size_t n, bool* gzip = nullptr);

// The text of input file `path`, plain or gzip, read within the memory cap (a file over
// json_text_cap(max_memory), or one expanding past it, is refused with "...; <smaller>, or raise
// the cap"). A directory or an unreadable file is an InputError ending "it should be <expected>".
std::string read_input_text(const std::string& path, const std::string& expected, uint64_t max_memory,
                            const std::string& smaller = "give a smaller file");

// The first key that appears twice in one object of valid JSON `text`: its byte offset and the
// key's text, or npos. nlohmann::json keeps the last silently; no input of hetsim is meant so.
std::pair<size_t, std::string> duplicate_key(const std::string& text);

// Reads and parses `path` (plain or gzip). `expected` says what the file should be, e.g. "a measured timeline
// (hetsim-runner -o)"; it ends the messages. Throws InputError for an unreadable file, a
// directory, an empty file and malformed JSON (at the line and column of the syntax error).
// `text`, when given, receives the file's contents (for json_loc).
// A file (or its text, with the JSON tree built from it) that would pass `max_memory` (0: no
// cap) is refused before it is read or while the tree grows: see parse_json_counted.
nlohmann::json read_json_file(const std::string& path, const std::string& expected, std::string* text = nullptr,
                              uint64_t max_memory = default_max_memory());

// Reading a JSON file within a memory cap. The text may take at most half of the cap
// (json_text_cap; UINT64_MAX for no cap); parse_json_counted parses `text` as json::parse does
// (the same parse_error exceptions) and throws JsonTreeOverCap as soon as the tree's estimated
// heap bytes pass `tree_cap` (64-bit libstdc++: about 7 bytes per text byte for a PyTorch trace or
// a measured timeline, up to 38 for a text of empty objects; within 20% of measured peaks).
struct JsonTreeOverCap {};
uint64_t json_text_cap(uint64_t max_memory);
nlohmann::json parse_json_counted(const std::string& text, uint64_t tree_cap);
// Throws InputError at `file`: "<what> the memory cap of <cap> (--max-memory); <smaller>, or raise
// the cap ..." where `what` ends with a verb such as "would pass".
[[noreturn]] void refuse_over_memory_cap(const std::string& file, const std::string& what, uint64_t cap,
                                         const std::string& smaller = "give a smaller file");

// A path into a JSON document: object keys and array indices.
using JsonPath = std::vector<std::variant<std::string, size_t>>;

// Parses a path written as in messages: `benchmarks.copy_sweep.points[3].size`.
JsonPath parse_json_path(const std::string& dotted);

// Where the value at `path` starts in `text` (a valid JSON document), as file:line:col; where
// the path leaves the document, the deepest existing value on it (e.g. the object lacking a
// key). Line 0 when `text` is empty or not valid JSON.
SourceLoc json_loc(const std::string& file, const std::string& text, const JsonPath& path);

// json_loc of the value at `dotted` (as parse_json_path reads it) in the file `file`, read again;
// {file} without a line when the file cannot be read. For error messages only.
SourceLoc json_file_loc(const std::string& file, const std::string& dotted);

}  // namespace hetsim::report
