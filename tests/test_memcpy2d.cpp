// Pitched copies (cudaMemcpy2DAsync, issue 10 item 5): lowering, the cost model's per-row bound,
// the program JSON, and hand-derived timelines. Scenarios start from `zero_latency: true` (no
// fixed costs or gaps) and set the bandwidths and copy.row_cost.* they test.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/program_json.hpp"
#include "engine_test_util.hpp"
#include "models/copy_model.hpp"

using namespace hetsim;
using namespace hetsim::enginetest;

namespace {
const std::string kHw = R"(hardware:
  profile: h200
  zero_latency: true
  copy.h2d.bandwidth: 1GB/s
  copy.d2h.bandwidth: 1GB/s
  copy.row_cost.h2d: 100ns
  copy.row_cost.h2d_dense: 0ns
  copy.row_cost.d2h: 100ns
  copy.row_cost.pageable_h2d: 0ns
  copy.row_cost.pageable_d2h: 0ns
  copy.row_cost.pageable_d2h_sparse: 0ns
  copy.row_cost.blend: 1000
)";
const std::string kBufs = R"(buffers:
  h_img: {kind: pinned, size: 1MiB}
  d_img: {kind: device, size: 1MiB}
  p_img: {kind: pageable, size: 1MiB}
streams: [s]
)";
}  // namespace

TEST_CASE("memcpy2d: narrow rows are bound by the row cost, wide rows by bandwidth", "[engine][memcpy2d]") {
    const Sim s = run(kHw + kBufs + R"(threads:
  main:
    - memcpy2d_async: narrow
      src: h_img
      dst: d_img
      width: 64B
      height: 1024
      spitch: 128B
      stream: s
    - memcpy2d_async: wide
      src: h_img
      dst: d_img
      width: 4KiB
      height: 16
      spitch: 8KiB
      stream: s
    - memcpy2d_async: contiguous
      src: h_img
      dst: d_img
      width: 64B
      height: 1024
      stream: s
    - memcpy2d_async: down
      src: d_img
      dst: h_img
      width: 16B
      height: 4096
      spitch: 16B
      dpitch: 32B
      stream: s
)");
    // narrow: 1024 rows x 64 B = 65536 B; bandwidth alone 65536 B / 1 GB/s = 65.536 us, rows
    // alone 1024 x 100 ns = 102.4 us: the rows bind, [0, 102.4] us.
    check_gpu(s, "narrow", Time{}, ns(102'400));
    // wide: 16 rows x 4 KiB = 65536 B: 65.536 us of bandwidth against 1.6 us of rows; in stream
    // order after narrow (no gaps under zero_latency): [102.4, 167.936] us.
    check_gpu(s, "wide", ns(102'400), ns(167'936));
    // contiguous: both pitches default to the width; the rows still move one by one (the H200
    // does not merge contiguous rows): 1024 x 100 ns = 102.4 us, [167.936, 270.336] us.
    check_gpu(s, "contiguous", ns(167'936), ns(270'336));
    // down: D2H of 4096 rows x 16 B = 65536 B, dpitch 32 B:
    // rows 4096 x 100 ns = 409.6 us > 65.536 us; [270.336, 679.936] us.
    check_gpu(s, "down", ns(270'336), ns(679'936));
    check_end(s, ns(679'936));
    // The op carries the bytes moved; the site the shape.
    const Program& p = s.sc.program;
    CHECK(p.ops[3].bytes == 65536);
    CHECK(p.site(p.ops[3]).rows == 4096);
    CHECK(p.site(p.ops[3]).spitch == 16);
    CHECK(p.site(p.ops[3]).dpitch == 32);
    CHECK(p.site(p.ops[2]).spitch == 64);  // defaults: the width
}

TEST_CASE("memcpy2d: a pageable pitched copy is staged and still pays its rows", "[engine][memcpy2d]") {
    const Sim s = run(kHw + kBufs + R"(threads:
  main:
    - memcpy2d_async: up
      src: p_img
      dst: d_img
      width: 64B
      height: 1024
      spitch: 128B
      stream: s
)");
    // The DMA of a pageable copy lasts at least the copy alone (copy_duration): 102.4 us of rows.
    const OpRecord& r = s.op("up");
    CHECK(r.gpu_end - r.gpu_start >= ns(102'400));
    CHECK(r.has_host());
}

TEST_CASE("memcpy2d: the cost model", "[models][memcpy2d]") {
    HwProfile p = load_scenario_text(kHw + "threads: {main: [{host: x, duration: 1us}]}\n", "t.yaml").profile;
    Op op;
    op.kind = OpKind::Memcpy;
    op.dir = CopyDir::H2D;
    op.bytes = 65536;
    Site linear, pitched, packed;
    pitched.rows = 1024, pitched.spitch = 128, pitched.dpitch = 64;
    packed.rows = 1024, packed.spitch = 64, packed.dpitch = 64;
    CHECK(dma_rows(linear, op.bytes) == 1);
    CHECK(dma_rows(pitched, op.bytes) == 1024);
    CHECK(dma_rows(packed, op.bytes) == 1024);  // both pitches = width: still 1024 rows
    CHECK(host_pitch(linear, CopyDir::H2D) == 0);
    CHECK(host_pitch(pitched, CopyDir::H2D) == 128);  // H2D: the source's
    CHECK(host_pitch(pitched, CopyDir::D2H) == 64);   // D2H: the destination's
    CHECK(copy_duration(p, op, 1) == ns(65'536));
    CHECK(copy_duration(p, op, 1024) == ns(102'400));
    CHECK(copy_duration(p, op, 16) == ns(65'536));
    // The density term: 100 ns + 50 ns x 128 B / pitch per H2D row. At pitch 128: 150 ns x 1024 =
    // 153.6 us; at pitch 64: 200 ns x 1024 = 204.8 us; at pitch 48: 50 x 128 / 48 = 133.33 ns,
    // 1024 rows: ceil(50000 x 1024 x 128 / 48) ps = 136'533'334 ps + 102.4 us.
    p.row_cost_h2d_dense = ns(50);
    CHECK(copy_duration(p, op, 1024, 128) == ns(153'600));
    CHECK(copy_duration(p, op, 1024, 64) == ns(204'800));
    CHECK(copy_duration(p, op, 1024, 48) == ns(102'400) + Time::ps(136'533'334));
    op.dir = CopyDir::D2H;  // no density term for D2H
    CHECK(copy_duration(p, op, 1024, 64) == ns(102'400));
    // Blending the two bounds: bandwidth b = 65.536 us, rows r = 102.4 us. k = 1 adds them:
    // 167.936 us; k = 2: 102.4 x sqrt(1 + 0.64^2) = 121.576014 us; k = 4: 102.4 x (1 + 0.64^4)^(1/4)
    // = 106.448485 us (rounded to the ps); k = 1000: the larger, 102.4 us.
    p.row_cost_h2d_dense = Time{};
    op.dir = CopyDir::H2D;
    p.row_cost_blend = 1;
    CHECK(copy_duration(p, op, 1024, 128) == ns(167'936));
    p.row_cost_blend = 2;
    CHECK(copy_duration(p, op, 1024, 128) == Time::ps(121'576'014));
    p.row_cost_blend = 4;
    CHECK(copy_duration(p, op, 1024, 128) == Time::ps(106'448'485));
    CHECK(copy_duration(p, op, 1, 128) == ns(65'536));  // a linear copy: bandwidth only
    p.row_cost_blend = 1000;
    CHECK(copy_duration(p, op, 1024, 128) == ns(102'400));
    // Pageable rows: host time per row, nothing for a linear copy or a D2D.
    p.row_cost_pageable_h2d = ns(3), p.row_cost_pageable_d2h = ns(7);
    CHECK(pageable_row_time(p, CopyDir::H2D, 1000) == ns(3000));
    CHECK(pageable_row_time(p, CopyDir::D2H, 1000) == ns(7000));
    CHECK(pageable_row_time(p, CopyDir::D2H, 1) == Time{});
    CHECK(pageable_row_time(p, CopyDir::D2D, 1000) == Time{});
    // Sparse D2H rows (< 64 B wide, apart on the host): + 40 ns x min(pitch, 128) / 128 a row.
    // 16 B rows at pitch 48: 40 x 48/128 = 15 ns; at 512: 40 ns; at pitch 16 (packed), 64 B rows,
    // or H2D: nothing more. 1000 rows at pitch 20: ceil(40000 x 1000 x 20 / 128) ps = 6.25 us.
    p.row_cost_pageable_d2h_sparse = ns(40);
    CHECK(pageable_row_time(p, CopyDir::D2H, 1000, 16, 48) == ns(22'000));
    CHECK(pageable_row_time(p, CopyDir::D2H, 1000, 16, 512) == ns(47'000));
    CHECK(pageable_row_time(p, CopyDir::D2H, 1000, 16, 16) == ns(7'000));
    CHECK(pageable_row_time(p, CopyDir::D2H, 1000, 64, 512) == ns(7'000));
    CHECK(pageable_row_time(p, CopyDir::D2H, 1000, 16, 20) == ns(7'000) + Time::ps(6'250'000));
    CHECK(pageable_row_time(p, CopyDir::H2D, 1000, 16, 512) == ns(3000));
}

TEST_CASE("memcpy2d: densely packed H2D rows cost more per row", "[engine][memcpy2d]") {
    std::string hw = kHw;
    hw.replace(hw.find("h2d_dense: 0ns"), 14, "h2d_dense: 50ns");
    const Sim s = run(hw + kBufs + R"(threads:
  main:
    - memcpy2d_async: apart
      src: h_img
      dst: d_img
      width: 64B
      height: 1024
      spitch: 128B
      stream: s
    - memcpy2d_async: packed
      src: h_img
      dst: d_img
      width: 64B
      height: 1024
      dpitch: 256B
      stream: s
    - memcpy2d_async: down_packed
      src: d_img
      dst: h_img
      width: 64B
      height: 1024
      stream: s
)");
    // apart: rows 128 B apart on the host: 100 + 50 x 128/128 = 150 ns per row, 1024 rows =
    // 153.6 us > 65.536 us of bandwidth: [0, 153.6] us.
    check_gpu(s, "apart", Time{}, ns(153'600));
    // packed: source rows contiguous (spitch = width 64 B; the device pitch does not count):
    // 100 + 50 x 2 = 200 ns per row: 204.8 us, [153.6, 358.4] us.
    check_gpu(s, "packed", ns(153'600), ns(358'400));
    // down_packed: D2H rows pay copy.row_cost.d2h whatever the pitch: 102.4 us, [358.4, 460.8].
    check_gpu(s, "down_packed", ns(358'400), ns(460'800));
    check_end(s, ns(460'800));
}

TEST_CASE("memcpy2d: a pageable pitched copy costs the host per row", "[engine][memcpy2d]") {
    std::string hw = kHw + R"(  host.pageable_h2d_bandwidth: 1GB/s
  host.pageable_d2h_bandwidth: 1GB/s
  host.staging_chunk: 1MiB
)";
    hw.replace(hw.find("pageable_h2d: 0ns"), 17, "pageable_h2d: 200ns");
    hw.replace(hw.find("pageable_d2h: 0ns"), 17, "pageable_d2h: 300ns");
    SECTION("H2D") {
        const Sim s = run(hw + kBufs + R"(threads:
  main:
    - memcpy2d_async: up
      src: p_img
      dst: d_img
      width: 64B
      height: 1024
      spitch: 128B
      stream: s
)");
        // The call stages 65536 B at 1 GB/s (65.536 us) and packs 1024 rows x 200 ns (204.8 us):
        // host [0, 270.336] us. The whole copy is one chunk, so the DMA starts when it is staged
        // and moves its rows: 1024 x 100 ns = 102.4 us (> 65.536 us of bandwidth): [270.336,
        // 372.736] us.
        const OpRecord& r = s.op("up");
        CHECK(r.host_start == Time{});
        CHECK(r.host_end == ns(270'336));
        check_gpu(s, "up", ns(270'336), ns(372'736));
    }
    SECTION("D2H") {
        const Sim s = run(hw + kBufs + R"(threads:
  main:
    - memcpy2d_async: down
      src: d_img
      dst: p_img
      width: 16B
      height: 4096
      dpitch: 32B
      stream: s
)");
        // The whole copy is one chunk (65536 B < 1 MiB): it lands in an empty bounce buffer at the
        // copy's own speed, rows 4096 x 100 ns = 409.6 us (> 65.536 us of bandwidth): [0, 409.6];
        // then the host drains it (65536 B at 1 GB/s: 65.536 us) and unpacks its 4096 rows (x 300
        // ns = 1228.8 us): the call returns at 409.6 + 65.536 + 1228.8 = 1703.936 us. (H200,
        // validation 93: the DMA of 8192 16-byte rows lasts 11 us, the call returns 208 us after.)
        check_gpu(s, "down", Time{}, ns(409'600));
        CHECK(s.op("down").host_end == ns(1'703'936));
    }
    SECTION("D2H in several chunks") {
        hw.replace(hw.find("staging_chunk: 1MiB"), 19, "staging_chunk: 16KiB");
        const Sim s = run(hw + kBufs + R"(threads:
  main:
    - memcpy2d_async: down
      src: d_img
      dst: p_img
      width: 16B
      height: 4096
      dpitch: 32B
      stream: s
)");
        // Chunks of 16384 B: the first lands at the copy's speed (16.384 us at 1 GB/s), each later
        // one after the host drained and unpacked the one before: the other 49152 B at 1 GB/s
        // (49.152 us) and their 3/4 of the rows' 1228.8 us (921.6 us). DMA: max(409.6 us of rows,
        // 16.384 + 49.152 + 921.6 = 987.136 us) = [0, 987.136]; the call returns once the last
        // chunk is drained (16.384 us) and unpacked (307.2 us): 1310.72 us.
        check_gpu(s, "down", Time{}, ns(987'136));
        CHECK(s.op("down").host_end == ns(1'310'720));
    }
}

TEST_CASE("memcpy2d: pageable D2H rows narrower than 64 B cost more the farther apart they land", "[engine][memcpy2d]") {
    std::string hw = kHw + R"(  host.pageable_h2d_bandwidth: 1GB/s
  host.pageable_d2h_bandwidth: 1GB/s
  host.staging_chunk: 1MiB
)";
    hw.replace(hw.find("pageable_d2h_sparse: 0ns"), 24, "pageable_d2h_sparse: 400ns");
    hw.replace(hw.find("pageable_d2h: 0ns"), 17, "pageable_d2h: 300ns");
    const Sim s = run(hw + kBufs + R"(threads:
  main:
    - memcpy2d_async: quarter
      src: d_img
      dst: p_img
      width: 16B
      height: 4096
      dpitch: 32B
      stream: s
    - memcpy2d_async: apart
      src: d_img
      dst: p_img
      width: 16B
      height: 4096
      dpitch: 256B
      stream: s
    - memcpy2d_async: packed
      src: d_img
      dst: p_img
      width: 16B
      height: 4096
      stream: s
    - memcpy2d_async: line
      src: d_img
      dst: p_img
      width: 64B
      height: 1024
      dpitch: 256B
      stream: s
)");
    // Each copy is one chunk (<= 65536 B): DMA at the copy's speed, then the host drains 65536 B
    // (65.536 us; line: 65536 B too) and unpacks the rows; the next copy starts when the call
    // returns (zero latency).
    // quarter: 16 B rows 32 B apart: 300 + 400 x 32/128 = 400 ns a row. DMA 4096 x 100 ns = 409.6
    // us: [0, 409.6]; returns at 409.6 + 65.536 + 4096 x 400 ns (1638.4) = 2113.536 us.
    check_gpu(s, "quarter", Time{}, ns(409'600));
    CHECK(s.op("quarter").host_end == ns(2'113'536));
    // apart: 256 B apart, the factor capped at 128/128: 300 + 400 = 700 ns a row (2867.2 us).
    // DMA [2113.536, 2523.136]; returns at 2523.136 + 65.536 + 2867.2 = 5455.872 us.
    check_gpu(s, "apart", ns(2'113'536), ns(2'523'136));
    CHECK(s.op("apart").host_end == ns(5'455'872));
    // packed: dpitch = width (contiguous on the host): 300 ns a row (1228.8 us). DMA [5455.872,
    // 5865.472]; returns at 5865.472 + 65.536 + 1228.8 = 7159.808 us.
    check_gpu(s, "packed", ns(5'455'872), ns(5'865'472));
    CHECK(s.op("packed").host_end == ns(7'159'808));
    // line: 64 B rows write whole cache lines: 300 ns a row whatever the pitch (1024 rows: 307.2
    // us). DMA 1024 x 100 ns = 102.4 us (> 65.536 us of bandwidth): [7159.808, 7262.208];
    // returns at 7262.208 + 65.536 + 307.2 = 7634.944 us.
    check_gpu(s, "line", ns(7'159'808), ns(7'262'208));
    CHECK(s.op("line").host_end == ns(7'634'944));
}

TEST_CASE("memcpy2d: the program JSON carries height and pitches", "[program_json][memcpy2d]") {
    const Sim s = run(kHw + kBufs + R"(threads:
  main:
    - memcpy2d_async: up
      src: h_img
      dst: d_img
      width: 100B
      height: 300
      spitch: 1000B
      dpitch: 128B
      stream: s
)");
    const nlohmann::json j = program_to_json(s.sc.program, "pitched");
    const nlohmann::json& op = j["ops"][0];
    CHECK(op["kind"] == "memcpy");
    CHECK(op["bytes"] == 30000);
    CHECK(op["height"] == 300);
    CHECK(op["spitch"] == 1000);
    CHECK(op["dpitch"] == 128);
    const Program back = program_from_text(j.dump(), "pitched.json");
    const Site& st = back.site(back.ops[0]);
    CHECK(st.rows == 300);
    CHECK(st.spitch == 1000);
    CHECK(st.dpitch == 128);
    CHECK(program_to_json(back, "pitched") == j);
}

TEST_CASE("memcpy2d: the op is named in at most 6 source files (one op table)", "[memcpy2d]") {
    // Issue 10 item 5: adding an op kind touches the op table's row, the frontend, the model, the
    // runner and the microbenchmark, no more. Counted: .cpp .hpp .cu .cmake .txt outside tests/,
    // docs/ and build folders.
    namespace fs = std::filesystem;
    std::vector<std::string> hits;
    const fs::path root = HETSIM_SOURCE_DIR;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
        const fs::path rel = fs::relative(it->path(), root);
        const std::string top = rel.begin()->string();
        if (it->is_directory() && (top == "tests" || top == "docs" || top.rfind("build", 0) == 0 || top[0] == '.')) {
            it.disable_recursion_pending();
            continue;
        }
        const std::string ext = it->path().extension().string();
        if (!it->is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cmake" && ext != ".txt")) continue;
        std::ifstream f(it->path());
        std::stringstream ss;
        ss << f.rdbuf();
        if (ss.str().find("memcpy2d_async") != std::string::npos) hits.push_back(rel.string());
    }
    std::string list;
    for (const auto& h : hits) list += " " + h;
    INFO("files naming it:" << list);
    CHECK(hits.size() <= 6);
    CHECK(hits.size() >= 2);  // the op table row and the frontend at least
}
