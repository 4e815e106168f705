// Planning of a lowered program (read and checked by core/program_json.cpp). No CUDA calls in
// this file.
#include "plan.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <sstream>

namespace runner {

GpuTiming gpu_timing(OpKind k) {
    switch (hetsim::op_info(k).gpu) {
        case hetsim::GpuWork::None: return GpuTiming::None;
        case hetsim::GpuWork::Copy:
        case hetsim::GpuWork::Kernel: return GpuTiming::Span;
        case hetsim::GpuWork::Callback: return GpuTiming::Callback;
        case hetsim::GpuWork::Marker: return k == OpKind::GraphLaunch || Program::is_allocation(k) ? GpuTiming::None : GpuTiming::Marker;
    }
    return GpuTiming::None;
}

std::string human_bytes(uint64_t b) {
    char buf[64];
    if (b >= kGiB) std::snprintf(buf, sizeof buf, "%" PRIu64 " B (%.2f GiB)", b, double(b) / double(kGiB));
    else if (b >= kMiB) std::snprintf(buf, sizeof buf, "%" PRIu64 " B (%.2f MiB)", b, double(b) / double(kMiB));
    else std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
    return buf;
}

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& msg) { throw InputError(hetsim::SourceLoc{file}, msg); }

// "ops[3] of kernel 'k[1]'", as the program reader names an op.
std::string op_where(const Program& p, uint32_t i) {
    return "ops[" + std::to_string(i) + "] of " + to_string(p.ops[i].kind) + " '" + p.op_name(i) + "'";
}

}  // namespace

int estimate_blocks_per_sm(uint32_t block, uint32_t regs, uint32_t smem) {
    // H200 (sm_90): 2048 threads, 32 blocks, 64 K registers (256 per warp granule), 228 KiB
    // shared memory with 1 KiB reserved per block, 227 KiB per block at most.
    if (block == 0 || block > 1024 || smem > 227u * 1024u) return 0;
    uint32_t warps = (block + 31) / 32;
    uint32_t by_threads = 2048 / (warps * 32);
    uint32_t regs_per_warp = ((regs * 32 + 255) / 256) * 256;
    uint32_t by_regs = regs_per_warp ? (65536 / regs_per_warp) / warps : 32;
    uint32_t smem_alloc = ((smem + 127) / 128) * 128 + 1024;
    uint32_t by_smem = (228u * 1024u) / smem_alloc;
    return int(std::min({by_threads, 32u, by_regs, by_smem}));
}

Plan make_plan(const Program& p, const std::string& file, const std::string& scenario) {
    Plan plan;
    plan.file = file;
    plan.scenario = scenario;
    const uint32_t n = uint32_t(p.ops.size());
    int nthreads = int(p.threads.size());
    bool issuer = p.tasks_form && !p.gpu_tasks.empty();
    plan.issuers = nthreads + (issuer ? 1 : 0);
    plan.issuer_thread = issuer ? nthreads : -1;
    plan.issuer_of.assign(n, -1);
    plan.pos_in_thread.assign(n, 0);
    plan.issuer_ops.resize(plan.issuers);
    plan.scratch.resize(plan.issuers);
    plan.read_offset.assign(n, 0);
    plan.needs_done_event.assign(n, 0);
    plan.host_flag_slot.assign(n, -1);
    for (int t = 0; t < nthreads; ++t) plan.issuer_ops[t] = p.threads[t].ops;

    // Graph nodes: the reader checked that each graph_launch is followed by its nodes.
    plan.node_of.assign(n, -1);
    plan.launch_of.assign(n, -1);
    for (const HostThread& t : p.threads)
        for (size_t k = 0; k < t.ops.size(); ++k) {
            const Op& op = p.ops[t.ops[k]];
            if (op.kind != OpKind::GraphLaunch) continue;
            const size_t nodes = p.graphs[op.graph].nodes.size();
            for (size_t m = 0; m < nodes; ++m) {
                plan.node_of[t.ops[k + 1 + m]] = int(m);
                plan.launch_of[t.ops[k + 1 + m]] = int(t.ops[k]);
            }
            k += nodes;
        }
    // Threads created by an op (start_after): std::thread when that op's host call returns.
    plan.started_by.assign(n, {});
    plan.late.assign(plan.issuers, 0);
    for (int t = 0; t < nthreads; ++t)
        if (p.threads[t].start_after >= 0) {
            plan.started_by[p.threads[t].start_after].push_back(t);
            plan.late[t] = 1;
        }
    plan.persistent = plan.issuers;
    for (char c : plan.late) plan.persistent -= c;
    for (const Op& op : p.ops)
        if (op.kind == OpKind::Join && !plan.late[op.target]) plan.joins_workers = true;
    // Steady state: every host thread meets at every barrier, so each has exactly `warmup` of them.
    for (int t = 0; t < nthreads; ++t) {
        uint32_t barriers = 0;
        for (uint32_t i : p.threads[t].ops) barriers += p.ops[i].kind == OpKind::Barrier;
        if (barriers != p.warmup)
            fail(file, "threads[" + std::to_string(t) + "] '" + p.threads[t].name + "' has " + std::to_string(barriers) +
                           " barrier op" + (barriers == 1 ? "" : "s") + ", but the program has warmup " + std::to_string(p.warmup) +
                           ": every host thread meets at each of the warmup barriers between iterations");
    }
    for (size_t g = 0; g < p.graphs.size(); ++g)
        for (size_t k = 0; k < p.graphs[g].nodes.size(); ++k) {
            const Op& nd = p.graphs[g].nodes[k];
            if (p.uses_count(nd))
                fail(file, "graphs[" + std::to_string(g) + "].nodes[" + std::to_string(k) + "].uses of " + to_string(nd.kind) + " '" + p.label(nd) +
                               "': \"uses\" on graph nodes is not supported by the runner");
        }

    if (p.tasks_form) {
        // One check over everything that orders tasks: `after`, host-thread order, stream order.
        std::vector<std::vector<uint32_t>> succ(n);
        std::vector<uint32_t> indeg(n, 0);
        auto edge = [&](uint32_t a, uint32_t b) { succ[a].push_back(b); ++indeg[b]; };
        for (uint32_t i = 0; i < n; ++i)
            for (const uint32_t* a = p.after_begin(i); a != p.after_end(i); ++a) edge(*a, i);
        for (const HostThread& t : p.threads)
            for (size_t k = 1; k < t.ops.size(); ++k) edge(t.ops[k - 1], t.ops[k]);
        std::map<int, uint32_t> last_on_stream;
        for (uint32_t g : p.gpu_tasks) {
            auto it = last_on_stream.find(p.ops[g].stream);
            if (it != last_on_stream.end()) edge(it->second, g);
            last_on_stream[p.ops[g].stream] = g;
        }
        std::vector<uint32_t> deg = indeg, order;
        for (uint32_t i = 0; i < n; ++i)
            if (!deg[i]) order.push_back(i);
        for (size_t k = 0; k < order.size(); ++k)
            for (uint32_t s : succ[order[k]])
                if (!--deg[s]) order.push_back(s);
        if (order.size() != n) {
            // Peel off ops that only wait for the cycle, to name the ops on it.
            std::vector<char> stuck(n, 0);
            for (uint32_t i = 0; i < n; ++i) stuck[i] = deg[i] != 0;
            for (bool changed = true; changed;) {
                changed = false;
                for (uint32_t i = 0; i < n; ++i) {
                    if (!stuck[i]) continue;
                    bool feeds = false;
                    for (uint32_t s : succ[i]) feeds |= stuck[s] != 0;
                    if (!feeds) { stuck[i] = 0; changed = true; }
                }
            }
            std::string names;
            int shown = 0;
            for (uint32_t i = 0; i < n && shown < 8; ++i)
                if (stuck[i]) names += (shown++ ? ", " : "") + ("'" + p.op_name(i) + "'");
            fail(file, "the tasks cannot run: their 'after' lists together with host-thread order and stream order form a cycle through " + names);
        }
        // Issue order of GPU tasks: file order, except that a task goes after the GPU tasks it
        // depends on (so that the event it waits for is recorded first).
        std::vector<uint32_t> pos(n, UINT32_MAX);
        for (size_t k = 0; k < p.gpu_tasks.size(); ++k) pos[p.gpu_tasks[k]] = uint32_t(k);
        std::vector<uint32_t> gdeg(n, 0);
        std::vector<std::vector<uint32_t>> gsucc(n);
        last_on_stream.clear();
        for (uint32_t g : p.gpu_tasks) {
            for (const uint32_t* a = p.after_begin(g); a != p.after_end(g); ++a)
                if (pos[*a] != UINT32_MAX) { gsucc[*a].push_back(g); ++gdeg[g]; }
            auto it = last_on_stream.find(p.ops[g].stream);
            if (it != last_on_stream.end()) { gsucc[it->second].push_back(g); ++gdeg[g]; }
            last_on_stream[p.ops[g].stream] = g;
        }
        std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> ready;
        for (uint32_t g : p.gpu_tasks)
            if (!gdeg[g]) ready.push(pos[g]);
        while (!ready.empty()) {
            uint32_t g = p.gpu_tasks[ready.top()];
            ready.pop();
            plan.issuer_ops[plan.issuer_thread].push_back(g);
            for (uint32_t s : gsucc[g])
                if (!--gdeg[s]) ready.push(pos[s]);
        }
        // How each dependency is realised.
        int per_thread_stream = -1;
        for (uint32_t g : p.gpu_tasks) {
            int s = p.ops[g].stream;
            if (p.streams[s].kind == StreamKind::PerThread) {
                if (per_thread_stream >= 0 && per_thread_stream != s)
                    fail(file, "GPU tasks use two different per-thread streams; the runner issues all GPU tasks from one thread and cannot emulate that");
                per_thread_stream = s;
            }
        }
        for (uint32_t i = 0; i < n; ++i)
            for (const uint32_t* a = p.after_begin(i); a != p.after_end(i); ++a) {
                const Op &op = p.ops[i], &dep = p.ops[*a];
                bool dep_gpu = dep.thread < 0, me_gpu = op.thread < 0;
                if (dep_gpu && (!me_gpu || dep.stream != op.stream)) plan.needs_done_event[*a] = 1;
                if (!dep_gpu && me_gpu && plan.host_flag_slot[*a] < 0) plan.host_flag_slot[*a] = plan.host_flags++;
            }
    }

    for (int t = 0; t < plan.issuers; ++t)
        for (size_t k = 0; k < plan.issuer_ops[t].size(); ++k) {
            plan.issuer_of[plan.issuer_ops[t][k]] = t;
            plan.pos_in_thread[plan.issuer_ops[t][k]] = uint32_t(k);
        }

    // Scratch buffers and the shared read buffer of roofline kernels.
    uint64_t max_read = 0;
    plan.launches_of_graph.assign(p.graphs.size(), 0);
    for (const Op& op : p.ops)
        if (op.kind == OpKind::GraphLaunch) ++plan.launches_of_graph[op.graph];
    // Program ops (issued by their thread), then graph nodes (captured once, with the graph scratch).
    auto scratch_of = [&](const Op& op, Scratch& s, const std::function<std::string()>& where) {
        if (op.kind == OpKind::Memcpy) {
            // A pitched copy spans pitch x (rows - 1) + width bytes of each side.
            const hetsim::Site& st = p.site(op);
            const uint64_t src = st.rows ? st.spitch * (st.rows - 1) + op.bytes / st.rows : op.bytes;
            const uint64_t dst = st.rows ? st.dpitch * (st.rows - 1) + op.bytes / st.rows : op.bytes;
            const uint64_t host = op.dir == CopyDir::H2D ? src : dst;
            if (op.dir == CopyDir::D2D) {
                s.dev_src = std::max(s.dev_src, src);
                s.dev_dst = std::max(s.dev_dst, dst);
            } else {
                uint64_t& dev = op.dir == CopyDir::H2D ? s.dev_dst : s.dev_src;
                dev = std::max(dev, op.dir == CopyDir::H2D ? dst : src);
                // A copy that names its host buffer uses it (the buffer is allocated on its own).
                if (op.buffer < 0) {
                    if (op.host_mem == MemKind::Pinned) s.pinned = std::max(s.pinned, host);
                    else if (op.host_mem == MemKind::Pageable) s.pageable = std::max(s.pageable, host);
                    else if (op.host_mem == MemKind::Managed) s.managed = std::max(s.managed, host);
                }
            }
        } else if (op.kind == OpKind::Memset) {
            s.dev_dst = std::max(s.dev_dst, op.bytes);
        } else if (op.kind == OpKind::Kernel) {
            const hetsim::KernelShape& k = p.site(op).shape;
            if (is_roofline(p, op)) max_read = std::max(max_read, op.bytes);
            plan.max_smem = std::max(plan.max_smem, k.smem_per_block);
            if (k.smem_per_block > 227u * 1024u)
                fail(file, where() + ": asks for " + std::to_string(k.smem_per_block) +
                               " bytes of shared memory per block; an H200 block gets at most 232448 (227 KiB)");
            if (estimate_blocks_per_sm(k.block, k.regs_per_thread, k.smem_per_block) == 0)
                fail(file, where() + ": a block of " + std::to_string(k.block) + " threads x " + std::to_string(k.regs_per_thread) +
                               " registers with " + std::to_string(k.smem_per_block) + " B of shared memory fits no SM");
        }
    };
    for (uint32_t i = 0; i < n; ++i) {
        const Op& op = p.ops[i];
        if (op.graph_node) continue;
        if (gpu_timing(op.kind) != GpuTiming::None) {
            ++plan.gpu_ops;
            ++plan.timed_gpu_ops;
        }
        scratch_of(op, plan.scratch[plan.issuer_of[i]], [&] { return op_where(p, i); });
    }
    for (size_t g = 0; g < p.graphs.size(); ++g)
        for (size_t k = 0; k < p.graphs[g].nodes.size(); ++k) {
            const Op& nd = p.graphs[g].nodes[k];
            scratch_of(nd, plan.graph_scratch, [&] {
                return "graphs[" + std::to_string(g) + "].nodes[" + std::to_string(k) + "] of " + to_string(nd.kind) + " '" + p.label(nd) + "'";
            });
        }
    for (const Op& op : p.ops)
        if (op.graph_node) {
            ++plan.gpu_ops;
            ++plan.timed_gpu_ops;
        }
    // Allocation ops: the live scratch of each issuing thread at its peak (free / free_host /
    // free_async release the most recent allocation of their buffer), summed over the threads.
    for (int t = 0; t < plan.issuers; ++t) {
        std::map<int, std::vector<uint64_t>> dev, host;
        uint64_t live_dev = 0, live_host = 0, peak_dev = 0, peak_host = 0;
        for (uint32_t i : plan.issuer_ops[t]) {
            const Op& op = p.ops[i];
            switch (op.kind) {
                case OpKind::Malloc:
                case OpKind::MallocAsync: dev[op.buffer].push_back(op.bytes); live_dev += op.bytes; break;
                case OpKind::MallocHost: host[op.buffer].push_back(op.bytes); live_host += op.bytes; break;
                case OpKind::Free:
                case OpKind::FreeAsync:
                    if (!dev[op.buffer].empty()) {
                        live_dev -= dev[op.buffer].back();
                        dev[op.buffer].pop_back();
                    }
                    break;
                case OpKind::FreeHost:
                    if (!host[op.buffer].empty()) {
                        live_host -= host[op.buffer].back();
                        host[op.buffer].pop_back();
                    }
                    break;
                case OpKind::HostRegister: plan.register_bytes += op.bytes; break;
                default: break;
            }
            peak_dev = std::max(peak_dev, live_dev);
            peak_host = std::max(peak_host, live_host);
        }
        plan.alloc_device_peak += peak_dev;
        plan.alloc_pinned_peak += peak_host;
    }
    // Every free needs an allocation of its kind for its buffer, somewhere in the program.
    {
        std::map<std::pair<int, int>, int64_t> count;  // (buffer, 0 device / 1 async / 2 host)
        for (const Op& op : p.ops) {
            if (op.kind == OpKind::Malloc) ++count[{op.buffer, 0}];
            if (op.kind == OpKind::MallocAsync) ++count[{op.buffer, 1}];
            if (op.kind == OpKind::MallocHost) ++count[{op.buffer, 2}];
        }
        for (uint32_t i = 0; i < n; ++i) {
            const Op& op = p.ops[i];
            int k = op.kind == OpKind::Free ? 0 : op.kind == OpKind::FreeAsync ? 1 : op.kind == OpKind::FreeHost ? 2 : -1;
            if (k < 0) continue;
            if (--count[{op.buffer, k}] < 0)
                fail(file, op_where(p, i) + ": frees buffer '" + p.buffers[op.buffer].name + "' more often than the program allocates it with " +
                               (k == 0 ? "malloc" : k == 1 ? "malloc_async" : "malloc_host"));
        }
    }
    if (max_read) {
        // Successive roofline kernels read different parts of one buffer, so that none finds its
        // data in the L2 (60 MiB) left by the previous one, and kernels running side by side do
        // not share reads: up to four kernels in a row are disjoint when the buffer allows (it
        // holds all of them when they total less, and is capped at 32 GiB unless one kernel
        // needs more).
        auto round = [](uint64_t b) { return (b + 255) / 256 * 256; };
        uint64_t sum = 0;
        for (const Op& op : p.ops)
            if (is_roofline(p, op) && op.bytes && !op.graph_node) sum += round(op.bytes);
        uint64_t want = std::min(4 * round(max_read) + 128 * kMiB, std::max(32 * kGiB, round(max_read) + 128 * kMiB));
        plan.read_bytes = std::max(std::min(sum, want), round(max_read));
        uint64_t cursor = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const Op& op = p.ops[i];
            if (is_roofline(p, op) && op.bytes && !op.graph_node) {
                if (cursor + round(op.bytes) > plan.read_bytes) cursor = 0;
                plan.read_offset[i] = cursor;
                cursor += round(op.bytes);
            }
        }
    }
    for (const Buffer& b : p.buffers) {
        if (b.kind == MemKind::Device) plan.device_total += b.bytes;
        else if (b.kind == MemKind::Managed) plan.managed_total += b.bytes;
        else if (b.kind == MemKind::Pinned) plan.pinned_total += b.bytes;
        else plan.pageable_total += b.bytes;
    }
    for (const Scratch& s : plan.scratch) {
        plan.device_total += s.dev_src + s.dev_dst;
        plan.pinned_total += s.pinned;
        plan.pageable_total += s.pageable;
        plan.managed_total += s.managed;
    }
    {
        const Scratch& s = plan.graph_scratch;
        plan.device_total += s.dev_src + s.dev_dst;
        plan.pinned_total += s.pinned;
        plan.pageable_total += s.pageable;
        plan.managed_total += s.managed;
    }
    plan.device_total += plan.read_bytes + plan.alloc_device_peak;
    plan.pinned_total += plan.alloc_pinned_peak;
    plan.pageable_total += plan.register_bytes;
    return plan;
}

namespace {

std::string stream_desc(const Program& p, int s) {
    if (s < 0) return "-";
    const Stream& st = p.streams[s];
    std::string d = std::to_string(s) + " '" + st.name + "' " + to_string(st.kind);
    if (st.priority) d += " prio " + std::to_string(st.priority);
    return d;
}

std::string ns_str(double ns) {
    char b[64];
    if (ns >= 1e6) std::snprintf(b, sizeof b, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3) std::snprintf(b, sizeof b, "%.3f us", ns / 1e3);
    else std::snprintf(b, sizeof b, "%.0f ns", ns);
    return b;
}

std::string describe(const Program& p, const Plan& plan, uint32_t i, double peak_flops) {
    const Op& op = p.ops[i];
    std::ostringstream d;
    switch (op.kind) {
        case OpKind::HostWork:
            d << "busy loop " << ns_str(double(op.duration.ps()) / 1000.0);
            break;
        case OpKind::Kernel: {
            const hetsim::KernelShape& k = p.site(op).shape;
            const double flops = p.site(op).flops;
            int bps = estimate_blocks_per_sm(k.block, k.regs_per_thread, k.smem_per_block);
            uint64_t per_wave = uint64_t(bps) * 132;
            uint64_t waves = per_wave ? (k.grid + per_wave - 1) / per_wave : 0;
            d << "kernel<<<" << k.grid << ", " << k.block << ", smem " << k.smem_per_block << ">>> regs " << k.regs_per_thread
              << " (est. " << bps << " blocks/SM, " << waves << " wave" << (waves == 1 ? "" : "s") << " on 132 SMs); ";
            if (!is_roofline(p, op)) d << "spin " << ns_str(double(op.duration.ps()) / 1000.0) << " in all";
            else {
                if (op.bytes) d << "stream-read " << op.bytes << " B at offset " << plan.read_offset[i];
                if (flops) d << (op.bytes ? ", " : "") << "spin >= " << ns_str(flops / peak_flops * 1e9) << " for " << flops << " flop";
            }
            break;
        }
        case OpKind::Memcpy: {
            const char* kind = op.dir == CopyDir::D2D ? "device->device" : op.dir == CopyDir::H2D ? "host->device" : "device->host";
            const hetsim::Site& st = p.site(op);
            if (st.rows)
                d << (op.sync ? "cudaMemcpy2D " : "cudaMemcpy2DAsync ") << to_string(op.dir) << " " << st.rows << " rows x "
                  << op.bytes / st.rows << " B (spitch " << st.spitch << ", dpitch " << st.dpitch << "), " << kind << ", host side "
                  << to_string(op.host_mem);
            else
                d << (op.sync ? "cudaMemcpy " : "cudaMemcpyAsync ") << to_string(op.dir) << " " << op.bytes << " B, " << kind
                  << ", host side " << to_string(op.host_mem);
            d << (op.buffer >= 0 ? " buffer '" + p.buffers[op.buffer].name + "'" : std::string(" scratch"));
            break;
        }
        case OpKind::Memset: d << (op.sync ? "cudaMemset " : "cudaMemsetAsync ") << op.bytes << " B (device scratch)"; break;
        case OpKind::EventRecord: d << "cudaEventRecord '" << p.events[op.event].name << "'"; break;
        case OpKind::StreamWaitEvent: d << "cudaStreamWaitEvent '" << p.events[op.event].name << "'"; break;
        case OpKind::EventSync: d << "cudaEventSynchronize '" << p.events[op.event].name << "'"; break;
        case OpKind::StreamSync: d << "cudaStreamSynchronize"; break;
        case OpKind::DeviceSync: d << "cudaDeviceSynchronize"; break;
        case OpKind::Prefetch:
            d << "cudaMemPrefetchAsync '" << p.buffers[op.buffer].name << "' " << op.bytes << " B to " << (op.to_device ? "device 0" : "host");
            break;
        case OpKind::HostFunc: d << "cudaLaunchHostFunc, callback busy for " << ns_str(double(op.duration.ps()) / 1000.0); break;
        case OpKind::GraphInstantiate:
            d << "cudaGraphInstantiate '" << p.graphs[op.graph].name << "' (" << p.graphs[op.graph].nodes.size() << " nodes)";
            break;
        case OpKind::GraphLaunch: d << "cudaGraphLaunch '" << p.graphs[op.graph].name << "'"; break;
        case OpKind::Malloc: d << "cudaMalloc " << human_bytes(op.bytes) << " (scratch of '" << p.buffers[op.buffer].name << "')"; break;
        case OpKind::Free: d << "cudaFree of the latest malloc of '" << p.buffers[op.buffer].name << "'"; break;
        case OpKind::MallocHost: d << "cudaMallocHost " << human_bytes(op.bytes) << " (scratch of '" << p.buffers[op.buffer].name << "')"; break;
        case OpKind::FreeHost: d << "cudaFreeHost of the latest malloc_host of '" << p.buffers[op.buffer].name << "'"; break;
        case OpKind::HostRegister: d << "cudaHostRegister " << human_bytes(op.bytes) << " of pageable scratch (unregistered after the run)"; break;
        case OpKind::MallocAsync: d << "cudaMallocAsync " << human_bytes(op.bytes) << " (scratch of '" << p.buffers[op.buffer].name << "')"; break;
        case OpKind::FreeAsync: d << "cudaFreeAsync of the latest malloc_async of '" << p.buffers[op.buffer].name << "'"; break;
        case OpKind::QueuePut:
            d << "put into host queue '" << p.queues[op.queue].name << "' (capacity " << p.queues[op.queue].capacity
              << "; mutex + condition variable, waits while full)";
            break;
        case OpKind::QueueGet: d << "get from host queue '" << p.queues[op.queue].name << "' (waits while empty)"; break;
        case OpKind::HostWait: d << "wait for flag '" << p.flags[op.flag].name << "' (a counted set by a host_func callback)"; break;
        case OpKind::Join: {
            const HostThread& t = p.threads[op.target];
            d << "join thread " << op.target << " '" << t.name << "'"
              << (t.start_after >= 0 ? " (std::thread::join)" : " (waits until that worker has run its ops)");
            break;
        }
        case OpKind::Barrier: d << "cudaDeviceSynchronize, then every host thread meets (end of a warm-up iteration)"; break;
    }
    if (op.kind == OpKind::HostFunc && op.flag >= 0) d << "; sets flag '" << p.flags[op.flag].name << "'";
    if (op.warmup) d << " [warm-up]";
    for (int t : plan.started_by[i]) d << "; then creates thread " << t << " '" << p.threads[t].name << "' (std::thread)";
    if (op.graph_node) d << " [node " << plan.node_of[i] << " of the launch by op " << plan.launch_of[i] << "; not issued by the host]";
    if (op.stream >= 0) d << " on stream " << stream_desc(p, op.stream);
    if (p.uses_count(op)) {
        d << "; touches";
        for (const uint32_t* u = p.uses_begin(op); u != p.uses_begin(op) + p.uses_count(op); ++u) d << " '" << p.buffers[*u].name << "'";
    }
    if (p.after_count(i)) {
        d << "; after";
        for (const uint32_t* a = p.after_begin(i); a != p.after_end(i); ++a) {
            const Op& dep = p.ops[*a];
            d << " " << *a;
            if (dep.thread < 0 && op.thread < 0) d << (dep.stream == op.stream ? "(stream order)" : "(event wait)");
            else if (dep.thread < 0) d << "(event sync)";
            else if (op.thread < 0) d << "(host flag, stream wait-value)";
            else d << "(host flag)";
        }
    }
    return d.str();
}

}  // namespace

void print_plan(const Program& p, const Plan& plan, FILE* out, bool verbose, double peak_flops) {
    std::fprintf(out, "program %s: scenario '%s' (from %s), form %s, %zu ops, %zu GPU ops\n", plan.file.c_str(), plan.scenario.c_str(),
                 p.source.c_str(), p.tasks_form ? "tasks" : "threads", p.ops.size(), plan.gpu_ops);
    std::fprintf(out, "\nbuffers (allocated before time zero):\n");
    for (size_t i = 0; i < p.buffers.size(); ++i) {
        const Buffer& b = p.buffers[i];
        const char* how = b.kind == MemKind::Pinned ? "cudaMallocHost" : b.kind == MemKind::Pageable ? "malloc + touch every page"
                        : b.kind == MemKind::Device ? "cudaMalloc" : "cudaMallocManaged + host touch + prefetch";
        std::fprintf(out, "  [%zu] %-16s %-8s %s  %s%s\n", i, b.name.c_str(), to_string(b.kind), human_bytes(b.bytes).c_str(), how,
                     b.kind == MemKind::Managed ? (b.managed_on_device ? ", resident on device" : ", resident on host") : "");
    }
    std::fprintf(out, "\nscratch buffers (copies that name no host buffer; the device side of copies and memsets):\n");
    for (int t = 0; t < plan.issuers; ++t) {
        const Scratch& s = plan.scratch[t];
        std::string who = t == plan.issuer_thread ? std::string("GPU-task issuer") : "thread " + std::to_string(t) + " '" + p.threads[t].name + "'";
        std::fprintf(out, "  %s:", who.c_str());
        bool any = false;
        auto item = [&](const char* what, uint64_t b) {
            if (!b) return;
            std::fprintf(out, "%s %s %s", any ? "," : "", what, human_bytes(b).c_str());
            any = true;
        };
        item("pinned", s.pinned);
        item("pageable", s.pageable);
        item("device src", s.dev_src);
        item("device dst", s.dev_dst);
        item("managed (host-resident)", s.managed);
        std::fprintf(out, "%s\n", any ? "" : " none");
    }
    if (plan.read_bytes) std::fprintf(out, "  roofline read buffer (device, shared): %s\n", human_bytes(plan.read_bytes).c_str());
    if (!p.graphs.empty()) {
        const Scratch& s = plan.graph_scratch;
        std::fprintf(out, "  graph nodes: pinned %s, device src %s, device dst %s\n", human_bytes(s.pinned).c_str(), human_bytes(s.dev_src).c_str(),
                     human_bytes(s.dev_dst).c_str());
    }
    if (plan.alloc_device_peak || plan.alloc_pinned_peak || plan.register_bytes)
        std::fprintf(out, "  allocation ops at their peak: device %s, pinned %s, registered pageable %s\n", human_bytes(plan.alloc_device_peak).c_str(),
                     human_bytes(plan.alloc_pinned_peak).c_str(), human_bytes(plan.register_bytes).c_str());
    std::fprintf(out, "\ntotals: device %s, managed %s (device + managed + 1 GiB must fit in free device memory), pinned %s, pageable %s\n",
                 human_bytes(plan.device_total).c_str(), human_bytes(plan.managed_total).c_str(), human_bytes(plan.pinned_total).c_str(),
                 human_bytes(plan.pageable_total).c_str());

    std::fprintf(out, "\nstreams:\n");
    for (size_t s = 0; s < p.streams.size(); ++s) {
        const Stream& st = p.streams[s];
        const char* how = st.kind == StreamKind::Legacy ? "cudaStreamLegacy"
                        : st.kind == StreamKind::PerThread ? "cudaStreamPerThread (of its owner thread)"
                        : st.kind == StreamKind::Blocking ? "cudaStreamCreateWithPriority(cudaStreamDefault)"
                                                          : "cudaStreamCreateWithPriority(cudaStreamNonBlocking)";
        std::fprintf(out, "  %s: %s\n", stream_desc(p, int(s)).c_str(), how);
    }
    if (!p.events.empty()) {
        std::fprintf(out, "events (cudaEventDisableTiming):");
        for (const auto& e : p.events) std::fprintf(out, " '%s'%s", e.name.c_str(), e.blocking_sync ? " (+cudaEventBlockingSync)" : "");
        std::fprintf(out, "\n");
    }
    for (const Graph& g : p.graphs) {
        if (g.chain()) {
            std::fprintf(out, "graph '%s': %zu nodes, captured from a capture stream at setup:", g.name.c_str(), g.nodes.size());
            for (const Op& nd : g.nodes) std::fprintf(out, " %s", to_string(nd.kind));
        } else {
            std::fprintf(out, "graph '%s': %zu nodes, built at setup with explicit dependencies (cudaGraphAdd*Node):", g.name.c_str(),
                         g.nodes.size());
            for (size_t k = 0; k < g.nodes.size(); ++k) {
                std::fprintf(out, " %zu:%s", k, to_string(g.nodes[k].kind));
                for (uint32_t a = g.after_index[k]; a < g.after_index[k + 1]; ++a) std::fprintf(out, "%s%u", a == g.after_index[k] ? "<" : ",", g.after[a]);
            }
        }
        std::fprintf(out, "\n");
    }
    for (const auto& q : p.queues)
        std::fprintf(out, "host queue '%s': capacity %u (std::mutex + std::condition_variable, emptied before each run)\n", q.name.c_str(), q.capacity);
    for (const auto& f : p.flags)
        std::fprintf(out, "flag '%s': a counter that host_func callbacks raise and host_wait ops take (mutex + condition variable)\n", f.name.c_str());
    if (p.warmup)
        std::fprintf(out, "steady state: %u warm-up iteration%s in the program; the measured window starts at the release of the last barrier\n",
                     p.warmup, p.warmup == 1 ? "" : "s");
    std::fprintf(out, "\noptions: sync %s, cold_start %s, max_connections %u%s\n", p.blocking_sync ? "blocking (cudaDeviceScheduleBlockingSync)" : "spin",
                 p.cold_start ? "yes (one fresh process per measured run, no warm-up)" : "no", p.max_connections,
                 p.max_connections ? " (CUDA_DEVICE_MAX_CONNECTIONS)" : " (unset)");
    if (p.tasks_form) {
        int ev = 0;
        for (char c : plan.needs_done_event) ev += c;
        std::fprintf(out, "\ntasks form: %zu GPU tasks issued at time zero by a dedicated thread; %d completion events, %d host flags\n",
                     p.gpu_tasks.size(), ev, plan.host_flags);
    }
    const size_t limit = verbose ? SIZE_MAX : 40;
    for (int t = 0; t < plan.issuers; ++t) {
        const auto& ops = plan.issuer_ops[t];
        std::string who = t == plan.issuer_thread ? std::string("GPU-task issuer (issue order)") : "thread " + std::to_string(t) + " '" + p.threads[t].name + "'";
        if (t != plan.issuer_thread && p.threads[t].start_after >= 0)
            who += ", created by op " + std::to_string(p.threads[t].start_after) + " '" + p.op_name(uint32_t(p.threads[t].start_after)) + "'";
        std::fprintf(out, "\n%s: %zu ops\n", who.c_str(), ops.size());
        for (size_t k = 0; k < ops.size() && k < limit; ++k) {
            const uint32_t i = ops[k];
            std::fprintf(out, "  %6u %-18s %-28s %s\n", i, to_string(p.ops[i].kind), p.op_name(i).c_str(), describe(p, plan, i, peak_flops).c_str());
        }
        if (ops.size() > limit) std::fprintf(out, "  ... %zu more (--verbose lists all)\n", ops.size() - limit);
    }
}

}  // namespace runner
