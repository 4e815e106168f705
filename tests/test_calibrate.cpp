// `hetsim calibrate`: the least-squares helpers on synthetic samples, the fits on the committed
// H200 microbenchmark data (against its previews), the shipped profile reproduced byte for byte,
// pooling, and bad inputs.
#include <catch2/catch.hpp>

#include <cctype>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <tuple>

#include "cli_util.hpp"
#include "frontend/expr.hpp"
#include "frontend/profile_loader.hpp"
#include "models/calibration.hpp"
#include "models/fit.hpp"
#include "sim/error.hpp"

using namespace hetsim_test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kData = "validation/measurements/h200/2026-11-30a/microbench.json";
const fs::path kSource = HETSIM_SOURCE_DIR;

hetsim::calib::MicrobenchFile committed() {
    hetsim::calib::MicrobenchFile f = hetsim::calib::load_microbench((kSource / kData).string());
    f.path = kData;
    return f;
}

double value_of(const hetsim::calib::Calibration& c, const std::string& key) {
    const hetsim::calib::Fitted* f = c.find(key);
    REQUIRE(f != nullptr);
    if (f->value == "true" || f->value == "false") return f->value == "true";
    return hetsim::parse_literal(f->value).as_double();
}

fs::path scratch_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("hetsim-calibrate-" + std::to_string(::getpid())) / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("calibrate: least squares recovers known parameters from noisy synthetic samples") {
    std::mt19937_64 rng(20261130);
    std::normal_distribution<double> noise(0.0, 1.0);

    // A copy: per-op time = 2.6us + bytes / 55.5 GB/s, 0.5 us noise, 16 MiB .. 1 GiB x 7 reps.
    std::vector<double> x, y;
    for (uint64_t b = 16ull << 20; b <= 1ull << 30; b *= 2)
        for (int r = 0; r < 7; ++r) {
            x.push_back(static_cast<double>(b));
            y.push_back(2.6 + static_cast<double>(b) * 1e6 / 55.5e9 + 0.5 * noise(rng));
        }
    hetsim::fit::Line l = hetsim::fit::fit_line(x, y);
    CHECK(l.n == 49);
    CHECK(1e6 / l.slope == Approx(55.5e9).epsilon(1e-4));
    CHECK(l.intercept == Approx(2.6).margin(0.5));
    CHECK(l.rms == Approx(0.5).epsilon(0.3));

    // The README's batch model: batch = a + k*f + k*bytes/B, 1% relative noise, weights 1/T^2.
    std::vector<std::vector<double>> rows;
    std::vector<double> t, w;
    for (uint64_t b = 4096; b <= 1ull << 30; b *= 2)
        for (int k : {1, 32})
            for (int r = 0; r < 7; ++r) {
                const double kk = k, bb = static_cast<double>(b);
                const double v = (8.0 + kk * 2.4 + kk * bb * 1e6 / 55.6e9) * (1 + 0.01 * noise(rng));
                rows.push_back({1.0, kk, kk * bb});
                t.push_back(v);
                w.push_back(1 / (v * v));
            }
    hetsim::fit::LeastSquares ls = hetsim::fit::least_squares(rows, t, w);
    REQUIRE(ls.coef.size() == 3);
    CHECK(ls.coef[0] == Approx(8.0).margin(0.3));
    CHECK(ls.coef[1] == Approx(2.4).margin(0.05));
    CHECK(1e6 / ls.coef[2] == Approx(55.6e9).epsilon(2e-3));

    // Per-rep offsets and one shared period (the gaps benchmark's start stamps).
    rows.clear();
    t.clear();
    for (int rep = 0; rep < 3; ++rep)
        for (int i = 0; i < 100; ++i) {
            std::vector<double> row(4, 0.0);
            row[static_cast<size_t>(rep)] = 1.0;
            row[3] = i;
            rows.push_back(row);
            t.push_back(10.0 * rep + 1.7 * i + 0.032 * std::floor(4 * std::fabs(noise(rng))));
        }
    ls = hetsim::fit::least_squares(rows, t);
    CHECK(ls.coef[3] == Approx(1.7).margin(2e-3));

    CHECK(hetsim::fit::median({3, 1, 2}) == 2);
    CHECK(hetsim::fit::median({4, 1, 2, 3}) == 2.5);
    CHECK(hetsim::fit::rms_about({1, 3}, 2) == 1);

    // Fits the data cannot make.
    CHECK_THROWS_WITH(hetsim::fit::fit_line({1e6}, {3.0}), Catch::Contains("at least 2 points, got 1"));
    CHECK_THROWS_WITH(hetsim::fit::fit_line({1e6, 1e6, 1e6}, {3.0, 3.1, 2.9}), Catch::Contains("2 distinct x"));
    CHECK_THROWS_WITH(hetsim::fit::least_squares({{1, 2}, {2, 4}, {3, 6}}, {1, 2, 3}), Catch::Contains("degenerate"));
    CHECK_THROWS_AS(hetsim::fit::median({}), hetsim::fit::FitError);
    CHECK_THROWS_AS(hetsim::fit::fit_line({1, 2}, {1, NAN}), hetsim::fit::FitError);
}

TEST_CASE("calibrate: literals are exact in the parser's integer units") {
    using namespace hetsim::calib;
    CHECK(format_time_literal(2599527) == "2.599527us");
    CHECK(format_time_literal(1600000) == "1.6us");
    CHECK(format_time_literal(0) == "0us");
    CHECK(format_time_literal(57994) == "0.057994us");
    CHECK(format_time_literal(12345678901) == "12.345678901ms");
    CHECK(round_bandwidth(55516719730.97) == 55516720000ull);
    CHECK(round_bandwidth(4495803903401.99) == 4495804000000ull);
    CHECK(format_bandwidth_literal(55516720000ull) == "55.51672GB/s");
    CHECK(format_bandwidth_literal(4495804000000ull) == "4.495804TB/s");
    CHECK(format_bandwidth_literal(999ull) == "999B/s");
    CHECK(format_size_literal(233472) == "228KiB");
    CHECK(format_size_literal(150109880320ull) == "143155.9375MiB");
    CHECK(format_size_literal(1000) == "1000B");
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2000; ++i) {
        const uint64_t v = rng() >> (rng() % 40 + 4);
        CHECK(hetsim::parse_literal(format_time_literal(static_cast<int64_t>(v))).i == static_cast<int64_t>(v));
        CHECK(hetsim::parse_literal(format_bandwidth_literal(v)).i == static_cast<int64_t>(v));
        CHECK(hetsim::parse_literal(format_size_literal(v)).i == static_cast<int64_t>(v));
    }
}

TEST_CASE("calibrate: the fits of the committed H200 data agree with the microbench previews") {
    hetsim::calib::MicrobenchFile f = committed();
    const hetsim::calib::Calibration c = hetsim::calib::calibrate({f});
    const json& b = f.doc["benchmarks"];
    auto preview = [&](const char* bench, const char* key) {
        const json& p = b[bench]["preview"][key];
        const std::string unit = p["unit"];
        const double v = p["value"];
        return unit == "us" ? v * 1e6 : unit == "GB/s" ? v * 1e9 : unit == "TB/s" ? v * 1e12 : unit == "KiB" ? v * 1024 : unit == "MiB" ? v * 1048576 : v;
    };
    const double gap = value_of(c, "gpu.stream_gap");  // ps
    CHECK(gap == preview("gaps", "gpu.stream_gap"));
    CHECK(value_of(c, "gpu.event_gap") == preview("gaps", "gpu.event_gap"));
    // Medians: the same samples, so the same values (to the written ps).
    for (auto [bench, key] : {std::pair{"launch", "host.launch_cost"}, {"launch", "host.sync_call_cost"},
                              {"launch", "host.event_record_cost"}, {"launch", "host.stream_wait_event_cost"},
                              {"launch", "gpu.launch_latency"}, {"launch", "host.sync_wakeup"},
                              {"copy_sweep", "host.memcpy_call_cost"}, {"d2d_memset", "host.memset_call_cost"}})
        CHECK(value_of(c, key) == Approx(preview(bench, key)).margin(1));
    // Least squares over raw samples vs the preview's line through per-size medians.
    for (auto [bench, key, rel] : {std::tuple{"copy_sweep", "copy.h2d.bandwidth", 1e-3}, {"copy_sweep", "copy.d2h.bandwidth", 1e-3},
                                   {"d2d_memset", "copy.d2d.bandwidth", 1e-3}, {"d2d_memset", "copy.memset.bandwidth", 2e-3},
                                   {"pageable_sweep", "host.pageable_h2d_bandwidth", 2e-3},
                                   {"pageable_sweep", "host.pageable_d2h_bandwidth", 2e-3}, {"hbm", "hbm.bandwidth", 1e-6},
                                   {"um", "um.fault_bandwidth", 1e-6}, {"um", "um.prefetch_h2d_bandwidth", 1e-6},
                                   {"um", "um.prefetch_d2h_bandwidth", 1e-6}, {"um", "um.cpu_fault_bandwidth", 1e-6}})
        CHECK(value_of(c, key) == Approx(preview(bench, key)).epsilon(rel));
    // Fixed costs: the preview's per-op intercept includes gpu.stream_gap (back to back in a stream).
    for (auto [bench, key] : {std::pair{"copy_sweep", "copy.h2d.fixed"}, {"copy_sweep", "copy.d2h.fixed"},
                              {"d2d_memset", "copy.d2d.fixed"}, {"d2d_memset", "copy.memset.fixed"}})
        CHECK(value_of(c, key) + gap == Approx(preview(bench, key)).margin(15e3));  // 15 ns
    CHECK(value_of(c, "kernel.min_duration") == Approx(preview("gaps", "kernel.min_duration")).margin(1e3));
    // 2 MiB prefetch calls of both buffer sizes (the preview takes the largest buffer's only).
    CHECK(value_of(c, "host.prefetch_call_cost") == Approx(preview("um", "host.prefetch_call_cost")).epsilon(0.02));
    for (const char* key : {"sm.count", "sm.max_threads", "sm.max_blocks", "sm.registers", "sm.shared_memory", "device.memory"})
        CHECK(value_of(c, key) == preview("device", key));
    CHECK(value_of(c, "hbm.sharing") == 1);
    // host.staging_chunk = (tail - copy.h2d.fixed - host.sync_wakeup) * copy.h2d.bandwidth.
    const double chunk = (preview("pageable_sweep", "check.pageable_h2d_tail") - value_of(c, "copy.h2d.fixed") -
                          value_of(c, "host.sync_wakeup")) * 1e-12 * value_of(c, "copy.h2d.bandwidth");
    CHECK(value_of(c, "host.staging_chunk") == Approx(chunk).margin(2048));
    for (const auto& p : c.params) {
        CHECK(p.source.rfind("fit: ", 0) == 0);
        CHECK(p.source.find(kData) != std::string::npos);
        CHECK(p.samples >= 1);
    }
}

TEST_CASE("calibrate: recovers a known copy model planted in the samples") {
    hetsim::calib::MicrobenchFile f = committed();
    std::mt19937_64 rng(99);
    std::normal_distribution<double> noise(0.0, 0.02);
    const double fixed = 0.75, bw = 40e9;  // us, B/s
    const double gap = 1.6;                // the data's gpu.stream_gap
    for (json& p : f.doc["benchmarks"]["copy_sweep"]["points"]) {
        if (p["op"] != "h2d") continue;
        const double k = p["k"].get<double>(), bytes = p["bytes"].get<double>();
        for (json& s : p["batch_gpu_us"]) s = 3.0 + k * (fixed + gap + bytes * 1e6 / bw) * (1 + noise(rng) * 1e-3);
    }
    const hetsim::calib::Calibration c = hetsim::calib::calibrate({f});
    CHECK(value_of(c, "copy.h2d.bandwidth") == Approx(bw).epsilon(2e-3));
    // batch/k at k = 32 carries 3us/32 of the per-batch part.
    CHECK(value_of(c, "copy.h2d.fixed") * 1e-6 == Approx(fixed + 3.0 / 32).margin(0.01));
}

TEST_CASE("calibrate: several inputs pool their samples") {
    hetsim::calib::MicrobenchFile f = committed(), g = committed();
    g.path = "second.json";
    const hetsim::calib::Calibration one = hetsim::calib::calibrate({f}), two = hetsim::calib::calibrate({f, g});
    REQUIRE(one.params.size() == two.params.size());
    for (size_t i = 0; i < one.params.size(); ++i) {
        INFO(one.params[i].key);
        CHECK(one.params[i].value == two.params[i].value);
        CHECK(two.params[i].samples == 2 * one.params[i].samples);
        CHECK(two.params[i].source.find(std::string(kData) + " + second.json") != std::string::npos);
    }
    // Different devices do not pool.
    g.doc["benchmarks"]["device"]["attributes"]["multiprocessor_count"] = 114;
    CHECK_THROWS_WITH(hetsim::calib::calibrate({f, g}), Catch::Contains("differs between the inputs"));
}

TEST_CASE("calibrate: hetsim calibrate reproduces the committed h200.yaml from the committed microbenchmark data") {
    // The exact command of the shipped profile's header, run in a copy of the tree's two files
    // so that the committed profile is not touched.
    fs::path dir = scratch_dir("reproduce");
    fs::create_directories(dir / "hw/profiles");
    fs::create_directories((dir / kData).parent_path());
    fs::copy_file(kSource / kData, dir / kData);
    fs::copy_file(kSource / "hw/profiles/h200.yaml", dir / "hw/profiles/h200.yaml");
    const std::string cmd = "cd '" + dir.string() + "' && '" HETSIM_CLI_PATH "' calibrate " + kData +
                            " --base hw/profiles/h200.yaml -o hw/profiles/h200.yaml >stdout.txt 2>stderr.txt";
    const int status = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(status));
    INFO(slurp(dir / "stderr.txt"));
    REQUIRE(WEXITSTATUS(status) == 0);
    const std::string committed_text = slurp(kSource / "hw/profiles/h200.yaml");
    const std::string regenerated = slurp(dir / "hw/profiles/h200.yaml");
    CHECK(committed_text.find("#   hetsim calibrate validation/measurements/h200/2026-11-30a/microbench.json --base "
                              "hw/profiles/h200.yaml -o hw/profiles/h200.yaml\n") != std::string::npos);
    CHECK(regenerated == committed_text);
    const std::string table = slurp(dir / "stdout.txt");
    CHECK(table.rfind("parameter", 0) == 0);
    CHECK(table.find("copy.h2d.bandwidth") != std::string::npos);
    // The shipped profile loads and its fitted entries say how they were fitted.
    hetsim::HwProfile p = hetsim::load_profile("h200", {"test"});
    CHECK(p.sm_count == 132);
    CHECK(committed_text.find("status: measured") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("calibrate: bad inputs exit 2 with one line") {
    fs::path dir = scratch_dir("bad");
    const json good = json::parse(slurp(kSource / kData));
    struct Case {
        const char* name;
        std::function<void(json&)> edit;
        const char* expect;
    };
    const std::vector<Case> cases = {
        {"schema", [](json& j) { j["schema"] = "hetsim.measured"; }, "expected \"hetsim.microbench\""},
        {"version", [](json& j) { j["version"] = 2; }, "version 2 is not supported"},
        {"missing", [](json& j) { j["benchmarks"].erase("hbm"); }, "benchmark 'hbm' is missing"},
        {"nonfinite", [](json& j) { j["benchmarks"]["copy_sweep"]["points"][3]["batch_gpu_us"][2] = nullptr; },
         "benchmarks.copy_sweep.points[3].batch_gpu_us[2]: is not a finite number"},
        {"string", [](json& j) { j["benchmarks"]["launch"]["launch_cost"]["call_us"][0] = "3.2"; },
         "benchmarks.launch.launch_cost.call_us[0]: expected a number, got string"},
        {"onepoint",
         [](json& j) {
             json keep = json::array();
             for (const json& p : j["benchmarks"]["copy_sweep"]["points"])
                 if (p["op"] != "d2h" || p["bytes"].get<uint64_t>() < (16u << 20)) keep.push_back(p);
                 else if (p["bytes"].get<uint64_t>() == (16u << 20)) {
                     json q = p;
                     q["batch_gpu_us"] = json::array({q["batch_gpu_us"][0]});
                     keep.push_back(q);
                 }
             j["benchmarks"]["copy_sweep"]["points"] = keep;
         },
         "copy_sweep d2h bandwidth (sizes >= 16 MiB): a fit of 2 parameters needs at least 2 points, got 1"},
        {"nopoints", [](json& j) { j["benchmarks"]["gaps"]["stamp_chains"]["chains"] = json::array(); },
         "gaps gpu.stream_gap: a median of no samples"},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        json j = good;
        c.edit(j);
        const fs::path in = dir / (std::string(c.name) + ".json"), out = dir / (std::string(c.name) + ".yaml");
        write(in, j.dump());
        Cli r = cli("calibrate '" + in.string() + "' -o '" + out.string() + "'");
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        // FILE: error: ..., or FILE:LINE:COL: error: ... where the problem is one value of the file.
        CHECK(r.err.rfind(in.string() + ":", 0) == 0);
        const std::string after = r.err.substr(std::min(r.err.size(), in.string().size()));
        CHECK((after.rfind(": error: ", 0) == 0 || (std::isdigit(static_cast<unsigned char>(after[1])) && after.find(": error: ") != std::string::npos)));
        CHECK(r.err.find(c.expect) != std::string::npos);
        CHECK(!fs::exists(out));
    }
    write(dir / "garbage.json", "{\"schema\": \"hetsim.microbench\", NaN}");
    for (const std::string& args :
         {"calibrate '" + (dir / "garbage.json").string() + "' -o '" + (dir / "g.yaml").string() + "'",
          "calibrate '" + (dir / "absent.json").string() + "' -o '" + (dir / "g.yaml").string() + "'",
          std::string("calibrate ") + kData, std::string("calibrate -o x.yaml"),
          std::string("calibrate ") + kData + " --base nosuchprofile -o '" + (dir / "g.yaml").string() + "'",
          std::string("calibrate ") + kData + " --bogus"}) {
        INFO(args);
        Cli r = cli(args);
        CHECK(r.exit_code == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.err.find("error: ") != std::string::npos);
    }
    CHECK(!fs::exists(dir / "g.yaml"));
    fs::remove_all(dir.parent_path());
}
