// The fuzz targets that read a file by its path (the JSON inputs of compare and calibrate): each
// input is written to one per-process scratch file, so that the whole reading path runs, as in
// the CLI.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace hetsim_fuzz {

inline const std::string& write_input(const uint8_t* data, size_t size) {
    static const std::string path = "/tmp/hetsim-fuzz-input-" + std::to_string(::getpid()) + ".json";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) __builtin_trap();
    if (size && std::fwrite(data, 1, size, f) != size) __builtin_trap();
    std::fclose(f);
    return path;
}

}  // namespace hetsim_fuzz
