// Every file one command writes (--trace, --csv, --json, --svg, --report, -o, --plot), through one
// writer, so that no output can destroy data:
//   - an output is never one of the command's inputs (the same file by any path, hard link or
//     symbolic link), never a second output of the same command;
//   - only a regular file is replaced; a FIFO, a device node, a socket, a directory or a symbolic
//     link is refused (a link is not followed: name the file it points to);
//   - "-" is stdout; at most one output may be "-", and the command then prints nothing else there;
//   - all or nothing: commit() writes every output to a fresh temporary file beside its target and
//     renames them over the targets only when every one was written; on any failure the
//     temporaries are removed and no target is touched.
// Outputs are checked when declared (before any work) and again at commit.
#pragma once
#include <string>
#include <vector>

namespace hetsim::cli {

class Outputs {
public:
    // A file the command reads (`what` names it in messages: "the scenario", "a microbenchmark
    // file"); declare inputs before outputs. A path that does not exist is ignored.
    void input(const std::string& path, const std::string& what);
    // An output named by `option` ("--trace", "-o"); an empty path means none. Throws InputError
    // when the path is not allowed (see above).
    void declare(const std::string& option, const std::string& path);
    // The content of a declared output (no-op for an undeclared or empty one).
    void set(const std::string& option, std::string content);
    bool declared(const std::string& option) const;
    // True when an output is "-": the command's own stdout report is then left out.
    bool stdout_taken() const;
    // Writes all outputs as described above; stdout ("-") last. Throws InputError.
    void commit();

private:
    struct Input {
        std::string path, what;
        unsigned long long dev = 0, ino = 0;
    };
    struct Output {
        std::string option, path, content;
        bool has_content = false;
    };
    void check(const Output& o, bool at_commit) const;
    std::vector<Input> inputs_;
    std::vector<Output> outputs_;
};

}  // namespace hetsim::cli
