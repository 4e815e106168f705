#include "report/analysis.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace hetsim::report {
namespace {

using Iv = std::pair<int64_t, int64_t>;  // [first, second) in ps
using Ivs = std::vector<Iv>;

// Sorted, disjoint, non-empty intervals; touching intervals are merged.
Ivs normalize(Ivs v) {
    std::erase_if(v, [](const Iv& iv) { return iv.second <= iv.first; });
    if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());  // lanes are mostly in time order
    Ivs out;
    for (const Iv& iv : v) {
        if (!out.empty() && iv.first <= out.back().second)
            out.back().second = std::max(out.back().second, iv.second);
        else
            out.push_back(iv);
    }
    return out;
}

// Appends normalized `b` to normalized `a` and normalizes the result (a linear merge).
void merge_into(Ivs& a, const Ivs& b) {
    if (b.empty()) return;
    size_t mid = a.size();
    a.insert(a.end(), b.begin(), b.end());
    std::inplace_merge(a.begin(), a.begin() + static_cast<long>(mid), a.end());
    Ivs out;
    out.reserve(a.size());
    for (const Iv& iv : a) {
        if (!out.empty() && iv.first <= out.back().second)
            out.back().second = std::max(out.back().second, iv.second);
        else
            out.push_back(iv);
    }
    a = std::move(out);
}

int64_t length(const Ivs& v) {
    int64_t s = 0;
    for (const Iv& iv : v) s += iv.second - iv.first;
    return s;
}

Ivs intersect(const Ivs& a, const Ivs& b) {  // both normalized
    Ivs out;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        int64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
        if (lo < hi) out.emplace_back(lo, hi);
        if (a[i].second < b[j].second) ++i; else ++j;
    }
    return out;
}

// Categories of work for "hidden behind": a phase is hidden where work of another category runs.
enum Cat { kHost, kStreamOnly, kCopy, kSm, kDevCopy, kCats };
const char* const kCatKind[kCats] = {"host_thread", "stream", "copy_engine", "sm", "device_copy"};

Cat gpu_cat(Engine e) {
    switch (e) {
        case Engine::H2D: case Engine::D2H: return kCopy;
        case Engine::Compute: return kSm;
        case Engine::DeviceCopy: return kDevCopy;
        case Engine::None: break;
    }
    return kStreamOnly;
}

struct Lane {
    std::string name, kind;
    Ivs raw[kCats];  // this lane's intervals by category of the work
};

constexpr int kGroupHost = 0, kGroupStream = 1, kGroupEngine = 2;

Iv host_busy(const OpRecord& r) {
    return {r.host_start.ps(), (r.host_end - r.sync_wait).ps()};
}

bool phase_exists(const Timeline& t, int32_t op, Phase ph) {
    if (op < 0 || static_cast<size_t>(op) >= t.ops.size()) return false;
    const OpRecord& r = t.ops[static_cast<size_t>(op)];
    return ph == Phase::Host ? r.has_host() : r.has_gpu();
}

void find_critical_path(const Program& p, const Timeline& t, Analysis& a) {
    int32_t cur = -1;
    Phase ph = Phase::Gpu;
    Time best = Time::ps(INT64_MIN);
    for (size_t i = 0; i < t.ops.size(); ++i) {
        const OpRecord& r = t.ops[i];
        if (r.has_gpu() && r.gpu_end > best) { best = r.gpu_end; cur = static_cast<int32_t>(i); ph = Phase::Gpu; }
        if (r.has_host() && r.host_end > best) { best = r.host_end; cur = static_cast<int32_t>(i); ph = Phase::Host; }
    }
    std::set<std::pair<int32_t, Phase>> seen;
    std::vector<CriticalStep> rev;
    while (cur >= 0 && seen.insert({cur, ph}).second) {
        const uint32_t op = static_cast<uint32_t>(cur);
        const OpRecord& r = t.ops[op];
        CriticalStep s;
        s.op = op;
        s.phase = ph;
        const Cause& c = ph == Phase::Host ? r.host_cause : r.gpu_cause;
        s.cause = c.kind;
        if (ph == Phase::Host) {
            s.lane = host_lane(p, op < p.ops.size() ? p.ops[op].thread : kNone);
            s.kind = "host_thread";
            s.start = r.host_start;
            s.end = r.host_end;
        } else {
            s.lane = gpu_run_lane(p, op, r);
            s.kind = engine_kind(r.engine);
            s.start = r.gpu_start;
            s.end = r.gpu_end;
        }
        rev.push_back(std::move(s));
        if (c.kind == CauseKind::None || !phase_exists(t, c.op, c.phase)) break;
        cur = c.op;
        ph = c.phase;
    }
    a.critical_path.assign(rev.rbegin(), rev.rend());

    // Shares: each step counts from where the previous one ended (a sync's host phase overlaps
    // the GPU work it waited for); time with no step running, from time zero on, is latency.
    if (a.critical_path.empty()) return;
    std::vector<KindShare> shares;
    Time latency, prev_end;
    auto add = [&](const std::string& kind, Time d) {
        for (KindShare& k : shares)
            if (k.kind == kind) { k.time += d; return; }
        shares.push_back({kind, d, 0});
    };
    for (const CriticalStep& s : a.critical_path) {
        if (s.start > prev_end) latency += s.start - prev_end;
        Time from = max(s.start, prev_end);
        add(s.kind, s.end > from ? s.end - from : Time{});
        prev_end = max(prev_end, s.end);
    }
    add("latency", latency);
    for (KindShare& k : shares)
        k.share = a.end_to_end.ps() > 0 ? static_cast<double>(k.time.ps()) / static_cast<double>(a.end_to_end.ps()) : 0;
    a.critical_share = std::move(shares);
}

double ratio(Time num, Time den) {
    return den.ps() > 0 ? static_cast<double>(num.ps()) / static_cast<double>(den.ps()) : 0.0;
}

}  // namespace

std::string host_lane(const Program& p, int32_t thread) {
    if (thread < 0 || static_cast<size_t>(thread) >= p.threads.size()) return "host";
    return "host:" + p.threads[static_cast<size_t>(thread)].name;
}

std::string stream_lane(const Program& p, int32_t stream) {
    if (stream < 0 || static_cast<size_t>(stream) >= p.streams.size()) return "stream";
    return "stream:" + p.streams[static_cast<size_t>(stream)].name;
}

const char* engine_lane(Engine e) {
    switch (e) {
        case Engine::H2D: return "copy:h2d";
        case Engine::D2H: return "copy:d2h";
        case Engine::Compute: return "sm";
        case Engine::DeviceCopy: return "device_copy";
        case Engine::None: break;
    }
    return "";
}

const char* engine_kind(Engine e) { return kCatKind[gpu_cat(e)]; }

const char* phase_name(Phase ph) { return ph == Phase::Host ? "host" : "gpu"; }

std::string gpu_run_lane(const Program& p, uint32_t op, const OpRecord& r) {
    if (r.engine != Engine::None) return engine_lane(r.engine);
    return stream_lane(p, op < p.ops.size() ? p.ops[op].stream : kNone);
}

Analysis analyze(const Program& p, const Timeline& t) {
    Analysis a;
    a.end_to_end = t.end_to_end;

    std::map<std::pair<int, int>, Lane> lanes;  // (group, index) keeps the report order
    for (size_t i = 0; i < p.threads.size(); ++i)
        lanes[{kGroupHost, static_cast<int>(i)}] = Lane{host_lane(p, static_cast<int32_t>(i)), "host_thread", {}};
    Ivs all_gpu;
    for (size_t i = 0; i < t.ops.size(); ++i) {
        const OpRecord& r = t.ops[i];
        const Op* op = i < p.ops.size() ? &p.ops[i] : nullptr;
        if (r.has_host()) {
            int32_t th = op && op->thread >= 0 && static_cast<size_t>(op->thread) < p.threads.size() ? op->thread : kNone;
            Lane& l = lanes[{kGroupHost, th >= 0 ? th : INT_MAX}];
            if (l.name.empty()) l = Lane{host_lane(p, th), "host_thread", {}};
            l.raw[kHost].push_back(host_busy(r));
        }
        if (r.has_gpu()) {
            Iv iv{r.gpu_start.ps(), r.gpu_end.ps()};
            Cat c = gpu_cat(r.engine);
            int32_t st = op && op->stream >= 0 && static_cast<size_t>(op->stream) < p.streams.size() ? op->stream : kNone;
            Lane& sl = lanes[{kGroupStream, st >= 0 ? st : INT_MAX}];
            if (sl.name.empty()) sl = Lane{stream_lane(p, st), "stream", {}};
            sl.raw[c].push_back(iv);
            if (r.engine != Engine::None) {
                Lane& el = lanes[{kGroupEngine, static_cast<int>(r.engine)}];
                if (el.name.empty()) el = Lane{engine_lane(r.engine), engine_kind(r.engine), {}};
                el.raw[c].push_back(iv);
            }
            all_gpu.push_back(iv);
        }
    }

    // Union per category over all lanes (streams repeat engine work, which a union absorbs),
    // then, per category, the union of every other category.
    for (auto& [key, l] : lanes)
        for (int c = 0; c < kCats; ++c) l.raw[c] = normalize(std::move(l.raw[c]));
    Ivs cat_union[kCats];
    for (auto& [key, l] : lanes)
        for (int c = 0; c < kCats; ++c) merge_into(cat_union[c], l.raw[c]);
    Ivs others[kCats];
    for (int c = 0; c < kCats; ++c)
        for (int d = 0; d < kCats; ++d)
            if (d != c) merge_into(others[c], cat_union[d]);

    for (auto& [key, l] : lanes) {
        Resource res{l.name, l.kind, {}, 0, {}};
        Ivs all, hidden;
        for (int c = 0; c < kCats; ++c) {
            merge_into(all, l.raw[c]);
            merge_into(hidden, intersect(l.raw[c], others[c]));
        }
        res.busy = Time::ps(length(all));
        res.hidden = Time::ps(length(hidden));
        res.utilization = ratio(res.busy, t.end_to_end);
        a.resources.push_back(std::move(res));
    }

    Metrics& m = a.metrics;
    for (const OpRecord& r : t.ops) {
        m.serial += r.own_time();
        m.exposed_sync += r.sync_wait;
    }
    m.elapsed = t.end_to_end;
    m.speedup = ratio(m.serial, m.elapsed);
    m.hidden = m.serial - m.elapsed;
    m.gpu_active_union = Time::ps(length(normalize(std::move(all_gpu))));
    m.gpu_active_fraction = ratio(m.gpu_active_union, m.elapsed);
    m.exposed_sync_fraction = ratio(m.exposed_sync, m.elapsed);

    find_critical_path(p, t, a);
    return a;
}

std::string format_ns(Time t) {
    int64_t v = t.ps();
    if (v % 1000 == 0) return std::to_string(v / 1000);
    bool neg = v < 0;
    uint64_t a = neg ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "", static_cast<unsigned long long>(a / 1000),
                  static_cast<unsigned long long>(a % 1000));
    return buf;
}

std::string format_time(Time t) {
    static const char* const kUnit[] = {"ns", "us", "ms", "s"};
    int64_t v = t.ps();
    bool neg = v < 0;
    uint64_t a = neg ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    int u = 0;
    uint64_t unit = 1000;  // ps per unit
    while (u < 3 && a >= unit * 1000) { unit *= 1000; ++u; }
    uint64_t q = unit / 1000;  // ps per thousandth of the unit
    uint64_t scaled = (a + q / 2) / q;
    if (scaled >= 1000000 && u < 3) {  // rounding reached the next unit: 999.9996 us -> 1.000 ms
        ++u;
        q *= 1000;
        scaled = (a + q / 2) / q;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%llu.%03llu %s", neg ? "-" : "", static_cast<unsigned long long>(scaled / 1000),
                  static_cast<unsigned long long>(scaled % 1000), kUnit[u]);
    return buf;
}

}  // namespace hetsim::report
