#include "report/idle.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "report/analysis.hpp"

namespace hetsim::report {
namespace {

using Iv = std::pair<int64_t, int64_t>;  // [first, second) in ps

// The union of a lane's phases: phases come nearly in time order, so most extend the last
// block or merge a few blocks back; the rest are kept aside and merged once at the end.
// Memory: about one entry per block.
struct Blocks {
    static constexpr size_t kLookBack = 32;
    std::vector<Iv> b, late;
    void add(int64_t s, int64_t e) {
        if (e <= s) return;
        if (b.empty() || s > b.back().second) return b.push_back({s, e});
        if (s >= b.back().first) {
            b.back().second = std::max(b.back().second, e);
            return;
        }
        size_t k = b.size() - 1;  // b[k].first > s: find the block it starts in or after
        while (k > 0 && b[k].first > s && b.size() - k <= kLookBack) --k;
        if (b[k].first > s) return late.push_back({s, e});
        if (s <= b[k].second) b[k].second = std::max(b[k].second, e);
        else b.insert(b.begin() + static_cast<long>(++k), Iv{s, e});
        size_t j = k + 1;
        while (j < b.size() && b[j].first <= b[k].second) b[k].second = std::max(b[k].second, b[j++].second);
        b.erase(b.begin() + static_cast<long>(k + 1), b.begin() + static_cast<long>(j));
    }
    void finish() {
        if (late.empty()) return;
        b.insert(b.end(), late.begin(), late.end());
        std::vector<Iv>().swap(late);
        std::sort(b.begin(), b.end());
        size_t k = 0;
        for (const Iv& iv : b) {
            if (k > 0 && iv.first <= b[k - 1].second) b[k - 1].second = std::max(b[k - 1].second, iv.second);
            else b[k++] = iv;
        }
        b.resize(k);
    }
};

const char* cuda_call(const Op& op) {
    switch (op.kind) {
        case OpKind::HostWork: return "host work";
        case OpKind::Kernel: return "cudaLaunchKernel";
        case OpKind::Memcpy: return op.sync ? "cudaMemcpy" : "cudaMemcpyAsync";
        case OpKind::Memset: return op.sync ? "cudaMemset" : "cudaMemsetAsync";
        case OpKind::EventRecord: return "cudaEventRecord";
        case OpKind::StreamWaitEvent: return "cudaStreamWaitEvent";
        case OpKind::EventSync: return "cudaEventSynchronize";
        case OpKind::StreamSync: return "cudaStreamSynchronize";
        case OpKind::DeviceSync: return "cudaDeviceSynchronize";
        case OpKind::Prefetch: return "cudaMemPrefetchAsync";
        case OpKind::HostFunc: return "cudaLaunchHostFunc";
        case OpKind::GraphInstantiate: return "cudaGraphInstantiate";
        case OpKind::GraphLaunch: return "cudaGraphLaunch";
        case OpKind::Malloc: return "cudaMalloc";
        case OpKind::Free: return "cudaFree";
        case OpKind::MallocHost: return "cudaMallocHost";
        case OpKind::FreeHost: return "cudaFreeHost";
        case OpKind::HostRegister: return "cudaHostRegister";
        case OpKind::MallocAsync: return "cudaMallocAsync";
        case OpKind::FreeAsync: return "cudaFreeAsync";
        case OpKind::QueuePut: return "put";
        case OpKind::QueueGet: return "get";
        case OpKind::HostWait: return "host_wait";
        case OpKind::Join: return "join";
        case OpKind::Barrier: return "barrier";
    }
    return "call";
}

const char* dir_name(CopyDir d) { return d == CopyDir::H2D ? "H2D" : d == CopyDir::D2H ? "D2H" : "D2D"; }

bool is_allocation(OpKind k) {
    return k == OpKind::Malloc || k == OpKind::Free || k == OpKind::MallocHost || k == OpKind::FreeHost ||
           k == OpKind::HostRegister || k == OpKind::MallocAsync || k == OpKind::FreeAsync;
}

struct Label {
    const char* cause;
    std::string what;
};

class Walker {
public:
    Walker(const Program& p, const Timeline& t) : p_(p), t_(t) {}

    // Attributes the gap [g0, g1) ending where the phase (first, Gpu) starts.
    void gap(uint32_t first, int64_t g0, int64_t g1) {
        visited_.clear();
        int64_t T = g1;
        uint32_t op = first;
        Phase ph = Phase::Gpu;
        // A walk visits each phase at most once; the bound only guards a malformed timeline.
        for (size_t steps = 0; T > g0; ++steps) {
            if (steps > 2 * t_.ops.size() + 2) {
                add_id(memo(kOwn, op, ph, Cause{}, [&] { return own_label(op, ph); }), g0, T);
                return;
            }
            const uint32_t key = 2 * op + (ph == Phase::Gpu ? 1 : 0);
            // Causes point back in time, so a walk revisits a phase only through a cycle of zero
            // length (an op's host phase and GPU phase waiting on each other): the rest goes to it.
            if (std::find(visited_.begin(), visited_.end(), key) != visited_.end()) {
                add_id(memo(kOwn, op, ph, Cause{}, [&] { return own_label(op, ph); }), g0, T);
                return;
            }
            if (visited_.size() >= kVisitedWindow) visited_.erase(visited_.begin());
            visited_.push_back(key);
            const int64_t Ps = start(op, ph);
            Cause c = ph == Phase::Host ? t_.ops[op].host_cause : t_.ops[op].gpu_cause;
            bool has = c.kind != CauseKind::None && c.op >= 0 && static_cast<size_t>(c.op) < t_.ops.size() &&
                       exists(static_cast<uint32_t>(c.op), c.phase);
            int64_t Ce = has ? end(static_cast<uint32_t>(c.op), c.phase) : Ps;
            if (has && c.kind == CauseKind::Queue) {  // behind another stream's op in a shared hardware queue
                add({"hw_queue", "behind " + label(static_cast<uint32_t>(c.op)) + " of " +
                                     stream_lane(p_, p_.ops[static_cast<size_t>(c.op)].stream) + " in a shared hardware queue"},
                    g0, T);
                return;
            }
            // A host phase whose cause ends after the frontier cannot be explained by it (a
            // pageable upload waiting for its own DMA): what came before it on its thread did.
            if (ph == Phase::Host && (!has || Ce > T)) {
                const int32_t prev = prev_on_thread(op);
                if (prev >= 0 && exists(static_cast<uint32_t>(prev), Phase::Host)) {
                    c = Cause{prev, Phase::Host, CauseKind::ProgramOrder};
                    has = true;
                    Ce = end(static_cast<uint32_t>(prev), Phase::Host);
                    if (Ce > Ps) Ce = Ps;  // program order: it ended before this began
                } else {
                    has = false;
                    Ce = Ps;
                }
            }
            const int64_t lo = std::max(Ps, Ce);
            if (lo < T) {
                portion(op, ph, c, has, Ce, std::max(lo, g0), T);
                T = std::max(lo, g0);
            }
            if (T <= g0) return;
            if (!has) {
                add({"other", "before " + name(op) + " began"}, g0, T);
                return;
            }
            if (Ce < T) {  // the edge: the latency between the cause's end and this phase's start
                add_id(memo(kEdge, op, ph, c, [&] { return edge_label(op, ph, c); }), std::max(Ce, g0), T);
                T = std::max(Ce, g0);
            }
            op = static_cast<uint32_t>(c.op);
            ph = c.phase;
        }
    }

    void add(const Label& l, int64_t a, int64_t b) {
        if (b > a) add_id(intern(l), a, b);
    }

    // The sums of this lane by (cause, what), and a clean slate for the next lane.
    std::map<std::pair<std::string, std::string>, int64_t> take() {
        std::map<std::pair<std::string, std::string>, int64_t> m;
        for (size_t k = 0; k < sums_.size(); ++k)
            if (sums_[k] > 0) m[{labels_[k].cause, labels_[k].what}] += sums_[k];
        std::fill(sums_.begin(), sums_.end(), 0);
        return m;
    }

    // Names only where the program has them (a timeline built without sites gets "#3").
    bool named(uint32_t op) const {
        return op < p_.ops.size() && p_.ops[op].site < p_.sites.size() && p_.sites[p_.ops[op].site].label < p_.names.size();
    }
    std::string name(uint32_t op) const { return named(op) ? p_.op_name(op) : "#" + std::to_string(op); }

private:
    // Labels are text, built once per distinct key: everything a label's text depends on (the
    // op's site, thread, stream, kind and copy fields, its phase, the cause's kind and site).
    enum Form : uint8_t { kOwn, kEdge, kWait, kFaults, kLaunchWait };
    struct Key {
        uint8_t form, ph, ckind, kind, bits, engine;
        int32_t thread, stream, site, csite, aux;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        size_t operator()(const Key& k) const {
            uint64_t h = 1469598103934665603ULL;
            for (int64_t v : {int64_t{k.form}, int64_t{k.ph}, int64_t{k.ckind}, int64_t{k.kind}, int64_t{k.bits}, int64_t{k.engine},
                              int64_t{k.thread}, int64_t{k.stream}, int64_t{k.site}, int64_t{k.csite}, int64_t{k.aux}})
                h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ULL;
            return static_cast<size_t>(h);
        }
    };
    Key key_of(Form form, uint32_t op, Phase ph, const Cause& c) const {
        Key k{form, static_cast<uint8_t>(ph), static_cast<uint8_t>(c.kind), 0, 0, static_cast<uint8_t>(t_.ops[op].engine), -1, -1, -1, -1, 0};
        if (const Op* o = op_of(op)) {
            k.kind = static_cast<uint8_t>(o->kind);
            k.bits = static_cast<uint8_t>((o->sync ? 1 : 0) | (o->to_device ? 2 : 0) | static_cast<int>(o->dir) << 2 |
                                          static_cast<int>(o->host_mem) << 4 | (pageable(op) ? 64 : 0));
            k.thread = o->thread;
            k.stream = o->stream;
            k.site = static_cast<int32_t>(o->site);
            k.aux = o->event;  // the queue, flag, buffer ... its kind names
        }
        if (c.op >= 0) {
            if (const Op* f = op_of(static_cast<uint32_t>(c.op))) {
                k.csite = static_cast<int32_t>(f->site);
                if (op_of(op) && f->stream == op_of(op)->stream && Program::has_gpu_phase(f->kind)) k.bits |= 128;
            }
        }
        return k;
    }
    template <class F>
    uint32_t memo(Form form, uint32_t op, Phase ph, const Cause& c, F make) {
        const Key k = key_of(form, op, ph, c);
        const size_t h = KeyHash()(k);
        Recent& slot = recent_[h % kRecent];  // a direct-mapped cache in front of the map
        if (slot.valid && slot.key == k) return slot.id;
        auto it = memo_.find(k);
        uint32_t id;
        if (it != memo_.end()) {
            id = it->second;
        } else {
            id = intern(make());
            memo_.emplace(k, id);
        }
        slot = Recent{k, id, true};
        return id;
    }
    uint32_t intern(const Label& l) {
        auto [it, fresh] = ids_.emplace(std::make_pair(std::string(l.cause), l.what), static_cast<uint32_t>(labels_.size()));
        if (fresh) {
            labels_.push_back(l);
            sums_.push_back(0);
        }
        return it->second;
    }
    void add_id(uint32_t id, int64_t a, int64_t b) {
        if (b > a) sums_[id] += b - a;
    }

    bool exists(uint32_t op, Phase ph) const { return ph == Phase::Host ? t_.ops[op].has_host() : t_.ops[op].has_gpu(); }
    int64_t start(uint32_t op, Phase ph) const { return (ph == Phase::Host ? t_.ops[op].host_start : t_.ops[op].gpu_start).ps(); }
    int64_t end(uint32_t op, Phase ph) const { return (ph == Phase::Host ? t_.ops[op].host_end : t_.ops[op].gpu_end).ps(); }

    int32_t prev_on_thread(uint32_t op) {
        if (prev_.empty()) {
            prev_.assign(t_.ops.size(), -1);
            for (const HostThread& th : p_.threads)
                for (size_t k = 1; k < th.ops.size(); ++k)
                    if (th.ops[k] < prev_.size()) prev_[th.ops[k]] = static_cast<int32_t>(th.ops[k - 1]);
        }
        return op < prev_.size() ? prev_[op] : -1;
    }

    const Op* op_of(uint32_t op) const { return op < p_.ops.size() ? &p_.ops[op] : nullptr; }
    std::string label(uint32_t op) const { return named(op) ? p_.label(p_.ops[op]) : name(op); }
    std::string on_host(uint32_t op) const { return " on " + host_lane(p_, op_of(op) ? op_of(op)->thread : kNone); }

    bool pageable(uint32_t op) const {
        const Op* o = op_of(op);
        return o && o->kind == OpKind::Memcpy && o->host_mem == MemKind::Pageable && o->dir != CopyDir::D2D &&
               t_.ops[op].has_host() && t_.ops[op].has_gpu() && t_.ops[op].host_end > t_.ops[op].host_start;
    }

    // What the phase itself did.
    Label own_label(uint32_t op, Phase ph) const {
        const Op* o = op_of(op);
        if (!o) return {"other", name(op)};
        const std::string l = label(op);
        if (ph == Phase::Gpu) {
            switch (op_info(o->kind).gpu) {
                case GpuWork::Kernel: return {"kernel", l + " on sm"};
                case GpuWork::Callback: return {"host_work", l + " (host_func callback on the driver thread)"};
                case GpuWork::Copy:
                    if (o->kind == OpKind::Prefetch)
                        return {"unified_memory", std::string("prefetch ") + l + (o->to_device ? " to the device" : " to the host")};
                    if (t_.ops[op].engine == Engine::H2D || t_.ops[op].engine == Engine::D2H)
                        return {"copy", std::string(dir_name(o->dir)) + " copy " + l + " (" + to_string(o->host_mem) + ") on " +
                                            engine_lane(t_.ops[op].engine)};
                    return {"device_copy", l};
                case GpuWork::Marker:
                case GpuWork::None: break;
            }
            return {"other", l + " on " + stream_lane(p_, o->stream)};
        }
        switch (o->kind) {
            case OpKind::HostWork: return {"host_work", l + on_host(op)};
            case OpKind::Memcpy:
                if (pageable(op))
                    return {"copy", std::string(dir_name(o->dir)) + " pageable " + (o->dir == CopyDir::H2D ? "staging" : "copy") + " of " + l +
                                        on_host(op)};
                break;
            case OpKind::QueuePut:
            case OpKind::QueueGet:
                return {"host_queue", std::string(cuda_call(*o)) + (o->kind == OpKind::QueuePut ? " into" : " from") + " queue '" +
                                          (o->queue >= 0 && static_cast<size_t>(o->queue) < p_.queues.size() ? p_.queues[o->queue].name : "?") +
                                          "'" + on_host(op)};
            case OpKind::HostWait:
                return {"flag", "host_wait for flag '" +
                                    (o->flag >= 0 && static_cast<size_t>(o->flag) < p_.flags.size() ? p_.flags[o->flag].name : "?") + "'" +
                                    on_host(op)};
            case OpKind::Join: return {"thread", "join" + on_host(op)};
            default: break;
        }
        if (is_allocation(o->kind)) return {"allocation", std::string(cuda_call(*o)) + on_host(op)};
        return {"launch_overhead", std::string(cuda_call(*o)) + " calls" + on_host(op)};
    }

    // The part [a, b) of a phase from max(start, cause end): its own work, or, where it waited
    // inside its phase for the cause, what the wait's end cost.
    void portion(uint32_t op, Phase ph, const Cause& c, bool has, int64_t Ce, int64_t a, int64_t b) {
        const OpRecord& r = t_.ops[op];
        const Op* o = op_of(op);
        if (ph == Phase::Host && has && Ce > r.host_start.ps() && o) {
            // It waited inside its phase until the cause ended: a blocking call waits to its end,
            // a released thread (host queue, flag, join, tasks-form dependency) for sync_wait
            // from its start, then does its own part.
            const bool blocking = o->kind == OpKind::StreamSync || o->kind == OpKind::EventSync || o->kind == OpKind::DeviceSync ||
                                  o->kind == OpKind::Barrier || ((o->kind == OpKind::Memcpy || o->kind == OpKind::Memset) && o->sync);
            const int64_t wait_end = blocking ? r.host_end.ps() : std::min(r.host_end.ps(), (r.host_start + r.sync_wait).ps());
            const uint32_t own = memo(kOwn, op, ph, Cause{}, [&] { return own_label(op, ph); });
            const uint32_t wait = memo(kWait, op, ph, c, [&] {
                switch (c.kind) {
                    case CauseKind::Sync:
                    case CauseKind::After:
                        if (is_allocation(o->kind) || pageable(op)) break;  // the call's own cost after the wait
                        return Label{"sync_wakeup", std::string(o->kind == OpKind::Barrier ? "barrier between iterations" : cuda_call(*o)) +
                                                        " returning" + on_host(op)};
                    case CauseKind::Resource:
                        if (!pageable(op)) return Label{"launch_queue", "launch queue of " + stream_lane(p_, o->stream) + " full" + on_host(op)};
                        break;
                    default: break;
                }
                return own_label(op, ph);
            });
            add_id(wait, a, std::min(b, wait_end));
            return add_id(own, std::max(a, wait_end), b);
        }
        if (ph == Phase::Host && o) {
            // The own phase: a wait at its start (a full launch queue the thread retried after;
            // tasks-form dependencies) and CPU faults of managed buffers before host work.
            int64_t s = r.host_start.ps();
            if (o->kind == OpKind::HostWork) {
                const int64_t own = (r.host_end - r.host_start - r.sync_wait).ps();
                const int64_t faults = own - o->duration.ps();
                if (faults > 0) {
                    add_id(memo(kFaults, op, ph, Cause{}, [&] { return Label{"unified_memory", "CPU faults of managed buffers in " + label(op) + on_host(op)}; }),
                           std::max(a, s), std::min(b, s + faults));
                    s += faults;
                }
            } else if (r.sync_wait > Time{} && Program::is_stream_op(o->kind) && !o->sync && !pageable(op) && !p_.tasks_form &&
                       c.kind == CauseKind::ProgramOrder) {
                const int64_t w = s + r.sync_wait.ps();
                add_id(memo(kLaunchWait, op, ph, Cause{}, [&] { return Label{"launch_queue", "launch queue of " + stream_lane(p_, o->stream) + " full" + on_host(op)}; }),
                       std::max(a, s), std::min(b, w));
                s = w;
            }
            return add_id(memo(kOwn, op, ph, Cause{}, [&] { return own_label(op, ph); }), std::max(a, std::min(s, b)), b);
        }
        add_id(memo(kOwn, op, ph, Cause{}, [&] { return own_label(op, ph); }), a, b);
    }

    // The latency between the cause's end and the phase's start.
    Label edge_label(uint32_t op, Phase ph, const Cause& c) const {
        const Op* o = op_of(op);
        const Op* from = op_of(static_cast<uint32_t>(c.op));
        switch (c.kind) {
            case CauseKind::Submit:
                return {"launch_overhead", o && o->kind == OpKind::HostFunc ? "host_func callback latency" : "launch latency (call to GPU start)"};
            case CauseKind::StreamOrder:
                return {"launch_overhead", "gap between ops of " + stream_lane(p_, o ? o->stream : kNone)};
            case CauseKind::After:
                if (ph == Phase::Gpu && o && from && from->stream == o->stream && Program::has_gpu_phase(from->kind))
                    return {"launch_overhead", "gap between ops of " + stream_lane(p_, o->stream)};
                if (ph == Phase::Host) return {"sync_wakeup", "wake-up after " + label(static_cast<uint32_t>(c.op)) + (o ? on_host(op) : "")};
                return {"event", "dependency on " + label(static_cast<uint32_t>(c.op)) + " of another stream"};
            case CauseKind::Event:
                return {"event", "event from another stream (" + label(static_cast<uint32_t>(c.op)) + ")"};
            case CauseKind::Legacy: return {"legacy_stream", "implicit synchronisation of the legacy default stream"};
            case CauseKind::Sync:
                return {"sync_wakeup", std::string(o ? cuda_call(*o) : "sync") + " wake-up" + (o ? on_host(op) : "")};
            case CauseKind::Resource:
                if (ph == Phase::Host) return {"launch_queue", "launch queue of " + stream_lane(p_, o ? o->stream : kNone) + " full"};
                return {"resource", std::string("waiting for ") + engine_lane(t_.ops[op].engine)};
            case CauseKind::Queue: return {"hw_queue", "a hardware queue shared with another stream"};
            case CauseKind::HostQueue: return {"host_queue", "host queue hand-off" + (o ? on_host(op) : "")};
            case CauseKind::Flag: return {"flag", "flag set by " + label(static_cast<uint32_t>(c.op))};
            case CauseKind::Thread: return {"thread", "thread start or join" + (o ? on_host(op) : "")};
            case CauseKind::GraphExec: return {"graph", "the previous launch of the same graph (" + label(static_cast<uint32_t>(c.op)) + ")"};
            case CauseKind::ProgramOrder:
            case CauseKind::None: break;
        }
        return {"other", "between " + label(static_cast<uint32_t>(c.op)) + " and " + label(op)};
    }

    const Program& p_;
    const Timeline& t_;
    static constexpr size_t kVisitedWindow = 16;  // the last phases walked, for the cycle check
    std::vector<uint32_t> visited_;
    std::vector<int32_t> prev_;
    std::unordered_map<Key, uint32_t, KeyHash> memo_;
    struct Recent {
        Key key{};
        uint32_t id = 0;
        bool valid = false;
    };
    static constexpr size_t kRecent = 256;
    Recent recent_[kRecent];
    std::map<std::pair<std::string, std::string>, uint32_t> ids_;
    std::vector<Label> labels_;
    std::vector<int64_t> sums_;  // by label id, for the lane being attributed
};

constexpr int kLanes = 5;  // gpu, then Engine::Compute, H2D, D2H, DeviceCopy
const Engine kLaneEngine[kLanes] = {Engine::None, Engine::Compute, Engine::H2D, Engine::D2H, Engine::DeviceCopy};

int lane_of(Engine e) {
    switch (e) {
        case Engine::Compute: return 1;
        case Engine::H2D: return 2;
        case Engine::D2H: return 3;
        case Engine::DeviceCopy: return 4;
        case Engine::None: break;
    }
    return -1;
}

int64_t round_ns(int64_t ps) { return ps >= 0 ? (ps + 500) / 1000 : -((-ps + 500) / 1000); }

}  // namespace

const IdleLane* IdleReport::lane(const std::string& name) const {
    for (const IdleLane& l : lanes)
        if (l.name == name) return &l;
    return nullptr;
}

IdleReport attribute_idle(const Program& p, const Timeline& t) {
    IdleReport out;
    const int64_t elapsed = t.end_to_end.ps();
    bool used[kLanes] = {true, false, false, false, false};
    // The phase that ends last: what runs after a lane's last work.
    int32_t last_op = -1;
    int64_t last_end = INT64_MIN;
    for (size_t i = 0; i < t.ops.size(); ++i) {
        const OpRecord& r = t.ops[i];
        if (r.end().ps() > last_end && (r.has_host() || r.has_gpu())) last_end = r.end().ps(), last_op = static_cast<int32_t>(i);
        if (r.has_gpu())
            if (int l = lane_of(r.engine); l > 0) used[l] = true;
    }
    // One lane at a time (its blocks, then its gaps), so that only one lane's blocks are held:
    // a copy engine of a long pipeline has a block per copy.
    const auto in_lane = [](const OpRecord& r, int l) { return l == 0 || lane_of(r.engine) == l; };
    const auto lane_blocks = [&](int l, Blocks& blk, std::vector<int32_t>& first) {
        for (const OpRecord& r : t.ops)
            if (r.has_gpu() && in_lane(r, l)) blk.add(r.gpu_start.ps(), r.gpu_end.ps());
        blk.finish();
        blk.b.shrink_to_fit();
        // The op that starts each block: the lowest-numbered phase starting there.
        first.assign(blk.b.size(), -1);
        size_t k = 0;
        const auto& b = blk.b;
        for (size_t i = 0; i < t.ops.size(); ++i) {
            const OpRecord& r = t.ops[i];
            if (!r.has_gpu() || r.gpu_end <= r.gpu_start || !in_lane(r, l)) continue;
            const int64_t st = r.gpu_start.ps();
            // The block holding the phase's start: near the last one found (phases come nearly
            // in time order), else by binary search.
            if (k >= b.size() || b[k].first > st) k = static_cast<size_t>(std::upper_bound(b.begin(), b.end(), Iv{st, INT64_MAX}) - b.begin()) - 1;
            for (int step = 0; k + 1 < b.size() && b[k + 1].first <= st; ++step) {
                if (step == 4) {
                    k = static_cast<size_t>(std::upper_bound(b.begin() + static_cast<long>(k), b.end(), Iv{st, INT64_MAX}) - b.begin()) - 1;
                    break;
                }
                ++k;
            }
            if (b[k].first == st) {
                int32_t& f = first[k];
                if (f < 0) f = static_cast<int32_t>(i);
            }
        }
    };
    Walker w(p, t);
    for (int l = 0; l < kLanes; ++l) {
        if (!used[l]) continue;
        IdleLane lane;
        lane.name = l == 0 ? "gpu" : engine_lane(kLaneEngine[l]);
        int64_t busy = 0, prev = 0;
        Blocks blk;
        std::vector<int32_t> first;
        lane_blocks(l, blk, first);
        const auto& b = blk.b;
        for (size_t k = 0; k < b.size(); ++k) {
            busy += b[k].second - b[k].first;
            if (b[k].first > prev) w.gap(static_cast<uint32_t>(first[k]), prev, b[k].first);
            prev = b[k].second;
        }
        if (elapsed > prev)
            w.add({"nothing_left", b.empty() ? std::string(l == 0 ? "no GPU work in the run" : "no work for this engine")
                                             : "after its last work, while " + (last_op >= 0 ? w.name(static_cast<uint32_t>(last_op)) : std::string("the run")) + " ran"},
                  prev, elapsed);
        lane.idle = Time::ps(std::max<int64_t>(elapsed - busy, 0));
        lane.idle_ns = round_ns(lane.idle.ps());
        for (auto& [key, ps] : w.take()) lane.causes.push_back({key.first, key.second, Time::ps(ps), ps / 1000});
        // Integer nanoseconds that sum to idle_ns: each cause's floor, the units left over to the
        // largest remainders (ties in cause order).
        int64_t sum = 0;
        for (const IdleCause& c : lane.causes) sum += c.ns;
        std::vector<size_t> order(lane.causes.size());
        for (size_t k = 0; k < order.size(); ++k) order[k] = k;
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return lane.causes[x].time.ps() % 1000 > lane.causes[y].time.ps() % 1000; });
        for (size_t k = 0; sum < lane.idle_ns && !order.empty(); k = (k + 1) % order.size()) ++lane.causes[order[k]].ns, ++sum;
        std::stable_sort(lane.causes.begin(), lane.causes.end(), [](const IdleCause& x, const IdleCause& y) { return x.time > y.time; });
        out.lanes.push_back(std::move(lane));
    }
    return out;
}

const std::vector<std::string>& idle_cause_kinds() {
    static const std::vector<std::string> k = {"host_work", "launch_overhead", "copy", "kernel", "device_copy", "sync_wakeup",
                                               "event", "legacy_stream", "hw_queue", "launch_queue", "unified_memory", "allocation",
                                               "host_queue", "flag", "thread", "graph", "resource", "nothing_left", "other"};
    return k;
}

const char* idle_cause_words(const std::string& c) {
    static const std::pair<const char*, const char*> kWords[] = {
        {"host_work", "host work"},
        {"launch_overhead", "API calls and launch overhead"},
        {"copy", "a copy"},
        {"kernel", "kernels"},
        {"device_copy", "a device copy"},
        {"sync_wakeup", "sync wake-up"},
        {"event", "an event from another stream"},
        {"legacy_stream", "the legacy default stream"},
        {"hw_queue", "hardware-queue false dependency"},
        {"launch_queue", "launch-queue back-pressure"},
        {"unified_memory", "unified memory"},
        {"allocation", "allocation calls"},
        {"host_queue", "a host queue"},
        {"flag", "a flag"},
        {"thread", "thread start or join"},
        {"graph", "an earlier launch of the same graph"},
        {"resource", "an engine held by other work"},
        {"nothing_left", "nothing left to do"},
        {"other", "other"},
    };
    for (const auto& [k, w] : kWords)
        if (c == k) return w;
    return "other";
}

std::string idle_cause_text(const IdleCause& c) { return std::string(idle_cause_words(c.cause)) + ": " + c.what; }

std::string idle_lane_words(const std::string& lane) {
    if (lane == "gpu") return "GPU (nothing running on it)";
    if (lane == "sm") return "SMs";
    if (lane == "copy:h2d") return "H2D copy engine";
    if (lane == "copy:d2h") return "D2H copy engine";
    if (lane == "device_copy") return "device-copy path";
    return lane;
}

}  // namespace hetsim::report
