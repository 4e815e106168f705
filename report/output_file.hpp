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

// write_file_atomic before its rename, for a caller that renames several outputs together
// (cli::Outputs): writes `content` to a fresh hidden sibling of `path` (".NAME.tmp.PID.N", created
// with O_EXCL | O_NOFOLLOW: never an existing file) with the permission bits of an existing regular
// `path`, syncs and closes it. Returns 0 and the sibling's name in `tmp`, or an errno value with the
// sibling removed.
int write_temp_beside(const std::string& path, const std::string& content, std::string& tmp);

// Runs a report writer into a string: to_string_with([&](std::ostream& os) { write_csv(os, p, t); }).
std::string to_string_with(const std::function<void(std::ostream&)>& write);

}  // namespace hetsim::report
