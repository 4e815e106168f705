#include "report/chrome_trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/analysis.hpp"

namespace hetsim::report {
namespace {

std::string quote(const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct Track {
    int pid, tid;
};

class Writer {
public:
    explicit Writer(std::ostream& os) : os_(os) { os_ << "{\"traceEvents\":[\n"; }
    void finish() { os_ << "\n],\n\"displayTimeUnit\":\"ns\"}\n"; }

    void meta(const char* what, int pid, int tid, const std::string& args) {
        begin();
        os_ << "{\"name\":\"" << what << "\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
            << ",\"args\":{" << args << "}}";
    }
    void slice(const std::string& name, const char* cat, Track tr, Time start, Time end, const std::string& args) {
        begin();
        os_ << "{\"name\":" << quote(name) << ",\"cat\":\"" << cat << "\",\"ph\":\"X\",\"pid\":" << tr.pid
            << ",\"tid\":" << tr.tid << ",\"ts\":" << format_us(start) << ",\"dur\":" << format_dur_us(start, end)
            << ",\"args\":{" << args << "}}";
    }
    // A flow arrow between the slices enclosing `from_ts` on `from` and `to_ts` on `to`.
    void flow(const char* name, Track from, Time from_ts, Track to, Time to_ts) {
        int id = next_flow_++;
        begin();
        os_ << "{\"name\":\"" << name << "\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":" << id << ",\"pid\":" << from.pid
            << ",\"tid\":" << from.tid << ",\"ts\":" << format_us(from_ts) << "}";
        begin();
        os_ << "{\"name\":\"" << name << "\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" << id
            << ",\"pid\":" << to.pid << ",\"tid\":" << to.tid << ",\"ts\":" << format_us(to_ts) << "}";
    }

private:
    void begin() {
        if (!first_) os_ << ",\n";
        first_ = false;
    }
    std::ostream& os_;
    bool first_ = true;
    int next_flow_ = 1;
};

bool valid(int32_t i, size_t n) { return i >= 0 && static_cast<size_t>(i) < n; }

// The two processes of one timeline: host threads on `host`, streams and engines on `gpu`.
struct Procs {
    int host = kHostPid, gpu = kGpuPid;
    std::string host_name = "Host", gpu_name = "GPU";
    int sort_base = 0;  // process_sort_index of the host process; the GPU process is next
};

Track host_track(const Program& p, const Op& op, const Procs& pr) {
    return {pr.host, valid(op.thread, p.threads.size()) ? op.thread + 1 : 0};
}
Track stream_track(const Program& p, const Op& op, const Procs& pr) {
    return {pr.gpu, valid(op.stream, p.streams.size()) ? op.stream + 1 : 0};
}
Track engine_track(Engine e, int row, const Procs& pr) {
    return {pr.gpu, kEngineTidBase + 100 * static_cast<int>(e) + row};
}

// Row of each op's GPU phase on its engine track: first row free at its start, ops taken in
// order of start time (ties: op index). -1 for ops without engine work.
std::vector<int> engine_rows(const Timeline& t, uint32_t n, std::map<int, int>& rows_per_engine) {
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < n; ++i)
        if (t.ops[i].has_gpu() && t.ops[i].engine != Engine::None) order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return t.ops[a].gpu_start < t.ops[b].gpu_start; });
    std::vector<int> row(n, -1);
    std::map<int, std::vector<Time>> row_end;  // engine -> end of the last slice of each row
    for (uint32_t i : order) {
        const OpRecord& r = t.ops[i];
        std::vector<Time>& ends = row_end[static_cast<int>(r.engine)];
        size_t k = 0;
        while (k < ends.size() && ends[k] > r.gpu_start) ++k;
        if (k == ends.size() && k < 99) ends.emplace_back();
        k = std::min<size_t>(k, ends.size() - 1);
        ends[k] = max(ends[k], r.gpu_end);
        row[i] = static_cast<int>(k);
    }
    for (auto& [e, ends] : row_end) rows_per_engine[e] = static_cast<int>(ends.size());
    return row;
}

Time mid(Time a, Time b) { return a + Time::ps((b - a).ps() / 2); }

std::string cause_text(const Program& p, const Cause& c) {
    std::string s = to_string(c.kind);
    if (valid(c.op, p.ops.size()))
        s += " (op " + std::to_string(c.op) + " " + p.op_name(static_cast<uint32_t>(c.op)) + ", " +
             phase_name(c.phase) + ")";
    return s;
}

std::string op_args(const Program& p, uint32_t i, const Cause& c, const std::string& extra) {
    const Op& op = p.ops[i];
    std::string a = "\"op\":" + std::to_string(i) + ",\"kind\":\"" + to_string(op.kind) + "\"";
    if (op.bytes_or_0() != 0) a += ",\"bytes\":" + std::to_string(op.bytes);
    a += ",\"cause\":" + quote(cause_text(p, c)) + extra;
    return a;
}

std::string name_arg(const std::string& n) { return "\"name\":" + quote(n); }
std::string sort_arg(int i) { return "\"sort_index\":" + std::to_string(i); }

void write_tracks(Writer& w, const Program& p, const Timeline& t, const std::map<int, int>& engines, const Procs& pr) {
    w.meta("process_name", pr.host, 0, name_arg(pr.host_name));
    w.meta("process_sort_index", pr.host, 0, sort_arg(pr.sort_base));
    w.meta("process_name", pr.gpu, 0, name_arg(pr.gpu_name));
    w.meta("process_sort_index", pr.gpu, 0, sort_arg(pr.sort_base + 1));
    std::set<int> host_tids, stream_tids;
    for (size_t i = 0; i < p.threads.size(); ++i) host_tids.insert(static_cast<int>(i) + 1);
    for (uint32_t i = 0; i < p.ops.size() && i < t.ops.size(); ++i) {
        const OpRecord& r = t.ops[i];
        if (r.has_host()) host_tids.insert(host_track(p, p.ops[i], pr).tid);
        if (r.has_gpu()) stream_tids.insert(stream_track(p, p.ops[i], pr).tid);
    }
    int sort = 0;
    for (int tid : host_tids) {
        std::string n = tid == 0 ? "host" : p.threads[static_cast<size_t>(tid - 1)].name;
        w.meta("thread_name", pr.host, tid, name_arg(n));
        w.meta("thread_sort_index", pr.host, tid, sort_arg(sort++));
    }
    for (int tid : stream_tids) {
        std::string n = tid == 0 ? "stream ?" : "stream " + p.streams[static_cast<size_t>(tid - 1)].name;
        w.meta("thread_name", pr.gpu, tid, name_arg(n));
        w.meta("thread_sort_index", pr.gpu, tid, sort_arg(sort++));
    }
    for (auto [e, rows] : engines) {
        for (int k = 0; k < rows; ++k) {
            Track tr = engine_track(static_cast<Engine>(e), k, pr);
            std::string n = to_string(static_cast<Engine>(e));
            if (k > 0) n += " (" + std::to_string(k + 1) + ")";
            w.meta("thread_name", pr.gpu, tr.tid, name_arg(n));
            w.meta("thread_sort_index", pr.gpu, tr.tid, sort_arg(sort++));
        }
    }
}

void write_timeline(Writer& w, const Program& p, const Timeline& t, const Procs& pr) {
    const uint32_t n = static_cast<uint32_t>(std::min(p.ops.size(), t.ops.size()));
    std::map<int, int> engines;
    const std::vector<int> row = engine_rows(t, n, engines);
    write_tracks(w, p, t, engines, pr);
    for (uint32_t i = 0; i < n; ++i) {
        const Op& op = p.ops[i];
        const OpRecord& r = t.ops[i];
        std::string name = p.op_name(i);
        const char* cat = to_string(op.kind);
        if (r.has_host()) {
            std::string extra = r.sync_wait.ps() != 0 ? ",\"sync_wait_ns\":" + format_ns(r.sync_wait) : "";
            w.slice(name, cat, host_track(p, op, pr), r.host_start, r.host_end, op_args(p, i, r.host_cause, extra));
        }
        if (r.has_gpu()) {
            std::string args = op_args(p, i, r.gpu_cause, "");
            w.slice(name, cat, stream_track(p, op, pr), r.gpu_start, r.gpu_end, args);
            if (r.engine != Engine::None) w.slice(name, cat, engine_track(r.engine, row[i], pr), r.gpu_start, r.gpu_end, args);
        }
    }
    for (uint32_t i = 0; i < n; ++i) {
        const OpRecord& r = t.ops[i];
        if (!r.has_gpu()) continue;
        Track to = stream_track(p, p.ops[i], pr);
        Time to_ts = mid(r.gpu_start, r.gpu_end);
        if (r.has_host()) w.flow("launch", host_track(p, p.ops[i], pr), mid(r.host_start, r.host_end), to, to_ts);
        const Cause& c = r.gpu_cause;
        if (c.kind == CauseKind::Event && valid(c.op, n) && t.ops[static_cast<size_t>(c.op)].has_gpu()) {
            const OpRecord& rec = t.ops[static_cast<size_t>(c.op)];
            w.flow("event", stream_track(p, p.ops[static_cast<size_t>(c.op)], pr), mid(rec.gpu_start, rec.gpu_end), to,
                   to_ts);
        }
    }
}

}  // namespace

std::string format_dur_us(Time start, Time end) {
    const std::string exact = format_us(end - start);
    const double ts = std::strtod(format_us(start).c_str(), nullptr);
    const double te = std::strtod(format_us(end).c_str(), nullptr);
    double x = std::strtod(exact.c_str(), nullptr);
    if (ts + x == te) return exact;
    // The double closest to the exact duration whose sum with ts is te: a few ulps away, as the
    // rounded sum moves by at most one ulp of te per step of x. (Where no such double exists,
    // the largest whose sum stays below te.)
    for (int k = 0; k < 1000 && ts + x > te; ++k) x = std::nextafter(x, -INFINITY);
    for (int k = 0; k < 1000 && ts + x < te && ts + std::nextafter(x, INFINITY) <= te; ++k) x = std::nextafter(x, INFINITY);
    if (ts + x > te) x = te - ts;
    while (ts + x > te) x = std::nextafter(x, -INFINITY);
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, x);  // shortest text that reads back as x
    return std::string(buf, r.ptr);
}

std::string format_us(Time t) {
    int64_t v = t.ps();
    bool neg = v < 0;
    uint64_t a = neg ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%llu.%06llu", neg ? "-" : "", static_cast<unsigned long long>(a / 1000000),
                  static_cast<unsigned long long>(a % 1000000));
    return buf;
}


void write_chrome_trace(std::ostream& os, const Program& p, const Timeline& t) {
    Writer w(os);
    write_timeline(w, p, t, Procs{});
    w.finish();
}

void write_chrome_trace_multi(std::ostream& os, const Program& p, const std::vector<TraceTimeline>& timelines) {
    Writer w(os);
    int k = 0;
    for (const TraceTimeline& tt : timelines) {
        Procs pr{2 * k + 1, 2 * k + 2, tt.host_process, tt.gpu_process, 2 * k};
        if (tt.timeline) write_timeline(w, p, *tt.timeline, pr);
        ++k;
    }
    w.finish();
}

}  // namespace hetsim::report
