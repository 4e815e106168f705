#include "report/analysis.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <iterator>
#include <queue>
#include <utility>
#include <vector>

namespace hetsim::report {
namespace {

using Iv = std::pair<int64_t, int64_t>;  // [first, second) in ps

// Exposed sync wait is a host thread blocked on the GPU. A put into a full host queue, a get from
// an empty one and a join wait for another host thread: their waits are not busy time either,
// but no GPU work could end them. (A host_wait waits for a callback, that is for its stream.)
bool waits_on_gpu(const Op* op) {
    return !op || (op->kind != OpKind::QueuePut && op->kind != OpKind::QueueGet && op->kind != OpKind::Join);
}

// Sorted, disjoint, non-empty intervals; touching intervals are merged.
void normalize(std::vector<Iv>& v) {
    std::erase_if(v, [](const Iv& iv) { return iv.second <= iv.first; });
    std::sort(v.begin(), v.end());
    size_t k = 0;
    for (const Iv& iv : v) {
        if (k > 0 && iv.first <= v[k - 1].second) v[k - 1].second = std::max(v[k - 1].second, iv.second);
        else v[k++] = iv;
    }
    v.resize(k);
}

// The union of the intervals of one lane, folded in as they are added. A lane's phases come
// nearly in time order (a host thread's ops follow program order, a stream's stream order), so
// almost every interval extends the last block or starts a new one; one that starts earlier is
// merged a few blocks back, or, past kLookBack blocks, kept aside and merged once at the end.
// Memory: one entry per merged block (per idle gap of the lane), not per phase.
class Union {
public:
    void add(int64_t s, int64_t e) {
        if (e <= s) return;
        if (b_.empty() || s > b_.back().second) {
            b_.push_back({s, e});
        } else if (s >= b_.back().first) {
            b_.back().second = std::max(b_.back().second, e);
        } else {
            add_earlier(s, e);
        }
    }
    // Sorted, disjoint, touching blocks merged.
    const std::vector<Iv>& blocks() {
        if (!late_.empty()) {
            normalize(late_);
            std::vector<Iv> all;
            all.reserve(b_.size() + late_.size());
            std::merge(b_.begin(), b_.end(), late_.begin(), late_.end(), std::back_inserter(all));
            std::vector<Iv>().swap(late_);
            b_.clear();
            for (const Iv& iv : all) {
                if (!b_.empty() && iv.first <= b_.back().second) b_.back().second = std::max(b_.back().second, iv.second);
                else b_.push_back(iv);
            }
            b_.shrink_to_fit();
        }
        return b_;
    }
    int64_t length() {
        int64_t n = 0;
        for (const Iv& iv : blocks()) n += iv.second - iv.first;
        return n;
    }

private:
    static constexpr size_t kLookBack = 32;

    void add_earlier(int64_t s, int64_t e) {
        size_t k = b_.size() - 1;  // b_[k].first > s
        while (k > 0 && b_[k].first > s && b_.size() - k <= kLookBack) --k;
        if (b_[k].first > s && k > 0) {
            late_.push_back({s, e});
            return;
        }
        if (b_[k].first > s) {  // before every block (there are at most kLookBack)
            b_.insert(b_.begin(), Iv{s, e});
        } else if (s <= b_[k].second) {
            b_[k].second = std::max(b_[k].second, e);
        } else {
            b_.insert(b_.begin() + static_cast<long>(++k), Iv{s, e});
        }
        size_t j = k + 1;
        while (j < b_.size() && b_[j].first <= b_[k].second) b_[k].second = std::max(b_[k].second, b_[j++].second);
        b_.erase(b_.begin() + static_cast<long>(k + 1), b_.begin() + static_cast<long>(j));
    }

    std::vector<Iv> b_, late_;
};

// Categories of work for "hidden behind": a phase is hidden where work of another category runs.
enum Cat { kHost, kStreamOnly, kCopy, kSm, kDevCopy, kCats };
constexpr int kSyncWait = kCats;  // sweep source of host sync waits: not work, not a category
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

constexpr int kEngines = 4;  // Engine::H2D .. Engine::DeviceCopy

// Lanes by index: host threads, the unknown host lane, streams, the unknown stream lane, then
// the engines; the report order of the resource table.
struct LaneIndex {
    size_t threads, streams;
    size_t host(int32_t th) const { return th >= 0 && static_cast<size_t>(th) < threads ? static_cast<size_t>(th) : threads; }
    size_t stream(int32_t st) const {
        return threads + 1 + (st >= 0 && static_cast<size_t>(st) < streams ? static_cast<size_t>(st) : streams);
    }
    size_t engine(Engine e) const { return threads + streams + 2 + static_cast<size_t>(e); }
    size_t count() const { return threads + streams + 2 + kEngines; }
};

// Where a block list's phases come from, in op order: a lane's phases that start in op order
// (almost always: program order, stream order, FIFO engines) are read straight from the
// timeline as the sweep needs them, merged on the fly; only a list whose phases come out of
// order is folded into a Union first. Nothing is kept per phase.
struct List {
    Union u;                          // the blocks, when materialized
    int64_t last_start = INT64_MIN;   // of the list's last non-empty phase, in op order
    size_t phases = 0;                // non-empty phases
    bool ordered = true;              // every non-empty phase started at or after the one before it
    bool materialized = false;
    int64_t length = 0;               // the union's length, once the sweep has read it
    void note(int64_t s, int64_t e) {
        if (e <= s) return;
        if (s < last_start) ordered = false;
        last_start = s;
        ++phases;
    }
};

struct Lane {
    List all;                  // category lanes (host threads, engines)
    List stream_only;          // streams: GPU phases on no engine (their category's union)
    List gpu;                  // streams: every GPU phase (their hidden time: overlap with 2+ categories)
    Union sync;                // host threads: the sync waits (the end of a blocking call's phase),
                               // kept only when more than one thread waits (else their sum is the union)
    int64_t sync_sum = 0, host_end = INT64_MIN;
    bool host_sequential = true;  // host threads: each phase started at or after the previous one ended
    bool used = false;
    bool sequential = true;    // streams: every phase started at or after the previous one ended
    int64_t seq_end = INT64_MIN, seq_busy = 0;  // streams while sequential: last end, sum of lengths
    int64_t hidden = 0;
};

// Which phases of the timeline a list holds.
enum class Pick : uint8_t { HostAll, StreamOnly, EngineAll, StreamGpu };

// The blocks of one list in time order: from its Union, or read from the timeline in op order
// (an ordered list), touching and overlapping phases merged.
class BlockReader {
public:
    BlockReader(const std::vector<Iv>* blocks) : at_(blocks->data()), end_(blocks->data() + blocks->size()) {}
    BlockReader(const Program* p, const Timeline* t, const LaneIndex* li, Pick pick, size_t lane)
        : p_(p), t_(t), li_(li), pick_(pick), lane_(lane) {}
    // The next block; false when there is none.
    bool next(Iv& out) {
        if (!t_) {
            if (at_ == end_) return false;
            out = *at_++;
            return true;
        }
        if (!has_pending_ && !scan(pending_)) return false;
        out = pending_;
        has_pending_ = false;
        Iv iv;
        while (scan(iv)) {
            if (iv.first > out.second) {
                pending_ = iv;
                has_pending_ = true;
                break;
            }
            out.second = std::max(out.second, iv.second);
        }
        return true;
    }

private:
    // The list's next non-empty phase in op order.
    bool scan(Iv& iv) {
        const size_t n = t_->ops.size(), np = p_->ops.size();
        while (pos_ < n) {
            const size_t i = pos_++;
            const OpRecord& r = t_->ops[i];
            const Op* op = i < np ? &p_->ops[i] : nullptr;
            int64_t s, e;
            if (pick_ == Pick::HostAll) {
                if (!r.has_host() || li_->host(op ? op->thread : kNone) != lane_) continue;
                s = r.host_start.ps(), e = (r.host_end - r.sync_wait).ps();
            } else {
                if (!r.has_gpu()) continue;
                if (pick_ == Pick::EngineAll) {
                    if (r.engine == Engine::None || li_->engine(r.engine) != lane_) continue;
                } else {
                    if (pick_ == Pick::StreamOnly && r.engine != Engine::None) continue;
                    if (li_->stream(op ? op->stream : kNone) != lane_) continue;
                }
                s = r.gpu_start.ps(), e = r.gpu_end.ps();
            }
            if (e <= s) continue;
            iv = {s, e};
            return true;
        }
        return false;
    }

    const Iv* at_ = nullptr;
    const Iv* end_ = nullptr;
    const Program* p_ = nullptr;
    const Timeline* t_ = nullptr;
    const LaneIndex* li_ = nullptr;
    Pick pick_ = Pick::HostAll;
    size_t lane_ = 0, pos_ = 0;
    Iv pending_{};
    bool has_pending_ = false;
};

// One block list of the sweep: a category's work on one lane (host thread, engine), the GPU
// phases on no engine of one stream (lane < 0), a thread's sync waits, or a stream's GPU phases
// (kPassive: it measures its overlap with 2+ categories and is no category itself).
constexpr int kPassive = kSyncWait + 1;
struct Source {
    BlockReader blocks;
    int32_t lane;
    int32_t cat;
    int64_t* length;  // where the union's length goes (nullptr: not needed)
};

struct SweepResult {
    int64_t gpu_union = 0;   // time any GPU category was busy
    int64_t any_union = 0;   // time any category was busy
    int64_t sync_union = 0;  // time any host thread waited for the GPU
};

// One pass over the block lists in time order. Where two or more categories are busy at
// once, every busy lane is hidden (its own category is among them, so another one runs beside
// it): a lane's hidden time is its overlap with that time, added up here for the source lanes.
SweepResult sweep(std::vector<Source>& sources, std::vector<Lane>& lanes) {
    SweepResult out;
    // Events one at a time, from the source with the least next time; there are few sources
    // (host threads, engines, streams), so a scan beats a heap. Events at equal times come one
    // after another with no time between them.
    struct Cursor {
        BlockReader* blocks;
        Iv cur;          // the block it is in or will enter next
        int64_t next;    // cur.first outside a block, cur.second inside
        int64_t mark;    // multi_len when the current block began
        int64_t* length;
        int32_t lane, cat;
        bool inside;
    };
    constexpr int64_t kDone = INT64_MAX;
    std::vector<Cursor> cur;
    for (Source& s : sources) {
        Iv first;
        if (s.blocks.next(first)) cur.push_back({&s.blocks, first, first.first, 0, s.length, s.lane, s.cat, false});
    }
    // Leaves the current block at its end: the lane's hidden time and length, then the next block.
    auto leave = [&](Cursor& c, int64_t multi_len) {
        if (c.lane >= 0) lanes[static_cast<size_t>(c.lane)].hidden += multi_len - c.mark;
        if (c.length) *c.length += c.cur.second - c.cur.first;
        c.inside = false;
        c.next = c.blocks->next(c.cur) ? c.cur.first : kDone;
    };
    int busy[kPassive + 1] = {};  // busy sources per category, and waiting host threads
    int cats = 0, gpu_cats = 0;
    int64_t prev = 0, multi_len = 0;
    const size_t n = cur.size();
    if (n == 0) return out;
    const bool any_sync = std::any_of(cur.begin(), cur.end(), [](const Cursor& c) { return c.cat == kSyncWait; });
    for (;;) {
        size_t k = 0;
        for (size_t j = 1; j < n; ++j)
            if (cur[j].next < cur[k].next) k = j;
        const int64_t t = cur[k].next;
        if (t == kDone) break;
        // Fast forward: while two categories stay busy in the blocks they are in now, every lane
        // is hidden wherever it is busy and the unions grow by the whole window, whatever the
        // other sources do; so their events up to the end of that window are taken source by
        // source, without the scan. (Not with waiting host threads, whose union needs the scan.)
        if (t > prev && cats >= 2 && !any_sync) {
            int64_t cat_end[kCats];
            std::fill(std::begin(cat_end), std::end(cat_end), INT64_MIN);
            for (const Cursor& c : cur)
                if (c.inside && c.cat < kCats) cat_end[c.cat] = std::max(cat_end[c.cat], c.next);
            int64_t first = INT64_MIN, second = INT64_MIN;
            for (int64_t e : cat_end) {
                if (e > first) second = first, first = e;
                else if (e > second) second = e;
            }
            if (second > t) {
                const int64_t until = second;  // two categories are busy on [prev, until)
                for (Cursor& c : cur)
                    while (c.next < until) {
                        const int64_t ml = multi_len + (c.next - prev);
                        if (!c.inside) {
                            c.mark = ml;
                            c.inside = true;
                            c.next = c.cur.second;
                        } else {
                            leave(c, ml);
                        }
                    }
                multi_len += until - prev;
                out.gpu_union += until - prev;  // of two categories at least one is GPU work
                out.any_union += until - prev;
                prev = until;
                std::fill(std::begin(busy), std::end(busy), 0);
                cats = gpu_cats = 0;
                for (const Cursor& c : cur)
                    if (c.inside && c.cat < kCats && busy[c.cat]++ == 0) ++cats, gpu_cats += c.cat != kHost;
                continue;
            }
        }
        Cursor& c = cur[k];
        if (t > prev) {
            if (cats >= 2) multi_len += t - prev;
            if (gpu_cats > 0) out.gpu_union += t - prev;
            if (cats > 0) out.any_union += t - prev;
            if (busy[kSyncWait] > 0) out.sync_union += t - prev;
            prev = t;
        }
        const bool counts = c.cat < kCats;  // a category of work (not sync waits, not a stream's overlap)
        if (!c.inside) {
            c.mark = multi_len;
            if (c.cat != kPassive && busy[c.cat]++ == 0) cats += counts, gpu_cats += counts && c.cat != kHost;
            c.inside = true;
            c.next = c.cur.second;
        } else {
            if (c.cat != kPassive && --busy[c.cat] == 0) cats -= counts, gpu_cats -= counts && c.cat != kHost;
            leave(c, multi_len);
        }
    }
    return out;
}

bool phase_exists(const Timeline& t, int32_t op, Phase ph) {
    if (op < 0 || static_cast<size_t>(op) >= t.ops.size()) return false;
    const OpRecord& r = t.ops[static_cast<size_t>(op)];
    return ph == Phase::Host ? r.has_host() : r.has_gpu();
}

// The critical path: from the phase that ends last, back along the causes (`last_op` -1: none).
void find_critical_path(const Program& p, const Timeline& t, const LaneIndex& li,
                        const std::vector<uint32_t>& resource_of, int32_t last_op, Phase last_phase, Analysis& a) {
    // The walk back ends at a phase with no cause or at one already on the path (a cause cycle
    // in a malformed timeline). It records (op, phase) as 2 * op + phase; the steps are then
    // filled in first to last.
    std::vector<uint32_t> back;
    {
        std::vector<uint64_t> seen((2 * t.ops.size() + 63) / 64);  // one bit per (op, phase)
        int32_t cur = last_op;
        Phase ph = last_phase;
        while (cur >= 0) {
            const uint32_t key = 2 * static_cast<uint32_t>(cur) + (ph == Phase::Gpu ? 1 : 0);
            const uint64_t m = uint64_t{1} << (key % 64);
            if (seen[key / 64] & m) break;
            seen[key / 64] |= m;
            back.push_back(key);
            // The walk goes back mostly op by op; fetching ahead hides the latency of the chain.
            if (cur >= 16) __builtin_prefetch(&t.ops[static_cast<size_t>(cur) - 16]);
            const OpRecord& r = t.ops[static_cast<size_t>(cur)];
            const Cause& c = ph == Phase::Host ? r.host_cause : r.gpu_cause;
            if (c.kind == CauseKind::None || !phase_exists(t, c.op, c.phase)) break;
            cur = c.op;
            ph = c.phase;
        }
    }
    if (back.empty()) return;

    // Shares: each step counts from where the previous one ended; time with no step running,
    // from time zero on, is latency. Summed per resource, then per kind in order of first
    // appearance.
    std::vector<int64_t> on(a.resources.size(), 0);
    std::vector<uint32_t> order;  // resources in order of first appearance on the path
    std::vector<bool> listed(a.resources.size(), false);
    int64_t latency = 0, prev_end = 0;
    std::vector<CriticalStep>& path = a.critical_path;
    path.resize(back.size());
    for (size_t k = 0; k < path.size(); ++k) {
        const uint32_t key = back[back.size() - 1 - k];
        const uint32_t op = key / 2;
        const OpRecord& r = t.ops[op];
        const Op* o = op < p.ops.size() ? &p.ops[op] : nullptr;
        CriticalStep& s = path[k];
        s.op = op;
        if (key % 2 == 0) {
            s.phase = Phase::Host;
            s.cause = r.host_cause.kind;
            s.resource = resource_of[li.host(o ? o->thread : kNone)];
            s.start = r.host_start;
            s.end = r.host_end;
        } else {
            s.phase = Phase::Gpu;
            s.cause = r.gpu_cause.kind;
            s.resource = resource_of[r.engine != Engine::None ? li.engine(r.engine) : li.stream(o ? o->stream : kNone)];
            s.start = r.gpu_start;
            s.end = r.gpu_end;
        }
        // On the path from where the step before it ended: a sync's host phase began long before
        // the GPU work it waited for ended. Steps never overlap and follow each other in time.
        const int64_t st = s.start.ps(), en = s.end.ps();
        if (st > prev_end) latency += st - prev_end;
        const int64_t from = std::max(st, prev_end);
        if (en > from) on[s.resource] += en - from;
        if (!listed[s.resource]) listed[s.resource] = true, order.push_back(s.resource);
        s.start = Time::ps(from);
        s.end = Time::ps(std::max(en, from));
        prev_end = std::max(prev_end, en);
    }
    std::vector<KindShare> shares;
    auto add = [&](const std::string& kind, int64_t d) {
        for (KindShare& k : shares)
            if (k.kind == kind) { k.time += Time::ps(d); return; }
        shares.push_back({kind, Time::ps(d), 0});
    };
    for (uint32_t r : order) add(a.resources[r].kind, on[r]);
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
    a.measured = t.end_to_end - t.measured_from;
    a.warmup = p.warmup;
    Metrics& m = a.metrics;

    // Pass 1: what each block list holds (host threads, engines, and per stream its GPU phases
    // on no engine and all of them) and whether its phases come in op order. A stream's phases
    // follow stream order: while each starts at or after the previous one's end, its busy time
    // is their sum.
    const LaneIndex li{p.threads.size(), p.streams.size()};
    std::vector<Lane> lanes(li.count());
    for (size_t i = 0; i < p.threads.size(); ++i) lanes[i].used = true;  // every thread has a row
    int32_t last_op = -1;  // the phase that ends last: the critical path's end (first op on ties, GPU first)
    Phase last_phase = Phase::Gpu;
    Time last_end = Time::ps(INT64_MIN);
    for (size_t i = 0; i < t.ops.size(); ++i) {
        const OpRecord& r = t.ops[i];
        const Op* op = i < p.ops.size() ? &p.ops[i] : nullptr;
        if (r.has_gpu() && r.gpu_end > last_end) last_end = r.gpu_end, last_op = static_cast<int32_t>(i), last_phase = Phase::Gpu;
        if (r.has_host() && r.host_end > last_end) last_end = r.host_end, last_op = static_cast<int32_t>(i), last_phase = Phase::Host;
        m.serial += r.own_time();
        if (r.has_host()) {
            Lane& l = lanes[li.host(op ? op->thread : kNone)];
            l.used = true;
            l.all.note(r.host_start.ps(), (r.host_end - r.sync_wait).ps());
            if (r.host_start.ps() < l.host_end) l.host_sequential = false;
            l.host_end = std::max(l.host_end, r.host_end.ps());
            if (r.sync_wait > Time{} && waits_on_gpu(op)) l.sync_sum += std::min(r.sync_wait, r.host_end - r.host_start).ps();
        }
        if (r.has_gpu()) {
            const int64_t s = r.gpu_start.ps(), e = r.gpu_end.ps();
            Lane& sl = lanes[li.stream(op ? op->stream : kNone)];
            sl.used = true;
            if (sl.sequential && s >= sl.seq_end) {
                sl.seq_end = std::max(s, e);
                sl.seq_busy += sl.seq_end - s;
            } else {
                sl.sequential = false;
            }
            sl.gpu.note(s, e);
            if (r.engine == Engine::None) {
                sl.stream_only.note(s, e);
            } else {
                Lane& el = lanes[li.engine(r.engine)];
                el.used = true;
                el.all.note(s, e);
            }
        }
    }

    // Lists whose phases come out of op order are folded into their unions by one more pass; so
    // are the rest past kMaxReads lists read from the timeline (each reading scans every op).
    constexpr size_t kMaxReads = 16;
    size_t reads = 0;
    bool fold = false;
    auto decide = [&](List& l) {
        if (l.phases == 0) return;
        l.materialized = !l.ordered || reads >= kMaxReads;
        if (!l.materialized) ++reads;
        fold = fold || l.materialized;
    };
    for (Lane& l : lanes) decide(l.all), decide(l.stream_only), decide(l.gpu);
    if (fold)
        for (size_t i = 0; i < t.ops.size(); ++i) {
            const OpRecord& r = t.ops[i];
            const Op* op = i < p.ops.size() ? &p.ops[i] : nullptr;
            if (r.has_host()) {
                List& l = lanes[li.host(op ? op->thread : kNone)].all;
                if (l.materialized) l.u.add(r.host_start.ps(), (r.host_end - r.sync_wait).ps());
            }
            if (r.has_gpu()) {
                const int64_t s = r.gpu_start.ps(), e = r.gpu_end.ps();
                Lane& sl = lanes[li.stream(op ? op->stream : kNone)];
                if (sl.gpu.materialized) sl.gpu.u.add(s, e);
                List& l = r.engine == Engine::None ? sl.stream_only : lanes[li.engine(r.engine)].all;
                if (l.materialized) l.u.add(s, e);
            }
        }

    // The waits of one host thread whose phases follow each other do not overlap: their union is
    // their sum. Where several threads wait (or one's phases overlap), one more pass keeps the
    // waits of each thread for the sweep, which unites them.
    const size_t first_stream = li.stream(0), first_engine = li.engine(Engine::H2D);
    size_t waiting = 0;
    bool waits_disjoint = true;
    int64_t sync_sum = 0;
    for (size_t k = 0; k < first_stream; ++k) {
        if (lanes[k].sync_sum == 0) continue;
        ++waiting;
        waits_disjoint = waits_disjoint && lanes[k].host_sequential;
        sync_sum += lanes[k].sync_sum;
    }
    const bool unite_waits = waiting > 1 || !waits_disjoint;
    if (unite_waits)
        for (size_t i = 0; i < t.ops.size(); ++i) {
            const OpRecord& r = t.ops[i];
            if (r.has_host() && r.sync_wait > Time{} && waits_on_gpu(i < p.ops.size() ? &p.ops[i] : nullptr))
                lanes[li.host(i < p.ops.size() ? p.ops[i].thread : kNone)].sync.add((r.host_end - r.sync_wait).ps(), r.host_end.ps());
        }

    // The sweep over the block lists: where 2+ categories run, the GPU union, the busy time of
    // host threads and engines, and the hidden time of every lane.
    std::vector<Source> src;
    src.reserve(3 * lanes.size());
    auto add_source = [&](List& l, Pick pick, size_t lane, int32_t hidden_lane, int32_t cat) {
        if (l.phases == 0) return;
        BlockReader b = l.materialized ? BlockReader(&l.u.blocks()) : BlockReader(&p, &t, &li, pick, lane);
        src.push_back({b, hidden_lane, cat, &l.length});
    };
    for (size_t k = 0; k < lanes.size(); ++k) {
        Lane& l = lanes[k];
        if (!l.used) continue;
        const int32_t lane = static_cast<int32_t>(k);
        if (k < first_stream) {
            add_source(l.all, Pick::HostAll, k, lane, kHost);
            if (!l.sync.blocks().empty()) src.push_back({BlockReader(&l.sync.blocks()), -1, kSyncWait, nullptr});
        } else if (k < first_engine) {
            add_source(l.stream_only, Pick::StreamOnly, k, -1, kStreamOnly);
            add_source(l.gpu, Pick::StreamGpu, k, lane, kPassive);
        } else {
            add_source(l.all, Pick::EngineAll, k, lane, gpu_cat(static_cast<Engine>(k - first_engine)));
        }
    }
    const SweepResult sw = sweep(src, lanes);
    std::vector<Source>().swap(src);

    // The resource table in lane order.
    std::vector<uint32_t> resource_of(lanes.size(), 0);
    for (size_t k = 0; k < lanes.size(); ++k) {
        Lane& l = lanes[k];
        if (!l.used) continue;
        resource_of[k] = static_cast<uint32_t>(a.resources.size());
        Resource res;
        if (k < first_stream) {
            res.name = host_lane(p, k < li.threads ? static_cast<int32_t>(k) : kNone);
            res.kind = "host_thread";
        } else if (k < first_engine) {
            const size_t st = k - first_stream;
            res.name = stream_lane(p, st < li.streams ? static_cast<int32_t>(st) : kNone);
            res.kind = "stream";
        } else {
            const Engine e = static_cast<Engine>(k - first_engine);
            res.name = engine_lane(e);
            res.kind = engine_kind(e);
        }
        const bool stream = k >= first_stream && k < first_engine;
        res.busy = Time::ps(stream ? (l.sequential ? l.seq_busy : l.gpu.length) : l.all.length);
        res.utilization = ratio(res.busy, t.end_to_end);
        res.hidden = Time::ps(l.hidden);
        a.resources.push_back(std::move(res));
    }
    std::vector<Lane>().swap(lanes);

    m.elapsed = t.end_to_end;
    m.speedup = ratio(m.serial, m.elapsed);
    m.busy_union = Time::ps(sw.any_union);
    // Each op's own work is the union of its phases (OpRecord::own_time), so the sum is never
    // below the union over all ops; max() only guards a malformed timeline.
    m.hidden = max(m.serial - m.busy_union, Time{});
    m.exposed_sync = Time::ps(unite_waits ? sw.sync_union : sync_sum);
    m.gpu_active_union = Time::ps(sw.gpu_union);
    m.gpu_active_fraction = ratio(m.gpu_active_union, m.elapsed);
    m.exposed_sync_fraction = ratio(m.exposed_sync, m.elapsed);

    // Why the GPU idles before the critical path: its transient memory (per idle gap) is gone
    // before the path (a step per op on it) is built, so the two never add to the peak.
    a.idle = attribute_idle(p, t);
    find_critical_path(p, t, li, resource_of, last_op, last_phase, a);
    return a;
}

std::vector<PathSegment> path_segments(const Analysis& a) {
    std::vector<PathSegment> segs;
    const auto& path = a.critical_path;
    for (size_t i = 0; i < path.size(); ++i) {
        const CriticalStep& s = path[i];
        if (!segs.empty() && segs.back().resource == s.resource) {
            segs.back().end = max(segs.back().end, s.end);
            segs.back().last = i;
        } else {
            segs.push_back({s.resource, s.start, s.end, i, i});
        }
    }
    return segs;
}

std::string segment_ops_text(const Program& p, const Analysis& a, const PathSegment& s, size_t max_names) {
    auto name = [&](size_t step) {
        uint32_t op = a.critical_path[step].op;
        if (op < p.ops.size()) return p.op_name(op);
        std::string n(1, '#');  // append, not operator+: GCC 12 -Wrestrict false positive
        return n.append(std::to_string(op));
    };
    const size_t n = s.last - s.first + 1;
    const size_t shown = n <= max_names + 1 ? n : max_names;
    std::string out;
    for (size_t k = 0; k < shown; ++k) out.append(k ? ", " : "").append(name(s.first + k));
    if (shown < n) out.append(" and ").append(std::to_string(n - shown)).append(" more");
    return out;
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
