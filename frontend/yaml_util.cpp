#include "frontend/yaml_util.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/input_file.hpp"

namespace hetsim {

namespace {

// yaml-cpp's terse parser messages, with what would be right.
std::string explain_yaml_error(const std::string& msg) {
    static const std::pair<const char*, const char*> hints[] = {
        {"illegal block entry", "a '- ' list entry is not allowed here (check the indentation, or close a '[' list above)"},
        {"illegal map value", "unexpected ':' (check the indentation, or quote a value that contains ': ')"},
        {"end of sequence flow not found", "a '[' list is not closed with ']'"},
        {"end of map flow not found", "a '{' mapping is not closed with '}'"},
        {"end of map not found", "a mapping does not end where expected (check the indentation)"},
        {"end of sequence not found", "a list does not end where expected (check the indentation)"},
        {"illegal flow end", "a ']' or '}' without its opening '[' or '{'"},
        {"illegal EOF in scalar", "a quoted string is not closed before the end of the file"},
    };
    for (const auto& [m, h] : hints)
        if (msg == m) return std::string("YAML syntax: ") + h;
    return "YAML syntax: " + msg;
}

// The length of the well-formed UTF-8 sequence at text[i] (a byte >= 0x80), or 0 when it is not
// one (a stray continuation byte, a truncated sequence, an overlong form, a surrogate). Names
// end up in JSON reports, which must be valid UTF-8.
size_t utf8_length(const std::string& text, size_t i) {
    const auto b = [&](size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
    const unsigned c = b(i);
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (size_t k = 1; k < len; ++k)
        if ((b(i + k) & 0xc0) != 0x80) return 0;
    const unsigned d = b(i + 1);
    if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d > 0x9f) || (c == 0xf0 && d < 0x90) || (c == 0xf4 && d > 0x8f)) return 0;
    return len;
}

// YAML forbids control characters other than tab, LF and CR in a document.
void reject_binary(const std::string& text, const std::string& file) {
    if (text.size() >= 2 && ((text[0] == '\xff' && text[1] == '\xfe') || (text[0] == '\xfe' && text[1] == '\xff')))
        throw InputError({file, 1, 1}, "file is UTF-16 encoded; save it as UTF-8");
    int line = 1, col = 1;
    for (size_t i = 0; i < text.size(); ++i) {
        auto c = static_cast<unsigned char>(text[i]);
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", c);
            throw InputError({file, line, col}, std::string("file is binary, not a YAML scenario (control byte ") + hex +
                                                    "; a scenario is UTF-8 text)");
        }
        if (size_t len = c < 0x80 ? 1 : utf8_length(text, i); len == 0) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", c);
            throw InputError({file, line, col}, std::string("byte ") + hex +
                                                    " is not valid UTF-8 here; a scenario is UTF-8 text (save it as UTF-8)");
        } else {
            i += len - 1;
        }
        if (c == '\n') { ++line; col = 1; }
        else ++col;
    }
}

// On a syntax error: a tab in the indentation of any line up to the error is the likely cause.
void reject_tab_indent(const std::string& text, const std::string& file, int upto_line) {
    int line = 1;
    size_t pos = 0;
    while (pos < text.size() && line <= upto_line) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        for (size_t k = pos; k < end && (text[k] == ' ' || text[k] == '\t'); ++k)
            if (text[k] == '\t')
                throw InputError({file, line, static_cast<int>(k - pos) + 1},
                                 "YAML syntax: tab character in indentation; YAML indents with spaces only");
        pos = end + 1;
        ++line;
    }
}

// A first pass over the parser's events, before any node is built (only when the text may need
// it: needs_prepass): refuses what yaml-cpp would accept silently or expand without bound. It
// counts the nodes that aliases add (a nested alias can name 10^8 nodes in a few lines; everything
// that walks the tree walks them all), a second document, and merge keys ('<<'), which yaml-cpp
// would take as an ordinary key.
class Prepass final : public YAML::EventHandler {
public:
    explicit Prepass(std::string file) : file_(std::move(file)) {}
    uint64_t nodes = 0;

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { leaf(m, a, nullptr); }
    void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t a, const std::string& value) override {
        leaf(m, a, tag == "?" && value == "<<" ? &value : nullptr);
    }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t a) override {
        key_turn();
        // An alias inside the node its anchor names: yaml-cpp builds a cycle, which every walk of
        // the tree would follow without end.
        for (const Frame& f : stack_)
            if (a != YAML::NullAnchor && f.anchor == a)
                throw InputError({file_, m.line + 1, m.column + 1},
                                 "this '*' alias is inside the node its anchor names (a cycle): an alias may only repeat a "
                                 "node that is complete before it");
        const uint64_t add = a < sizes_.size() ? sizes_[a] : 1;
        expanded_ += add;
        aliased_ += add;
        if (aliased_ > alias_cap())
            throw InputError({file_, m.line + 1, m.column + 1},
                             "YAML aliases expand to more than " + std::to_string(alias_cap()) +
                                 " nodes (this '*' alias is where the count passes it); write the repeated part once with "
                                 "repeat or params instead of nesting aliases");
    }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
        open(m, a, false);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
        open(m, a, true);
    }
    void OnMapEnd() override { close(); }

private:
    struct Frame {
        bool map;
        bool at_key = true;  // a map: the next node is a key
        YAML::anchor_t anchor;
        uint64_t start;  // expanded_ when it opened
    };
    uint64_t alias_cap() const { return std::max<uint64_t>(1'000'000, nodes); }

    void key_turn(const YAML::Mark* m = nullptr, const std::string* merge = nullptr) {
        if (stack_.empty() || !stack_.back().map) return;
        Frame& f = stack_.back();
        if (f.at_key && merge && m)
            throw InputError({file_, m->line + 1, m->column + 1},
                             "YAML merge keys ('<<') are not supported; write the keys out in this mapping (an anchor "
                             "and alias may repeat a whole mapping: &name / *name)");
        f.at_key = !f.at_key;
    }
    void count(const YAML::Mark& m) {
        ++nodes;
        ++expanded_;
        if (nodes > kMaxNodes)
            throw InputError({file_, m.line + 1, m.column + 1},
                             "the file holds more than " + std::to_string(kMaxNodes) + " YAML nodes; shorten it (repeat blocks write many ops in a few lines)");
    }
    void leaf(const YAML::Mark& m, YAML::anchor_t a, const std::string* merge) {
        key_turn(&m, merge);
        count(m);
        remember(a, 1);
    }
    void open(const YAML::Mark& m, YAML::anchor_t a, bool map) {
        key_turn();
        count(m);
        stack_.push_back(Frame{map, true, a, expanded_ - 1});
    }
    void close() {
        const Frame f = stack_.back();
        stack_.pop_back();
        remember(f.anchor, expanded_ - f.start);
    }
    void remember(YAML::anchor_t a, uint64_t size) {
        if (a == YAML::NullAnchor) return;
        if (sizes_.size() <= a) sizes_.resize(a + 1, 1);
        sizes_[a] = size;
    }
    static constexpr uint64_t kMaxNodes = uint64_t{1} << 32;

    std::string file_;
    std::vector<Frame> stack_;
    std::vector<uint64_t> sizes_;  // by anchor: the nodes its subtree expands to
    uint64_t expanded_ = 0, aliased_ = 0;
};

// CR-only line breaks (old Mac files) are YAML line breaks; yaml-cpp reads only LF and CRLF.
std::string normalized_breaks(const std::string& text) {
    if (text.find('\r') == std::string::npos) return text;
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) out += '\n';
        else out += text[i];
    }
    return out;
}

void prepass(const std::string& text, const std::string& file) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    Prepass p(file);
    if (!parser.HandleNextDocument(p)) return;
    // A second document: yaml-cpp's Load would ignore it.
    struct Second final : YAML::EventHandler {
        YAML::Mark mark;
        bool seen = false;
        void OnDocumentStart(const YAML::Mark& m) override {
            if (!seen) mark = m;
            seen = true;
            throw Stop{};
        }
        void OnDocumentEnd() override {}
        void OnNull(const YAML::Mark& m, YAML::anchor_t) override { OnDocumentStart(m); }
        void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { OnDocumentStart(m); }
        void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { OnDocumentStart(m); }
        void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
            OnDocumentStart(m);
        }
        void OnSequenceEnd() override {}
        void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
            OnDocumentStart(m);
        }
        void OnMapEnd() override {}
        struct Stop {};
    } second;
    bool more = false;
    try {
        more = parser.HandleNextDocument(second);
    } catch (const Second::Stop&) {
        more = true;
    }
    if (more && second.seen)
        throw InputError({file, second.mark.line + 1, 1},
                         "a second YAML document (after '---' or '...') is not supported: a file holds one scenario or "
                         "profile; remove the separator, or split the file");
}


// Whether the text may hold an alias ('*name' where a node starts), a merge key ('<<') or a
// document marker ('---' or '...' at the start of a line): only then is the event pass (which
// reads the text a second time) needed. A false positive costs that pass, nothing else.
bool needs_prepass(const std::string& t) {
    if (t.find("<<") != std::string::npos) return true;
    for (size_t i = 0; i < t.size(); ++i) {
        const char c = t[i];
        if (c == '*' && i + 1 < t.size() && (std::isalnum(static_cast<unsigned char>(t[i + 1])) || t[i + 1] == '_') &&
            (i == 0 || t[i - 1] == ' ' || t[i - 1] == '\t' || t[i - 1] == '\n' || t[i - 1] == '[' || t[i - 1] == '{' || t[i - 1] == ','))
            return true;
        if ((i == 0 || t[i - 1] == '\n') && (t.compare(i, 3, "---") == 0 || t.compare(i, 3, "...") == 0)) return true;
    }
    return false;
}

YAML::Node parse(const std::string& raw, const std::string& file, uint64_t max_memory) {
    reject_binary(raw, file);
    const std::string text = normalized_breaks(raw);
    // Small files are left to the scenario's own estimate (frontend/limits.hpp): their trees are small.
    if (max_memory && text.size() >= (uint64_t{1} << 20) && estimated_tree_bytes(text.size()) > max_memory)
        throw InputError({file}, "the file is " + std::to_string(text.size() >> 20) + " MiB: its YAML tree takes about " +
                                     std::to_string(estimated_tree_bytes(text.size()) >> 20) + " MiB, more than the cap of " +
                                     std::to_string(max_memory >> 20) +
                                     " MiB (--max-memory); shorten it (repeat blocks write many ops in a few lines), or raise "
                                     "the cap with --max-memory");
    try {
        if (needs_prepass(text)) prepass(text, file);
        YAML::Node root = YAML::Load(text);
        if (!root || root.IsNull()) throw InputError({file, 1, 1}, "file is empty: expected a YAML mapping");
        if (!root.IsMap())
            throw InputError(loc_of(root, file), std::string("expected a YAML mapping at the top level, got ") +
                                                     a_node_type(root));
        return root;
    } catch (const YAML::DeepRecursion& e) {
        throw InputError({file, e.mark.line + 1, e.mark.column + 1},
                         "YAML nests lists and mappings too deeply (more than " + std::to_string(e.depth()) + " levels)");
    } catch (const YAML::ParserException& e) {
        reject_tab_indent(text, file, e.mark.line + 1);
        // `{size: ${chunk}}`: in a flow mapping or list, the braces of ${...} are YAML syntax.
        size_t bol = 0;
        for (int l = 0; l < e.mark.line && bol != std::string::npos; ++l) {
            size_t nl = text.find('\n', bol);
            bol = nl == std::string::npos ? nl : nl + 1;
        }
        if (bol != std::string::npos) {
            std::string line = text.substr(bol, text.find('\n', bol) - bol);
            size_t d = line.find("${");
            if (d != std::string::npos && line.find_first_of("{[") < d)
                throw InputError({file, e.mark.line + 1, static_cast<int>(d) + 1},
                                 "YAML syntax: '${...}' inside a flow '{...}' or '[...]' must be quoted, e.g. {size: \"${chunk}\"}");
        }
        throw InputError({file, e.mark.line + 1, e.mark.column + 1}, explain_yaml_error(e.msg));
    } catch (const YAML::Exception& e) {
        throw InputError({file, e.mark.line + 1, e.mark.column + 1}, "YAML: " + e.msg);
    }
}
}  // namespace

namespace {
std::string read_file(const std::string& path) {
    if (std::filesystem::is_directory(path)) throw InputError({path}, "is a directory, not a YAML file");
    if (!std::filesystem::exists(path)) throw InputError({path}, "no such file");
    require_regular_input(path, "give the path of a YAML file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError({path}, "cannot open file (check its permissions)");
    std::stringstream ss;
    ss << in.rdbuf();
    return std::move(ss).str();
}
}  // namespace

YAML::Node load_yaml_file(const std::string& path, std::string* text, uint64_t max_memory) {
    const std::string s = read_file(path);
    YAML::Node root = parse(s, path, max_memory);
    if (text) *text = normalized_breaks(s);
    return root;
}

std::string read_yaml_text(const std::string& path) {
    const std::string s = read_file(path);
    reject_binary(s, path);
    return normalized_breaks(s);
}

YAML::Node load_yaml_text(const std::string& text, const std::string& file, uint64_t max_memory) {
    return parse(text, file, max_memory);
}

SourceLoc loc_of(const YAML::Node& n, const std::string& file) {
    YAML::Mark m = n.Mark();
    if (m.line < 0) return SourceLoc{file, 0, 0};
    return SourceLoc{file, m.line + 1, m.column + 1};
}

void fail(const YAML::Node& n, const std::string& file, const std::string& what) { throw InputError(loc_of(n, file), what); }

const char* node_type_name(const YAML::Node& n) {
    switch (n.Type()) {
        case YAML::NodeType::Map: return "mapping";
        case YAML::NodeType::Sequence: return "list";
        case YAML::NodeType::Scalar: return "scalar";
        case YAML::NodeType::Null: return "empty value";
        default: return "undefined value";
    }
}

std::string a_node_type(const YAML::Node& n) {
    if (n.IsNull()) return "an empty value";
    return std::string("a ") + node_type_name(n);
}

static size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
    for (const auto& c : candidates) {
        size_t d = edit_distance(word, c);
        if (d < best_d) { best_d = d; best = c; }
    }
    return best;
}

void check_keys(const YAML::Node& map, const std::string& file, const std::vector<std::string>& allowed,
                const std::string& what) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
        if (!it->first.IsScalar()) fail(it->first, file, "keys in " + what + " must be plain names, got " + a_node_type(it->first));
        const std::string key = it->first.Scalar();
        if (!seen.insert(key).second) fail(it->first, file, "duplicate key '" + key + "' in " + what + "; each key may appear once");
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
            std::string msg = "unknown key '" + key + "' in " + what;
            std::string near = did_you_mean(key, allowed);
            if (!near.empty()) msg += "; did you mean '" + near + "'?";
            else {
                msg += " (expected one of:";
                for (const auto& a : allowed) msg += " " + a;
                msg += ")";
            }
            fail(it->first, file, msg);
        }
    }
}

void check_keys(const YAML::Node& map, const std::string& file, std::initializer_list<const char*> allowed,
                const std::string& what) {
    std::vector<std::string> v(allowed.begin(), allowed.end());
    check_keys(map, file, v, what);
}

}  // namespace hetsim
