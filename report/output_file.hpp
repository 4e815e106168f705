// Writing report files so that a reader never sees half a file and a failed run never
// destroys the previous output.
#pragma once
#include <functional>
#include <ostream>
#include <string>

namespace hetsim::report {

// Writes `content` to a new temporary file in the directory of `path`, then renames it over
// `path`. On any failure the temporary is removed, an existing `path` is left untouched, and
// hetsim::InputError{SourceLoc{path}, "cannot write output file: <strerror>"} is thrown.
void write_file_atomic(const std::string& path, const std::string& content);

// Runs a report writer into a string: to_string_with([&](std::ostream& os) { write_csv(os, p, t); }).
std::string to_string_with(const std::function<void(std::ostream&)>& write);

}  // namespace hetsim::report
