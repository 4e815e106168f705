#include "cli/outputs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "core/error.hpp"
#include "report/output_file.hpp"

namespace hetsim::cli {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& what) { throw InputError(SourceLoc{path}, what); }

[[noreturn]] void cannot_write(const std::string& path, const std::string& option, int err) {
    refuse(path, "cannot write output file (" + option + "): " + std::strerror(err));
}

const char* kind_of(mode_t m) {
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

// The directory an output's temporary file goes to: the target's own.
fs::path dir_of(const std::string& path) {
    fs::path d = fs::path(path).parent_path();
    return d.empty() ? fs::path(".") : d;
}

// The output's absolute name with its directory resolved: two spellings of one new file compare equal.
std::string resolved_name(const std::string& path) {
    std::error_code ec;
    fs::path d = fs::canonical(dir_of(path), ec);
    if (ec) return fs::absolute(path).lexically_normal().string();
    return (d / fs::path(path).filename()).string();
}

}  // namespace

void Outputs::input(const std::string& path, const std::string& what) {
    struct stat st {};
    if (path.empty() || path == "-" || ::stat(path.c_str(), &st) != 0) return;
    inputs_.push_back({path, what, static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino)});
    for (const Output& o : outputs_) check(o, false);
}

void Outputs::check(const Output& o, bool at_commit) const {
    const std::string& p = o.path;
    if (p == "-") return;
    const std::string head = "cannot write output file (" + o.option + "): ";
    const fs::path name = fs::path(p).filename();
    if (name.empty() || name == "." || name == "..") cannot_write(p, o.option, EISDIR);
    struct stat lst {};
    if (::lstat(p.c_str(), &lst) == 0) {
        if (S_ISLNK(lst.st_mode)) {
            std::error_code ec;
            fs::path to = fs::read_symlink(p, ec);
            refuse(p, head + "it is a symbolic link" + (ec ? std::string() : " (to " + to.string() + ")") +
                          "; hetsim replaces only regular files: name the file itself, or remove the link");
        }
        if (S_ISDIR(lst.st_mode)) cannot_write(p, o.option, EISDIR);
        if (!S_ISREG(lst.st_mode))
            refuse(p, head + "it is " + kind_of(lst.st_mode) + "; hetsim writes outputs only to regular files (or '-' for stdout)");
        for (const Input& in : inputs_)
            if (static_cast<unsigned long long>(lst.st_dev) == in.dev && static_cast<unsigned long long>(lst.st_ino) == in.ino)
                refuse(p, head + "it is " + in.what + " this command reads" + (in.path == p ? "" : " (" + in.path + ")") +
                              "; writing it would destroy the input: name another file");
    } else if (errno == ENOENT) {
        struct stat dst {};
        const fs::path dir = dir_of(p);
        if (::stat(dir.c_str(), &dst) != 0) cannot_write(p, o.option, errno);
        if (!S_ISDIR(dst.st_mode)) cannot_write(p, o.option, ENOTDIR);
    } else {
        cannot_write(p, o.option, errno);
    }
    if (!at_commit && ::access(dir_of(p).c_str(), W_OK | X_OK) != 0) cannot_write(p, o.option, errno);
}

void Outputs::declare(const std::string& option, const std::string& path) {
    if (path.empty()) return;
    Output o{option, path, {}, false};
    check(o, false);
    for (const Output& other : outputs_) {
        if (path == "-" && other.path == "-")
            throw InputError(SourceLoc{option + " -"}, "stdout is already the output of " + other.option +
                                                           "; only one output can be '-'");
        if (path == "-" || other.path == "-") continue;
        if (resolved_name(path) == resolved_name(other.path))
            refuse(path, "cannot write output file (" + option + "): it is also the output of " + other.option +
                             "; give each output its own file");
    }
    outputs_.push_back(std::move(o));
}

void Outputs::set(const std::string& option, std::string content) {
    for (Output& o : outputs_)
        if (o.option == option) {
            o.content = std::move(content);
            o.has_content = true;
        }
}

bool Outputs::declared(const std::string& option) const {
    for (const Output& o : outputs_)
        if (o.option == option) return true;
    return false;
}

bool Outputs::stdout_taken() const {
    for (const Output& o : outputs_)
        if (o.path == "-") return true;
    return false;
}

void Outputs::commit() {
    // Checked again: the file system may have changed while the command worked.
    for (const Output& o : outputs_)
        if (o.has_content) check(o, true);
    std::vector<std::pair<const Output*, std::string>> written;  // output, its temporary
    auto discard = [&] {
        for (const auto& [o, tmp] : written) ::unlink(tmp.c_str());
    };
    for (const Output& o : outputs_) {
        if (!o.has_content || o.path == "-") continue;
        std::string tmp;
        if (int err = report::write_temp_beside(o.path, o.content, tmp); err != 0) {
            discard();
            cannot_write(o.path, o.option, err);
        }
        written.emplace_back(&o, tmp);
    }
    // Every output is on disk: now the renames (same folder each, so they do not copy).
    for (size_t k = 0; k < written.size(); ++k)
        if (std::rename(written[k].second.c_str(), written[k].first->path.c_str()) != 0) {
            const int err = errno;
            for (size_t j = k; j < written.size(); ++j) ::unlink(written[j].second.c_str());
            cannot_write(written[k].first->path, written[k].first->option, err);
        }
    for (const Output& o : outputs_)
        if (o.has_content && o.path == "-") {
            std::cout << o.content;
            std::cout.flush();
        }
}

}  // namespace hetsim::cli
