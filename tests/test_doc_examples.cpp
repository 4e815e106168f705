// Every ```yaml block of README.md and docs/scenario-format.md runs as written (a block marked
// with a preceding `<!-- fragment -->` line is deliberately a piece of a scenario, and is only
// parsed as YAML), and the format examples (tests/format_examples/, copied unchanged from the
// issue's ../shared/format-examples) land inside the range of their `# expect:` header.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/scenario.hpp"
#include "sim/engine.hpp"

using namespace hetsim;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Block {
    int line = 0;  // of the opening fence
    bool fragment = false;
    std::string text;
};

std::vector<Block> yaml_blocks(const std::string& doc) {
    std::vector<Block> out;
    std::istringstream in(doc);
    std::string line, previous;
    int n = 0;
    Block* open = nullptr;
    while (std::getline(in, line)) {
        ++n;
        if (open) {
            if (line.rfind("```", 0) == 0) open = nullptr;
            else open->text += line + "\n";
        } else if (line == "```yaml") {
            out.push_back(Block{n, previous.rfind("<!-- fragment", 0) == 0, ""});
            open = &out.back();
        }
        if (!line.empty()) previous = line;
    }
    return out;
}

// The measured time: the last iteration's with measure: {warmup: K}, else end to end.
Time measured(const Scenario& sc, const LoadOptions& o = {}) {
    (void)o;
    Timeline t = simulate(sc.program, sc.profile);
    return t.end_to_end - t.measured_from;
}

double ms(Time t) { return static_cast<double>(t.ps()) / 1e9; }

}  // namespace

TEST_CASE("docs: every yaml block of README.md and docs/scenario-format.md runs as written", "[docs]") {
    int runs = 0, fragments = 0;
    for (const char* doc : {"README.md", "docs/scenario-format.md"}) {
        const fs::path path = fs::path(HETSIM_SOURCE_DIR) / doc;
        for (const Block& b : yaml_blocks(read(path))) {
            const std::string where = std::string(doc) + ":" + std::to_string(b.line);
            INFO(where << "\n" << b.text);
            if (b.fragment) {
                ++fragments;
                CHECK_NOTHROW(YAML::Load(b.text));
                continue;
            }
            ++runs;
            try {
                Scenario sc = load_scenario_text(b.text, where);
                (void)simulate(sc.program, sc.profile);
            } catch (const std::exception& e) {
                FAIL_CHECK(where << ": " << e.what());
            }
        }
    }
    CHECK(runs >= 7);
    CHECK(fragments <= 8);  // the few deliberate fragments
}

TEST_CASE("format examples: each lands inside the range of its '# expect:' header", "[docs]") {
    const fs::path dir = fs::path(HETSIM_SOURCE_DIR) / "tests" / "format_examples";
    int checked = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() != ".yaml") continue;
        const std::string text = read(e.path());
        std::smatch m;
        REQUIRE(std::regex_search(text, m, std::regex(R"(# expect: ([0-9.]+)\.\.([0-9.]+) ms)")));
        const double lo = std::stod(m[1]), hi = std::stod(m[2]);
        Scenario sc = load_scenario(e.path().string());
        const double got = ms(measured(sc));
        INFO(e.path().filename().string() << ": " << got << " ms, expected " << lo << ".." << hi);
        CHECK(got >= lo);
        CHECK(got <= hi);
        ++checked;
    }
    CHECK(checked == 4);
    // warm_pageable with --set warm=0: one cold pass, about 2.3 ms.
    LoadOptions o;
    o.sets = {{"warm", "0"}};
    Scenario cold = load_scenario((dir / "warm_pageable.yaml").string(), o);
    const double got = ms(measured(cold));
    INFO("warm_pageable --set warm=0: " << got << " ms");
    CHECK(got >= 2.1);
    CHECK(got <= 2.5);
}
