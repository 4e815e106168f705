// Errors a user can act on. InputError carries where in which file the problem is;
// the CLI prints it as `file:line:col: error: message` and exits with code 2.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace hetsim {

// Byte c as \xNN.
inline void append_hex_escape(std::string& out, unsigned char c) {
    static const char hex[] = "0123456789abcdef";
    out.append("\\x").append(1, hex[c >> 4]).append(1, hex[c & 15]);
}

// Text made one printable line: bytes that are not printable ASCII become \xNN.
inline std::string printable(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
        else append_hex_escape(out, c);
    }
    return out;
}

// A message kept on one line: control characters (a newline or an escape sequence from a name
// in the input) become \n, \r, \t or \xNN; everything else, UTF-8 included, is kept.
inline std::string escape_controls(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if (c >= 0x20 && c != 0x7f) out += static_cast<char>(c);
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else append_hex_escape(out, c);
    }
    return out;
}

struct SourceLoc {
    std::string file;
    int line = 0;  // 1-based; 0 = unknown
    int col = 0;   // 1-based; 0 = unknown
};

class InputError : public std::runtime_error {
public:
    InputError(SourceLoc where, const std::string& what)
        : std::runtime_error(format(where, what)), where_(std::move(where)), message_(what) {}
    const SourceLoc& where() const { return where_; }
    const std::string& message() const { return message_; }

    static std::string format(const SourceLoc& w, const std::string& what) {
        std::ostringstream s;
        s << (w.file.empty() ? std::string("<input>") : w.file);
        if (w.line > 0) s << ':' << w.line << ':' << w.col;
        s << ": error: " << what;
        return s.str();
    }

private:
    SourceLoc where_;
    std::string message_;
};

}  // namespace hetsim
