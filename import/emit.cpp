#include "import/emit.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "models/kernel_model.hpp"

namespace hetsim::import {

std::string format_ns(int64_t ns) {
    if (ns < 0) ns = 0;
    auto frac = [](int64_t v, int64_t unit, int digits, const char* suffix) {
        std::string s = std::to_string(v / unit);
        int64_t rem = v % unit;
        if (rem) {
            std::string f = std::to_string(rem);
            f.insert(0, static_cast<size_t>(digits) - f.size(), '0');
            while (!f.empty() && f.back() == '0') f.pop_back();
            s += "." + f;
        }
        return s + suffix;
    };
    if (ns < 1000) return std::to_string(ns) + "ns";
    if (ns < 1'000'000) return frac(ns, 1000, 3, "us");
    return frac(ns, 1'000'000, 6, "ms");
}

std::string format_size(uint64_t b) {
    if (b >= (1u << 20) && b % (1u << 20) == 0) return std::to_string(b >> 20) + "MiB";
    if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + "KiB";
    return std::to_string(b) + "B";
}

namespace {

std::string quoted(const std::string& s) {
    std::string o = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        o += c;
    }
    return o + "\"";
}

const char* dir_name(CopyDir d) { return d == CopyDir::H2D ? "h2d" : d == CopyDir::D2H ? "d2h" : "d2d"; }
const char* mem_name(MemKind m) { return m == MemKind::Pinned ? "pinned" : m == MemKind::Managed ? "managed" : "pageable"; }

class Writer {
public:
    Writer(const Workload& w, const EmitOptions& o) : w_(w), o_(o) {
        for (size_t th = 0; th < w_.threads.size(); ++th)
            for (size_t s = 0; s < w_.threads[th].steps.size(); ++s) {
                const auto& ops = w_.threads[th].steps[s];
                const size_t body = w_.repeat ? w_.body_len[th] : ops.size();
                for (size_t p = 0; p < ops.size(); ++p) {
                    const WOp& op = ops[p];
                    const bool tail = w_.repeat && p >= body;
                    if (op.pageable_upload && !tail) pin_ = true;
                    if (op.pageable_upload && !tail && w_.threads[th].loader_in_thread) pin_cost_ = o_.pin_bandwidth > 0;
                    if (op.readback && !tail && (op.kind == WKind::StreamSync || op.kind == WKind::DeviceSync) &&
                        (w_.repeat || s + 1 < w_.steps))
                        sync_ = true;
                    if (op.loader && !tail) loader_ = true;
                    // The batch: what the main thread's step body uploads (its host-to-device copies).
                    if (th == 0 && s == 0 && !tail && op.kind == WKind::Memcpy && op.dir == CopyDir::H2D) {
                        batch_bytes_ += op.bytes;
                        if (op.mem == MemKind::Pinned) uploads_pinned_ = true;
                    }
                    if (op.kind != WKind::Host && op.stream > 0) used_streams_.insert(op.stream);
                }
            }
        graph_ = w_.capturable;
        loader_ = loader_ && w_.repeat;
    }

    std::string run() {
        header();
        out_ << "name: " << quoted("imported: " + base_name(o_.source.empty() ? w_.trace_file : o_.source)) << "\n";
        out_ << "hardware: \"${gpu}\"\n";
        params();
        decls();
        out_ << "threads:\n";
        for (size_t th = 0; th < w_.threads.size(); ++th) thread(th);
        if (loader_) loader_threads();
        return out_.str();
    }

private:
    static std::string base_name(const std::string& p) {
        size_t s = p.find_last_of('/');
        return s == std::string::npos ? p : p.substr(s + 1);
    }

    void header() {
        const std::string src = o_.source.empty() ? w_.trace_file : o_.source;
        out_ << "# Imported by `hetsim import` from a PyTorch profiler (Kineto) trace: " << src << "\n";
        out_ << "#   device: " << (w_.device_name.empty() ? std::string("(not named in the trace)") : w_.device_name)
             << "; hardware profile: " << w_.profile << " (param gpu)\n";
        if (w_.annotated_steps)
            out_ << "#   window: the profiler's active steps ProfilerStep#" << w_.step_number.front() << "..#" << w_.step_number.back() << ", "
                 << w_.steps << " step" << (w_.steps == 1 ? "" : "s") << ", " << format_ns(w_.window) << " measured (profiled)\n";
        else
            out_ << "#   window: the whole trace (no ProfilerStep#N annotations), taken as 1 step, " << format_ns(w_.window) << " measured\n";
        out_ << "#   steps: " << w_.steps << ". A step time is end to end / steps";
        if (w_.repeat)
            out_ << "; the steps have the same op sequence, so one step body is written\n"
                    "#   in a repeat (durations per position: the median over the steps) and `--set steps=N` predicts\n"
                    "#   N steps from an idle GPU to the final sync, as a timed block of N steps measures them.\n";
        else
            out_ << "; the steps differ (" << w_.flat_reason << "),\n#   so they are written one after the other (flat) and `steps` is fixed.\n";
        out_ << "#\n"
                "# Measured (kept from the trace): each kernel's duration, grid, block, registers and shared\n"
                "#   memory; each copy's direction, bytes and host memory kind (pinned / pageable), each memset's\n"
                "#   bytes; the stream of each; the host work between CUDA calls, at its measured length, named\n"
                "#   after the innermost cpu_op / user_annotation that covers it (\"python\": none does).\n"
                "# Modelled (hardware profile, not the instrumented trace): the cost of every CUDA call (launch,\n"
                "#   copy, memset, event record and wait, sync, graph launch), pageable staging, copy-engine and\n"
                "#   memset time, launch latency, stream and event gaps, sync wake-ups (docs/model.md).\n";
        out_ << "# Threads: main = trace thread " << w_.threads[0].tids.front().second;
        for (size_t k = 1; k < w_.threads[0].tids.size(); ++k)
            out_ << " + " << w_.threads[0].tids[k].second << " (folded: it calls CUDA only while main waits, e.g. autograd's backward)";
        out_ << "\n";
        for (size_t th = 1; th < w_.threads.size(); ++th)
            out_ << "#   " << w_.threads[th].name << " = trace thread " << w_.threads[th].tids.front().second << "\n";
        out_ << "# Streams: default = the legacy default stream (trace stream " << w_.stream_ids[0] << ")";
        for (int32_t s : used_streams_)
            out_ << "; " << w_.streams[static_cast<size_t>(s)] << " = trace stream " << w_.stream_ids[static_cast<size_t>(s)];
        out_ << (used_streams_.empty() ? "" : " (non-blocking, as PyTorch creates them)") << "\n";
        if (!w_.events.empty())
            out_ << "# Events: the trace does not name them; each record gets an event, a wait or event sync the record\n"
                    "#   whose completion matches when it returned (or the latest one before it).\n";
        if (w_.between_steps > 0)
            out_ << "# Left out: " << format_ns(w_.between_steps)
                 << " of host time between the ProfilerStep spans (inside prof.step(): the profiler's own work).\n";
        if (w_.span_overhead > 0 || w_.call_overhead > 0)
            out_ << "# Profiler overhead taken out of the main thread's host work: " << format_ns(w_.span_overhead) << " at each of "
                 << w_.span_boundaries << " span starts and ends, " << format_ns(w_.call_overhead) << " at each of " << w_.call_boundaries
                 << " CUDA call starts and ends\n#   (docs/import.md, \"Profiler overhead\"): " << format_ns(w_.overhead_removed)
                 << " of the window's " << format_ns(w_.window) << " removed"
                 << (w_.overhead_clamped > 0 ? ", " + format_ns(w_.overhead_clamped) + " more than some host work had (it stops at 0)" : std::string())
                 << ".\n";
        if (w_.kernel_excess > 0 && w_.kernels_shortened)
            out_ << "# Kernel records: each kernel keeps its traced duration less " << format_ns(w_.kernel_excess)
                 << ", CUPTI's record's excess over the kernel's blocks\n#   (docs/import.md, \"Kernel records\"; the profile's "
                    "gaps between kernels are measured between the blocks): " << w_.kernels_shortened << " kernels.\n";
        if (w_.calls_kept_as_host)
            out_ << "# " << w_.calls_kept_as_host
                 << " CUDA calls reach no GPU work (cudaGetDevice, cudaEventQuery, ...): their time stays in the host work.\n";
        if (w_.launches_without_kernel)
            out_ << "# Warning: " << w_.launches_without_kernel << " launches have no kernel record in the trace (dropped by CUPTI?).\n";
        for (const std::string& n : w_.notes) out_ << "# Note: " << n << "\n";
        out_ << "#\n# What-if knobs (hetsim run FILE --set NAME=VALUE; hetsim sweep FILE --vary NAME=V1,V2):\n";
        if (w_.repeat) out_ << "#   steps       how many times the step body runs\n";
        out_ << "#   gpu         the hardware profile (h200, h100-sxm, h100-pcie, a100-pcie, gh200); kernel durations stay as measured\n"
                "#   hardware.*  any profile parameter: --set hardware.copy.h2d.bandwidth=25GB/s (hetsim params lists them)\n";
        if (pin_)
            out_ << "#   pin_memory  true: pageable uploads become pinned .to(device, non_blocking=True) copies: no staging, and\n"
                    "#               the stream sync PyTorch adds after a blocking upload is dropped"
                 << (pin_cost_ ? ";\n#               the DataLoader (single-process) pins each batch: a host copy at " + o_.pin_bandwidth_from : std::string())
                 << "\n";
        else
            out_ << "#   (pin_memory: no pageable uploads in the trace)\n";
        if (sync_)
            out_ << "#   step_sync   false: drop each step's sync (loss.item(): its copy, sync and host work; a bare stream or\n"
                    "#               device sync) except in the last step\n";
        else
            out_ << "#   (step_sync: no per-step sync in the trace)\n";
        if (graph_)
            out_ << "#   cuda_graph  true: the main thread's kernels of each step (ops " << w_.capture_begin << ".." << w_.capture_end - 1
                 << " of the body) become one launch\n#               of graph step_graph; the host work between them, and their own ops' before the first and after\n#               the last, goes (instantiated before the window)\n";
        else
            out_ << "#   (cuda_graph: " << w_.capture_reason << ")\n";
        if (loader_)
            out_ << "#   loader_workers  N > 0: the DataLoader's work (each step's __next__ host work) moves to the thread\n"
                    "#               array loader[0..N-1] (worker w makes batches w, w + N, ...) feeding the main thread\n"
                    "#               through the queue batches of prefetch_factor * N; each worker's first prefetch_factor\n"
                    "#               batches are ready when the window opens (persistent workers); after each get the main\n"
                    "#               thread receives the batch: loader_handoff_per_kib a KiB from a worker process, or\n"
                    "#               loader_pinned_get from the pin-memory thread (pin_memory)\n";
        else if (w_.repeat)
            out_ << "#   (loader_workers: no single-process DataLoader work in the trace)\n";
        else
            out_ << "#   (loader_workers: the steps are not one repeated body)\n";
    }

    void params() {
        out_ << "params:\n";
        if (w_.repeat) out_ << "  steps: " << w_.steps << "\n";
        out_ << "  gpu: " << w_.profile << "\n";
        if (pin_) out_ << "  pin_memory: false\n";
        if (pin_cost_) out_ << "  pin_copy_per_kib: " << std::max<int64_t>(1, static_cast<int64_t>(1024e12 / static_cast<double>(o_.pin_bandwidth) + 0.5)) << "ps\n";
        if (sync_) out_ << "  step_sync: true\n";
        if (graph_) out_ << "  cuda_graph: false\n";
        if (loader_) {
            out_ << "  loader_workers: 0\n  prefetch_factor: 2\n";
            if (!uploads_pinned_) out_ << "  loader_handoff_per_kib: " << kHandoffPerKibPs << "ps\n";
            if (pin_ || uploads_pinned_) out_ << "  loader_pinned_get: " << format_ns(kPinnedGetNs) << "\n";
        }
    }

    void decls() {
        if (!used_streams_.empty()) {
            out_ << "streams:\n";
            for (int32_t s : used_streams_) out_ << "  " << w_.streams[static_cast<size_t>(s)] << ": {kind: non_blocking}\n";
        }
        if (!w_.events.empty()) {
            out_ << "events: [";
            for (size_t k = 0; k < w_.events.size(); ++k) out_ << (k ? ", " : "") << w_.events[k];
            out_ << "]\n";
        }
        if (loader_) out_ << "queues:\n  batches: {capacity: \"${prefetch_factor} * ${loader_workers} + (${loader_workers} == 0)\"}\n";
        if (w_.graphs.empty() && !graph_) return;
        out_ << "graphs:\n";
        for (const WGraph& g : w_.graphs) {
            out_ << "  " << g.name << ":\n";
            for (const WOp& n : g.nodes) out_ << "    - " << line(n, true) << "\n";
        }
        if (graph_) {
            out_ << "  step_graph:            # cuda_graph: the step's kernels, captured from stream "
                 << w_.streams[static_cast<size_t>(w_.capture_stream)] << "\n";
            const auto& body = w_.threads[0].steps[0];
            for (size_t p = w_.capture_begin; p < w_.capture_end; ++p)
                if (body[p].kind != WKind::Host) out_ << "    - " << line(body[p], true) << "\n";
        }
    }

    std::string stream(int32_t s) const { return w_.streams[static_cast<size_t>(std::max(s, 0))]; }
    std::string event(int32_t record) const {
        return w_.events[static_cast<size_t>(w_.record_event[static_cast<size_t>(record)])];
    }

    // One op as a flow mapping.
    std::string line(const WOp& op, bool in_graph) const {
        std::ostringstream s;
        auto on_stream = [&] {
            if (!in_graph) s << ", stream: " << stream(op.stream);
        };
        switch (op.kind) {
            case WKind::Host: s << "{host: " << quoted(op.label) << ", duration: " << format_ns(op.duration) << "}"; break;
            case WKind::Kernel:
                s << "{kernel: " << quoted(op.label);
                on_stream();
                s << ", duration: " << format_ns(op.duration) << ", grid: " << std::min<uint64_t>(op.grid, INT32_MAX)
                  << ", block: " << std::min<uint64_t>(op.block, 1024);
                if (op.registers > 0) s << ", registers: " << std::min<uint64_t>(op.registers, 255);
                if (op.shared_memory > 0) s << ", shared_memory: " << format_size(op.shared_memory);
                s << "}";
                break;
            case WKind::Memcpy:
                s << "{" << (op.sync && !in_graph ? "memcpy" : "memcpy_async") << ": " << quoted(op.label) << ", direction: " << dir_name(op.dir);
                if (op.dir != CopyDir::D2D) s << ", memory: " << mem_name(op.mem);
                s << ", bytes: " << format_size(op.bytes);
                if (!op.sync) on_stream();
                s << "}";
                break;
            case WKind::Memset:
                s << "{" << (op.sync && !in_graph ? "memset" : "memset_async") << ": " << quoted(op.label) << ", bytes: " << format_size(op.bytes);
                if (!op.sync) on_stream();
                s << "}";
                break;
            case WKind::EventRecord: s << "{event_record: " << event(op.record) << ", stream: " << stream(op.stream) << "}"; break;
            case WKind::StreamWait: s << "{stream_wait_event: " << event(op.record) << ", stream: " << stream(op.stream) << "}"; break;
            case WKind::StreamSync: s << "{stream_sync: " << stream(op.stream) << "}"; break;
            case WKind::EventSync: s << "{event_sync: " << event(op.record) << "}"; break;
            case WKind::DeviceSync: s << "{device_sync: null}"; break;
            case WKind::GraphLaunch:
                s << "{graph_launch: " << w_.graphs[static_cast<size_t>(op.graph)].name << ", stream: " << stream(op.stream) << "}";
                break;
        }
        return s.str();
    }

    void put(int indent, const std::string& text) { out_ << std::string(static_cast<size_t>(indent), ' ') << "- " << text << "\n"; }
    void plain(const std::vector<WOp>& ops, size_t a, size_t b, int indent) {
        for (size_t p = a; p < b; ++p) put(indent, line(ops[p], false));
    }

    // Ops [a, b) of one step with the knobs' if-blocks. `readback_if`: the condition that keeps a
    // per-step sync ("" keeps it unconditionally).
    void ops_with_knobs(size_t th, const std::vector<WOp>& ops, size_t a, size_t b, int indent, const std::string& readback_if,
                        bool body_of_main) {
        const bool pin_cost = pin_cost_ && w_.threads[th].loader_in_thread;
        for (size_t p = a; p < b;) {
            const WOp& op = ops[p];
            if (graph_ && body_of_main && p == w_.capture_begin) {
                put(indent, "if: cuda_graph");
                out_ << std::string(static_cast<size_t>(indent) + 2, ' ') << "then:\n";
                put(indent + 4, "{graph_launch: step_graph, stream: " + stream(w_.capture_stream) + "}");
                out_ << std::string(static_cast<size_t>(indent) + 2, ' ') << "else:\n";
                plain(ops, p, w_.capture_end, indent + 4);
                p = w_.capture_end;
                continue;
            }
            if (sync_ && op.readback && !readback_if.empty()) {
                size_t q = p;
                while (q < b && ops[q].readback && !(graph_ && body_of_main && q == w_.capture_begin)) ++q;
                put(indent, "if: " + readback_if);
                out_ << std::string(static_cast<size_t>(indent) + 2, ' ') << "then:\n";
                plain(ops, p, q, indent + 4);
                p = q;
                continue;
            }
            if (pin_ && op.pageable_upload) {
                size_t q = p + 1;
                if (q < b && ops[q].kind == WKind::Host && q + 1 < b && ops[q + 1].copy_sync) q += 2;
                else if (q < b && ops[q].copy_sync) q += 1;
                put(indent, "if: pin_memory");
                out_ << std::string(static_cast<size_t>(indent) + 2, ' ') << "then:\n";
                if (pin_cost) {
                    const uint64_t kib = (op.bytes + 1023) / 1024;
                    const std::string pin = "{host: pin_memory, duration: \"${pin_copy_per_kib} * " + std::to_string(kib) + "\"}";
                    if (loader_) {  // with worker processes the loader's pin-memory thread pins
                        put(indent + 4, "if: loader_workers == 0");
                        out_ << std::string(static_cast<size_t>(indent) + 6, ' ') << "then:\n";
                        put(indent + 8, pin);
                    } else {
                        put(indent + 4, pin);
                    }
                }
                WOp pinned = op;
                pinned.mem = MemKind::Pinned;
                pinned.sync = false;
                put(indent + 4, line(pinned, false));
                if (q == p + 3) put(indent + 4, line(ops[p + 1], false));
                out_ << std::string(static_cast<size_t>(indent) + 2, ' ') << "else:\n";
                plain(ops, p, q, indent + 4);
                p = q;
                continue;
            }
            if (loader_ && op.loader && body_of_main) {
                size_t q = p;
                while (q < b && ops[q].loader && ops[q].kind == WKind::Host) ++q;
                put(indent, "if: loader_workers == 0");
                out_ << std::string(static_cast<size_t>(indent) + 2, ' ') << "then:\n";
                plain(ops, p, q, indent + 4);
                out_ << std::string(static_cast<size_t>(indent) + 2, ' ') << "else:\n";
                put(indent + 4, "{get: batches}");
                // The main thread's side of the hand-off from the worker process (docs/import.md).
                const std::string handoff = "{host: \"DataLoader: batch from a worker process\", duration: \"${loader_handoff_per_kib} * " +
                                            std::to_string((batch_bytes_ + 1023) / 1024) + "\"}";
                const std::string pinned_get = "{host: \"DataLoader: batch from the pin-memory thread\", duration: \"${loader_pinned_get}\"}";
                if (uploads_pinned_) {
                    put(indent + 4, pinned_get);
                } else if (pin_) {
                    put(indent + 4, "if: pin_memory");
                    out_ << std::string(static_cast<size_t>(indent) + 6, ' ') << "then:\n";
                    put(indent + 8, pinned_get);
                    out_ << std::string(static_cast<size_t>(indent) + 6, ' ') << "else:\n";
                    put(indent + 8, handoff);
                } else {
                    put(indent + 4, handoff);
                }
                p = q;
                continue;
            }
            put(indent, line(op, false));
            ++p;
        }
    }

    void thread(size_t th) {
        const WThread& t = w_.threads[th];
        out_ << "  " << t.name << ":\n";
        if (th == 0) {
            // CUDA refuses a launch of a graph that was never instantiated: the trace's graphs were
            // instantiated before the profiled window, here at the main thread's start (their
            // host cost, graph.instantiate_per_node a node, is part of the prediction).
            for (const WGraph& g : w_.graphs) out_ << "    - graph_instantiate: " << g.name << "\n";
            if (graph_) out_ << "    - if: cuda_graph\n      then: [{graph_instantiate: step_graph}]\n";
        }
        if (w_.repeat) {
            const size_t body = w_.body_len[th];
            out_ << "    - repeat: steps\n      var: step\n      do:" << (body == 0 ? " []" : "") << "\n";
            ops_with_knobs(th, t.steps[0], 0, body, 8, "step_sync || step == steps - 1", th == 0);
            const auto& last = t.steps.back();
            if (last.size() > body) {
                out_ << "    # the last step's tail\n";
                plain(last, body, last.size(), 4);
            }
            return;
        }
        for (size_t s = 0; s < t.steps.size(); ++s) {
            out_ << "    # step " << s;
            if (w_.annotated_steps) out_ << " (ProfilerStep#" << w_.step_number[s] << ")";
            out_ << "\n";
            ops_with_knobs(th, t.steps[s], 0, t.steps[s].size(), 4, s + 1 < w_.steps ? "step_sync" : "", false);
        }
        if (t.steps.empty() || std::all_of(t.steps.begin(), t.steps.end(), [](const auto& v) { return v.empty(); }))
            out_ << "    []\n";
    }

    // loader_workers: a thread array of loader_workers workers (at
    // least one thread, idle without workers) takes the DataLoader's work off the main thread;
    // worker w produces batches w, w + N, w + 2N, ... of the window into the bounded queue
    // `batches`, each one the step's DataLoader host work, and its first prefetch_factor
    // batches are ready when the window opens (persistent workers keep the queue full
    // between timed blocks).
    void loader_threads() {
        int64_t batch = 0;
        for (size_t p = 0; p < w_.body_len[0]; ++p)
            if (w_.threads[0].steps[0][p].loader) batch += w_.threads[0].steps[0][p].duration;
        out_ << "  loader:                # loader_workers: the DataLoader's worker processes\n"
                "    count: \"${loader_workers} + (${loader_workers} == 0)\"\n"
                "    var: w\n"
                "    ops:\n"
                "      - if: loader_workers > 0\n"
                "        then:\n"
                "          - repeat: (steps - ${w} + loader_workers - 1) / loader_workers\n"
                "            var: batch\n"
                "            do:\n"
                "              - if: batch >= prefetch_factor\n"
                "                then:\n"
                "                  - {host: \"DataLoader worker: fetch and collate a batch\", duration: "
             << format_ns(batch) << "}\n"
                "              - {put: batches}\n";
    }

    const Workload& w_;
    const EmitOptions& o_;
    std::ostringstream out_;
    bool pin_ = false, pin_cost_ = false, sync_ = false, graph_ = false, loader_ = false;
    uint64_t batch_bytes_ = 0;     // the main thread's host-to-device bytes in one step
    bool uploads_pinned_ = false;  // they come from pinned memory: the DataLoader pins (pin_memory=True)
    std::set<int32_t> used_streams_;
};

}  // namespace

std::string write_scenario(const Workload& w, const EmitOptions& o) { return Writer(w, o).run(); }

void check_kernels_fit(const Workload& w, const HwProfile& hw, const std::string& trace) {
    auto check = [&](const WOp& op) {
        if (op.kind != WKind::Kernel) return;
        // The shape as write_scenario writes it.
        KernelShape k;
        k.grid = static_cast<uint32_t>(std::clamp<uint64_t>(op.grid, 1, INT32_MAX));
        k.block = static_cast<uint32_t>(std::clamp<uint64_t>(op.block, 1, 1024));
        k.regs_per_thread = op.registers > 0 ? static_cast<uint32_t>(std::min<uint64_t>(op.registers, 255)) : 32;
        k.smem_per_block = static_cast<uint32_t>(std::min<uint64_t>(op.shared_memory, UINT32_MAX));
        std::string why;
        if (op.shared_memory <= UINT32_MAX && blocks_per_sm(hw, k, &why) != 0) return;
        if (why.empty()) why = "a block needs " + std::to_string(op.shared_memory) + " bytes of shared memory";
        throw InputError({trace}, "kernel '" + op.name + "' (at " + format_ns(op.gpu.start) + " in the trace's window) cannot run on an SM of " +
                                      w.profile + ": " + why + "; a trace of another GPU needs that GPU's profile (--hardware)");
    };
    for (const WThread& t : w.threads)
        for (const auto& step : t.steps)
            for (const WOp& op : step) check(op);
    for (const WGraph& g : w.graphs)
        for (const WOp& op : g.nodes) check(op);
}

}  // namespace hetsim::import
