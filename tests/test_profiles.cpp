// Every shipped hardware profile loads, declares every parameter, and differs where its
// datasheet says it does.
#include <catch2/catch.hpp>

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
