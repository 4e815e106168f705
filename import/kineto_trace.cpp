#include "import/kineto_trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "frontend/limits.hpp"
#include "report/json_input.hpp"

namespace hetsim::import {
namespace {

using nlohmann::json;

constexpr const char* kFewer = "profile fewer steps";
constexpr const char* kWhat =
    "a PyTorch profiler trace (torch.profiler export_chrome_trace: Kineto JSON with \"traceEvents\")";

SourceLoc loc_at(const std::string& file, const std::string& text, size_t off) {
    SourceLoc l{file, 1, 1};
    for (size_t i = 0; i < off && i < text.size(); ++i) {
        if (text[i] == '\n') ++l.line, l.col = 1;
        else ++l.col;
    }
    return l;
}

json parse_json(const std::string& text, const std::string& file, uint64_t max_memory) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw InputError(SourceLoc{file, 1, 1}, std::string("the file is empty; it should be ") + kWhat);
    if (max_memory != 0 && text.size() > report::json_text_cap(max_memory))
        report::refuse_over_memory_cap(file, "the trace is " + bytes_text(text.size()) + " of text: with the JSON tree built from it, reading it would pass", max_memory, kFewer);
    try {
        json j = max_memory == 0 ? json::parse(text) : report::parse_json_counted(text, max_memory - text.size());
        // nlohmann keeps the last of two equal keys: a trace with them is damaged, not meant so.
        if (auto [at, key] = report::duplicate_key(text); at != std::string::npos)
            throw InputError(loc_at(file, text, at), "duplicate key \"" + key + "\" in one object; each key may appear once (the file should be " +
                                                         std::string(kWhat) + ")");
        return j;
    } catch (const report::JsonTreeOverCap&) {
        report::refuse_over_memory_cap(file, "the trace's JSON tree and its " + bytes_text(text.size()) + " of text pass",
                 max_memory, kFewer);
    } catch (const json::parse_error& e) {
        const size_t off = e.byte > 0 ? e.byte - 1 : 0;
        std::string why = e.what();
        if (auto p = why.find("column "); p != std::string::npos)
            if (auto q = why.find(": ", p); q != std::string::npos) why = why.substr(q + 2);
        std::string clean;
        for (unsigned char c : why) clean += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
        const bool truncated = off + 1 >= text.size() || clean.find("end of input") != std::string::npos;
        throw InputError(loc_at(file, text, off),
                         truncated ? "the JSON ends early: the trace is truncated (was the profiler's export cut off?); it should be " +
                                         std::string(kWhat)
                                   : "not valid JSON: " + clean + " (the file should be " + kWhat + ")");
    } catch (const json::exception& e) {
        throw InputError(SourceLoc{file}, std::string("not valid JSON: ") + e.what() + " (the file should be " + kWhat + ")");
    }
}

class Reader {
public:
    Reader(const std::string& file, const std::string& text) : file_(file), text_(text) {}
    [[noreturn]] void fail(const std::string& what, const report::JsonPath& at) const {
        throw InputError(report::json_loc(file_, text_, at), what);
    }
    // A number (or a numeric string, as some exporters write ts) at e[key]; false when absent.
    bool number(const json& e, const char* key, double& out, const report::JsonPath& at) const {
        auto it = e.find(key);
        if (it == e.end() || it->is_null()) return false;
        if (it->is_number()) {
            out = it->get<double>();
        } else if (it->is_string()) {
            const std::string& s = it->get_ref<const std::string&>();
            char* end = nullptr;
            errno = 0;
            out = std::strtod(s.c_str(), &end);
            if (s.empty() || *end != '\0' || errno != 0) fail(std::string("\"") + key + "\" must be a number, got " + it->dump(), with(at, key));
        } else {  // (a time in microseconds, a count or an id)
            fail(std::string("\"") + key + "\" must be a number, got " + it->dump(), with(at, key));
        }
        if (!std::isfinite(out) || std::fabs(out) > 9e15) fail(std::string("\"") + key + "\" is out of range: " + it->dump(), with(at, key));
        return true;
    }
    // A time in microseconds -> ns.
    int64_t time_ns(const json& e, const char* key, const report::JsonPath& at, bool required) const {
        double us = 0;
        if (!number(e, key, us, at)) {
            if (required) fail(std::string("a complete (\"ph\": \"X\") event needs \"") + key + "\" (microseconds)", at);
            return 0;
        }
        // Kineto times are microseconds since some epoch (about 5e12 here); past 9e12 s no
        // trace can be meant, and the nanoseconds would not fit in 64 bits.
        if (!(std::fabs(us) < 9e15)) fail(std::string("\"") + key + "\" is out of range for a trace time in microseconds", with(at, key));
        return std::llround(us * 1000.0);
    }
    int64_t integer(const json& args, const char* key, int64_t dflt, const report::JsonPath& at) const {
        double v = 0;
        if (!number(args, key, v, at)) return dflt;
        return static_cast<int64_t>(std::llround(v));
    }
    // A count (bytes, registers, shared memory): a whole number of at least 0; `dflt` when absent.
    uint64_t count(const json& args, const char* key, uint64_t dflt, const report::JsonPath& at) const {
        double v = 0;
        if (!number(args, key, v, at)) return dflt;
        if (v < 0 || v != std::floor(v))
            fail(std::string("\"") + key + "\" must be a whole number of at least 0, got " + args.at(key).dump(), with(at, key));
        return static_cast<uint64_t>(v);
    }
    // A launch dimension: a number or an [x, y, z] list of whole numbers from 1 to 2^31 - 1; their
    // product.
    uint64_t dims(const json& args, const char* key, const report::JsonPath& at) const {
        const json& v = args.at(key);
        const std::string want = std::string("\"") + key + "\" must be a whole number or a list [x, y, z] of whole numbers from 1 to 2147483647, got ";
        auto one = [&](const json& x) -> uint64_t {
            if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < 1 || x.get<double>() > 2147483647.0 ||
                x.get<double>() != std::floor(x.get<double>()))
                fail(want + v.dump(), with(at, key));
            return static_cast<uint64_t>(x.get<double>());
        };
        if (!v.is_array()) return one(v);
        if (v.empty() || v.size() > 3) fail(want + v.dump(), with(at, key));
        uint64_t p = 1;
        for (const json& x : v) p *= one(x);  // at most (2^31)^3 < 2^64
        return p;
    }
    static report::JsonPath with(report::JsonPath p, const char* key) {
        p.emplace_back(std::string(key));
        return p;
    }

private:
    std::string file_;
    const std::string& text_;
};

// pid/tid: numbers (or numeric strings); false for the named rows ("Spans", "Traces", "").
bool id_of(const json& v, int64_t& out) {
    if (v.is_number_integer()) return out = v.get<int64_t>(), true;
    if (v.is_number()) return out = static_cast<int64_t>(std::llround(v.get<double>())), true;
    if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        char* end = nullptr;
        long long x = std::strtoll(s.c_str(), &end, 10);
        if (!s.empty() && *end == '\0') return out = x, true;
    }
    return false;
}

bool mem_kind(const std::string& s, MemKind& out) {
    if (s == "Pageable") return out = MemKind::Pageable, true;
    if (s == "Pinned") return out = MemKind::Pinned, true;
    if (s == "Managed") return out = MemKind::Managed, true;
    if (s == "Device" || s == "Array") return out = MemKind::Device, true;
    return false;
}

// "Memcpy HtoD (Pageable -> Device)": direction and the host side's memory kind.
void parse_memcpy_name(GpuActivity& g) {
    const std::string& n = g.name;
    g.dir = CopyDir::D2D;
    g.host_mem = MemKind::Device;
    if (n.find("HtoD") != std::string::npos) g.dir = CopyDir::H2D;
    else if (n.find("DtoH") != std::string::npos) g.dir = CopyDir::D2H;
    else if (n.find("HtoH") != std::string::npos) g.host_to_host = true;
    size_t lp = n.find('('), arrow = n.find(" -> "), rp = n.rfind(')');
    MemKind src = MemKind::Device, dst = MemKind::Device;
    bool have = false;
    if (lp != std::string::npos && arrow != std::string::npos && rp != std::string::npos && lp < arrow && arrow < rp)
        have = mem_kind(n.substr(lp + 1, arrow - lp - 1), src) & mem_kind(n.substr(arrow + 4, rp - arrow - 4), dst);
    if (g.dir == CopyDir::H2D) g.host_mem = have ? src : MemKind::Pageable;
    if (g.dir == CopyDir::D2H) g.host_mem = have ? dst : MemKind::Pageable;
    if (g.host_mem == MemKind::Device && g.dir != CopyDir::D2D) g.host_mem = MemKind::Pageable;  // "Unknown" host side
}

}  // namespace

KinetoTrace parse_kineto_trace(const std::string& text, const std::string& file, uint64_t max_memory) {
    const json doc = parse_json(text, file, max_memory);
    Reader rd(file, text);
    using P = report::JsonPath;
    if (!doc.is_object()) {
        if (doc.is_array())
            rd.fail("a bare list of trace events, not what PyTorch's export_chrome_trace writes: expected a JSON object with "
                    "\"traceEvents\" (a Kineto trace)",
                    P{});
        rd.fail(std::string("expected ") + kWhat + ", got a JSON " + doc.type_name(), P{});
    }
    if (doc.contains("schema") && doc["schema"] == "hetsim.measured")
        rd.fail(std::string("this is a measured timeline from hetsim-runner (\"schema\": \"hetsim.measured\"), not ") + kWhat, P{"schema"});
    if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array())
        rd.fail(std::string("no \"traceEvents\" array: not ") + kWhat, doc.contains("traceEvents") ? P{"traceEvents"} : P{});
    const json& evs = doc["traceEvents"];

    KinetoTrace t;
    t.file = file;
    t.events = evs.size();
    std::set<int64_t> devices;
    size_t kineto_events = 0;
    int64_t first_device_event = -1;
    int64_t first_ts = INT64_MIN;  // the first kept event's start (ns)
    for (size_t k = 0; k < evs.size(); ++k) {
        const json& e = evs[k];
        if (!e.is_object()) continue;
        auto ph = e.find("ph"), cat = e.find("cat");
        if (ph == e.end() || !ph->is_string() || *ph != "X" || cat == e.end() || !cat->is_string()) continue;
        const std::string& c = cat->get_ref<const std::string&>();
        const bool span = c == "cpu_op" || c == "user_annotation";
        const bool call = c == "cuda_runtime" || c == "cuda_driver";
        const bool gpu = c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset";
        if (c == "cuda_sync") {  // enable_cuda_sync_events: the stream and the record of a wait or event sync
            auto a = e.find("args");
            if (a == e.end() || !a->is_object()) continue;
            const P sync_at = Reader::with(P{"traceEvents", k}, "args");
            const int64_t corr = rd.integer(*a, "correlation", -1, sync_at);
            if (corr < 0) continue;
            SyncInfo si;
            si.stream = rd.integer(*a, "stream", -1, sync_at);
            si.wait_on_stream = rd.integer(*a, "wait_on_stream", -1, sync_at);
            si.record_correlation = rd.integer(*a, "wait_on_cuda_event_record_corr_id", -1, sync_at);
            t.sync_by_correlation[corr] = si;
            continue;
        }
        if (!span && !call && !gpu) continue;
        ++kineto_events;
        const P at{"traceEvents", k};
        const int64_t ts = rd.time_ns(e, "ts", at, true);
        if (ts < 0) rd.fail("\"ts\" is negative; Kineto times are microseconds since an epoch", Reader::with(at, "ts"));
        const int64_t dur = rd.time_ns(e, "dur", at, true);
        if (dur < 0) rd.fail("\"dur\" is negative; an event lasts 0 or more microseconds", Reader::with(at, "dur"));
        // A profile window is seconds long; an event 1000 s away from the first one, or lasting
        // longer, is a broken trace (and its times would overflow the simulated timeline).
        constexpr int64_t kMaxSpanNs = 1'000'000'000'000;  // 1000 s
        if (first_ts == INT64_MIN) first_ts = ts;
        if (ts - first_ts > kMaxSpanNs || first_ts - ts > kMaxSpanNs)
            rd.fail("\"ts\" lies more than 1000 s from the first event's (" + std::to_string(first_ts / 1000) +
                        " us): a trace spans seconds",
                    Reader::with(at, "ts"));
        if (dur > kMaxSpanNs) rd.fail("\"dur\" is longer than 1000 s: a trace spans seconds", Reader::with(at, "dur"));
        std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : std::string();
        static const json kEmpty = json::object();
        const json& args = e.contains("args") && e["args"].is_object() ? e["args"] : kEmpty;
        const P args_at = Reader::with(at, "args");
        int64_t pid = 0, tid = 0;
        const bool has_ids = e.contains("pid") && e.contains("tid") && id_of(e["pid"], pid) && id_of(e["tid"], tid);
        if (span || call) {
            if (!has_ids) rd.fail("a " + c + " event needs numeric \"pid\" and \"tid\" (its host process and thread)", at);
            if (span) {
                t.spans[{pid, tid}].push_back(CpuSpan{ts, ts + dur, name, c == "user_annotation"});
                if (name.rfind("ProfilerStep#", 0) == 0) {
                    char* end = nullptr;
                    long long n = std::strtoll(name.c_str() + 13, &end, 10);
                    if (end && *end == '\0' && end != name.c_str() + 13) t.steps.push_back(ProfilerStep{n, ts, ts + dur, {pid, tid}});
                }
            } else {
                ApiCall a{name, ts, ts + dur, rd.integer(args, "correlation", -1, args_at), {pid, tid}, c == "cuda_driver"};
                t.calls.push_back(std::move(a));
            }
            continue;
        }
        GpuActivity g;
        g.kind = c == "kernel" ? GpuKind::Kernel : c == "gpu_memcpy" ? GpuKind::Memcpy : GpuKind::Memset;
        g.name = name;
        g.start = ts;
        g.end = ts + dur;
        // Without a correlation id (or one no call has) the record is still GPU work: the builder
        // places it after the call of its stream's previous work (import/workload_build.cpp).
        g.correlation = rd.integer(args, "correlation", -1, args_at);
        if (g.correlation < 0) g.correlation = -1;
        g.device = rd.integer(args, "device", has_ids ? pid : 0, args_at);
        g.stream = rd.integer(args, "stream", has_ids ? tid : 0, args_at);
        if (g.kind == GpuKind::Kernel) {
            if (args.contains("grid")) g.grid = rd.dims(args, "grid", args_at);
            if (args.contains("block")) g.block = rd.dims(args, "block", args_at);
            g.registers = rd.count(args, "registers per thread", 0, args_at);
            g.shared_memory = rd.count(args, "shared memory", 0, args_at);
            // A launch no CUDA GPU takes (every compute capability: at most 1024 threads and 64K
            // registers per block, 255 registers per thread) is a damaged trace, said here.
            if (g.block > 1024)
                rd.fail("a kernel block of " + std::to_string(g.block) + " threads: CUDA allows at most 1024 threads per block",
                        Reader::with(args_at, "block"));
            if (g.registers > 255)
                rd.fail("a kernel of " + std::to_string(g.registers) + " registers per thread: CUDA allows at most 255",
                        Reader::with(args_at, "registers per thread"));
            if (g.block * g.registers > 65536)
                rd.fail("a kernel block of " + std::to_string(g.block) + " threads x " + std::to_string(g.registers) + " registers = " +
                            std::to_string(g.block * g.registers) + " registers: CUDA allows at most 65536 per block",
                        Reader::with(args_at, "registers per thread"));
        } else {
            g.bytes = rd.count(args, "bytes", 0, args_at);
            if (g.kind == GpuKind::Memcpy) parse_memcpy_name(g);
        }
        if (devices.insert(g.device).second && devices.size() > 1) {
            std::string list;
            for (int64_t d : devices) list += (list.empty() ? "" : ", ") + std::to_string(d);
            rd.fail("GPU activity on several devices (" + list + ", the first at traceEvents[" + std::to_string(first_device_event) +
                        "]): hetsim predicts one process on one GPU; profile a single device (CUDA_VISIBLE_DEVICES)",
                    at);
        }
        if (first_device_event < 0) first_device_event = static_cast<int64_t>(k);
        t.gpu.push_back(std::move(g));
    }
    if (kineto_events == 0)
        rd.fail("not a PyTorch profiler (Kineto) trace: none of its " + std::to_string(evs.size()) +
                    " trace events is a cpu_op, user_annotation, cuda_runtime, kernel, gpu_memcpy or gpu_memset event",
                P{"traceEvents"});
    if (t.calls.empty())
        rd.fail("the trace has no CUDA runtime calls (cuda_runtime events): profile with "
                "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]",
                P{"traceEvents"});
    if (t.gpu.empty())
        rd.fail("the trace has no GPU activity (kernel, gpu_memcpy or gpu_memset events): profile with "
                "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] on a CUDA device",
                P{"traceEvents"});
    t.device = *devices.begin();
    if (doc.contains("deviceProperties") && doc["deviceProperties"].is_array())
        for (const json& d : doc["deviceProperties"])
            if (d.is_object() && d.contains("id") && d["id"].is_number() && d["id"].get<int64_t>() == t.device && d.contains("name") &&
                d["name"].is_string())
                t.device_name = d["name"].get<std::string>();

    // One call per correlation id: a runtime call and the driver call inside it share theirs.
    std::stable_sort(t.calls.begin(), t.calls.end(), [](const ApiCall& a, const ApiCall& b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::set<int64_t> seen;
    std::vector<ApiCall> calls;
    for (ApiCall& a : t.calls)
        if (a.correlation < 0 || seen.insert(a.correlation).second) calls.push_back(std::move(a));
    t.calls = std::move(calls);
    std::stable_sort(t.gpu.begin(), t.gpu.end(), [](const GpuActivity& a, const GpuActivity& b) { return a.start < b.start; });
    for (size_t i = 0; i < t.gpu.size(); ++i) t.gpu_by_correlation.emplace(t.gpu[i].correlation, i);
    for (auto& [key, v] : t.spans)
        std::stable_sort(v.begin(), v.end(), [](const CpuSpan& a, const CpuSpan& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
    std::stable_sort(t.steps.begin(), t.steps.end(), [](const ProfilerStep& a, const ProfilerStep& b) { return a.number < b.number; });
    return t;
}

KinetoTrace read_kineto_trace(const std::string& path, uint64_t max_memory) {
    std::string data = report::read_input_text(path, kWhat, max_memory, kFewer);
    return parse_kineto_trace(data, path, max_memory);
}

bool looks_like_kineto(const std::string& path) {
    bool gzip = false;
    const std::string head = report::read_text_head(path, 1 << 16, &gzip);
    if (head.find("\"hetsim.measured\"") != std::string::npos) return false;
    return gzip || head.find("\"traceEvents\"") != std::string::npos || head.find("\"schemaVersion\"") != std::string::npos;
}

}  // namespace hetsim::import
