// hetsim sweep / sweep-merge end to end: rows against single `hetsim run` calls, -j, shards,
// resume, the stage-placement crossover against the seed's formula, GNU parallel, bad inputs.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>

#include "cli_util.hpp"
#include "models/calculators.hpp"
#include "sweep/spec.hpp"
#include "sweep/table.hpp"

using namespace hetsim_test;
namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

namespace {

fs::path scratch(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("hetsim-sweep-" + std::to_string(::getpid())) / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// Quoted for the shell (append, not operator+: GCC 12 -Wrestrict false positive).
std::string q(const fs::path& p) { return std::string(1, '\'').append(p.string()).append(1, '\''); }

// The data rows of a sweep CSV (after the comment lines and the header), split into fields.
std::vector<Strings> rows_of(const std::string& csv, Strings* header = nullptr) {
    std::vector<Strings> rows;
    std::istringstream in(csv);
    std::string line;
    bool seen_header = false;
    while (std::getline(in, line)) {
        if (line.rfind("#", 0) == 0) continue;
        if (!seen_header) {
            seen_header = true;
            if (header) *header = hetsim::sweep::split_csv_line(line);
            continue;
        }
        rows.push_back(hetsim::sweep::split_csv_line(line));
    }
    return rows;
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// "... (10125000000 ps; ..." -> 10125000000 : the crossover in base units.
double crossover_base(const std::string& out) {
    size_t at = out.find("crossover: ");
    REQUIRE(at != std::string::npos);
    size_t open = out.find('(', at);
    REQUIRE(open != std::string::npos);
    return std::stod(out.substr(open + 1));
}

const std::string kOverlap = "scenarios/sweeps/overlap_chunks.yaml";
const std::string kOverlapVary =
    " --vary chunk=64MiB,16MiB --vary nstreams=1,3 --vary hardware.copy.h2d.bandwidth=20GB/s,50GB/s";

size_t count_of(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
    return n;
}

}  // namespace

TEST_CASE("sweep: each CSV row equals a single hetsim run of that point") {
    fs::path dir = scratch("rows");
    Cli r = cli("sweep " + kOverlap + kOverlapVary + " -o " + q(dir / "s.csv"));
    REQUIRE(r.exit_code == 0);
    Strings h;
    auto rows = rows_of(slurp(dir / "s.csv"), &h);
    REQUIRE(rows.size() == 8);
    REQUIRE(h[0] == "point");
    REQUIRE(h[4] == "end_to_end_ns");
    auto col = [&](const Strings& row, const std::string& name) {
        auto it = std::find(h.begin(), h.end(), name);
        REQUIRE(it != h.end());
        return row[static_cast<size_t>(it - h.begin())];
    };
    for (size_t p = 0; p < rows.size(); ++p) {
        const Strings& row = rows[p];
        CHECK(row[0] == std::to_string(p));
        Cli one = cli("run " + kOverlap + " --format json --set chunk=" + row[1] + " --set nstreams=" + row[2] +
                      " --set hardware.copy.h2d.bandwidth=" + row[3] + " --no-suggest");
        REQUIRE(one.exit_code == 0);
        auto j = nlohmann::json::parse(one.out);
        auto num = [](const std::string& s) { return std::stod(s); };
        CHECK(num(col(row, "end_to_end_ns")) == j["end_to_end_ns"].get<double>());
        for (const char* m : {"serial_ns", "busy_union_ns", "hidden_ns", "speedup", "exposed_sync_ns", "exposed_sync_fraction",
                              "gpu_active_union_ns", "gpu_active_fraction"})
            CHECK(num(col(row, m)) == j["metrics"][m].get<double>());
        // The utilisation of every host thread and engine; 0 where the run has no such resource.
        for (const char* name : {"host:main", "copy:h2d", "copy:d2h", "sm", "device_copy"}) {
            double util = 0;
            for (const auto& res : j["resources"])
                if (res["name"] == name) util = res["utilization"].get<double>();
            CHECK(num(col(row, std::string("util:") + name)) == util);
        }
        // The busiest resource: the most busy host thread or engine (streams are queues).
        std::string busiest;
        double busy = -1, util = 0;
        for (const auto& res : j["resources"])
            if (res["kind"] != "stream" && res["busy_ns"].get<double>() > busy) {
                busy = res["busy_ns"].get<double>();
                busiest = res["name"].get<std::string>();
                util = res["utilization"].get<double>();
            }
        CHECK(col(row, "busiest_resource") == busiest);
        CHECK(num(col(row, "busiest_busy_ns")) == busy);
        CHECK(num(col(row, "busiest_utilization")) == util);
        for (const char* k : {"host_thread", "stream", "copy_engine", "sm", "device_copy", "latency"}) {
            double share = j["critical_path"]["share"].contains(k) ? j["critical_path"]["share"][k].get<double>() : 0.0;
            CHECK(num(col(row, std::string("critical_") + k)) == share);
        }
        // Why the GPU and the SMs idle: the run's causes summed by kind, in integer ns; the
        // cause columns of a lane add up to its idle column.
        for (const char* lane : {"gpu", "sm"}) {
            INFO(lane);
            REQUIRE(j["idle"].contains(lane));
            const auto& l = j["idle"][lane];
            CHECK(col(row, std::string("idle:") + lane) == std::to_string(l["idle_ns"].get<int64_t>()));
            int64_t sum = 0;
            for (const std::string& k : hetsim::sweep::idle_columns()) {
                const std::string prefix = std::string("idle:") + lane + ":";
                if (k.rfind(prefix, 0) != 0) continue;
                int64_t want = 0;
                for (const auto& c : l["causes"])
                    if (c["cause"] == k.substr(prefix.size())) want += c["ns"].get<int64_t>();
                CHECK(col(row, k) == std::to_string(want));
                sum += std::stoll(col(row, k));
            }
            CHECK(sum == l["idle_ns"].get<int64_t>());
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("sweep: the CSV is the same for -j 1 and -j 2, to a file or to stdout") {
    fs::path dir = scratch("jobs");
    Cli a = cli("sweep " + kOverlap + kOverlapVary + " -j 1 -o " + q(dir / "a.csv"));
    Cli b = cli("sweep " + kOverlap + kOverlapVary + " -j 2 -o " + q(dir / "b.csv"));
    Cli c = cli("sweep " + kOverlap + kOverlapVary + " -j 2");
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    REQUIRE(c.exit_code == 0);
    CHECK(slurp(dir / "a.csv") == slurp(dir / "b.csv"));
    CHECK(c.out == slurp(dir / "a.csv"));
    CHECK(a.err.find("8 computed, 0 resumed") != std::string::npos);
    CHECK(a.err.find("\r") == std::string::npos);  // no progress bar on a pipe
    fs::remove_all(dir);
}

TEST_CASE("sweep: shards joined by sweep-merge equal the whole sweep") {
    fs::path dir = scratch("shards");
    REQUIRE(cli("sweep " + kOverlap + kOverlapVary + " -o " + q(dir / "whole.csv")).exit_code == 0);
    for (int i = 0; i < 3; ++i)
        REQUIRE(cli("sweep " + kOverlap + kOverlapVary + " --shard " + std::to_string(i) + "/3 -o " +
                    q(dir / ("part" + std::to_string(i) + ".csv"))).exit_code == 0);
    CHECK(rows_of(slurp(dir / "part1.csv")).size() == 3);  // points 1, 4, 7
    std::string parts = q(dir / "part0.csv") + " " + q(dir / "part1.csv") + " " + q(dir / "part2.csv");
    Cli m = cli("sweep-merge -o " + q(dir / "merged.csv") + " " + parts);
    REQUIRE(m.exit_code == 0);
    CHECK(slurp(dir / "merged.csv") == slurp(dir / "whole.csv"));
    // A missing shard and a doubled one are caught, and nothing is written.
    Cli missing = cli("sweep-merge " + q(dir / "part0.csv") + " " + q(dir / "part2.csv"));
    CHECK(missing.exit_code == 1);
    CHECK(missing.err.find("3 of 8 points missing: 1, 4, 7") != std::string::npos);
    Cli doubled = cli("sweep-merge " + parts + " " + q(dir / "part1.csv"));
    CHECK(doubled.exit_code == 1);
    CHECK(doubled.err.find("doubled: point 1 in") != std::string::npos);
    CHECK(doubled.out.empty());
    // Shards of another sweep do not mix.
    REQUIRE(cli("sweep " + kOverlap + " --vary chunk=64MiB,16MiB --shard 0/2 -o " + q(dir / "other.csv")).exit_code == 0);
    Cli other = cli("sweep-merge " + parts + " " + q(dir / "other.csv"));
    CHECK(other.exit_code == 2);
    CHECK(other.err.find("a different sweep") != std::string::npos);
    // A definition line whose point count its axes do not make (edited: 2^64 - 1 or -1) is
    // refused; it would list that many points as missing.
    for (const std::string forged : {"18446744073709551615", "-1"}) {
        std::string text = slurp(dir / "part0.csv");
        const size_t at = text.find("\"points\":8");
        REQUIRE(at != std::string::npos);
        text.replace(at, std::string("\"points\":8").size(), "\"points\":" + forged);
        std::ofstream(dir / "forged.csv", std::ios::binary) << text;
        Cli f = cli("sweep-merge " + q(dir / "forged.csv"));
        CHECK(f.exit_code == 2);
        CHECK(f.err.find("forged.csv:1:1: error: the sweep definition is not readable: ") != std::string::npos);
        CHECK(f.err.find(forged == "-1" ? "\"points\" is not a whole number" : "it says 18446744073709551615 points, but its axes make 8") !=
              std::string::npos);
    }
    fs::remove_all(dir);
}

TEST_CASE("sweep: an interrupted sweep resumes from its CSV without redoing finished points") {
    fs::path dir = scratch("resume");
    std::string cmd = "sweep " + kOverlap + kOverlapVary + " -j 2 -o " + q(dir / "s.csv");
    Cli stopped = cli(cmd + " --stop-after 5");
    CHECK(stopped.exit_code == 1);
    CHECK(stopped.err.find("5 computed, 0 resumed, 3 left") != std::string::npos);
    std::string partial = slurp(dir / "s.csv");
    CHECK(partial.rfind("# hetsim sweep {", 0) == 0);  // a whole file: definition, header, 5 rows
    CHECK(rows_of(partial).size() == 5);
    CHECK(partial.back() == '\n');
    Cli resumed = cli(cmd);
    REQUIRE(resumed.exit_code == 0);
    CHECK(resumed.err.find("3 computed, 5 resumed, 0 left") != std::string::npos);
    REQUIRE(cli("sweep " + kOverlap + kOverlapVary + " -o " + q(dir / "whole.csv")).exit_code == 0);
    CHECK(slurp(dir / "s.csv") == slurp(dir / "whole.csv"));
    // Nothing left: a rerun computes nothing; --resume needs the file; another sweep is refused.
    CHECK(cli(cmd).err.find("0 computed, 8 resumed") != std::string::npos);
    Cli no_file = cli("sweep " + kOverlap + kOverlapVary + " --resume -o " + q(dir / "absent.csv"));
    CHECK(no_file.exit_code == 2);
    CHECK(lines(no_file.err) == 1);
    Cli other = cli("sweep " + kOverlap + " --vary nstreams=1,2 -o " + q(dir / "s.csv"));
    CHECK(other.exit_code == 2);
    CHECK(other.err.find("holds a sweep with other --vary values") != std::string::npos);
    CHECK(slurp(dir / "s.csv") == slurp(dir / "whole.csv"));  // untouched
    fs::remove_all(dir);
}

TEST_CASE("sweep: the stage-placement crossover is where the seed's formula puts it") {
    // cpu_ms = gpu_ms + (in + out) / bw + fixed, with gpu_ms = stage_ms / 5, 64e6 B each way,
    // fixed = 0.1 ms (scenarios/sweeps/stage_placement.yaml).
    const double in = 64e6, out = 64e6, fixed = 0.1, speedup = 5;
    // Stage length at 16 GB/s: both paths are straight lines in stage_ms, so the interpolation is exact.
    double transfer = hetsim::calc::stage_placement(10, 2, in, out, 16, fixed).transfer_ms;  // 8.1 ms
    double stage_star_ms = transfer / (1 - 1 / speedup);                                        // 10.125 ms
    CHECK(hetsim::calc::stage_placement(10, 10 / speedup, in, out, 16, fixed).shorter == "cpu");
    CHECK(hetsim::calc::stage_placement(12, 12 / speedup, in, out, 16, fixed).shorter == "gpu");
    Cli r = cli("sweep scenarios/sweeps/stage_placement.yaml --vary stage_ms=2ms..20ms+2ms --compare-param path=cpu,gpu");
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("crossover: path=cpu vs path=gpu at stage_ms = 10.125ms") != std::string::npos);
    CHECK(crossover_base(r.err) == Approx(stage_star_ms * 1e9).epsilon(1e-12));  // ps
    // Link bandwidth at stage_ms = 2 ms: the GPU path goes as 1/bw, so within one 16 GB/s step.
    double bw_star = (in + out) / ((2.0 - 2.0 / speedup - fixed) * 1e-3);  // B/s, 85.3 GB/s
    fs::path dir = scratch("crossover");
    Cli b = cli("sweep scenarios/sweeps/stage_placement.yaml --vary link=16GB/s..128GB/s+16GB/s --compare-param path=cpu,gpu"
                " --plot " + q(dir / "link.svg") + " -o " + q(dir / "link.csv"));
    REQUIRE(b.exit_code == 0);
    CHECK(b.out.find("between 80GB/s and 96GB/s, interpolated): path=cpu is faster below, path=gpu above") != std::string::npos);
    double reported = crossover_base(b.out);
    CHECK(std::fabs(reported - bw_star) < 16e9);
    CHECK(reported > 80e9);
    CHECK(reported < 96e9);
    std::string svg = slurp(dir / "link.svg");
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("crossover 86GB/s") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("sweep: GNU parallel runs the shards and sweep-merge joins them") {
    if (std::system("parallel --version 2>/dev/null | grep -q 'GNU parallel'") != 0) {
        WARN("GNU parallel is not installed (Debian package 'parallel'; ./hetsim installs it): test skipped");
        return;
    }
    fs::path dir = scratch("parallel");
    std::string sweep = "sweep " + kOverlap + kOverlapVary;
    REQUIRE(cli(sweep + " -o " + q(dir / "whole.csv")).exit_code == 0);
    std::string cmd = "cd '" HETSIM_SOURCE_DIR "' && parallel --will-cite -j 2 '" HETSIM_CLI_PATH "' " + sweep +
                      " -j 1 --shard {}/4 -o " + q(dir / "part{}.csv") + " ::: 0 1 2 3 2>/dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    Cli m = cli("sweep-merge -o " + q(dir / "merged.csv") + " " + q(dir / "part0.csv") + " " + q(dir / "part1.csv") + " " +
                q(dir / "part2.csv") + " " + q(dir / "part3.csv"));
    REQUIRE(m.exit_code == 0);
    CHECK(slurp(dir / "merged.csv") == slurp(dir / "whole.csv"));
    fs::remove_all(dir);
}

TEST_CASE("sweep: bad inputs exit 2 with one line naming what is wrong") {
    const std::string f = "sweep scenarios/sweeps/stage_placement.yaml ";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--vary stage_ms", "--vary stage_ms: error: expected NAME=VALUES"},
        {"--vary stage_ms=1ms..", "is not a range"},
        {"--vary stage_ms=1ms..8ms:1ms", "write a step as START..END+STEP"},
        {"--vary stage_ms=1ms..8MB+1ms", "the start is a time but the end is a size"},
        {"--vary stage_ms=8ms..2ms+1ms", "empty range '8ms..2ms+1ms'"},
        {"--vary streams=1..8", "--vary streams: error: the scenario scenarios/sweeps/stage_placement.yaml has no param 'streams'"},
        {"--vary hardware.copy.h2d.bandwith=16GB/s", "did you mean 'hardware.copy.h2d.bandwidth'?"},
        {"--vary hardware.copy.h2d.bandwidth=16ms", "must be a bandwidth"},
        {"--vary stage_ms=1ms,1ms", "the value '1ms' appears twice"},
        {"--vary stage_ms=1ms,2ms --vary link=16GB/s --zip", "--zip pairs values, but stage_ms has 2 and link has 1"},
        {"--vary stage_ms=1ms --shard 4/4", "shard index 4 is out of range"},
        {"--vary stage_ms=1ms --set stage_ms=2ms", "is both fixed with --set and varied"},
        {"", "nothing to sweep"},
        {"--vary stage_ms=1ms,2ms --plot /nonexistent/p.svg --series foo", "--series foo: error: 'foo' is not varied"},
        {"--vary path=cpu,gpu --plot /nonexistent/p.svg", "the value 'cpu' of path is not a number"},
        {"--vary stage_ms=1ms,2ms --plot /nonexistent/p.svg --y busiest_resource", "--y busiest_resource: error: not a numeric column"},
        {"--vary stage_ms=1ms,2ms --y gpu_fraction", "--y gpu_fraction: error: not a numeric column of the sweep CSV; one of: end_to_end_ns,"},
        // The rows' bookkeeping is checked before anything is allocated (10^8 points took 4 GB
        // before the first was computed).
        {"--vary stage_ms=1ms..10000ms+1ms --vary link=1GB/s..10000GB/s+1GB/s --max-memory 16GiB",
         "--vary: error: the sweep's 100000000 points would need about "},
        {"--vary stage_ms=1ms..1000ms+1ms --vary link=1GB/s..1000GB/s+1GB/s --max-memory 100MiB --shard 1/10",
         "(100000 in shard 1/10) would need about "},
    };
    for (const auto& [args, expect] : cases) {
        Cli r = cli(f + args);
        INFO(args << " -> " << r.err);
        CHECK(r.exit_code == 2);
        CHECK(lines(r.err) == 1);
        CHECK(r.err.find(expect) != std::string::npos);
    }
}

TEST_CASE("sweep: value lists and ranges expand exactly, keeping units") {
    using hetsim::sweep::expand_values;
    CHECK(expand_values("1..8") == Strings{"1", "2", "3", "4", "5", "6", "7", "8"});
    CHECK(expand_values("1..8+2") == Strings{"1", "3", "5", "7"});
    CHECK(expand_values("0..1+0.25") == Strings{"0", "0.25", "0.5", "0.75", "1"});
    CHECK(expand_values("1..3,8, 16") == Strings{"1", "2", "3", "8", "16"});
    CHECK(expand_values("1ms..3ms+0.5ms") == Strings{"1ms", "1500us", "2ms", "2500us", "3ms"});
    CHECK(expand_values("16GB/s..64GB/s+16GB/s") == Strings{"16GB/s", "32GB/s", "48GB/s", "64GB/s"});
    bool log = false;
    Strings sizes = expand_values("1MiB..1GiB*2", &log);
    CHECK(log);
    REQUIRE(sizes.size() == 11);
    CHECK(sizes.front() == "1MiB");
    CHECK(sizes[1] == "2MiB");
    CHECK(sizes.back() == "1024MiB");
    CHECK(expand_values("1..1000*10") == Strings{"1", "10", "100", "1000"});
    CHECK(expand_values("64e6B..256e6B*2") == Strings{"64MB", "128MB", "256MB"});
    CHECK(expand_values("500ps..2000ps+500ps") == Strings{"500ps", "1ns", "1500ps", "2ns"});
    CHECK_THROWS_WITH(expand_values("5..1"), Catch::Contains("empty range"));
    // Ranges whose next value would overflow stop at their end (they made values past it, or
    // wrapped to 0 and never ended).
    const Strings wide = expand_values("0.000000000000000001..9000000000000000000*1000");
    REQUIRE(wide.size() == 13);
    CHECK(wide.back() == "1000000000000000000");
    CHECK(expand_values("0.000000000000000008..9000000000000000000*4611686018427387904") ==
          Strings{"0.000000000000000008", "36.893488147419103232"});
    CHECK(expand_values("9223372036854775800..9223372036854775807+5") == Strings{"9223372036854775800", "9223372036854775805"});
}

TEST_CASE("sweep: reusing lowered programs across timing-only values changes nothing") {
    fs::path dir = scratch("cache");
    std::string sweep = "sweep " + kOverlap +
                        " --vary chunk=64MiB,32MiB --vary hardware.sm.count=66,132 --vary hardware.copy.d2h.bandwidth=20GB/s,40GB/s"
                        " --vary hardware.gpu.launch_latency=1us,20us --set nstreams=2";
    REQUIRE(cli(sweep + " -o " + q(dir / "cached.csv")).exit_code == 0);
    REQUIRE(cli(sweep + " --no-cache -o " + q(dir / "fresh.csv")).exit_code == 0);
    CHECK(slurp(dir / "cached.csv") == slurp(dir / "fresh.csv"));
    CHECK(rows_of(slurp(dir / "cached.csv")).size() == 16);
    fs::remove_all(dir);
}

TEST_CASE("sweep: --y plots any numeric column, and every line has its own dash and marker") {
    fs::path dir = scratch("y");
    Cli r = cli("sweep " + kOverlap + " --vary chunk=1MiB,16MiB,64MiB --vary nstreams=1..4 --plot " + q(dir / "g.svg") +
                " --x nstreams --series chunk --y gpu_active_fraction -o " + q(dir / "g.csv"));
    REQUIRE(r.exit_code == 0);
    const std::string svg = slurp(dir / "g.svg");
    CHECK(svg.find("gpu_active_fraction vs nstreams") != std::string::npos);
    CHECK(svg.find("end-to-end") == std::string::npos);
    // Three lines: solid, dashed, dotted; circle, hollow square and triangle markers.
    CHECK(count_of(svg, "<polyline class=\"series\"") == 3);
    CHECK(count_of(svg, "stroke-dasharray=\"8 4\"") == 2);  // the line and its legend swatch
    CHECK(count_of(svg, "stroke-dasharray=\"2 3\"") == 2);
    CHECK(count_of(svg, "<circle") == 5);                     // 4 points + the legend
    CHECK(count_of(svg, "<rect x=") == 5);
    CHECK(count_of(svg, "<polygon") == 5);
    // A time column is scaled like the end-to-end time; the CSV holds the same values.
    r = cli("sweep " + kOverlap + " --vary chunk=1MiB,16MiB --vary nstreams=1,2 --plot " + q(dir / "h.svg") + " --y util:copy:h2d --heatmap");
    REQUIRE(r.exit_code == 0);
    CHECK(slurp(dir / "h.svg").find("<title>lowest</title>") != std::string::npos);
    r = cli("sweep " + kOverlap + " --vary chunk=1MiB,16MiB --vary nstreams=1,2 --plot " + q(dir / "b.svg") + " --y busy_union_ns");
    REQUIRE(r.exit_code == 0);
    CHECK(slurp(dir / "b.svg").find(">busy_union_ns (ms)</text>") != std::string::npos);
    // The idle:* columns are nanoseconds too: plotted as times, in the CSV's values.
    for (const char* y : {"idle:gpu", "idle:sm:nothing_left"}) {
        INFO(y);
        r = cli("sweep " + kOverlap + " --vary chunk=1MiB,16MiB --vary nstreams=1,2 --plot " + q(dir / "i.svg") + " --y " + y +
                " -o " + q(dir / "i.csv"));
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(slurp(dir / "i.svg").find(std::string(">") + y + " (") != std::string::npos);
        CHECK(slurp(dir / "i.csv").find(std::string(",") + y) != std::string::npos);
    }
    // Every numeric column of the CSV is one --y accepts, in the CSV's order.
    r = cli("sweep " + kOverlap + " --vary chunk=1MiB --y nosuch");
    // (the header's columns from end_to_end_ns on, busiest_resource left out, joined by ", ")
    const std::string csv = "\n" + slurp(dir / "i.csv");
    const size_t h = csv.find("\npoint,");
    REQUIRE(h != std::string::npos);
    std::string expected = csv.substr(h + 1, csv.find('\n', h + 1) - h - 1);
    expected = expected.substr(expected.find("end_to_end_ns"));
    for (size_t c; (c = expected.find(',')) != std::string::npos;) expected.replace(c, 1, "; ");
    expected.erase(expected.find("busiest_resource; "), 18);
    for (size_t c; (c = expected.find("; ")) != std::string::npos;) expected.replace(c, 2, ", ");
    CHECK(r.err == "--y nosuch: error: not a numeric column of the sweep CSV; one of: " + expected + "\n");
    fs::remove_all(dir);
}

TEST_CASE("sweep: --zip pairs values, --best and --heatmap report on the sweep") {
    fs::path dir = scratch("best");
    Cli z = cli("sweep " + kOverlap + " --vary chunk=64MiB,16MiB,4MiB --vary nstreams=1,2,4 --zip");
    REQUIRE(z.exit_code == 0);
    auto rows = rows_of(z.out);
    REQUIRE(rows.size() == 3);
    CHECK((rows[2][1] == "4MiB" && rows[2][2] == "4"));
    Cli b = cli("sweep " + kOverlap + " --vary chunk=64MiB,4MiB --vary nstreams=1,4 --best --heatmap --plot " + q(dir / "m.svg") +
                " -o " + q(dir / "b.csv"));
    REQUIRE(b.exit_code == 0);
    CHECK(b.out.find("fastest: point 3 (chunk=4MiB nstreams=4): ") == 0);
    CHECK(b.out.find("\nslowest: point 2 (chunk=4MiB nstreams=1): ") != std::string::npos);
    CHECK(b.out.find("\nthe file's own values: ") != std::string::npos);
    CHECK(slurp(dir / "m.svg").find("<title>fastest</title>") != std::string::npos);
    fs::remove_all(dir);
}
