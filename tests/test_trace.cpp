// Chrome traces that viewers draw right: on every track of every shipped scenario's trace, no
// two slices overlap partly (one must nest inside the other or they must not overlap), with
// times read as a viewer reads them: JSON numbers as doubles, a slice's end as ts + dur in
// double arithmetic. (Speedscope drew a host lane as a staircase where ts 3500 + dur
// 1132.246294 = 4632.2462940000005 passed the next slice's ts 4632.246294.) Slice names are the
// op names; what else a slice says is in its args.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "frontend/scenario.hpp"
#include "report/chrome_trace.hpp"
#include "sim/engine.hpp"

using namespace hetsim;
using namespace hetsim::report;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct Slice {
    double ts, end;
    std::string name;
};

// Partial overlaps on each track of a trace document; empty when there are none.
std::vector<std::string> partial_overlaps(const json& trace) {
    std::map<std::pair<int, int>, std::vector<Slice>> tracks;
    for (const json& e : trace["traceEvents"])
        if (e["ph"] == "X") {
            const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
            tracks[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back({ts, ts + dur, e["name"].get<std::string>()});
        }
    std::vector<std::string> bad;
    for (auto& [track, v] : tracks) {
        // By start, the longer first on ties: a parent before its children.
        std::stable_sort(v.begin(), v.end(), [](const Slice& a, const Slice& b) { return a.ts != b.ts ? a.ts < b.ts : a.end > b.end; });
        std::vector<const Slice*> open;  // the enclosing slices of the current one
        for (const Slice& s : v) {
            while (!open.empty() && open.back()->end <= s.ts) open.pop_back();
            if (!open.empty() && s.end > open.back()->end) {
                std::ostringstream os;
                os.precision(17);
                os << "track " << track.first << "/" << track.second << ": " << open.back()->name << " [" << open.back()->ts
                   << ", " << open.back()->end << ") and " << s.name << " [" << s.ts << ", " << s.end << ")";
                bad.push_back(os.str());
            }
            open.push_back(&s);
        }
    }
    return bad;
}

}  // namespace

TEST_CASE("trace: the checker finds a partial overlap where ts + dur passes the next ts") {
    const json t = json::parse(R"({"traceEvents":[
        {"name":"a","ph":"X","pid":1,"tid":1,"ts":3500.0,"dur":1132.246294},
        {"name":"b","ph":"X","pid":1,"tid":1,"ts":4632.246294,"dur":10},
        {"name":"c","ph":"X","pid":1,"tid":2,"ts":0,"dur":10},
        {"name":"d","ph":"X","pid":1,"tid":2,"ts":2,"dur":8},
        {"name":"e","ph":"X","pid":1,"tid":2,"ts":10,"dur":0}]})");
    const std::vector<std::string> bad = partial_overlaps(t);
    REQUIRE(bad.size() == 1);
    CHECK(bad[0].find("track 1/1: a [3500, 4632.2462940000005) and b") == 0);
}

TEST_CASE("trace: durations land exactly on the end time in double arithmetic") {
    CHECK(format_dur_us(Time::ps(3'500'000'000), Time::ps(4'632'246'294)) == "1132.2462939999998");
    CHECK(format_dur_us(Time::ps(3'500'000'000), Time::ps(3'600'000'000)) == "100.000000");
    for (int64_t start : {int64_t{0}, int64_t{1}, int64_t{999'999}, int64_t{3'500'000'000}, int64_t{123'456'789'012'345}})
        for (int64_t len : {int64_t{0}, int64_t{1}, int64_t{1'132'246'294'000}, int64_t{7'777'777'777}}) {
            const Time s = Time::ps(start), e = Time::ps(start + len);
            const double ts = std::stod(format_us(s)), te = std::stod(format_us(e));
            INFO(start << " + " << len);
            CHECK(ts + std::stod(format_dur_us(s, e)) == te);
        }
}

TEST_CASE("trace: no partial overlaps on any track of any shipped scenario, and names are op names") {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(HETSIM_SOURCE_DIR) / "scenarios"))
        if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 60);
    size_t slices = 0;
    for (const fs::path& f : files) {
        INFO(f.string());
        const Scenario sc = load_scenario(f.string());
        const Timeline tl = simulate(sc.program, sc.profile);
        std::ostringstream os;
        write_chrome_trace(os, sc.program, tl);
        const json trace = json::parse(os.str());
        const std::vector<std::string> bad = partial_overlaps(trace);
        for (size_t i = 0; i < bad.size() && i < 5; ++i) FAIL_CHECK(bad[i]);
        for (const json& e : trace["traceEvents"]) {
            if (e["ph"] != "X") continue;
            ++slices;
            const uint32_t op = e["args"]["op"].get<uint32_t>();
            REQUIRE(op < sc.program.ops.size());
            CHECK(e["name"] == sc.program.op_name(op));
        }
    }
    CHECK(slices > 1000);
}
