#include "report/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "core/error.hpp"

namespace hetsim::report {
namespace {

[[noreturn]] void fail(const std::string& path, int err) {
    throw InputError(SourceLoc{path, 0, 0}, std::string("cannot write output file: ") + std::strerror(err));
}

}  // namespace

// Opens a fresh hidden sibling of `path`; O_EXCL so two writers never share one.
static int open_temp_beside(const std::string& path, std::string& tmp) {
    static std::atomic<unsigned> counter{0};
    std::filesystem::path target(path);
    std::filesystem::path dir = target.parent_path();
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::string name(1, '.');  // appends, not operator+: GCC 12 -Wrestrict false positive
        name.append(target.filename().string()).append(".tmp.").append(std::to_string(::getpid()));
        name.append(1, '.').append(std::to_string(counter.fetch_add(1)));
        tmp = (dir / name).string();
        int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

int write_temp_beside(const std::string& path, const std::string& content, std::string& tmp) {
    int fd = open_temp_beside(path, tmp);
    if (fd < 0) return errno;
    // Keep an existing file's permission bits.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) (void)::fchmod(fd, st.st_mode & 07777);
    const char* data = content.data();
    size_t left = content.size();
    int err = 0;
    while (left > 0 && err == 0) {
        ssize_t n = ::write(fd, data, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) err = n < 0 ? errno : EIO;
        else { data += n; left -= static_cast<size_t>(n); }
    }
    if (err == 0 && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) ::unlink(tmp.c_str());
    return err;
}

void write_file_atomic(const std::string& path, const std::string& content) {
    if (path.empty() || std::filesystem::path(path).filename().empty()) fail(path, EISDIR);
    std::string tmp;
    int err = write_temp_beside(path, content, tmp);
    if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) {
        err = errno;
        ::unlink(tmp.c_str());
    }
    if (err != 0) fail(path, err);
}

std::string to_string_with(const std::function<void(std::ostream&)>& write) {
    std::ostringstream os;
    write(os);
    return os.str();
}

}  // namespace hetsim::report
