// Inputs are regular files: a device such as /dev/zero would be read without end, a FIFO with
// no writer blocks forever, and a file's size (the memory cap's first check) says nothing of
// either. Missing files and directories are left to each reader, which names what it expected.
#pragma once
#include <filesystem>
#include <string>
#include <system_error>

#include "core/error.hpp"

namespace hetsim {

inline bool is_special_file(const std::string& path) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    return !ec && std::filesystem::exists(st) && !std::filesystem::is_directory(st) && !std::filesystem::is_regular_file(st);
}

// Throws "PATH: error: is not a regular file (...); <expected>" for a device, FIFO or socket.
inline void require_regular_input(const std::string& path, const std::string& expected) {
    if (is_special_file(path))
        throw InputError(SourceLoc{path}, "is not a regular file (a device, FIFO or socket), which could be read without end; " + expected);
}

}  // namespace hetsim
