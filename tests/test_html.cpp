// The HTML reports (hetsim run --report, hetsim compare --report): one self-contained page
// with no network reference, its sections, the timeline with a tooltip per op and the critical
// path, the caller's extra sections, atomic output. (That the pages render in Chromium is the
// ctest test html_report_renders_in_chromium, tests/render/html_renders.sh.)
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

#include "cli_util.hpp"
#include "frontend/scenario.hpp"
#include "report/analysis.hpp"
#include "report/html_report.hpp"
#include "report/summary.hpp"
#include "sim/engine.hpp"

using namespace hetsim;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

size_t count(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
    return n;
}

// Nothing a browser would fetch: no src/href attributes, stylesheets, imports or url()s, and
// no address but the SVG namespace.
void check_self_contained(const std::string& html) {
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(html.find(" src=") == std::string::npos);
    CHECK(html.find(" href=") == std::string::npos);
    CHECK(html.find("<link") == std::string::npos);
    CHECK(html.find("@import") == std::string::npos);
    CHECK(std::regex_search(html, std::regex("url\\((?!#)")) == false);  // only url(#hatch), the SVG pattern
    CHECK(count(html, "http") == count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    CHECK(count(html, "<script>") == 1);
    CHECK(html.substr(html.size() - 8) == "</html>\n");
}

struct Dir {
    fs::path path = fs::temp_directory_path() / ("hetsim-html-" + std::to_string(::getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

}  // namespace

TEST_CASE("html: hetsim run --report writes one self-contained page") {
    Dir d;
    hetsim_test::Cli r = hetsim_test::cli("run scenarios/examples/chunked_pipeline.yaml --report '" + d.file("r.html") + "'");
    REQUIRE(r.exit_code == 0);
    const std::string html = hetsim_test::slurp(d.file("r.html"));
    check_self_contained(html);
    for (const char* id : {"summary", "timeline", "critical-path", "resources", "metrics", "warnings"})
        CHECK_THAT(html, Contains(std::string("<section id=\"") + id + "\">"));
    for (const char* id : {"idle", "suggestions"}) CHECK_THAT(html, Contains(std::string("<section id=\"") + id + "\"><h2>"));
    CHECK_THAT(html, Contains("<h1>chunked pipeline</h1>") && Contains("<svg class=\"timeline-svg\" ") &&
                         Contains(">critical path</text>") && Contains(">copy:h2d</text>") && Contains("<td>stream:s[3]</td>") &&
                         Contains("hidden by overlap") && Contains("exposed sync wait") && Contains("data-rendered"));
    // A tooltip per phase: on the host thread, the stream and the engine each op ran on.
    const Scenario sc = load_scenario("scenarios/examples/chunked_pipeline.yaml");
    const Timeline t = simulate(sc.program, sc.profile);
    const report::Analysis a = report::analyze(sc.program, t);
    size_t phases = 0;
    for (const OpRecord& o : t.ops) phases += (o.has_host() ? 1 : 0) + (o.has_gpu() ? 1 : 0) + (o.engine != Engine::None ? 1 : 0);
    CHECK(count(html, "<rect class=\"op host") + count(html, "<rect class=\"op gpu") == phases);
    CHECK(count(html, "<rect class=\"op crit") == a.critical_path.size());
    CHECK_THAT(html, Contains("<title>compute[0] (kernel, gpu) sm: "));
    CHECK_THAT(html, Contains("; cause: stream order after h2d[0] (gpu)</title>"));
    // Deterministic.
    REQUIRE(hetsim_test::cli("run scenarios/examples/chunked_pipeline.yaml --report '" + d.file("again.html") + "'").exit_code == 0);
    CHECK(hetsim_test::slurp(d.file("again.html")) == html);
}

TEST_CASE("html: hetsim compare --report shows both timelines, the metrics and the per-op errors") {
    Dir d;
    hetsim_test::Cli r = hetsim_test::cli(
        "compare scenarios/validation/01_pipeline_1stream_small.yaml "
        "validation/measurements/h200/2026-11-30a/measured/01_pipeline_1stream_small.json.gz --report '" + d.file("c.html") + "'");
    REQUIRE(r.exit_code == 0);
    const std::string html = hetsim_test::slurp(d.file("c.html"));
    check_self_contained(html);
    for (const char* id : {"summary", "timeline", "metrics", "op-errors", "warnings"})
        CHECK_THAT(html, Contains(std::string("<section id=\"") + id + "\">"));
    CHECK_THAT(html, Contains(">Simulated</text>") && Contains(">Measured</text>") && Contains("the median of 5 uninstrumented runs") &&
                         Contains("measured (uninstrumented median)") && Contains("37 of 37 ops compared"));
    CHECK(count(html, "<svg class=\"timeline-svg\" ") == 1);
    CHECK(html.find("id=\"host-unobserved\"") == std::string::npos);  // a 2026-11-30 file has no host stamps

    // A file with the uninstrumented run's host stamps: its host calls in a section of their own.
    r = hetsim_test::cli(
        "compare scenarios/validation/01_pipeline_1stream_small.yaml "
        "validation/measurements/h200/2026-12-02h/measured/01_pipeline_1stream_small.json.gz --report '" + d.file("h.html") + "'");
    REQUIRE(r.exit_code == 0);
    const std::string h = hetsim_test::slurp(d.file("h.html"));
    check_self_contained(h);
    CHECK_THAT(h, Contains("<section id=\"host-unobserved\"><h2>Host calls without a profiler</h2>") &&
                      Contains("host phases against the median uninstrumented run's host stamps"));
}

TEST_CASE("html: why the GPU idles and the suggestions follow the timeline, the caller's extra sections the metrics") {
    const Scenario sc = load_scenario("scenarios/seeds/double_buffer.yaml");
    const Timeline t = simulate(sc.program, sc.profile);
    const report::Analysis a = report::analyze(sc.program, t);
    report::Suggestions sug;
    sug.baseline = a.end_to_end;
    sug.list.push_back({"n=4", "knob", Time::ms(20), -48.47, {{"n", "4"}}, {}});
    std::ostringstream os;
    report::HtmlRun run{sc.name, {{"notes", "Notes", "<p>a note</p>"}}, &sug};
    report::write_html_report(os, sc.program, t, a, run);
    const std::string html = os.str();
    const size_t timeline = html.find("<section id=\"timeline\">"), metrics = html.find("<section id=\"metrics\">"),
                 idle = html.find("<section id=\"idle\"><h2>Why the GPU idles</h2>"),
                 suggestions = html.find("<section id=\"suggestions\"><h2>Suggestions, each simulated</h2>"),
                 path = html.find("<section id=\"critical-path\">"), notes = html.find("<section id=\"notes\"><h2>Notes</h2>"),
                 warnings = html.find("<section id=\"warnings\">");
    CHECK((timeline < idle && idle < suggestions && suggestions < path && path < metrics && metrics < notes && notes < warnings &&
           warnings != std::string::npos));
    CHECK_THAT(html, Contains("<p>a note</p>"));
    // A bar per cause: the largest cause of the GPU lane first, with its share of the idle time.
    const report::IdleLane& g = a.idle.lanes[0];
    REQUIRE(!g.causes.empty());
    CHECK(count(html, "<table class=\"idle-chart\">") == a.idle.lanes.size());
    CHECK_THAT(html, Contains("<tr><td>host work: load_data on host:main</td><td><span class=\"barbox\">"));
    CHECK_THAT(html, Contains("<tr><td>n=4</td><td class=\"n\">20.000 ms</td><td class=\"n ok\">-48.5%</td></tr>"));
    std::ostringstream plain;
    report::write_html_report(plain, sc.program, t, a, {sc.name, {}});
    CHECK(plain.str().find("id=\"suggestions\"") == std::string::npos);  // not computed, no section
    CHECK(plain.str().find("<section id=\"idle\">") != std::string::npos);
}

TEST_CASE("html: a failed run leaves an existing report untouched") {
    Dir d;
    { std::ofstream(d.file("keep.html")) << "keep"; }
    hetsim_test::Cli r = hetsim_test::cli("run tests/bad/03_unknown_key.yaml --report '" + d.file("keep.html") + "'");
    CHECK(r.exit_code == 2);
    CHECK(hetsim_test::slurp(d.file("keep.html")) == "keep");
}

TEST_CASE("suggestions: a change that saves under 0.05% is not listed among those that shorten the run") {
    const Scenario sc = load_scenario("scenarios/seeds/double_buffer.yaml");
    const Timeline t = simulate(sc.program, sc.profile);
    const report::Analysis a = report::analyze(sc.program, t);
    report::Suggestions sug;
    sug.baseline = Time::ms(100);
    sug.list.push_back({"n=4", "knob", Time::ms(90), -10.0, {{"n", "4"}}, {}});
    sug.list.push_back({"n=5", "knob", Time::us(99951), -0.05, {{"n", "5"}}, {}});  // 0.049%: noise
    sug.list.push_back({"n=6", "knob", Time::us(99950), -0.05, {{"n", "6"}}, {}});  // 0.05%: listed
    CHECK(report::shortens(Time::us(99950), sug.baseline));
    CHECK(!report::shortens(Time::us(99951), sug.baseline));
    CHECK(!report::shortens(sug.baseline, sug.baseline));
    std::ostringstream text;
    report::write_summary(text, sc.program, t, a, &sug);
    CHECK_THAT(text.str(), Contains("  try n=4: 90.000 ms (-10.0%)\n"));
    CHECK_THAT(text.str(), Contains("  try n=6: 99.950 ms (-0.1%)\n"));
    CHECK(text.str().find("try n=5") == std::string::npos);
    CHECK_THAT(text.str(), Contains("  (1 other change tried does not help)\n"));
    std::ostringstream html;
    report::write_html_report(html, sc.program, t, a, {sc.name, {}, &sug});
    CHECK_THAT(html.str(), Contains("<tr><td>n=5</td><td class=\"n\">99.951 ms</td><td class=\"n \">-0.1%</td></tr>"));
}
