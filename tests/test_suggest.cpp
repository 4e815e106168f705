// Suggestions, each simulated (sweep/suggest.hpp): every suggestion's end to end equals a separate
// `hetsim run` of the same change, made by hand here: its --set overrides on the command line,
// its edits written into a copy of the file (yaml-cpp, not the code under test).
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.hpp"

using nlohmann::json;
namespace fs = std::filesystem;
using hetsim_test::cli;

namespace {

json run_json(const std::string& args) {
    const auto r = cli("run " + args + " --format json");
    INFO(args << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
}

// The file with `edits` made (dotted paths), written beside the test's temporary files.
std::string edited_copy(const std::string& rel, const json& edits, int n) {
    YAML::Node root = YAML::LoadFile(std::string(HETSIM_SOURCE_DIR) + "/" + rel);
    for (auto it = edits.begin(); it != edits.end(); ++it) {
        const std::string path = it.key();
        YAML::Node node = root;
        size_t from = 0, dot;
        while ((dot = path.find('.', from)) != std::string::npos) {
            const std::string part = path.substr(from, dot - from);
            if (!node[part] || !node[part].IsMap()) node[part] = YAML::Node(YAML::NodeType::Map);
            YAML::Node next = node[part];
            node.reset(next);  // rebind: operator= would write into the node
            from = dot + 1;
        }
        node[path.substr(from)] = it.value().get<std::string>();
    }
    const fs::path dir = fs::temp_directory_path() / ("hetsim-suggest-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path out = dir / ("edited" + std::to_string(n) + ".yaml");
    YAML::Emitter e;
    e << root;
    std::ofstream(out) << e.c_str() << "\n";
    return out.string();
}

// Every suggestion of `rel`, redone as its own run.
size_t check_each(const std::string& rel, const std::string& extra = "") {
    const json j = run_json(rel + extra);
    REQUIRE(j.contains("suggestions"));
    const json& s = j["suggestions"];
    int n = 0;
    for (const json& g : s) {
        INFO(rel << ": " << g.dump());
        std::string args = g["edits"].empty() ? rel : edited_copy(rel, g["edits"], n++);
        args += extra;
        for (const json& set : g["sets"]) args += " --set " + set.get<std::string>();
        const json alone = run_json(args + " --no-suggest");
        CHECK(alone["end_to_end_ns"] == g["end_to_end_ns"]);
        CHECK(!alone.contains("suggestions"));
        const double base = j["end_to_end_ns"].get<double>(), e = g["end_to_end_ns"].get<double>();
        CHECK(g["delta_pct"].get<double>() == Approx((e / base - 1) * 100).margin(0.006));
    }
    // Best first.
    for (size_t k = 1; k < s.size(); ++k) CHECK(s[k - 1]["end_to_end_ns"].get<double>() <= s[k]["end_to_end_ns"].get<double>());
    return s.size();
}

}  // namespace

TEST_CASE("suggest: each suggestion equals a separate run of the same change") {
    // Pinned for the pageable upload on the critical path, blocking sync, the prefetch knob and
    // everything that helped together.
    CHECK(check_each("scenarios/examples/loader_bound_loop.yaml") >= 4);
    CHECK(check_each("scenarios/seeds/pinned_vs_pageable.yaml") >= 2);
    // Two knobs: every combination fits the budget; more hardware queues for its streams.
    CHECK(check_each("scenarios/examples/chunked_pipeline.yaml") >= 10);
    // A --set of the run carries into every suggestion's run.
    CHECK(check_each("scenarios/examples/copy_bound_pipeline.yaml", " --set chunks=8") >= 3);
}

TEST_CASE("suggest: what the loader-bound loop is told to try") {
    const json j = run_json("scenarios/examples/loader_bound_loop.yaml");
    const json& s = j["suggestions"];
    bool pinned = false, knob = false;
    for (const json& g : s) {
        if (g["kind"] == "pinned") {
            pinned = true;
            CHECK(g["edits"] == json{{"buffers.h_batch.kind", "pinned"}});
            CHECK(g["end_to_end_ns"].get<double>() < j["end_to_end_ns"].get<double>());
        }
        if (g["kind"] == "knob" && g["change"] == "prefetch=1") {
            knob = true;
            CHECK(g["delta_pct"].get<double>() < -20);  // the loader overlaps the training
        }
    }
    CHECK(pinned);
    CHECK(knob);
    // The best is prefetching with the batch pinned, together.
    CHECK(s[0]["kind"] == "combination");
    const auto text = cli("run scenarios/examples/loader_bound_loop.yaml");
    REQUIRE(text.exit_code == 0);
    CHECK(text.out.find("suggestions (each simulated end to end; baseline ") != std::string::npos);
    CHECK(text.out.find("  try prefetch=1 + h_batch pinned instead of pageable (cudaMallocHost): ") != std::string::npos);
    CHECK(text.out.find("why the GPU idles") != std::string::npos);
}

TEST_CASE("suggest: no combination repeats a change listed already, no -0.0% among those that help") {
    // A knob that pins the batch buffer itself: `mem=pinned` and the edit that pins h_batch are one
    // change, so `prefetch=1 mem=pinned + h_batch pinned instead of pageable` adds nothing to
    // `prefetch=1 mem=pinned`.
    const fs::path dir = fs::temp_directory_path() / ("hetsim-suggest-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path f = dir / "mem_knob.yaml";
    std::ofstream(f) << "hardware: h200\nparams: {n: 20, load: 3.5ms, batch: 8MiB, prefetch: 0, mem: pageable}\n"
                        "knobs: {prefetch: [0, 1], mem: [pageable, pinned]}\n"
                        "buffers:\n  h_batch: {kind: '${mem}', size: batch, count: 2}\n  d_batch: {kind: device, size: batch, count: 2}\n"
                        "streams: [s]\nthreads:\n  main:\n    - repeat: n\n      var: i\n      do:\n"
                        "        - {host: load_batch, duration: load}\n"
                        "        - if: prefetch > 0 && i > 0\n          then:\n            - stream_sync: s\n"
                        "        - {memcpy_async: upload, src: 'h_batch[i % 2]', dst: 'd_batch[i % 2]', stream: s}\n"
                        "        - {kernel: forward_backward, stream: s, duration: 6ms, grid: 264, block: 256}\n"
                        "        - if: prefetch == 0\n          then:\n            - stream_sync: s\n"
                        "    - stream_sync: s\n";
    for (const std::string& rel : {f.string(), std::string("scenarios/examples/loader_bound_loop.yaml"),
                                   std::string("scenarios/examples/chunked_pipeline.yaml")}) {
        INFO(rel);
        const json j = run_json("'" + rel + "'");
        const json& s = j["suggestions"];
        auto subset = [](const json& part, const json& whole) {
            for (auto it = part.begin(); it != part.end(); ++it)
                if (whole.is_object() ? (!whole.contains(it.key()) || whole[it.key()] != it.value())
                                      : std::find(whole.begin(), whole.end(), *it) == whole.end())
                    return false;
            return true;
        };
        for (const json& g : s) {
            if (g["kind"] != "combination") continue;
            for (const json& h : s) {
                if (&h == &g || h["end_to_end_ns"] != g["end_to_end_ns"]) continue;
                INFO(g["change"] << " repeats " << h["change"]);
                CHECK(!(subset(h["sets"], g["sets"]) && subset(h["edits"], g["edits"])));
            }
        }
        const auto text = cli("run '" + rel + "'");
        REQUIRE(text.exit_code == 0);
        CHECK(text.out.find("(-0.0%)") == std::string::npos);
        CHECK(text.out.find("(+0.0%)") == std::string::npos);
        if (rel == f.string()) {
            CHECK(text.out.find("  try prefetch=1 mem=pinned: ") != std::string::npos);
            CHECK(text.out.find("mem=pinned + h_batch pinned") == std::string::npos);
        }
    }
}

TEST_CASE("suggest: --no-suggest, the budget and the op limit") {
    const json none = run_json("scenarios/examples/chunked_pipeline.yaml --no-suggest");
    CHECK(!none.contains("suggestions"));
    const json two = run_json("scenarios/examples/chunked_pipeline.yaml --suggest-budget 2");
    CHECK(two["suggestions"].size() <= 2);
    const json skipped = run_json("scenarios/examples/chunked_pipeline.yaml --suggest-max-ops 10");
    CHECK(skipped["suggestions"].empty());
    CHECK(skipped["suggestions_skipped"].get<std::string>().find("more than the 10 that --suggest-max-ops allows") != std::string::npos);
    const auto text = cli("run scenarios/examples/chunked_pipeline.yaml --suggest-max-ops 10");
    CHECK(text.out.find("  none simulated: the program has ") != std::string::npos);
}

TEST_CASE("suggest: a knob value whose run fails is said, not suggested") {
    // nstreams=9 names a stream s[8] that the file does not declare (s has 4).
    const auto r = cli("run scenarios/examples/copy_bound_pipeline.yaml --set nstreams=1 --format json");
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(!j.contains("suggestions_failed"));
    const fs::path dir = fs::temp_directory_path() / ("hetsim-suggest-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path f = dir / "failing_knob.yaml";
    std::ofstream(f) << "hardware: h200\nparams: {nstreams: 1}\nknobs: {nstreams: [1, 2, 9]}\nstreams: {s: {count: 2}}\n"
                        "threads:\n  main:\n    - repeat: 4\n      var: i\n      do:\n        - kernel: k\n"
                        "          stream: s[i % nstreams]\n          duration: 1ms\n    - device_sync:\n";
    const json k = run_json("'" + f.string() + "'");
    for (const json& g : k["suggestions"]) CHECK(g["change"] != "nstreams=9");
    REQUIRE(k.contains("suggestions_failed"));
    REQUIRE(k["suggestions_failed"].size() == 1);
    CHECK(k["suggestions_failed"][0].get<std::string>().rfind("nstreams=9: ", 0) == 0);
    const auto text = cli("run '" + f.string() + "'");
    CHECK(text.out.find("  could not simulate nstreams=9: ") != std::string::npos);
}

TEST_CASE("suggest: bad knobs are reported with their place") {
    const fs::path dir = fs::temp_directory_path() / ("hetsim-suggest-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto check = [&](const std::string& knobs, const std::string& message) {
        const fs::path f = dir / "bad_knobs.yaml";
        std::ofstream(f) << "hardware: h200\nparams: {n: 2, size: 1MiB}\n" << knobs << "\nthreads:\n  main:\n    - host: a\n      duration: 1ms\n";
        const auto r = cli("run '" + f.string() + "'");
        INFO(knobs << "\n" << r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.err.find(message) != std::string::npos);
    };
    check("knobs: {m: [1, 2]}", "bad_knobs.yaml:3:9: error: unknown key 'm' in knobs (each knob is a param declared under 'params'); did you mean 'n'?");
    check("knobs: {n: 8..1}", "bad_knobs.yaml:3:12: error: knob 'n': expected a list of values or an integer range such as 1..8 or 1..16+4, got '8..1'");
    check("knobs: {n: []}", "bad_knobs.yaml:3:12: error: knob 'n' has no values to try");
    check("knobs: {n: 1..100}", "knob 'n' has more than 64 values");
    check("knobs: [n]", "bad_knobs.yaml:3:8: error: 'knobs' must map params to the values to try");
    check("knobs: {n: [[1]]}", "knob 'n': each value must be a plain value such as 2 or 8MiB, got a list");
}
