#include "frontend/yaml_util.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace hetsim {

namespace {
YAML::Node parse(const std::string& text, const std::string& file) {
    if (text.find('\0') != std::string::npos) throw InputError({file, 1, 1}, "file is binary, not a YAML scenario");
    try {
        YAML::Node root = YAML::Load(text);
        if (!root || root.IsNull()) throw InputError({file, 1, 1}, "file is empty: expected a YAML mapping");
        if (!root.IsMap())
            throw InputError(loc_of(root, file), std::string("expected a YAML mapping at the top level, got a ") +
                                                     node_type_name(root));
        return root;
    } catch (const YAML::ParserException& e) {
        throw InputError({file, e.mark.line + 1, e.mark.column + 1}, "YAML syntax: " + e.msg);
    } catch (const YAML::Exception& e) {
        throw InputError({file, e.mark.line + 1, e.mark.column + 1}, "YAML: " + e.msg);
    }
}
}  // namespace

YAML::Node load_yaml_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError({path}, "cannot open file");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse(ss.str(), path);
}

YAML::Node load_yaml_text(const std::string& text, const std::string& file) { return parse(text, file); }

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
        if (!it->first.IsScalar()) fail(it->first, file, what + ": keys must be plain names");
        const std::string key = it->first.Scalar();
        if (!seen.insert(key).second) fail(it->first, file, "duplicate key '" + key + "' in " + what);
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
