// Reading JSON inputs is bounded by the memory cap (--max-memory), checked while the file is
// read, inflated and parsed, not after (issue 15: "bounded by --max-memory"): profiler traces
// (hetsim import, compare), measured timelines (compare) and microbenchmark files (calibrate).
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_util.hpp"
#include "core/error.hpp"
#include "import/kineto_trace.hpp"
#include "report/json_input.hpp"

using namespace hetsim;
using namespace hetsim::import;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t MiB = uint64_t{1} << 20;

// `text` gzip-compressed (one member), written to `path`.
void write_gzip(const fs::path& path, const std::string& text) {
    gzFile f = gzopen(path.c_str(), "wb9");
    REQUIRE(f != nullptr);
    REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
    REQUIRE(gzclose(f) == Z_OK);
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// A trace that is valid JSON and says nothing: its one event's args hold `inner`.
std::string padded(const std::string& inner) {
    return "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"x\", \"ts\": 1, \"pid\": 1, \"tid\": 1, \"args\": {\"a\": [" + inner + "]}}]}";
}

std::string repeated(const std::string& item, size_t n) {
    std::string s;
    s.reserve(item.size() * n + n);
    for (size_t i = 0; i < n; ++i) s.append(i ? "," : "").append(item);
    return s;
}

}  // namespace

TEST_CASE("import: a trace that would pass the memory cap is refused while it is read", "[import][limits]") {
    const fs::path dir = fs::temp_directory_path() / ("hetsim-import-cap-" + std::to_string(::getpid()));
    fs::create_directories(dir);

    SECTION("a gzip file that expands past half the cap: refused as it expands") {
        // 40 MiB of spaces compress to about 40 KiB; under a 16 MiB cap the text may take 8 MiB.
        const fs::path bomb = dir / "bomb.json.gz";
        write_gzip(bomb, padded(std::string(40 * MiB, ' ')));
        CHECK(fs::file_size(bomb) < MiB);
        CHECK_THROWS_WITH(read_kineto_trace(bomb.string(), 16 * MiB),
                          Contains("bomb.json.gz: error: the gzip file expands to more than 8 MiB of text: with the JSON tree "
                                   "built from it, reading it would pass the memory cap of 16 MiB (--max-memory)"));
        // With a cap it fits under, it reads to the end (and is then no Kineto trace: no events).
        CHECK_THROWS_WITH(read_kineto_trace(bomb.string(), 256 * MiB), Contains("not a PyTorch profiler (Kineto) trace"));
    }
    SECTION("a plain file over half the cap: refused from its size") {
        const fs::path big = dir / "big.json";
        write_text(big, padded(std::string(5 * MiB, ' ')));
        CHECK_THROWS_WITH(read_kineto_trace(big.string(), 8 * MiB),
                          Contains("big.json: error: the file is 5 MiB: with the JSON tree built from it, reading it would "
                                   "pass the memory cap of 8 MiB (--max-memory)"));
    }
    SECTION("a small text whose JSON tree is large: refused while the tree grows") {
        // 300,000 empty objects: 0.86 MiB of text, each object a std::map and an array slot
        // (about 96 bytes: the count says 28 MiB; measured peak RSS of such a file 38 bytes per
        // text byte).
        const std::string text = padded(repeated("{}", 300'000));
        CHECK(text.size() < MiB);
        CHECK_THROWS_WITH(parse_kineto_trace(text, "objs.json", 16 * MiB),
                          Contains("objs.json: error: the trace's JSON tree and its 879 KiB of text pass the memory cap of 16 MiB"));
        CHECK_THROWS_WITH(parse_kineto_trace(text, "objs.json", 64 * MiB), Contains("not a PyTorch profiler (Kineto) trace"));
        CHECK_THROWS_WITH(parse_kineto_trace(text, "objs.json", 0), Contains("not a PyTorch profiler (Kineto) trace"));
    }
    SECTION("a real trace reads the same under a cap as without one") {
        const std::string path = "tests/import/traces/train_pageable_sync.json";
        const KinetoTrace a = read_kineto_trace(path, 0), b = read_kineto_trace(path, 64 * MiB);
        CHECK(a.events == b.events);
        CHECK(a.calls.size() == b.calls.size());
        CHECK(a.gpu.size() == b.gpu.size());
        CHECK(a.events > 100);
    }
    SECTION("the command line: hetsim import --max-memory, and compare's cap reaches the trace") {
        const fs::path bomb = dir / "cli_bomb.json.gz";
        write_gzip(bomb, padded(std::string(40 * MiB, ' ')));
        const fs::path out = dir / "never.yaml";
        hetsim_test::Cli r = hetsim_test::cli("import '" + bomb.string() + "' -o '" + out.string() + "' --max-memory 16MiB");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains("error: the gzip file expands to more than 8 MiB of text"));
        CHECK(!fs::exists(out));
        r = hetsim_test::cli("import '" + bomb.string() + "' -o '" + out.string() + "' --max-memory lots");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains("--max-memory"));
        r = hetsim_test::cli("compare scenarios/seeds/double_buffer.yaml '" + bomb.string() +
                             "' --max-memory 16MiB");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains("error: the gzip file expands to more than 8 MiB of text"));
    }
    fs::remove_all(dir);
}

TEST_CASE("measured timelines and microbenchmark files: read within the memory cap", "[limits]") {
    const fs::path dir = fs::temp_directory_path() / ("hetsim-json-cap-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path big = dir / "measured.json";
    write_text(big, "{\"schema\": \"hetsim.measured\", \"pad\": \"" + std::string(5 * MiB, 'x') + "\"}");
    CHECK_THROWS_WITH(report::read_json_file(big.string(), "a measured timeline", nullptr, 8 * MiB),
                      Contains("measured.json: error: the file is 5 MiB: with the JSON tree built from it, reading it would "
                               "pass the memory cap of 8 MiB (--max-memory); give a smaller file"));
    const fs::path objs = dir / "objs.json";
    write_text(objs, "{\"a\": [" + repeated("{}", 300'000) + "]}");
    CHECK_THROWS_WITH(report::read_json_file(objs.string(), "a measured timeline", nullptr, 16 * MiB),
                      Contains("objs.json: error: the JSON tree of its 879 KiB of text would pass the memory cap of 16 MiB"));
    CHECK(report::read_json_file(objs.string(), "a measured timeline", nullptr, 64 * MiB)["a"].size() == 300'000);
    // calibrate --max-memory: a committed microbenchmark file (1.6 MB) under a 512 KiB cap.
    const fs::path out = dir / "never.yaml";
    hetsim_test::Cli r = hetsim_test::cli("calibrate validation/measurements/h200/2026-12-01d/microbench.json -o '" + out.string() +
                                          "' --max-memory 512KiB");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("microbench.json: error: the file is"));
    CHECK_THAT(r.err, Contains("the memory cap of 512 KiB (--max-memory)"));
    CHECK(!fs::exists(out));
    fs::remove_all(dir);
}

// Measured timelines are committed as NAME.json.gz: every reader of JSON takes gzip (issue 14's
// starts at a tenth of their text, so that the tree travels to the GPU machine).
TEST_CASE("measured timelines: gzip files read as their text, within the cap, and told from traces", "[limits]") {
    const fs::path dir = fs::temp_directory_path() / ("hetsim-json-gz-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string committed = "validation/measurements/h200/2026-11-30a/measured/01_pipeline_1stream_small.json.gz";
    const fs::path plain = dir / "01.json";
    {
        gzFile f = gzopen(committed.c_str(), "rb");
        REQUIRE(f != nullptr);
        std::string text;
        char buf[4096];
        for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
        gzclose(f);
        write_text(plain, text);
    }
    CHECK(report::read_json_file(committed, "a measured timeline") == report::read_json_file(plain.string(), "a measured timeline"));
    CHECK(!looks_like_kineto(committed));  // compare reads it as a measured timeline, not a trace
    bool gz = false;
    CHECK(report::read_text_head(committed, 16, &gz) == report::read_text_head(plain.string(), 16));
    CHECK(gz);

    SECTION("compare gives the same answer from either form") {
        const std::string scenario = "scenarios/validation/01_pipeline_1stream_small.yaml";
        hetsim_test::Cli a = hetsim_test::cli("compare " + scenario + " " + committed + " --format json");
        hetsim_test::Cli b = hetsim_test::cli("compare " + scenario + " '" + plain.string() + "' --format json");
        REQUIRE(a.exit_code == 0);
        std::string a_out = a.out;  // the same but for the file's name
        a_out.replace(a_out.find(committed), committed.size(), plain.string());
        CHECK(a_out == b.out);
    }
    SECTION("a truncated gzip file is bad input naming what it should be") {
        std::ifstream in(committed, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        write_text(dir / "cut.json.gz", bytes.substr(0, bytes.size() / 2));
        CHECK_THROWS_WITH(report::read_json_file((dir / "cut.json.gz").string(), "a measured timeline"),
                          Contains("cut.json.gz: error: the gzip data is truncated or corrupt (zlib: ") &&
                              Contains("); it should be a measured timeline"));
    }
    SECTION("a gzip file that expands past half the cap is refused as it expands") {
        write_gzip(dir / "bomb.json.gz", "{\"schema\": \"hetsim.measured\", \"pad\": \"" + std::string(20 * MiB, ' ') + "\"}");
        CHECK_THROWS_WITH(report::read_json_file((dir / "bomb.json.gz").string(), "a measured timeline", nullptr, 16 * MiB),
                          Contains("bomb.json.gz: error: the gzip file expands to more than 8 MiB of text"));
    }
    SECTION("validate: one scenario measured twice in a folder, or without its run times, is bad input") {
        const fs::path start = dir / "start";
        fs::create_directories(start / "measured");
        fs::copy_file(committed, start / "measured" / "01_pipeline_1stream_small.json.gz");
        fs::copy_file(plain, start / "measured" / "01_pipeline_1stream_small.json");
        hetsim_test::Cli r = hetsim_test::cli("validate '" + start.string() + "'");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains("error: scenario '01_pipeline_1stream_small' is measured twice here (") &&
                              Contains("); keep one of the two files"));
        fs::remove(start / "measured" / "01_pipeline_1stream_small.json.gz");
        write_text(start / "measured" / "01_pipeline_1stream_small.json",
                   "{\"schema\": \"hetsim.measured\", \"version\": 1,\n \"uninstrumented_end_to_end_ns\": []}");
        r = hetsim_test::cli("validate '" + start.string() + "'");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains("01_pipeline_1stream_small.json:2:34: error: a measured timeline needs a non-empty list "
                                   "'uninstrumented_end_to_end_ns' of run times"));
    }
    fs::remove_all(dir);
}
