#include "report/json_input.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/input_file.hpp"

namespace hetsim::report {
namespace {

using nlohmann::json;

// Line and column (1-based, column in bytes) of byte offset `off` of `text`.
SourceLoc loc_at(const std::string& file, const std::string& text, size_t off) {
    SourceLoc l{file, 1, 1};
    for (size_t i = 0; i < off && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++l.line;
            l.col = 1;
        } else {
            ++l.col;
        }
    }
    return l;
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix,
// with bytes that are not printable ASCII written as \xNN so the message stays one clean line.
std::string parse_reason(const std::string& what) {
    std::string s = what;
    if (auto p = s.find("column "); p != std::string::npos)
        if (auto q = s.find(": ", p); q != std::string::npos) s = s.substr(q + 2);
    return printable(s);
}

// A minimal scanner over valid JSON text: skips values and finds object members / array items.
class Scanner {
public:
    explicit Scanner(const std::string& t) : t_(t) {}
    void ws(size_t& i) const {
        while (i < t_.size() && (t_[i] == ' ' || t_[i] == '\t' || t_[i] == '\n' || t_[i] == '\r')) ++i;
    }
    // i at '"'; returns the index after the closing quote.
    size_t skip_string(size_t i) const {
        for (++i; i < t_.size(); ++i) {
            if (t_[i] == '\\') ++i;
            else if (t_[i] == '"') return i + 1;
        }
        return t_.size();
    }
    size_t skip_value(size_t i) const {
        ws(i);
        if (i >= t_.size()) return i;
        if (t_[i] == '"') return skip_string(i);
        if (t_[i] == '{' || t_[i] == '[') {
            int depth = 0;
            for (; i < t_.size(); ++i) {
                char c = t_[i];
                if (c == '"') {
                    i = skip_string(i) - 1;
                } else if (c == '{' || c == '[') {
                    ++depth;
                } else if (c == '}' || c == ']') {
                    if (--depth == 0) return i + 1;
                }
            }
            return i;
        }
        while (i < t_.size() && t_[i] != ',' && t_[i] != '}' && t_[i] != ']' && !std::isspace(static_cast<unsigned char>(t_[i]))) ++i;
        return i;
    }
    // i at '{': the start of the value of member `key`, or npos.
    size_t member(size_t i, const std::string& key) const {
        size_t found = std::string::npos;
        ++i;
        for (;;) {
            ws(i);
            if (i >= t_.size() || t_[i] != '"') return found;
            size_t k_end = skip_string(i);
            std::string k;
            try {
                k = json::parse(t_.substr(i, k_end - i)).get<std::string>();
            } catch (const json::exception&) {
                return found;
            }
            i = k_end;
            ws(i);
            if (i >= t_.size() || t_[i] != ':') return found;
            ++i;
            ws(i);
            if (k == key) found = i;  // the last duplicate wins, as in nlohmann::json
            i = skip_value(i);
            ws(i);
            if (i >= t_.size() || t_[i] != ',') return found;
            ++i;
        }
    }
    // i at '[': the start of item `n`, or npos.
    size_t item(size_t i, size_t n) const {
        ++i;
        for (size_t k = 0;; ++k) {
            ws(i);
            if (i >= t_.size() || t_[i] == ']') return std::string::npos;
            if (k == n) return i;
            i = skip_value(i);
            ws(i);
            if (i >= t_.size() || t_[i] != ',') return std::string::npos;
            ++i;
        }
    }

private:
    const std::string& t_;
};

// The first key that appears twice in one object of `t` (valid JSON): its offset and text, or
// npos. nlohmann::json keeps the last of them silently; a measurement file is never meant so.
std::pair<size_t, std::string> first_duplicate_key(const std::string& t) {
    struct Frame {
        bool object;
        bool at_key;
        std::unordered_set<std::string> keys;
    };
    std::vector<Frame> stack;
    Scanner sc(t);
    for (size_t i = 0; i < t.size();) {
        const char c = t[i];
        if (c == '{' || c == '[') {
            stack.push_back(Frame{c == '{', c == '{', {}});
            ++i;
        } else if (c == '}' || c == ']') {
            if (!stack.empty()) stack.pop_back();
            ++i;
        } else if (c == ',') {
            if (!stack.empty() && stack.back().object) stack.back().at_key = true;
            ++i;
        } else if (c == '"') {
            const size_t end = sc.skip_string(i);
            if (!stack.empty() && stack.back().object && stack.back().at_key) {
                std::string key = t.substr(i + 1, end - i - 2);
                if (key.find('\\') != std::string::npos) {
                    try {
                        key = json::parse(t.substr(i, end - i)).get<std::string>();
                    } catch (const json::exception&) {
                    }
                }
                if (!stack.back().keys.insert(key).second) return {i, key};
                stack.back().at_key = false;
            }
            i = end;
        } else {
            ++i;
        }
    }
    return {std::string::npos, {}};
}

// The heap bytes of the nlohmann tree as it is built, counted per SAX event (64-bit libstdc++: a
// value is 16 bytes; an object a 48-byte std::map and a node of about 96 bytes per key; an array
// a 24-byte std::vector whose slots may be doubled; a string 32 bytes and its text past 15
// characters). Measured: 7 bytes per text byte for a PyTorch trace, up to 38 for a text of
// empty objects. A SAX handler that counts and hands every event on to nlohmann's own tree
// builder (json::parse with a callback would do, but its callback parser scans the parent
// container at every object's end: quadratic in an array of objects such as traceEvents).
class CountingTreeBuilder {
   public:
    CountingTreeBuilder(json& root, uint64_t cap) : dom_(root, true), cap_(cap) {}
    bool null() { return value(0) && dom_.null(); }
    bool boolean(bool v) { return value(0) && dom_.boolean(v); }
    bool number_integer(json::number_integer_t v) { return value(0) && dom_.number_integer(v); }
    bool number_unsigned(json::number_unsigned_t v) { return value(0) && dom_.number_unsigned(v); }
    bool number_float(json::number_float_t v, const json::string_t& t) { return value(0) && dom_.number_float(v, t); }
    bool string(json::string_t& v) { return value(32 + text(v)) && dom_.string(v); }
    bool binary(json::binary_t& v) { return value(32 + v.size()) && dom_.binary(v); }
    bool start_object(std::size_t n) {
        value(64);
        in_array_.push_back(false);
        return dom_.start_object(n);
    }
    bool key(json::string_t& k) { return add(96 + text(k)) && dom_.key(k); }
    bool end_object() {
        if (!in_array_.empty()) in_array_.pop_back();
        return dom_.end_object();
    }
    bool start_array(std::size_t n) {
        value(40);
        in_array_.push_back(true);
        return dom_.start_array(n);
    }
    bool end_array() {
        if (!in_array_.empty()) in_array_.pop_back();
        return dom_.end_array();
    }
    template <class Exception>
    bool parse_error(std::size_t pos, const std::string& token, const Exception& ex) {
        return dom_.parse_error(pos, token, ex);  // throws ex, as json::parse does
    }

   private:
    static uint64_t text(const json::string_t& s) { return s.size() > 15 ? s.size() + 1 : 0; }
    bool add(uint64_t b) {
        bytes_ += b;
        if (bytes_ > cap_) throw JsonTreeOverCap{};
        return true;
    }
    // A value: its own bytes, and a slot of its array (doubled capacity) when it is in one.
    bool value(uint64_t b) { return add(b + (!in_array_.empty() && in_array_.back() ? 32 : 0)); }
    nlohmann::detail::json_sax_dom_parser<json> dom_;
    uint64_t cap_, bytes_ = 0;
    std::vector<bool> in_array_;  // per open container: an array?
};

}  // namespace

uint64_t json_text_cap(uint64_t max_memory) { return max_memory == 0 ? UINT64_MAX : max_memory / 2; }

json parse_json_counted(const std::string& text, uint64_t tree_cap) {
    json root;
    CountingTreeBuilder sax(root, tree_cap);
    json::sax_parse(text, &sax);
    return root;
}

void refuse_over_memory_cap(const std::string& file, const std::string& what, uint64_t cap, const std::string& smaller) {
    throw InputError(SourceLoc{file}, what + " the memory cap of " + bytes_text(cap) + " (--max-memory); " + smaller +
                                          ", or raise the cap with --max-memory (e.g. "
                                          "--max-memory 64GiB) if this machine has the memory");
}

bool gzip_magic(const std::string& s) {
    return s.size() >= 2 && static_cast<unsigned char>(s[0]) == 0x1f && static_cast<unsigned char>(s[1]) == 0x8b;
}

namespace {
// Inflates `data` (gzip members one after another) into `out` until the input is used up or `out`
// passes `limit` bytes. Returns whether the last member ended; sets `over` when it stopped at the
// limit. `why` receives zlib's message for a truncated or corrupt stream.
bool inflate_gzip(const std::string& data, uint64_t limit, std::string& out, bool& over, std::string& why) {
    z_stream zs{};
    over = false;
    if (inflateInit2(&zs, 15 + 32) != Z_OK) {
        why = "cannot start zlib";
        return false;
    }
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    size_t in_left = data.size();  // fed to zlib in pieces: its counters are 32 bits
    auto feed = [&] {
        const size_t n = std::min<size_t>(in_left, size_t{1} << 30);
        zs.avail_in = static_cast<uInt>(n);
        in_left -= n;
    };
    feed();
    char buf[1 << 16];
    int rc = Z_OK;
    while (true) {
        if (zs.avail_in == 0 && in_left > 0) feed();
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof buf;
        rc = inflate(&zs, Z_NO_FLUSH);
        out.append(buf, sizeof buf - zs.avail_out);
        if (out.size() > limit) {
            over = true;
            break;
        }
        if (rc == Z_STREAM_END) {
            if (zs.avail_in == 0 && in_left == 0) break;
            inflateReset(&zs);  // another gzip member follows
            continue;
        }
        if (rc != Z_OK) break;
        if (zs.avail_in == 0 && in_left == 0 && zs.avail_out != 0) break;  // input used up mid-stream
    }
    why = zs.msg ? zs.msg : "unexpected end";
    inflateEnd(&zs);
    return rc == Z_STREAM_END && !over;
}
}  // namespace

std::string gunzip(const std::string& data, const std::string& file, uint64_t max_memory, const std::string& expected,
                   const std::string& smaller) {
    const uint64_t cap = json_text_cap(max_memory);
    std::string out, why;
    bool over = false;
    if (!inflate_gzip(data, cap, out, over, why)) {
        if (over)
            refuse_over_memory_cap(file, "the gzip file expands to more than " + bytes_text(cap) +
                                             " of text: with the JSON tree built from it, reading it would pass",
                                   max_memory, smaller);
        throw InputError(SourceLoc{file}, "the gzip data is truncated or corrupt (zlib: " + why + "); it should be " + expected);
    }
    return out;
}

std::string read_text_head(const std::string& path, size_t n, bool* gzip) {
    if (is_special_file(path)) {  // the reader that follows refuses it; a FIFO would block here
        if (gzip) *gzip = false;
        return {};
    }
    std::ifstream in(path, std::ios::binary);
    // Deflate never grows text by more than a little (plus gzip's header): 2n + 4 KiB of a gzip
    // file hold at least its first n bytes of text.
    std::string head(2 * n + 4096, '\0');
    if (!in) head.clear();
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(in ? head.size() : static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    const bool gz = gzip_magic(head);
    if (gzip) *gzip = gz;
    if (!gz) return head.substr(0, n);
    std::string out, why;
    bool over = false;
    inflate_gzip(head, n, out, over, why);  // a head cut mid-stream inflates as far as it goes
    if (out.size() > n) out.resize(n);
    return out;
}

std::string read_input_text(const std::string& path, const std::string& expected, uint64_t max_memory, const std::string& smaller) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw InputError(SourceLoc{path}, "is a directory; it should be a file: " + expected);
    require_regular_input(path, "it should be a file: " + expected);
    if (const uintmax_t size = fs::file_size(path, ec); !ec && size > json_text_cap(max_memory))
        refuse_over_memory_cap(path, "the file is " + bytes_text(size) + ": with the JSON tree built from it, reading it would pass", max_memory,
                               smaller);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(SourceLoc{path}, std::string("cannot read the file (") + std::strerror(errno) + "); it should be " + expected);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (gzip_magic(text)) text = gunzip(text, path, max_memory, expected, smaller);
    return text;
}

json read_json_file(const std::string& path, const std::string& expected, std::string* text_out, uint64_t max_memory) {
    std::string text = read_input_text(path, expected, max_memory);
    size_t first = 0;
    Scanner(text).ws(first);
    if (first == text.size()) throw InputError(SourceLoc{path, 1, 1}, "the file is empty; it should be " + expected);
    json j;
    try {
        j = max_memory == 0 ? json::parse(text) : parse_json_counted(text, max_memory - std::min<uint64_t>(max_memory, text.size()));
    } catch (const JsonTreeOverCap&) {
        refuse_over_memory_cap(path, "the JSON tree of its " + bytes_text(text.size()) + " of text would pass", max_memory);
    } catch (const json::parse_error& e) {
        // e.byte is 1-based: the byte at which the parser gave up.
        const size_t off = e.byte > 0 ? e.byte - 1 : 0;
        throw InputError(loc_at(path, text, off), "not valid JSON: " + parse_reason(e.what()) + " (the file should be " + expected + ")");
    } catch (const json::exception& e) {
        // A number too large for a double ("number overflow parsing '1e999'"): point at it.
        std::string reason = parse_reason(e.what());
        if (auto p = reason.find("] "); p != std::string::npos) reason = reason.substr(p + 2);
        size_t off = 0;
        if (auto q = reason.find('\''); q != std::string::npos)
            if (auto r = reason.find('\'', q + 1); r != std::string::npos)
                if (auto at = text.find(reason.substr(q + 1, r - q - 1)); at != std::string::npos) off = at;
        throw InputError(loc_at(path, text, off), "not valid JSON: " + reason + " (the file should be " + expected + ")");
    }
    if (auto [at, key] = first_duplicate_key(text); at != std::string::npos)
        throw InputError(loc_at(path, text, at), "duplicate key \"" + parse_reason(key) +
                                                     "\" in one object; each key may appear once (the file should be " + expected + ")");
    if (text_out) *text_out = std::move(text);
    return j;
}

JsonPath parse_json_path(const std::string& dotted) {
    JsonPath p;
    std::string cur;
    auto flush = [&] {
        if (!cur.empty()) p.emplace_back(cur);
        cur.clear();
    };
    for (size_t i = 0; i < dotted.size(); ++i) {
        char c = dotted[i];
        if (c == '.') {
            flush();
        } else if (c == '[') {
            flush();
            size_t close = dotted.find(']', i);
            if (close == std::string::npos) break;
            try {
                p.emplace_back(static_cast<size_t>(std::stoull(dotted.substr(i + 1, close - i - 1))));
            } catch (const std::exception&) {
                break;
            }
            i = close;
        } else {
            cur += c;
        }
    }
    flush();
    return p;
}

SourceLoc json_loc(const std::string& file, const std::string& text, const JsonPath& path) {
    Scanner s(text);
    size_t i = 0;
    s.ws(i);
    if (i >= text.size()) return SourceLoc{file};
    for (const auto& step : path) {
        size_t next = std::string::npos;
        if (const auto* key = std::get_if<std::string>(&step)) {
            if (text[i] == '{') next = s.member(i, *key);
        } else if (text[i] == '[') {
            next = s.item(i, std::get<size_t>(step));
        }
        if (next == std::string::npos || next >= text.size()) break;
        i = next;
    }
    return loc_at(file, text, i);
}

SourceLoc json_file_loc(const std::string& file, const std::string& dotted) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return SourceLoc{file};
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (gzip_magic(text)) {
        // Read within its cap once already; an error message needs no second refusal.
        std::string out, why;
        bool over = false;
        inflate_gzip(text, UINT64_MAX, out, over, why);
        text = std::move(out);
    }
    return json_loc(file, text, parse_json_path(dotted));
}

std::pair<size_t, std::string> duplicate_key(const std::string& text) { return first_duplicate_key(text); }

}  // namespace hetsim::report
