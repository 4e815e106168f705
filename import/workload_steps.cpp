// build_workload's later steps: is every step the same op sequence (a repeat body), the events
// that follow from it, median durations per body position, and the capturable kernel region.
#include <algorithm>
#include <map>

#include "import/workload_detail.hpp"

namespace hetsim::import::detail {
namespace {

int64_t median(std::vector<int64_t> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string describe(const WOp& op) {
    return std::string(to_string(op.kind)) + " '" + op.label + "'";
}

}  // namespace

std::string Builder::signature(const Ref& r) const {
    const WOp& op = w_.threads[r.th].steps[r.step][r.pos];
    std::string s = to_string(op.kind);
    s += '|';
    // Host work is identified by its place and flags, not its label: the label is the span that
    // covers the gap's middle, which moves from step to step as the gap's length does.
    s += op.kind == WKind::Kernel ? op.name : op.kind == WKind::Host ? std::string() : op.label;
    for (uint64_t v : {static_cast<uint64_t>(op.stream + 1), static_cast<uint64_t>(op.dir), static_cast<uint64_t>(op.mem), op.bytes,
                       static_cast<uint64_t>(op.sync), op.grid, op.block, op.registers, op.shared_memory,
                       static_cast<uint64_t>(op.graph + 1)})
        s += '|' + std::to_string(v);
    s += '|';
    for (bool f : {op.readback, op.copy_sync, op.pageable_upload, op.loader, op.alloc_record}) s += f ? '1' : '0';
    if (op.record >= 0 && op.kind != WKind::EventRecord) {
        const Ref& rr = record_ref_[static_cast<size_t>(op.record)];
        s += "|r" + std::to_string(rr.th) + "," + std::to_string(rr.pos) + "," + std::to_string(static_cast<int64_t>(r.step) - static_cast<int64_t>(rr.step));
    }
    return s;
}

void Builder::find_repeat() {
    const size_t n = w_.steps;
    w_.body_len.assign(w_.threads.size(), 0);
    w_.repeat = n >= 2;
    if (n < 2) w_.flat_reason = "the window has one profiler step";
    for (size_t th = 0; th < w_.threads.size() && w_.repeat; ++th) {
        const auto& steps = w_.threads[th].steps;
        const size_t len = steps[0].size();
        for (size_t s = 1; s < n && w_.repeat; ++s) {
            const bool last = s == n - 1;
            if ((!last && steps[s].size() != len) || (last && steps[s].size() < len)) {
                w_.repeat = false;
                w_.flat_reason = "on thread " + w_.threads[th].name + ", step " + std::to_string(s) + " has " + std::to_string(steps[s].size()) +
                                 " ops, step 0 has " + std::to_string(len);
                break;
            }
            for (size_t p = 0; p < len; ++p)
                if (signature(Ref{th, s, p}) != signature(Ref{th, 0, p})) {
                    w_.repeat = false;
                    w_.flat_reason = "on thread " + w_.threads[th].name + ", op " + std::to_string(p) + " of step " + std::to_string(s) + " is " +
                                     describe(steps[s][p]) + " where step 0 has " + describe(steps[0][p]);
                    break;
                }
        }
        w_.body_len[th] = len;
    }
    if (!w_.repeat) std::fill(w_.body_len.begin(), w_.body_len.end(), 0);
    // Events: one per record position of the step body (the same cudaEvent_t recorded every
    // step), else one per record.
    std::map<std::pair<size_t, size_t>, int32_t> by_pos;
    w_.record_event.assign(static_cast<size_t>(w_.records), -1);
    for (int32_t rid = 0; rid < w_.records; ++rid) {
        const Ref& rr = record_ref_[static_cast<size_t>(rid)];
        int32_t ev = static_cast<int32_t>(w_.events.size());
        if (w_.repeat && rr.pos < w_.body_len[rr.th]) {
            auto [it, fresh] = by_pos.try_emplace({rr.th, rr.pos}, ev);
            if (!fresh) ev = it->second;
        }
        if (ev == static_cast<int32_t>(w_.events.size())) w_.events.push_back("e" + std::to_string(w_.events.size()));
        w_.record_event[static_cast<size_t>(rid)] = ev;
    }
}

void Builder::fold_durations() {
    if (w_.repeat)
        for (WThread& th : w_.threads)
            for (size_t p = 0; p < th.steps[0].size(); ++p) {
                std::vector<int64_t> d;
                for (const auto& step : th.steps) d.push_back(step[p].duration);
                const int64_t m = median(d);
                for (auto& step : th.steps) step[p].duration = m, step[p].label = th.steps[0][p].label;
            }
    for (size_t g = 0; g < w_.graphs.size(); ++g)
        for (size_t k = 0; k < w_.graphs[g].nodes.size(); ++k) w_.graphs[g].nodes[k].duration = median(graph_durations_[g][k]);
}

// CUPTI's kernel record starts before the kernel's first block and ends after its last one; the
// profile's gaps between kernels (gpu.stream_gap, graph.node_gap) are measured between the
// blocks' own stamps, so a record's duration with the modelled gap counts the excess twice. Each
// kernel (an op, or a node of a traced graph) keeps its record's duration less the excess, and at
// least half of it.
void Builder::shorten_kernels() {
    const int64_t e = w_.kernel_excess;
    if (e <= 0) return;
    auto shorten = [&](WOp& op) {
        if (op.kind != WKind::Kernel) return;
        op.duration = std::max(op.duration - e, op.duration / 2);
        ++w_.kernels_shortened;
    };
    for (WThread& th : w_.threads)
        for (auto& step : th.steps)
            for (WOp& op : step) shorten(op);
    for (WGraph& g : w_.graphs)
        for (WOp& op : g.nodes) shorten(op);
}

void Builder::find_capture() {
    if (!w_.repeat) {
        w_.capture_reason = "the steps are not one repeated body";
        return;
    }
    const auto& body = w_.threads[0].steps[0];
    const size_t len = w_.body_len[0];
    size_t first = len, last = len;
    for (size_t p = 0; p < len; ++p)
        if (body[p].kind == WKind::Kernel) {
            if (first == len) first = p;
            last = p;
        }
    if (first == len) {
        w_.capture_reason = "the main thread launches no kernels";
        return;
    }
    // The host work inside the outermost ops of the first and last kernels (the dispatch of
    // the first aten::linear before its launch, the rest of the last aten::relu after its
    // own) is captured with them: a graph replay runs none of it.
    auto same_top = [](const WOp& h, const WOp& k) {
        return h.kind == WKind::Host && h.top_start >= 0 && h.top_start == k.top_start && h.top_end == k.top_end && !h.loader && !h.readback;
    };
    const int32_t stream = body[first].stream;
    while (first > 0 && same_top(body[first - 1], body[first])) --first;
    while (last + 1 < len && same_top(body[last + 1], body[last])) ++last;
    for (size_t p = first; p <= last; ++p) {
        const WOp& op = body[p];
        bool ok = false;
        switch (op.kind) {
            case WKind::Host: ok = !op.loader && !op.readback; break;
            case WKind::Kernel: ok = op.stream == stream; break;
            case WKind::Memset: ok = !op.sync && op.stream == stream; break;
            case WKind::Memcpy: ok = !op.sync && op.dir == CopyDir::D2D && op.stream == stream; break;
            default: ok = false;
        }
        if (!ok) {
            w_.capture_reason = "between the step's first and last kernel the main thread has " + describe(op) +
                                (op.stream != stream && op.stream >= 0 ? " on another stream" : "") + ", which one stream capture cannot hold";
            return;
        }
    }
    w_.capturable = true;
    w_.capture_begin = first;
    w_.capture_end = last + 1;
    w_.capture_stream = stream;
}

}  // namespace hetsim::import::detail
