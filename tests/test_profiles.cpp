// Every shipped hardware profile loads, declares every parameter, and differs where its
// datasheet says it does.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "frontend/profile_loader.hpp"
#include "frontend/scenario.hpp"
#include "sim/engine.hpp"

using namespace hetsim;

namespace {
Time copy_time(const std::string& profile) {
    Scenario sc = load_scenario_text("hardware: " + profile + R"(
streams: [s]
threads:
  main:
    - memcpy_async: up
      direction: h2d
      bytes: 256MB
      stream: s
    - stream_sync: s
)", "profile-test.yaml");
    Timeline t = simulate(sc.program, sc.profile);
    return t.ops[0].gpu_end - t.ops[0].gpu_start;
}
}  // namespace

TEST_CASE("profiles: every shipped profile loads") {
    for (const char* name : {"h200", "h100-sxm", "h100-pcie", "a100-pcie", "gh200"}) {
        INFO(name);
        HwProfile p = load_profile(name, {});
        CHECK(p.name == name);
        CHECK(p.sm_count > 0);
        CHECK(p.h2d_bw > 0);
    }
    CHECK(load_profile("h100-pcie", {}).sm_count == 114);
    CHECK(load_profile("a100-pcie", {}).sm_count == 108);
    CHECK(load_profile("a100-pcie", {}).sm_shared_memory == 164 * 1024);
}

TEST_CASE("profiles: host links order as their datasheets say") {
    // 256 MB over PCIe Gen4 (A100) < Gen5 (H200, H100) < NVLink-C2C (GH200).
    Time a100 = copy_time("a100-pcie"), h200 = copy_time("h200"), gh200 = copy_time("gh200");
    CHECK(a100 > h200);
    CHECK(h200 > gh200);
    CHECK(a100.ps() == (transfer_time(256'000'000, 25'000'000'000) + load_profile("a100-pcie", {}).h2d_fixed).ps());
}

TEST_CASE("profiles: every parameter declares a range, and its default lies in it") {
    for (const auto& d : param_decls()) {
        INFO(d.key);
        CHECK(find_param(d.key) == &d);
        CHECK(std::string(d.description).size() > 10);
        const bool numeric = d.time || d.count || d.real;
        if (numeric) {
            CHECK(d.range.lo >= 0);  // nothing in the model is negative
            CHECK(d.range.lo < d.range.hi);
            CHECK(std::isfinite(d.range.hi));  // an upper bound against absurd inputs
            CHECK(d.positive == (d.range.lo == 0 && d.range.lo_open));
            if (d.latency) CHECK(d.range.contains(0));  // zero_latency must stay in range
        }
        if (d.rule) CHECK(d.default_value == std::string("on"));
        if (d.curve) CHECK(d.default_value == std::string("none"));
        // Bandwidths, sizes and costs have no universal value: a profile without a base must give them.
        if (d.dim == Dim::Bandwidth || d.dim == Dim::Bytes || d.time) CHECK(d.default_value == nullptr);
        if (d.default_value) {
            HwProfile p;
            CHECK_NOTHROW(set_profile_param(p, d.key, d.default_value, {"test"}));
        }
    }
}

TEST_CASE("profiles: values out of their declared range are errors naming the range") {
    HwProfile p;
    auto error = [&](const std::string& key, const std::string& text) {
        try {
            set_profile_param(p, key, text, {"x.yaml", 3, 5});
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error("gpu.hw_queues", "0") ==
          "x.yaml:3:5: error: hardware parameter 'gpu.hw_queues' must be at least 1, got '0' (allowed: 1 <= x <= 32)");
    CHECK(error("gpu.hw_queues", "33") ==
          "x.yaml:3:5: error: hardware parameter 'gpu.hw_queues' must be at most 32, got '33' (allowed: 1 <= x <= 32)");
    CHECK(error("um.prefetch_host_block", "1.5") ==
          "x.yaml:3:5: error: hardware parameter 'um.prefetch_host_block' must be at most 1, got '1.5' (allowed: 0 <= x <= 1)");
    CHECK(error("copy.duplex_factor", "0.5") ==
          "x.yaml:3:5: error: hardware parameter 'copy.duplex_factor' must be at least 1, got '0.5' (allowed: 1 <= x <= 10)");
    CHECK(error("host.launch_cost", "20ms") ==
          "x.yaml:3:5: error: hardware parameter 'host.launch_cost' must be at most 10ms, got '20ms' (allowed: 0 <= x <= 10ms)");
    CHECK(error("um.block_size", "1KiB") ==
          "x.yaml:3:5: error: hardware parameter 'um.block_size' must be at least 4KiB, got '1KiB' (allowed: 4KiB <= x <= 1GiB)");
    CHECK(error("hbm.bandwidth", "0GB/s") == "x.yaml:3:5: error: hardware parameter 'hbm.bandwidth' must be positive, got "
                                            "'0GB/s' (allowed: 0 < x <= 1000TB/s)");
    CHECK(error("sm.count", "2.5") == "x.yaml:3:5: error: hardware parameter 'sm.count' must be a whole number, got '2.5'");
    // The bounds themselves are allowed.
    for (auto [key, text] : {std::pair{"gpu.hw_queues", "1"}, {"gpu.hw_queues", "32"}, {"um.prefetch_host_block", "0"},
                             {"um.prefetch_host_block", "1"}, {"sm.count", "1024"}, {"copy.h2d.bandwidth", "100TB/s"},
                             {"host.launch_cost", "10ms"}, {"host.staging_pool", "0B"}})
        CHECK(error(key, text) == "no error");
}

TEST_CASE("profiles: quantities print in the unit that states them exactly") {
    CHECK(format_quantity(Dim::Time, 3'268'000) == "3.268us");
    CHECK(format_quantity(Dim::Time, 1500) == "1.5ns");
    CHECK(format_quantity(Dim::Time, 1e10) == "10ms");
    CHECK(format_quantity(Dim::Time, 0) == "0us");
    CHECK(format_quantity(Dim::Bytes, 228 * 1024) == "228KiB");
    CHECK(format_quantity(Dim::Bytes, 80e9) == "80GB");
    CHECK(format_quantity(Dim::Bytes, 150'109'880'320.0) == "143155.9375MiB");
    CHECK(format_quantity(Dim::Bandwidth, 55'482'350'000.0) == "55.48235GB/s");
    CHECK(format_quantity(Dim::Bandwidth, 1e14) == "100TB/s");
    CHECK(format_quantity(Dim::None, 6.7e13) == "6.7e13");
    CHECK(format_quantity(Dim::None, 0.44) == "0.44");
    CHECK(range_text(*find_param("copy.h2d.bandwidth")) == "0 < x <= 100TB/s");
    CHECK(range_text(*find_param("rules.duplex")) == "on or off");
    // Every value of a shipped profile reads back as the same value.
    for (const char* name : {"h200", "h100-sxm", "h100-pcie", "a100-pcie", "gh200"}) {
        HwProfile p = load_profile(name, {});
        for (const auto& d : param_decls()) {
            INFO(name << " " << d.key << " = " << value_text(p, d));
            HwProfile q = p;
            set_profile_param(q, d.key, value_text(p, d), {"test"});
            CHECK(value_text(q, d) == value_text(p, d));
            if (d.time) CHECK(q.*(d.time) == p.*(d.time));
            if (d.count) CHECK(q.*(d.count) == p.*(d.count));
        }
    }
}

namespace {
// A directory of profile files for one test, removed afterwards.
struct ProfileDir {
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("hetsim-profiles-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    ProfileDir() { std::filesystem::create_directories(dir); }
    ~ProfileDir() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(dir / name) << text;
        return (dir / name).string();
    }
    static int& counter() {
        static int n = 0;
        return n;
    }
};

std::string error_of(const std::string& profile) {
    try {
        load_profile(profile, {"test"});
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}
}  // namespace

TEST_CASE("profiles: a profile with a base inherits every value and overrides its own") {
    ProfileDir d;
    d.write("mid.yaml", "name: mid\nbase: h200\nparams:\n  sm.count: 100\n  hbm.bandwidth: {value: 3TB/s, source: x}\n");
    std::string top = d.write("top.yaml", "name: top\nbase: mid.yaml\nparams:\n  sm.count: 90\n  rules.duplex: off\n");
    const HwProfile h200 = load_profile("h200", {});
    const LoadedProfile lp = load_profile_sources(top, {});
    CHECK(lp.profile.name == "top");
    REQUIRE(lp.files.size() == 3);
    CHECK(lp.files[0].path == top);
    CHECK(lp.files[1].name == "mid.yaml");
    CHECK(lp.files[2].name == "h200");
    const auto& decls = param_decls();
    for (size_t k = 0; k < decls.size(); ++k) {
        const std::string key = decls[k].key;
        INFO(key);
        int want = key == "sm.count" || key == "rules.duplex" ? 0 : key == "hbm.bandwidth" ? 1 : 2;
        CHECK(lp.origin[k] == want);
        if (want == 2) CHECK(value_text(lp.profile, decls[k]) == value_text(h200, decls[k]));
    }
    CHECK(lp.profile.sm_count == 90);
    CHECK(lp.profile.hbm_bw == 3'000'000'000'000ULL);
    CHECK(!lp.profile.rules.duplex);
    // A base without params is the base under another name.
    std::string alias = d.write("alias.yaml", "name: alias\nbase: h200\n");
    CHECK(load_profile(alias, {}).name == "alias");
    CHECK(load_profile(alias, {}).h2d_bw == h200.h2d_bw);
}

TEST_CASE("profiles: a chain of bases deeper than 64 profiles is an error, not a stack overflow") {
    ProfileDir d;
    // p0 has base h200, p<k> has base p<k-1>: p63's chain is 64 profiles + h200 (65 deep).
    for (int k = 0; k < 2000; ++k)
        d.write("p" + std::to_string(k) + ".yaml",
                "name: p" + std::to_string(k) + "\nbase: " + (k == 0 ? std::string("h200") : "p" + std::to_string(k - 1) + ".yaml") + "\nparams: {}\n");
    // p62: 63 profiles + h200 = 64.
    CHECK(load_profile((d.dir / "p62.yaml").string(), {"test"}).name == "p62");
    // Said at the outermost profile's base, read now or (p63, whose base p62 is cached) not.
    for (const char* top : {"p1999.yaml", "p63.yaml", "p100.yaml"}) {
        const std::string path = (d.dir / top).string();
        CHECK(error_of(path).find(path + ":2:7: error: profile bases nest more than 64 deep (from " + path + ")") == 0);
    }
}

TEST_CASE("profiles: a profile read before is read again once a file of its base chain changes") {
    ProfileDir d;
    d.write("base.yaml", "base: h200\nparams:\n  sm.count: 100\n");
    std::string top = d.write("top.yaml", "base: base.yaml\nparams: {}\n");
    CHECK(load_profile(top, {}).sm_count == 100);
    d.write("base.yaml", "base: h200\nparams:\n  sm.count: 64   # a different size too\n");
    CHECK(load_profile(top, {}).sm_count == 64);
}

TEST_CASE("profiles: without a base, switches and neutral rule parameters take their defaults, the rest is required") {
    ProfileDir d;
    // Every required parameter of h200, nothing else.
    const HwProfile h200 = load_profile("h200", {});
    std::string text = "name: minimal\nparams:\n";
    for (const auto& p : param_decls())
        if (!p.default_value) text += "  " + std::string(p.key) + ": \"" + value_text(h200, p) + "\"\n";
    std::string file = d.write("minimal.yaml", text);
    LoadedProfile lp = load_profile_sources(file, {});
    const auto& decls = param_decls();
    for (size_t k = 0; k < decls.size(); ++k) {
        INFO(decls[k].key);
        CHECK(lp.origin[k] == (decls[k].default_value ? -1 : 0));
    }
    CHECK(lp.profile.hw_queues == 8);
    CHECK(lp.profile.duplex_factor == 1);
    CHECK(lp.profile.launch_contention == 0);
    CHECK(lp.profile.um_prefetch_host_block == 0);
    CHECK(lp.profile.h2d_eff.points.empty());
    CHECK(lp.profile.rules.duplex);
    CHECK(lp.profile.hbm_sharing);
    CHECK(!lp.profile.pageable_sync);
    // Without one required parameter: an error naming it.
    std::string less = text.substr(0, text.find("  host.memcpy_call_cost")) + text.substr(text.find("  host.memset_call_cost"));
    std::string bad = d.write("less.yaml", less);
    CHECK(error_of(bad) == bad + ":3:3: error: profile is missing parameter 'host.memcpy_call_cost' (host time of a "
                                 "cudaMemcpy(Async) call, a time); add it under 'params'");
}
