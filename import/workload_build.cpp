// build_workload's steps: threads, ops and host work, links, steps, medians, the capture region.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "import/workload_detail.hpp"

namespace hetsim::import::detail {
namespace {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;

Intervals merged(Intervals v) {
    std::sort(v.begin(), v.end());
    Intervals out;
    for (auto& iv : v) {
        if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
        else out.push_back(iv);
    }
    return out;
}

bool overlaps(const Intervals& m, int64_t a, int64_t b) {
    auto it = std::upper_bound(m.begin(), m.end(), std::make_pair(b, INT64_MAX));
    while (it != m.begin()) {
        --it;
        if (it->second > a && it->first < b) return true;
        if (it->second <= a) break;
    }
    return false;
}

// ns: a stream idle for longer than this before a piece of work started was idle when it was
// issued; a shorter gap is how a queued kernel follows its predecessor (a few us).
constexpr int64_t kIdleGap = 10'000;

bool gpu_op(WKind k) { return k == WKind::Kernel || k == WKind::Memcpy || k == WKind::Memset || k == WKind::GraphLaunch; }

}  // namespace

Builder::Builder(const KinetoTrace& t, Workload& w, const ImportOptions& opt, int64_t ws, int64_t we, std::vector<Span> step_abs)
    : t_(t), w_(w), opt_(opt), ws_(ws), we_(we), step_abs_(std::move(step_abs)) {
    for (const auto& [key, spans] : t_.spans) {
        index_.emplace(key, SpanIndex(&spans));
        auto& m = span_marks_[key];
        for (const CpuSpan& sp : spans)
            if (sp.name.rfind("ProfilerStep#", 0) != 0) m.push_back(sp.start), m.push_back(sp.end);
        std::sort(m.begin(), m.end());
    }
    for (const ApiCall& c : t_.calls) call_marks_[c.thread].push_back(c.start), call_marks_[c.thread].push_back(c.end);
    for (auto& [key, m] : call_marks_) std::sort(m.begin(), m.end());
    w_.streams.push_back("default");
    w_.stream_ids.push_back(opt_.legacy_stream);
    int64_t end = INT64_MIN;
    for (const GpuActivity& g : t_.gpu) gpu_end_before_.push_back(end = std::max(end, g.end));
}

size_t Builder::step_of(int64_t abs) const {
    size_t s = 0;
    while (s + 1 < step_abs_.size() && abs >= step_abs_[s + 1].start) ++s;
    return s;
}

int32_t Builder::stream_index(int64_t id) {
    for (size_t i = 0; i < w_.stream_ids.size(); ++i)
        if (w_.stream_ids[i] == id) return static_cast<int32_t>(i);
    w_.stream_ids.push_back(id);
    w_.streams.push_back("s" + std::to_string(id));
    return static_cast<int32_t>(w_.streams.size() - 1);
}

void Builder::covering(const WThread& th, int64_t abs, std::vector<const CpuSpan*>& out) const {
    out.clear();
    for (const ThreadKey& k : th.tids)
        if (auto it = index_.find(k); it != index_.end()) it->second.covering(abs, out);
    // Innermost (shortest) first across the folded threads.
    std::stable_sort(out.begin(), out.end(), [](const CpuSpan* a, const CpuSpan* b) { return a->end - a->start < b->end - b->start; });
}

std::string Builder::label_at(const WThread& th, int64_t abs, bool side) const {
    std::vector<const CpuSpan*> chain;
    covering(th, abs, chain);
    for (const CpuSpan* s : chain)
        if (s->name.rfind("ProfilerStep#", 0) != 0) return clean_label(s->name);
    return side ? "idle" : "python";
}

const CpuSpan* Builder::outermost(const WThread& th, int64_t abs) const {
    std::vector<const CpuSpan*> chain;
    covering(th, abs, chain);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        if ((*it)->name.rfind("ProfilerStep#", 0) != 0) return *it;
    return nullptr;
}

// Thread `other` is folded into `main` when neither does anything while the other is busy (in a
// cpu_op without children, or in a CUDA call): the autograd engine's device thread runs the
// backward pass while the main thread waits for it, so the two are one sequence of work.
bool Builder::fold(ThreadKey main, ThreadKey other, const std::vector<Call>& calls) const {
    auto busy = [&](ThreadKey k) {
        Intervals v;
        if (auto it = index_.find(k); it != index_.end()) {
            const auto& spans = *it->second.spans();
            std::vector<bool> parent(spans.size(), false);
            for (int32_t p : it->second.parents())
                if (p >= 0) parent[static_cast<size_t>(p)] = true;
            for (size_t i = 0; i < spans.size(); ++i)
                if (!parent[i] && spans[i].end > ws_ && spans[i].start < we_) v.push_back({spans[i].start, spans[i].end});
        }
        for (const ApiCall& c : t_.calls)
            if (c.thread == k && c.start >= ws_ && c.start <= we_) v.push_back({c.start, c.end});
        return merged(std::move(v));
    };
    const Intervals bm = busy(main), bo = busy(other);
    size_t n_main = 0, n_other = 0, hit_main = 0, hit_other = 0;
    for (const Call& c : calls) {
        if (c.api->thread == other) ++n_other, hit_other += overlaps(bm, c.api->start, c.api->end);
        if (c.api->thread == main) ++n_main, hit_main += overlaps(bo, c.api->start, c.api->end);
    }
    return n_other > 0 && hit_other * 20 <= n_other && hit_main * 20 <= std::max<size_t>(n_main, 1);
}

void Builder::make_threads(ThreadKey main, const std::vector<Call>& calls) {
    std::set<ThreadKey> callers;
    for (const Call& c : calls) callers.insert(c.api->thread);
    w_.threads.push_back(WThread{"main", {main}, {}, false});
    // A thread is named by its tid; by pid and tid where two processes' threads share a tid.
    std::map<int64_t, int> tid_count;
    for (const ThreadKey& k : callers) ++tid_count[k.second];
    for (const ThreadKey& k : callers) {
        if (k == main) continue;
        if (fold(main, k, calls)) {
            w_.threads[0].tids.push_back(k);
            w_.notes.push_back("thread " + std::to_string(k.second) +
                               " (CUDA calls only while the main thread waits: the autograd engine's backward) is folded into main, in time order");
        } else {
            const std::string id = tid_count[k.second] > 1 ? std::to_string(k.first) + "_" + std::to_string(k.second) : std::to_string(k.second);
            w_.threads.push_back(WThread{"thread_" + id, {k}, {}, false});
        }
    }
    for (size_t i = 0; i < w_.threads.size(); ++i) {
        WThread& th = w_.threads[i];
        th.steps.resize(w_.steps);
        for (const ThreadKey& k : th.tids) {
            thread_of_[k] = i;
            if (auto it = t_.spans.find(k); it != t_.spans.end())
                for (const CpuSpan& s : it->second)
                    if (contains(s.name, "_SingleProcessDataLoaderIter") && s.start <= we_ && s.end >= ws_) th.loader_in_thread = true;
        }
    }
}

size_t Builder::span_marks(const WThread& th, int64_t a, int64_t b) const {
    size_t n = 0;
    for (const ThreadKey& k : th.tids)
        if (auto it = span_marks_.find(k); it != span_marks_.end())
            n += static_cast<size_t>(std::lower_bound(it->second.begin(), it->second.end(), b) -
                                     std::lower_bound(it->second.begin(), it->second.end(), a));
    return n;
}

size_t Builder::call_marks(const WThread& th, int64_t a, int64_t b) const {
    size_t n = 0;
    for (const ThreadKey& k : th.tids)
        if (auto it = call_marks_.find(k); it != call_marks_.end())
            n += static_cast<size_t>(std::upper_bound(it->second.begin(), it->second.end(), b) -
                                     std::lower_bound(it->second.begin(), it->second.end(), a));
    return n;
}

void Builder::emit_host(size_t th, int64_t a, int64_t b, bool side, const std::vector<int64_t>& cuts) {
    if (b < a) b = a;
    std::vector<int64_t> pts{a};
    for (auto it = std::upper_bound(cuts.begin(), cuts.end(), a); it != cuts.end() && *it < b; ++it) pts.push_back(*it);
    pts.push_back(b);
    WThread& thread = w_.threads[th];
    std::vector<const CpuSpan*> chain;
    for (size_t k = 0; k + 1 < pts.size(); ++k) {
        const int64_t s = pts[k], e = pts[k + 1];
        const int64_t mid = s + (e - s) / 2;
        // Between one ProfilerStep span's end and the next one's start the thread is inside
        // prof.step(): the profiler's own work, which the program without it does not do.
        if (between_steps(mid)) {
            if (th == 0) w_.between_steps += e - s;
            continue;
        }
        WOp op;
        op.kind = WKind::Host;
        op.duration = e - s;
        // The profiler's own cost at each boundary it recorded in this host work: a span's start
        // or end (cpu_op, user_annotation) and a CUDA call's (the calls that stay host work, and
        // the entry and exit of the modelled calls on either side).
        {
            const size_t ns = span_marks(thread, s, e), nc = call_marks(thread, s, e);
            const int64_t cut = static_cast<int64_t>(ns) * w_.span_overhead + static_cast<int64_t>(nc) * w_.call_overhead;
            const int64_t removed = std::min(cut, op.duration);
            op.duration -= removed;
            if (th == 0) {
                w_.overhead_removed += removed;
                w_.overhead_clamped += cut - removed;
                w_.span_boundaries += ns;
                w_.call_boundaries += nc;
            }
        }
        op.host = Span{s - ws_, e - ws_};
        op.tid = thread.tids.front();
        op.label = label_at(thread, mid, side);
        if (const CpuSpan* top = outermost(thread, mid)) op.top_start = top->start, op.top_end = top->end;
        covering(thread, mid, chain);
        for (const CpuSpan* c : chain) {
            op.loader = op.loader || is_loader_span(c->name);
            op.readback = op.readback || is_readback_span(c->name);
        }
        thread.steps[step_of(s)].push_back(std::move(op));
    }
}

// A gap under 1 us between two ProfilerStep spans is the rounding of their microsecond
// timestamps, not prof.step() (which takes 10 us or more).
constexpr int64_t kStepGap = 1'000;

bool Builder::between_steps(int64_t abs) const {
    for (size_t k = 0; k + 1 < step_abs_.size(); ++k)
        if (step_abs_[k + 1].start - step_abs_[k].end >= kStepGap && abs >= step_abs_[k].end && abs < step_abs_[k + 1].start) return true;
    return false;
}

int32_t Builder::graph_for(const Call& c) {
    std::string sig;
    for (size_t gi : c.gpu) {
        const GpuActivity& g = t_.gpu[gi];
        sig += std::to_string(static_cast<int>(g.kind)) + "|" + g.name + "|" + std::to_string(g.bytes) + "|" + std::to_string(g.grid) + "|" +
               std::to_string(g.block) + "\n";
    }
    auto [it, fresh] = graph_ids_.try_emplace(sig, static_cast<int32_t>(w_.graphs.size()));
    if (fresh) {
        WGraph gr;
        gr.name = "g" + std::to_string(w_.graphs.size());
        for (size_t gi : c.gpu) {
            const GpuActivity& g = t_.gpu[gi];
            WOp n;
            n.kind = g.kind == GpuKind::Kernel ? WKind::Kernel : g.kind == GpuKind::Memset ? WKind::Memset : WKind::Memcpy;
            n.name = g.name;
            n.label = g.kind == GpuKind::Kernel ? short_kernel_name(g.name) : clean_label(g.name);
            n.duration = g.end - g.start;
            n.grid = g.grid, n.block = g.block, n.registers = g.registers, n.shared_memory = g.shared_memory;
            n.bytes = g.bytes, n.dir = g.dir, n.mem = g.host_mem;
            // hetsim stages a pageable copy on the thread that calls it, and a graph launch calls
            // none (frontend/graphs.cpp refuses such a node): say so here, not in the scenario.
            if (n.kind == WKind::Memcpy && n.mem == MemKind::Pageable && n.dir != CopyDir::D2D)
                throw InputError(SourceLoc{t_.file}, "unsupported: a CUDA graph (" + c.api->name + ") copies pageable host memory ('" +
                                                         g.name + "'); hetsim models graph copy nodes of pinned, managed or "
                                                         "device memory only");
            gr.nodes.push_back(std::move(n));
        }
        w_.graphs.push_back(std::move(gr));
        graph_durations_.emplace_back(c.gpu.size());
    }
    auto& d = graph_durations_[static_cast<size_t>(it->second)];
    for (size_t k = 0; k < c.gpu.size(); ++k) d[k].push_back(t_.gpu[c.gpu[k]].end - t_.gpu[c.gpu[k]].start);
    return it->second;
}

void Builder::emit_call(size_t th, const Call& c, bool& prev_upload) {
    WThread& thread = w_.threads[th];
    const ApiCall& a = *c.api;
    WOp op;
    op.host = Span{a.start - ws_, a.end - ws_};
    op.tid = a.thread;
    op.correlation = a.correlation;
    std::vector<const CpuSpan*> chain;
    covering(thread, a.start + (a.end - a.start) / 2, chain);
    std::string inner;
    for (const CpuSpan* s : chain)
        if (s->name.rfind("ProfilerStep#", 0) != 0) {
            inner = s->name;
            break;
        }
    bool in_readback = false, in_copy = false;
    for (const CpuSpan* s : chain) in_readback = in_readback || is_readback_span(s->name), in_copy = in_copy || is_copy_span(s->name);
    if (const CpuSpan* top = outermost(thread, a.start + (a.end - a.start) / 2)) op.top_start = top->start, op.top_end = top->end;
    const GpuActivity* g = c.gpu.empty() ? nullptr : &t_.gpu[c.gpu.front()];
    if (g) {
        op.gpu = Span{g->start - ws_, g->end - ws_};
        op.stream = stream_index(g->stream);
    }
    switch (c.kind) {
        case CallKind::Kernel:
            op.kind = WKind::Kernel;
            op.name = g->name;
            op.label = short_kernel_name(g->name);
            op.duration = g->end - g->start;
            op.grid = g->grid, op.block = g->block, op.registers = g->registers, op.shared_memory = g->shared_memory;
            break;
        case CallKind::Memcpy:
        case CallKind::Memset:
            op.kind = c.kind == CallKind::Memcpy ? WKind::Memcpy : WKind::Memset;
            op.label = clean_label(inner.empty() ? a.name : inner);
            op.bytes = 0;
            for (size_t gi : c.gpu) {  // a call that the GPU ran as several records: all of them
                op.bytes += t_.gpu[gi].bytes;
                op.gpu.end = std::max(op.gpu.end, t_.gpu[gi].end - ws_);
            }
            op.dir = g->dir, op.mem = g->host_mem;
            op.sync = !contains(a.name, "Async");
            op.pageable_upload = op.kind == WKind::Memcpy && op.dir == CopyDir::H2D && op.mem == MemKind::Pageable;
            op.readback = in_readback;
            break;
        case CallKind::GraphLaunch: {
            op.kind = WKind::GraphLaunch;
            op.graph = graph_for(c);
            op.label = w_.graphs[static_cast<size_t>(op.graph)].name;
            op.gpu = Span{};
            for (size_t gi : c.gpu) op.node_gpu.push_back(Span{t_.gpu[gi].start - ws_, t_.gpu[gi].end - ws_});
            break;
        }
        case CallKind::EventRecord:
            op.kind = WKind::EventRecord;
            op.alloc_record = in_copy;
            break;
        case CallKind::StreamWait: op.kind = WKind::StreamWait; break;
        case CallKind::EventSync: op.kind = WKind::EventSync; break;
        case CallKind::FreeSync: {
            // cudaFree: a device sync, then the free's own host work, which is what remains of the
            // call after the device's work issued before it ended (GPU work that started before
            // the call returned was issued before it).
            op.kind = WKind::DeviceSync;
            op.implicit = true;
            auto first_after = std::lower_bound(t_.gpu.begin(), t_.gpu.end(), a.end,
                                                [](const GpuActivity& x, int64_t v) { return x.start < v; });
            const size_t n = static_cast<size_t>(first_after - t_.gpu.begin());
            const int64_t drained = std::clamp(n > 0 ? gpu_end_before_[n - 1] : a.start, a.start, a.end);
            WOp own;
            own.kind = WKind::Host;
            own.label = clean_label(a.name);
            own.duration = a.end - drained;
            own.host = Span{drained - ws_, a.end - ws_};
            own.tid = a.thread;
            own.top_start = op.top_start, own.top_end = op.top_end;
            op.host.end = drained - ws_;
            auto& step = thread.steps[step_of(a.start)];
            step.push_back(std::move(op));
            if (own.duration > 0) step.push_back(std::move(own));
            prev_upload = false;
            return;
        }
        case CallKind::StreamSync:
        case CallKind::DeviceSync:
            op.kind = c.kind == CallKind::StreamSync ? WKind::StreamSync : WKind::DeviceSync;
            // PyTorch's blocking .to(): cudaMemcpyAsync from pageable memory, then a stream sync.
            op.copy_sync = op.kind == WKind::StreamSync && prev_upload && in_copy && !in_readback;
            // A per-step sync: loss.item()'s, or a bare torch.cuda.synchronize() / stream.synchronize().
            op.readback = in_readback || !in_copy;
            break;
        default: return;
    }
    prev_upload = op.pageable_upload;
    thread.steps[step_of(a.start)].push_back(std::move(op));
}

void Builder::place_orphans(const std::vector<Call>& calls) {
    std::set<int64_t> issued;  // correlation ids of every call of the trace, in the window or not
    for (const ApiCall& a : t_.calls)
        if (a.correlation >= 0) issued.insert(a.correlation);
    // Per stream, the window's calls' GPU work on it by GPU start: (start, index into calls).
    std::map<int64_t, std::vector<std::pair<int64_t, size_t>>> on_stream;
    for (size_t i = 0; i < calls.size(); ++i)
        for (size_t gi : calls[i].gpu) on_stream[t_.gpu[gi].stream].emplace_back(t_.gpu[gi].start, i);
    for (auto& [s, v] : on_stream) std::sort(v.begin(), v.end());
    // Per stream: the end of its work started so far, and whether that work runs back to back
    // from work started before the window (the queue the window opened on).
    std::map<int64_t, std::pair<int64_t, bool>> busy_end;
    for (size_t gi = 0; gi < t_.gpu.size(); ++gi) {
        const GpuActivity& g = t_.gpu[gi];
        auto busy = busy_end.try_emplace(g.stream, INT64_MIN, false).first;
        const int64_t busy_until = busy->second.first;
        const bool queued = busy_until != INT64_MIN && busy_until + kIdleGap >= g.start;
        const bool from_before = g.start < ws_ || (queued && busy->second.second);
        busy->second = {std::max(busy_until, g.end), from_before};
        if (g.start < ws_ || g.start > we_ || g.host_to_host || (g.correlation >= 0 && issued.count(g.correlation))) continue;
        const auto& v = on_stream[g.stream];
        auto next = std::lower_bound(v.begin(), v.end(), std::make_pair(g.start, size_t{0}));
        size_t at = calls.size();
        if (next == v.begin() && from_before) {
            // No work the window issued runs ahead of it on its stream, and the stream ran it
            // back to back with work started before the window: issued before the window.
        } else if (next == v.begin()) {
            // Ahead of the window's work on its stream (on a stream no call of the window used:
            // a library's own) but issued in the window: the main thread's, after its latest
            // call that had returned when the work started.
            for (size_t j = 0; j < calls.size() && calls[j].api->start <= g.start; ++j)
                if (thread_of_.at(calls[j].api->thread) == 0 && calls[j].api->end <= g.start) at = j;
        } else {
            // After the latest call of the thread that issued the stream's previous work that
            // had returned when this work started (never before that previous work's call, nor
            // after the call of the stream's next work on the same thread).
            const size_t prev = std::prev(next)->second;
            const size_t th = thread_of_.at(calls[prev].api->thread);
            const size_t stop = next != v.end() && thread_of_.at(calls[next->second].api->thread) == th ? next->second : calls.size();
            at = prev;
            for (size_t j = prev + 1; j < stop && calls[j].api->start <= g.start; ++j)
                if (thread_of_.at(calls[j].api->thread) == th && calls[j].api->end <= g.start) at = j;
        }
        if (at == calls.size()) {  // issued before the window (or before the main thread's first call)
            ++w_.orphans_before_window;
            continue;
        }
        const size_t th = thread_of_.at(calls[at].api->thread);
        // When: where the stream was idle until the work started, it was issued then (its GPU
        // start, within the host work after that call); where the stream was busy up to it, it
        // was queued earlier: right after that call.
        int64_t issue = calls[at].api->end;
        if (!queued) {
            int64_t limit = g.start;
            for (size_t j = at + 1; j < calls.size(); ++j)
                if (thread_of_.at(calls[j].api->thread) == th) {
                    limit = std::min(limit, calls[j].api->start);
                    break;
                }
            issue = std::max(issue, limit);
        }
        auto& after = orphans_after_[at];
        if (!after.empty()) issue = std::max(issue, after.back().first);  // in the order the GPU ran them
        after.emplace_back(issue, gi);
        ++w_.orphans_placed;
    }
}

void Builder::emit_orphan(size_t th, size_t gi, int64_t issue, ThreadKey tid) {
    const GpuActivity& g = t_.gpu[gi];
    WOp op;
    op.orphan = true;
    op.host = Span{issue - ws_, issue - ws_};
    op.gpu = Span{g.start - ws_, g.end - ws_};
    op.stream = stream_index(g.stream);
    op.tid = tid;
    op.duration = g.end - g.start;
    if (g.kind == GpuKind::Kernel) {
        op.kind = WKind::Kernel;
        op.name = g.name;
        op.label = short_kernel_name(g.name);
        op.grid = g.grid, op.block = g.block, op.registers = g.registers, op.shared_memory = g.shared_memory;
    } else {
        op.kind = g.kind == GpuKind::Memcpy ? WKind::Memcpy : WKind::Memset;
        op.label = clean_label(g.name);
        op.bytes = g.bytes, op.dir = g.dir, op.mem = g.host_mem;
    }
    w_.threads[th].steps[step_of(issue)].push_back(std::move(op));
}

void Builder::build_ops(const std::vector<Call>& calls) {
    for (size_t th = 0; th < w_.threads.size(); ++th) {
        WThread& thread = w_.threads[th];
        const bool side = th != 0;
        std::vector<int64_t> cuts;
        for (size_t s = 1; s < step_abs_.size(); ++s) {
            cuts.push_back(step_abs_[s].start);
            if (step_abs_[s].start - step_abs_[s - 1].end >= kStepGap) cuts.push_back(step_abs_[s - 1].end);
        }
        for (const ThreadKey& k : thread.tids)
            if (auto it = t_.spans.find(k); it != t_.spans.end())
                for (const CpuSpan& s : it->second)
                    if (is_loader_span(s.name) || is_readback_span(s.name)) cuts.push_back(s.start), cuts.push_back(s.end);
        // The outermost op around each call (aten::linear around its addmm launch): its host work
        // before and after the call is its own, which a CUDA graph capture takes with it.
        for (const Call& c : calls)
            if (thread_of_.at(c.api->thread) == th)
                if (const CpuSpan* top = outermost(thread, c.api->start + (c.api->end - c.api->start) / 2))
                    cuts.push_back(top->start), cuts.push_back(top->end);
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        int64_t cursor = ws_;
        bool prev_upload = false;
        for (size_t i = 0; i < calls.size(); ++i) {
            const Call& c = calls[i];
            if (thread_of_.at(c.api->thread) != th) continue;
            emit_host(th, cursor, c.api->start, side, cuts);
            emit_call(th, c, prev_upload);
            cursor = std::max(cursor, c.api->end);
            if (auto it = orphans_after_.find(i); it != orphans_after_.end())
                for (auto [issue, gi] : it->second) {
                    if (issue > cursor) emit_host(th, cursor, issue, side, cuts);
                    emit_orphan(th, gi, issue, c.api->thread);
                    cursor = std::max(cursor, issue);
                }
        }
        if (!side) emit_host(th, cursor, we_, false, cuts);
    }
    for (const WThread& th : w_.threads)
        for (const auto& step : th.steps)
            for (const WOp& op : step) {
                w_.measured_end = std::max(w_.measured_end, op.host.end);
                w_.measured_end = std::max(w_.measured_end, op.gpu.end);
                for (const Span& n : op.node_gpu) w_.measured_end = std::max(w_.measured_end, n.end);
            }
}

int32_t Builder::stream_ahead(const Ref& r, ThreadKey tid, int32_t not_stream) const {
    const WOp* op = gpu_ahead(r, tid, not_stream);
    return op ? op->stream : -1;
}

const WOp* Builder::gpu_ahead(const Ref& r, ThreadKey tid, int32_t not_stream) const {
    const WThread& th = w_.threads[r.th];
    size_t s = r.step, p = r.pos + 1;
    for (; s < th.steps.size(); ++s, p = 0)
        for (; p < th.steps[s].size(); ++p) {
            const WOp& op = th.steps[s][p];
            if (gpu_op(op.kind) && !op.orphan && op.tid == tid && (not_stream < 0 || op.stream != not_stream)) return &op;
        }
    return nullptr;
}

void Builder::link() {
    std::vector<Ref> all;
    for (size_t th = 0; th < w_.threads.size(); ++th)
        for (size_t s = 0; s < w_.threads[th].steps.size(); ++s)
            for (size_t p = 0; p < w_.threads[th].steps[s].size(); ++p)
                if (w_.threads[th].steps[s][p].kind != WKind::Host) all.push_back(Ref{th, s, p});
    std::stable_sort(all.begin(), all.end(), [&](const Ref& a, const Ref& b) { return at(a).host.start < at(b).host.start; });
    for (const Ref& r : all)
        if (at(r).kind == WKind::GraphLaunch && at(r).stream < 0) at(r).stream = 0;
    // A thread's stream before its first GPU op of the window: with profiler steps the window is
    // a steady loop, whose previous iteration ended as the window's last step does (the stream of
    // the thread's last GPU op); a window without steps starts cold (its next GPU op's stream).
    std::map<ThreadKey, int32_t> seed;
    if (w_.annotated_steps && w_.steps >= 2)
        for (const Ref& r : all)
            if (gpu_op(at(r).kind) && !at(r).orphan) seed[at(r).tid] = at(r).stream;
    constexpr int64_t kWaited = 20'000;  // ns: a sync shorter than this did not wait for the GPU
    constexpr int64_t kClock = 1'000;    // ns: the trace's GPU and host clocks agree to within this
    auto gpu_start = [](const WOp& op) {
        int64_t s = op.gpu.valid() ? op.gpu.start : INT64_MAX;
        for (const Span& n : op.node_gpu) s = std::min(s, n.start);
        return s == INT64_MAX ? int64_t{-1} : s;
    };
    // The stream of a record is not in the trace. Its candidates: the stream of the calling
    // thread's previous GPU op (prev) and of its next one (next). A stream wait that takes the
    // record applies to the next GPU op of the thread on another stream than the record's
    // (`a.wait_stream(b)` is a record on b and a wait on a; the op that needs it is the next one
    // on a); that op cannot start on the GPU before the work issued on the record's stream ahead
    // of the record is done. A candidate whose wait would have held that op back when the GPU
    // ran it earlier is refuted. Evidence is gathered per site (the thread's k-th record of a
    // step), so that every step of a loop takes the same stream.
    struct Rec {
        int64_t issued = 0, done = 0;
        bool alloc = false, synced = false;
        int32_t prev = -1, next = -1;
        int64_t done_prev = -1, done_next = -1;
        std::pair<size_t, size_t> site;
        int64_t correlation = -1;
        int32_t known = -1;  // the stream the trace's cuda_sync events say it was recorded on
    };
    // With enable_cuda_sync_events the trace says, for each wait and event sync, which record it
    // waited for and on which stream that was recorded: where it does, that is used.
    std::map<int64_t, int32_t> known_stream;  // a record's call correlation -> its stream
    for (const auto& [corr, si] : t_.sync_by_correlation) {
        if (si.record_correlation >= 0 && si.wait_on_stream >= 0) known_stream[si.record_correlation] = stream_index(si.wait_on_stream);
        if (si.stream >= 0) stream_index(si.stream);
    }
    auto sync_info = [&](const WOp& op) -> const SyncInfo* {
        auto it = op.correlation >= 0 ? t_.sync_by_correlation.find(op.correlation) : t_.sync_by_correlation.end();
        return it != t_.sync_by_correlation.end() && it->second.record_correlation >= 0 ? &it->second : nullptr;
    };
    auto record_of = [](const std::vector<Rec>& v, int64_t corr) {
        for (int32_t k = static_cast<int32_t>(v.size()) - 1; k >= 0; --k)
            if (v[static_cast<size_t>(k)].correlation == corr) return k;
        return int32_t{-1};
    };
    std::map<std::pair<size_t, size_t>, std::pair<bool, bool>> refuted;  // site -> (prev, next)
    std::vector<Rec> recs;
    auto pass = [&](bool final) {
        std::vector<int64_t> last_end(w_.streams.size(), -1);
        std::map<ThreadKey, int32_t> current = seed;
        std::map<std::pair<size_t, size_t>, size_t> site_count;  // (thread, step) -> records so far
        recs.clear();
        if (final) record_ref_.clear();
        for (const Ref& r : all) {
            WOp& op = at(r);
            if (gpu_op(op.kind)) {
                int64_t end = op.gpu.end;
                for (const Span& n : op.node_gpu) end = std::max(end, n.end);
                last_end[static_cast<size_t>(op.stream)] = std::max(last_end[static_cast<size_t>(op.stream)], end);
                if (!op.orphan) current[op.tid] = op.stream;  // GPU work no call issued is not the thread's
                continue;
            }
            auto cur = current.find(op.tid);
            auto ahead = [&] { return std::max(stream_ahead(r, op.tid), 0); };
            auto here = [&] { return cur != current.end() ? cur->second : ahead(); };
            const bool waited = op.host.end - op.host.start > kWaited;
            switch (op.kind) {
                case WKind::EventRecord: {
                    Rec rec;
                    rec.issued = op.host.start;
                    rec.alloc = op.alloc_record;
                    rec.prev = cur != current.end() ? cur->second : -1;
                    rec.next = stream_ahead(r, op.tid);
                    auto done_of = [&](int32_t s) { return s < 0 ? int64_t{-1} : std::max(last_end[static_cast<size_t>(s)], op.host.start); };
                    rec.done_prev = done_of(rec.prev);
                    rec.done_next = done_of(rec.next);
                    rec.site = {r.th, site_count[{r.th, r.step}]++};
                    rec.correlation = op.correlation;
                    if (auto k = op.correlation >= 0 ? known_stream.find(op.correlation) : known_stream.end(); k != known_stream.end())
                        rec.known = k->second;
                    int32_t s = rec.known >= 0 ? rec.known : rec.prev >= 0 ? rec.prev : ahead();
                    if (final && rec.known < 0 && rec.prev >= 0 && rec.next >= 0 && rec.next != rec.prev) {
                        auto it = refuted.find(rec.site);
                        if (it != refuted.end() && it->second.first && !it->second.second) s = rec.next;
                    }
                    rec.done = s == rec.next && rec.next >= 0 ? rec.done_next : s == rec.prev && rec.prev >= 0 ? rec.done_prev
                                                                                                                : std::max(last_end[static_cast<size_t>(s)], op.host.start);
                    if (final) {
                        op.stream = s;
                        op.record = static_cast<int32_t>(recs.size());
                        record_ref_.push_back(r);
                    }
                    recs.push_back(rec);
                    break;
                }
                case WKind::StreamWait: {
                    int32_t pick = -1;
                    for (int32_t k = static_cast<int32_t>(recs.size()) - 1; k >= 0 && pick < 0; --k)
                        if (!recs[static_cast<size_t>(k)].alloc) pick = k;
                    if (pick < 0) pick = static_cast<int32_t>(recs.size()) - 1;
                    const SyncInfo* si = sync_info(op);
                    if (si && record_of(recs, si->record_correlation) >= 0) pick = record_of(recs, si->record_correlation);
                    if (pick < 0) break;
                    Rec& rec = recs[static_cast<size_t>(pick)];
                    rec.synced = true;  // a later event sync waits for another one
                    if (!final) {
                        auto& ref = refuted[rec.site];
                        for (int h = 0; h < 2 && rec.known < 0; ++h) {
                            const int32_t s = h == 0 ? rec.prev : rec.next;
                            const int64_t done = h == 0 ? rec.done_prev : rec.done_next;
                            if (s < 0) continue;
                            const WOp* x = gpu_ahead(r, op.tid, s);
                            if (x && gpu_start(*x) >= 0 && gpu_start(*x) + kClock < done) (h == 0 ? ref.first : ref.second) = true;
                        }
                        break;
                    }
                    op.record = pick;
                    const int32_t own = at(record_ref_[static_cast<size_t>(pick)]).stream;
                    const int32_t other = stream_ahead(r, op.tid, own);
                    op.stream = si && si->stream >= 0 ? stream_index(si->stream) : other >= 0 ? other : ahead();
                    break;
                }
                case WKind::EventSync: {
                    // The record whose completion explains when the sync returned; a sync that did not
                    // wait takes the oldest record not synced yet (ev.synchronize() in issue order).
                    int32_t pick = -1;
                    if (waited) {
                        int64_t best = INT64_MAX;
                        for (size_t k = 0; k < recs.size(); ++k)
                            if (recs[k].done > op.host.start && recs[k].done <= op.host.end && op.host.end - recs[k].done <= best)
                                best = op.host.end - recs[k].done, pick = static_cast<int32_t>(k);
                    }
                    for (size_t k = 0; k < recs.size() && pick < 0; ++k)
                        if (!recs[k].synced && !recs[k].alloc) pick = static_cast<int32_t>(k);
                    if (pick < 0) pick = static_cast<int32_t>(recs.size()) - 1;
                    if (const SyncInfo* si = sync_info(op); si && record_of(recs, si->record_correlation) >= 0)
                        pick = record_of(recs, si->record_correlation);
                    if (pick >= 0) recs[static_cast<size_t>(pick)].synced = true;
                    if (final) op.record = pick;
                    break;
                }
                case WKind::StreamSync: {
                    if (!final) break;
                    int32_t s = here();
                    if (waited && last_end[static_cast<size_t>(s)] <= op.host.start) {
                        int64_t best = INT64_MAX;
                        for (size_t k = 0; k < last_end.size(); ++k)
                            if (last_end[k] > op.host.start && std::llabs(op.host.end - last_end[k]) < best)
                                best = std::llabs(op.host.end - last_end[k]), s = static_cast<int32_t>(k);
                    }
                    op.stream = s;
                    break;
                }
                default: break;
            }
        }
    };
    pass(false);
    pass(true);
    for (const Ref& r : all) {
        WOp& op = at(r);
        if ((op.kind == WKind::StreamWait || op.kind == WKind::EventSync) && op.record < 0) {
            op.kind = WKind::Host;  // waits on nothing recorded in the window: its time is host work
            op.duration = op.host.end - op.host.start;
            op.label = "cuda_wait_without_record";
            ++w_.calls_kept_as_host;
        }
    }
    w_.records = static_cast<int32_t>(recs.size());
}

}  // namespace hetsim::import::detail
