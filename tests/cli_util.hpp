// Runs the built `hetsim` CLI from the repository root and captures what it printed.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hetsim_test {

struct Cli {
    int exit_code = -1;  // 128 + signal when killed by a signal
    std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// `args` is appended to the command line as is (quote it yourself where needed).
inline Cli cli(const std::string& args) {
    namespace fs = std::filesystem;
    static int counter = 0;
    fs::path dir = fs::temp_directory_path() / ("hetsim-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::path out = dir / ("out" + std::to_string(counter)), err = dir / ("err" + std::to_string(counter));
    ++counter;
    std::string cmd = "cd '" HETSIM_SOURCE_DIR "' && timeout 120 '" HETSIM_CLI_PATH "' " + args + " >'" + out.string() +
                      "' 2>'" + err.string() + "'";
    int status = std::system(cmd.c_str());
    Cli r;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    fs::remove(out);
    fs::remove(err);
    return r;
}

}  // namespace hetsim_test
