// Lowering of loops: an op map inside a loop is lowered in full once, then reused with only
// its loop-dependent values evaluated again from compiled code (frontend/ops.cpp, OpTemplate);
// the ops are counted before any is expanded. These tests pin that the reuse gives exactly what a
// full lowering of every iteration gives, and that the count refuses what the expansion would.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>

#include "frontend/expr.hpp"
#include "frontend/scenario.hpp"

using namespace hetsim;

namespace {
int32_t op_index(const Program& p, const std::string& name) {
    for (uint32_t i = 0; i < p.ops.size(); ++i)
        if (p.op_name(i) == name) return static_cast<int32_t>(i);
    FAIL("no op " << name);
    return -1;
}
// "s[2]" (built with a stream: GCC 12 warns, wrongly, about string concatenation here).
std::string indexed(const char* name, int i) {
    std::ostringstream o;
    o << name << '[' << i << ']';
    return o.str();
}
}  // namespace

TEST_CASE("lowering: loop-dependent streams and durations are evaluated every iteration", "[lowering]") {
    Scenario sc = load_scenario_text(R"(
params: {base: 10us}
buffers:
  hb: {kind: pinned, size: 1MiB, count: 2}
  db: {kind: device, size: 1MiB, count: 2}
streams: {s: {count: 3}}
threads:
  main:
    - repeat: 6
      do:
        - kernel: k
          stream: s[i % 3]
          duration: (i + 1) * base
        - host: h
          duration: i * 1us + 1us
        - memcpy_async: c
          src: hb[i % 2]
          dst: db[(i + 1) % 2]
          stream: s[2 - i % 3]
        - kernel: fixed
          stream: s[0]
          duration: 5us
)",
                                     "lowering_test.yaml");
    const Program& p = sc.program;
    REQUIRE(p.ops.size() == 24);
    for (int i = 0; i < 6; ++i) {
        const Op& k = p.ops[op_index(p, indexed("k", i))];
        CHECK(p.streams[k.stream].name == indexed("s", i % 3));
        CHECK(k.duration == Time::us(10 * (i + 1)));
        CHECK(p.ops[op_index(p, indexed("h", i))].duration == Time::us(i + 1));
        const Op& c = p.ops[op_index(p, indexed("c", i))];
        CHECK(p.streams[c.stream].name == indexed("s", 2 - i % 3));
        CHECK(c.dir == CopyDir::H2D);
        CHECK(c.bytes == (1u << 20));
        const Op& f = p.ops[op_index(p, indexed("fixed", i))];
        CHECK(p.streams[f.stream].name == "s[0]");
        CHECK(f.duration == Time::us(5));
    }
}

TEST_CASE("lowering: errors in later iterations are still reported", "[lowering]") {
    // Iteration 3 indexes past the array: the reused op evaluates its stream again and fails there.
    CHECK_THROWS_WITH(load_scenario_text(R"(
streams: {s: {count: 3}}
threads:
  main:
    - repeat: 4
      do:
        - kernel: k
          stream: s[i]
          duration: 1us
)",
                                         "lowering_test.yaml"),
                      Catch::Contains("lowering_test.yaml:8:19: error: stream index 3 is out of range for 's' (0..2)"));
    CHECK_THROWS_WITH(load_scenario_text(R"(
threads:
  main:
    - repeat: 4
      do:
        - host: h
          duration: 2us - i * 1us
)",
                                         "lowering_test.yaml"),
                      Catch::Contains("duration must not be negative"));
}

TEST_CASE("lowering: a node shared by two threads (a YAML alias) keeps each thread's default stream", "[lowering]") {
    Scenario sc = load_scenario_text(R"(
options: {default_stream: per_thread}
threads:
  a:
    - repeat: 2
      do: &body
        - kernel: k
          duration: 1us
  b:
    - repeat: 2
      do: *body
)",
                                     "lowering_test.yaml");
    const Program& p = sc.program;
    REQUIRE(p.ops.size() == 4);
    CHECK(p.streams[p.ops[p.threads[0].ops[1]].stream].name == "per_thread:a");
    CHECK(p.streams[p.ops[p.threads[1].ops[1]].stream].name == "per_thread:b");
}

TEST_CASE("lowering: compiled array indices agree with the general evaluator", "[lowering]") {
    // Indices the fast path compiles (whole numbers, loop variables, params, + - * / % and
    // parentheses) and ones it leaves to the general evaluator (a param naming a loop variable,
    // a comparison, unary minus); every op must land on the stream the expression names.
    Scenario sc = load_scenario_text(R"(
params: {n: 4, two: 2, shift: i + 1}
streams: {s: {count: 8}}
threads:
  main:
    - repeat: 12
      do:
        - kernel: a
          stream: s[(i * 3 + 1) % n]
          duration: 1us
        - kernel: b
          stream: s[7 - i % (n + two)]
          duration: 1us
        - kernel: c
          stream: s[shift % 8]
          duration: 1us
        - kernel: d
          stream: s[(i > 5) + -1 + 1]
          duration: 1us
)",
                                     "lowering_test.yaml");
    const Program& p = sc.program;
    for (int i = 0; i < 12; ++i) {
        auto stream_of = [&](const char* k) { return p.streams[p.ops[op_index(p, indexed(k, i))].stream].name; };
        CHECK(stream_of("a") == indexed("s", (i * 3 + 1) % 4));
        CHECK(stream_of("b") == indexed("s", 7 - i % 6));
        CHECK(stream_of("c") == indexed("s", (i + 1) % 8));
        CHECK(stream_of("d") == indexed("s", i > 5 ? 1 : 0));
    }
    CHECK_THROWS_WITH(load_scenario_text(R"(
streams: {s: {count: 3}}
threads:
  main:
    - repeat: 3
      do:
        - kernel: k
          stream: s[2 / (1 - i)]
          duration: 1us
)",
                                         "lowering_test.yaml"),
                      Catch::Contains("division by zero"));
}

// ---------------------------------------------------------------- compiled loops (frontend/ops.cpp, Stmt)

namespace {
bool same_value(const Value& a, const Value& b) {
    return a.dim == b.dim && a.integral == b.integral && a.i == b.i && (a.integral || a.d == b.d || (a.d != a.d && b.d != b.d));
}

std::string random_expr(std::mt19937& rng, int depth) {
    static const char* leaves[] = {"i", "j", "p", "q", "t", "0", "1", "2", "7", "1000000", "0.5", "2.5", "1e3", "1us",
                                   "3ms", "2MiB", "4KB", "1GB/s", "9223372036854775807", "true", "x"};
    static const char* binary[] = {" + ", " - ", " * ", " / ", " % ", " == ", " != ", " < ", " <= ", " > ", " >= ", " && ", " || "};
    const int pick = static_cast<int>(rng() % 10);
    if (depth >= 4 || pick < 3) return leaves[rng() % (sizeof leaves / sizeof *leaves)];
    std::string out = pick == 3 ? "-" : pick == 4 ? "!" : pick == 5 ? "(" : "";  // appended, not +: GCC 12 warns wrongly
    out.append(random_expr(rng, depth + 1));
    if (pick == 5) out.append(")");
    if (pick > 5) out.append(binary[rng() % (sizeof binary / sizeof *binary)]).append(random_expr(rng, depth + 1));
    return out;
}
}  // namespace

TEST_CASE("lowering: compiled expressions give the evaluator's value, or fail where it throws", "[lowering]") {
    // Loop variables i and j (slots 0 and 1), params p = 3, t = 2us and q = i + 1 (a param that
    // reads a loop variable); x is unknown.
    int64_t vars[2] = {0, 0};
    NameLookup lookup;
    lookup = [&](const std::string& name) -> std::optional<Value> {
        if (name == "i") return Value::integer(vars[0]);
        if (name == "j") return Value::integer(vars[1]);
        if (name == "p") return Value::integer(3);
        if (name == "t") return Value::integer(2'000'000, Dim::Time);
        if (name == "q") return eval_expr("i + 1", lookup);
        return std::nullopt;
    };
    NameCompiler names;
    names = [&](const std::string& name) -> std::optional<CompiledName> {
        if (name == "i") return CompiledName{0, {}};
        if (name == "j") return CompiledName{1, {}};
        for (const char* p : {"p", "t", "q"})
            if (name == p) {
                std::optional<ExprCode> c = compile_expr(name == "p" ? "3" : name == "t" ? "2us" : "i + 1", names);
                if (!c) return std::nullopt;
                return CompiledName{-1, *c};
            }
        return std::nullopt;
    };
    const int64_t values[] = {-3, -1, 0, 1, 2, 5, int64_t{1} << 40, INT64_MAX, INT64_MIN};
    std::mt19937 rng(20240601);
    int compiled = 0, agreed = 0;
    for (int n = 0; n < 4000; ++n) {
        const std::string text = random_expr(rng, 0);
        std::optional<ExprCode> code = compile_expr(text, names);
        compiled += code.has_value();
        for (int64_t a : values)
            for (int64_t b : {int64_t{0}, int64_t{3}, INT64_MIN}) {
                vars[0] = a;
                vars[1] = b;
                std::optional<Value> want;
                try {
                    want = eval_expr(text, lookup);
                } catch (const ExprError&) {
                }
                INFO(text << " with i = " << a << ", j = " << b);
                if (!code) {
                    CHECK(!want);  // only expressions the evaluator rejects fail to compile
                    continue;
                }
                Value got;
                const bool ok = run_expr(*code, vars, got);
                REQUIRE(ok == want.has_value());
                if (ok) CHECK(same_value(got, *want));
                agreed += ok;
            }
    }
    CHECK(compiled > 1000);  // the generator gives a fair share of valid expressions
    CHECK(agreed > 10000);
}

TEST_CASE("lowering: 64-bit division overflow is an error, not a crash", "[lowering]") {
    CHECK_THROWS_WITH(load_scenario_text(R"(
threads:
  main:
    - repeat: 5
      do:
        - host: h
          duration: ((0 - 9223372036854775807 - 1) / (i - 4) * 0) * 1us + 1us
)",
                                         "lowering_test.yaml"),
                      Catch::Contains("lowering_test.yaml:7:52: error: arithmetic overflows 64 bits in"));
    CHECK_THROWS_WITH(load_scenario_text("threads: {main: [{host: h, duration: '(0 - 9223372036854775807 - 1) % -1 * 1us'}]}",
                                         "lowering_test.yaml"),
                      Catch::Contains("arithmetic overflows 64 bits"));
}

TEST_CASE("lowering: every loop-dependent field of an op takes its value of each iteration", "[lowering]") {
    Scenario sc = load_scenario_text(R"(
params: {shift: i + 1}
buffers:
  h: {kind: pinned, size: 4MiB, count: 2}
  d: {kind: device, size: 4MiB, count: 3}
  um: {kind: managed, size: 8MiB, count: 2}
streams: {s: {count: 3}}
events: {ev: {count: 3}}
graphs:
  g:
    - kernel: gk
      duration: 5us
threads:
  main:
    - graph_instantiate: g
    - repeat: 6
      do:
        - event_record: ev[i % 3]
          stream: s[(i + 1) % 3]
        - memcpy_async: up
          src: h[i % 2]
          dst: d[shift % 3]
          bytes: (i + 1) * 256KiB
          stream: s[i % 3]
        - memcpy_async: down
          src: d[i % 3]
          dst: h[(i + 1) % 2]
          stream: s[0]
        - prefetch: um[i % 2]
          bytes: (i + 1) * 1MiB
          stream: s[0]
        - kernel: k
          stream: s[0]
          grid: i + 1
          flops: i * 1e9
          uses: ['um[(i + 1) % 2]']
        - host: h
          duration: shift * 1us
        - if: i % 2 == 0
          then:
            - graph_launch: g
              stream: s[i % 3]
)",
                                     "lowering_test.yaml");
    const Program& p = sc.program;
    for (int i = 0; i < 6; ++i) {
        INFO("iteration " << i);
        const Op& rec = p.ops[op_index(p, indexed("event_record:ev", i % 3) + indexed("", i))];
        CHECK(p.events[rec.event].name == indexed("ev", i % 3));
        CHECK(p.streams[rec.stream].name == indexed("s", (i + 1) % 3));
        const Op& up = p.ops[op_index(p, indexed("up", i))];
        CHECK(p.buffers[up.buffer].name == indexed("h", i % 2));
        CHECK(up.bytes == static_cast<uint64_t>(i + 1) * 256 * 1024);
        CHECK(p.streams[up.stream].name == indexed("s", i % 3));
        const Op& down = p.ops[op_index(p, indexed("down", i))];
        CHECK(down.dir == CopyDir::D2H);
        CHECK(p.buffers[down.buffer].name == indexed("h", (i + 1) % 2));
        CHECK(down.bytes == 4u << 20);
        const Op& pf = p.ops[op_index(p, indexed("prefetch:um", i % 2) + indexed("", i))];
        CHECK(p.buffers[pf.buffer].name == indexed("um", i % 2));
        CHECK(pf.bytes == static_cast<uint64_t>(i + 1) << 20);
        const Op& k = p.ops[op_index(p, indexed("k", i))];
        CHECK(p.site(k).shape.grid == static_cast<uint32_t>(i + 1));
        CHECK(p.site(k).flops == i * 1e9);
        REQUIRE(p.uses_count(k) == 1);
        CHECK(p.buffers[*p.uses_begin(k)].name == indexed("um", (i + 1) % 2));
        CHECK(p.ops[op_index(p, indexed("h", i))].duration == Time::us(i + 1));
        if (i % 2 == 0) {
            const int32_t launch = op_index(p, indexed("graph_launch:g", i));
            CHECK(p.streams[p.ops[launch].stream].name == indexed("s", i % 3));
            CHECK(p.ops[launch + 1].graph_node);
            CHECK(p.ops[launch + 1].stream == p.ops[launch].stream);
        }
    }
    CHECK(p.ops.size() == 1 + 6 * 6 + 3 * 2);  // the instantiate, 6 ops per iteration, 3 launches of 2 ops
}

TEST_CASE("lowering: an op map aliased at two loop depths has each place's loop indices", "[lowering]") {
    Scenario sc = load_scenario_text(R"(
threads:
  main:
    - repeat: 2
      do: &body
        - kernel: k
          duration: 1us
    - repeat: 2
      var: z
      do:
        - repeat: 2
          do: *body
)",
                                     "lowering_test.yaml");
    const Program& p = sc.program;
    REQUIRE(p.ops.size() == 6);
    CHECK(p.op_name(0) == "k[0]");
    CHECK(p.op_name(1) == "k[1]");
    CHECK(p.op_name(2) == "k[0][0]");
    CHECK(p.op_name(5) == "k[1][1]");
}

TEST_CASE("lowering: the count before expanding reserves the program's exact sizes", "[lowering]") {
    int checked = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(HETSIM_SOURCE_DIR) / "scenarios")) {
        if (e.path().extension() != ".yaml") continue;
        const Program p = load_scenario(e.path().string()).program;
        if (p.tasks_form) continue;
        INFO(e.path().string());
        CHECK(p.ops.capacity() == p.ops.size());
        CHECK(p.iter_indices.capacity() == p.iter_indices.size());
        for (const auto& t : p.threads) CHECK(t.ops.capacity() == t.ops.size());
        ++checked;
    }
    CHECK(checked > 50);
}

TEST_CASE("lowering: over --max-ops, the count refuses the scenario where the expansion would", "[lowering]") {
    // Loops whose counts and conditions read loop variables, a graph launch (3 ops), empty and
    // filtered loops (iterations without ops) and a second thread. The positions are those that
    // expanding op by op reports (checked against it when the count was written).
    const std::string yaml = R"(streams: {s: {count: 4}}
graphs:
  g:
    - kernel: gk
      duration: 5us
    - kernel: gk2
      duration: 5us
threads:
  main:
    - host: first
      duration: 1us
    - repeat: 30
      var: i
      do:
        - repeat: i % 4
          var: j
          do:
            - kernel: k
              stream: s[j]
              duration: 1us
            - if: (i + j) % 3 == 0
              then:
                - graph_launch: g
                  stream: s[i % 4]
              else:
                - host: h
                  duration: 1us
        - repeat: 3
          var: e
          do: []
        - repeat: 2
          var: f
          do:
            - if: i > 100
              then:
                - host: never
                  duration: 1us
  second:
    - repeat: 40
      do:
        - host: t2
          duration: 1us
        - repeat: 3
          var: j
          do:
            - host: t2b
              duration: 1us
    - graph_instantiate: g
)";
    auto error = [&](uint64_t max_ops) {
        LoadOptions lo;
        lo.max_ops = max_ops;
        try {
            load_scenario_text(yaml, "cap.yaml", lo);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    const std::string ops = " ops; raise the cap with --max-ops if this is intended";
    CHECK(error(50) == "cap.yaml:26:19: error: the scenario expands to more than 50" + ops);
    CHECK(error(51) == "cap.yaml:31:19: error: the scenario's loops run more than 102 iterations in all; lower the counts, "
                       "or raise the cap with --max-ops if this is intended");
    CHECK(error(52) == "cap.yaml:15:19: error: the scenario's loops run more than 104 iterations in all; lower the counts, "
                       "or raise the cap with --max-ops if this is intended");
    CHECK(error(53) == "cap.yaml:18:15: error: the scenario expands to more than 53" + ops);
    CHECK(error(54) == "cap.yaml:23:19: error: the scenario expands to more than 54" + ops);
    CHECK(error(120) == "cap.yaml:46:15: error: the scenario expands to more than 120" + ops);
    CHECK(error(263) == "cap.yaml:41:11: error: the scenario expands to more than 263" + ops);
    CHECK(error(274) == "cap.yaml:46:15: error: the scenario expands to more than 274" + ops);
    CHECK(error(275) == "cap.yaml:48:7: error: the scenario expands to more than 275" + ops);  // the instantiate (a launch needs one)
    CHECK(error(276) == "(no error)");
    // 10^14 ops: refused at once, nothing expanded.
    CHECK_THROWS_WITH(load_scenario_text(R"(
threads:
  main:
    - repeat: 10000000
      do:
        - repeat: 10000000
          var: j
          do:
            - host: h
              duration: 1us
)",
                                         "big.yaml"),
                      Catch::Contains("big.yaml:9:15: error: the scenario expands to more than 20000000 ops"));
}
