#include "sim/engine.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "hw/sm_pool.hpp"
#include "models/copy_model.hpp"
#include "models/kernel_model.hpp"
#include "sim/event_queue.hpp"

namespace hetsim {

namespace {

enum EvType : uint32_t { kGpuDone, kBatchDone, kHostDone, kCopyDone, kGpuReady, kHostStep };
constexpr uint32_t prio(EvType t) { return t <= kCopyDone ? 0 : t == kGpuReady ? 1 : 2; }

// The profile as the engine uses it: a rule switched off (`rules.*`) sets its parameters to
// the values that make it vanish, so the code below needs no test for most switches.
HwProfile effective_profile(const HwProfile& in) {
    HwProfile p = in;
    const auto& r = in.rules;
    if (!r.copy_efficiency) p.h2d_eff = p.d2h_eff = Curve{};
    if (!r.duplex) p.duplex_factor = p.pageable_contention = 1;
    if (!r.staging_pool) p.staging_pool = 0;
    if (!r.kernel_limit) p.max_kernels = UINT32_MAX;
    if (!r.small_kernel_floor) p.kernel_min_duration = p.launch_latency = Time{};
    if (!r.launch_queue) p.launch_queue_depth = 0;
    if (!r.hw_queues) p.hw_queues = 0;
    if (!r.launch_contention) p.launch_contention = 0;
    if (!r.module_loading) p.module_load_cost = Time{};
    if (!r.sync_wakeup) p.sync_wakeup = p.blocking_sync_wakeup = Time{};
    if (!r.host_funcs) {
        p.host_func_latency = p.launch_latency;
        p.host_func_gap = p.stream_gap;
    }
    if (!r.graphs) {  // a graph costs what launching its nodes one by one costs
        p.graph_instantiate_per_node = p.graph_launch_cost = p.graph_copy_node_extra = Time{};
        p.graph_launch_per_node = p.launch_cost;
        p.graph_node_gap = p.stream_gap;
    }
    if (!r.alloc_costs) {
        p.malloc_cost = p.free_cost = p.malloc_async_cost = Time{};
        p.malloc_host_bw = p.free_host_bw = p.host_register_bw = 0;  // 0 = free
    }
    return p;
}

constexpr uint32_t kThreadBit = 0x80000000u;  // edge target is a waiting host thread

struct Edge {
    uint32_t to;  // op index, or thread | kThreadBit
    int32_t next;
    CauseKind kind;
};

struct ThreadState {
    uint32_t pc = 0;
    bool waiting_deps = false;  // tasks form: blocked until the current op's `after` deps finish
    uint32_t wait_count = 0;    // blocked in a sync call until this many GPU ops finish
    Time wait_min_end;          // the call cannot return before this
    Time wake_extra;            // added after the last awaited op finishes
    Time wait_done;             // latest finish among awaited ops
    Cause wait_cause;
    Cause next_cause;           // why the next op may start (program order by default)
    bool resume = false;        // the wait is the first part of the current call (pageable_sync)
    bool presynced = false;     // the current call's stream sync is done
};

// The copy running on one direction's engine; its speed changes while the other direction runs.
struct ActiveCopy {
    int32_t op = -1;
    Time work_left;  // at full speed
    Time last;       // when work_left was last brought up to date
    double factor = 1;
    uint32_t version = 0;
};

struct CopyQueue {
    std::deque<uint32_t> waiting;  // ready copies behind the running one (ActiveCopy)
};

struct ActiveKernel {
    uint32_t op;
    uint32_t unplaced;
    uint32_t running_batches = 0;
    Time block_time;
    Time first_extra;  // managed-memory fault stall paid by the first batch
    BlockNeed need;
    bool mem_bound;
    bool started = false;
    int priority;
    uint64_t order;
};

struct Batch {
    uint32_t kernel;  // index into active_
    uint32_t blocks = 0;
    uint32_t version = 0;
    bool live = false;
    Time work_left;  // memory-bound batches: full-speed work still to do
    Time last;       // when work_left was last brought up to date
    std::vector<SmRun> runs;
};

class Simulator {
public:
    Simulator(const Program& pg, const HwProfile& hw, const EngineOptions& o)
        : pg_(pg), hw_(effective_profile(hw)), opts_(o), sm_(hw_) {
        size_t n = pg.ops.size();
        tl_.ops.resize(n);
        pending_.assign(n, 0);
        ready_.assign(n, Time{});
        ready_cause_.resize(n);
        succ_.assign(n, -1);
        done_.assign(n, 0);
        host_pending_.assign(n, 0);
        stream_last_.assign(pg.streams.size(), -1);
        event_last_.assign(pg.events.size(), -1);
        threads_.resize(pg.threads.size());
        api_end_.assign(pg.threads.size(), Time{});
        init_managed();
        lq_ops_.resize(pg.streams.size());
        lq_waiters_.resize(pg.streams.size());
        nq_ = pg.max_connections && hw_.hw_queues ? pg.max_connections : static_cast<uint32_t>(hw_.hw_queues);
        if (nq_) {
            queue_tail_.assign(nq_ + 1, -1);
            queue_next_.assign(n, -1);
            left_.assign(n, 0);
        }
        edges_.reserve(n * 2);
        q_.reserve(64);
    }

    Timeline run() {
        for (uint32_t op : pg_.gpu_tasks) submit(op, Time{}, true);
        if (pg_.tasks_form)
            for (const auto& t : pg_.threads)
                for (uint32_t op : t.ops) add_task_deps(op, true);
        for (uint32_t t = 0; t < threads_.size(); ++t) q_.push(Time{}, prio(kHostStep), kHostStep, t);
        while (!q_.empty()) {
            SimEvent e = q_.pop();
            Time now = Time::ps(e.time);
            if (now < now_) throw std::logic_error("hetsim engine: time went backwards");
            if (now > opts_.time_limit)
                throw DeadlockError("simulated time passed the limit of " + std::to_string(opts_.time_limit.ps() / 1000) +
                                    " ns; raise it with --time-limit");
            now_ = now;
            switch (e.type) {
                case kHostStep: host_step(e.a); break;
                case kGpuReady: dispatch(e.a); break;
                case kGpuDone: gpu_done(e.a); break;
                case kCopyDone: copy_done(e.a, e.b); break;
                case kBatchDone: batch_done(e.a, e.b); break;
                case kHostDone: release_successors(e.a, now_); break;
            }
            if (mem_dirty_) rescale_memory_bound();
        }
        check_finished();
        Time end;
        for (const auto& r : tl_.ops) end = max(end, r.end());
        tl_.end_to_end = end;
        return std::move(tl_);
    }

private:
    // ------------------------------------------------------------ host threads
    void host_step(uint32_t t) {
        ThreadState& th = threads_[t];
        const auto& list = pg_.threads[t].ops;
        if (th.pc >= list.size()) return;
        uint32_t i = list[th.pc];
        const Op& op = pg_.ops[i];
        OpRecord& r = tl_.ops[i];
        if (pg_.tasks_form && host_pending_[i] > 0) {
            th.waiting_deps = true;
            if (!r.has_host()) r.host_start = now_;  // the thread reached the op; it waits from here
            return;
        }
        if (!r.has_host()) r.host_start = now_;
        Time waited = now_ - r.host_start;
        r.host_cause = th.next_cause;
        if (pg_.tasks_form && waited > Time{}) r.host_cause = ready_cause_[i];
        r.sync_wait = waited;
        Time call = now_;
        if (op.graph_node) {  // issued by its GraphLaunch: no call of its own
            submit(i, now_, false);
            return finish_host(t, i, now_);
        }
        if (hw_.launch_queue_depth && Program::is_stream_op(op.kind) && lq_ops_[op.stream].size() >= hw_.launch_queue_depth) {
            lq_waiters_[op.stream].push_back(t);  // the stream's launch queue is full: wait for an entry
            r.host_cause = Cause{static_cast<int32_t>(lq_ops_[op.stream].front()), Phase::Gpu, CauseKind::Resource};
            return;
        }
        switch (op.kind) {
            case OpKind::HostWork: {
                Time d = op.duration + migrate_to_host(op);
                finish_host(t, i, call + d);
                return;
            }
            case OpKind::Kernel: return async_call(t, i, hw_.launch_cost + module_load(pg_.site(op).label));
            case OpKind::EventRecord: return async_call(t, i, hw_.event_record_cost);
            case OpKind::StreamWaitEvent: return async_call(t, i, hw_.stream_wait_event_cost);
            case OpKind::Prefetch: {
                // A prefetch to the device holds the host for part of its transfer (measured).
                Time hold;
                if (op.to_device && hw_.um_prefetch_host_block > 0) {
                    uint64_t bytes = to_move(static_cast<uint32_t>(op.buffer), true, op.bytes);
                    hold = Time::ps(static_cast<int64_t>(static_cast<double>(transfer_time(bytes, hw_.um_prefetch_h2d_bw).ps()) *
                                                         std::min(1.0, hw_.um_prefetch_host_block)));
                }
                // The transfer is issued at the start of the hold, not after it.
                Time called = now_ + api_cost(t, hw_.prefetch_call_cost);
                submit(i, called, false);
                return finish_host(t, i, called + hold);
            }
            case OpKind::Memset: {
                if (!op.sync) return async_call(t, i, hw_.memset_call_cost);
                Time called = call + api_cost(t, hw_.memset_call_cost);
                submit(i, called, false);
                return block_on(t, i, {static_cast<int32_t>(i)}, called, wakeup());
            }
            case OpKind::Memcpy: return memcpy_call(t, i);
            case OpKind::StreamSync: return block_on(t, i, {stream_last_[op.stream]}, call + hw_.sync_call_cost, wakeup());
            case OpKind::EventSync: {
                int32_t rec = event_last_[op.event];
                if (rec < 0) warn_unrecorded(i);
                // An event without cudaEventBlockingSync spins even under blocking-sync scheduling.
                Time wake = pg_.events[op.event].blocking_sync ? hw_.blocking_sync_wakeup : hw_.sync_wakeup;
                return block_on(t, i, {rec}, call + hw_.sync_call_cost, wake);
            }
            case OpKind::DeviceSync: return block_on(t, i, stream_last_, call + hw_.sync_call_cost, wakeup());
            case OpKind::HostFunc: return async_call(t, i, hw_.host_func_call_cost);
            case OpKind::GraphLaunch: {
                auto nodes = static_cast<int64_t>(pg_.graphs[op.graph].nodes.size());
                return async_call(t, i, hw_.graph_launch_cost + Time::ps(hw_.graph_launch_per_node.ps() * nodes));
            }
            case OpKind::GraphInstantiate: {
                const Graph& g = pg_.graphs[op.graph];
                Time cost = Time::ps(hw_.graph_instantiate_per_node.ps() * static_cast<int64_t>(g.nodes.size()));
                for (const Op& node : g.nodes)
                    if (node.kind == OpKind::Kernel) cost += module_load(pg_.site(node).label);
                return finish_host(t, i, call + api_cost(t, cost));
            }
            case OpKind::Malloc: return finish_host(t, i, call + api_cost(t, hw_.malloc_cost));
            case OpKind::MallocHost: return finish_host(t, i, call + api_cost(t, transfer_or_zero(op.bytes, hw_.malloc_host_bw)));
            case OpKind::HostRegister:
                return finish_host(t, i, call + api_cost(t, transfer_or_zero(op.bytes, hw_.host_register_bw)));
            case OpKind::Free:
            case OpKind::FreeHost: {
                // Both wait for the whole device first (they may release memory in use), then free.
                Time cost = op.kind == OpKind::Free ? hw_.free_cost : transfer_or_zero(op.bytes, hw_.free_host_bw);
                if (!hw_.rules.alloc_costs) return finish_host(t, i, call);
                return block_on(t, i, stream_last_, call + cost, cost);
            }
            case OpKind::MallocAsync:
            case OpKind::FreeAsync: return async_call(t, i, hw_.malloc_async_cost);
        }
    }

    // Host cost of an API call on thread t: calls from several threads contend in the driver.
    Time api_cost(uint32_t t, Time base) {
        uint32_t others = 0;
        for (uint32_t k = 0; k < api_end_.size(); ++k)
            if (k != t && api_end_[k] > now_) ++others;
        Time cost = base;
        if (others && hw_.launch_contention > 0)
            cost = Time::ps(static_cast<int64_t>(static_cast<double>(base.ps()) * (1.0 + hw_.launch_contention * others)));
        api_end_[t] = now_ + cost;
        return cost;
    }

    // Wake-up latency of a blocked stream/device sync under the program's scheduling mode.
    Time wakeup() const { return pg_.blocking_sync ? hw_.blocking_sync_wakeup : hw_.sync_wakeup; }

    static Time transfer_or_zero(uint64_t bytes, uint64_t bw) { return bw ? transfer_time(bytes, bw) : Time{}; }

    // Lazy module loading: the first launch of each kernel in a cold process loads its module.
    Time module_load(uint32_t kernel_name) {
        if (!pg_.cold_start || hw_.module_load_cost == Time{}) return Time{};
        if (kernel_name >= loaded_.size()) loaded_.resize(pg_.names.size(), 0);
        if (loaded_[kernel_name]) return Time{};
        loaded_[kernel_name] = 1;
        return hw_.module_load_cost;
    }

    void async_call(uint32_t t, uint32_t i, Time base) {
        Time end = now_ + api_cost(t, base);
        submit(i, end, false);
        finish_host(t, i, end);
    }

    // ------------------------------------------------------------ host cache of pageable buffers
    // Pageable buffers touched by staging, most recent last, with their sizes. A pageable H2D
    // from a buffer staged again before host.staging_cache bytes of other pageable buffers were
    // staged finds its source in the CPU caches and stages at the warm speed.
    void note_host_touch(uint32_t i) {
        const Op& op = pg_.ops[i];
        if (op.buffer < 0 || hw_.staging_cache == 0 || !hw_.rules.staging_cache) return;
        uint64_t bytes = pg_.buffers[op.buffer].bytes, newer = 0;
        for (size_t k = host_lru_.size(); k-- > 0;) {
            if (host_lru_[k] == op.buffer) {
                if (op.dir == CopyDir::H2D && newer + bytes <= hw_.staging_cache) warm_.insert(i);
                host_lru_.erase(host_lru_.begin() + static_cast<long>(k));
                break;
            }
            newer += pg_.buffers[host_lru_[k]].bytes;
            if (newer > hw_.staging_cache) break;
        }
        host_lru_.push_back(op.buffer);
        if (host_lru_.size() > 64) host_lru_.erase(host_lru_.begin());
    }

    // Host staging time of `bytes` of pageable H2D op i (warm or cold source).
    Time stage(uint32_t i, uint64_t bytes) const {
        bool warm = hw_.pageable_h2d_warm_bw && warm_.count(i);
        return transfer_time(bytes, warm ? hw_.pageable_h2d_warm_bw : hw_.pageable_h2d_bw);
    }

    bool pageable(const Op& op) const {
        return op.kind == OpKind::Memcpy && op.host_mem == MemKind::Pageable && op.dir != CopyDir::D2D &&
               hw_.rules.pageable_staging;
    }

    void memcpy_call(uint32_t t, uint32_t i) {
        const Op& op = pg_.ops[i];
        ThreadState& th = threads_[t];
        if (pageable(op) && hw_.pageable_sync && !th.presynced) {
            // The documented behaviour: a pageable copy first synchronises its stream.
            int32_t last = stream_last_[op.stream];
            if (last >= 0 && !done_[last]) {
                th.resume = true;
                return block_on(t, i, {last}, now_, wakeup());
            }
        }
        th.presynced = false;
        Time called = now_ + api_cost(t, hw_.memcpy_call_cost);
        if (pageable(op) && op.dir == CopyDir::H2D) {
            // The host stages the data itself; the call returns once everything is staged. With
            // more bytes than the bounce-buffer pool holds, staging stalls until the DMA starts.
            note_host_touch(i);
            Time staged = called + stage(i, op.bytes);
            submit(i, called, false);
            if (hw_.staging_pool && op.bytes > hw_.staging_pool) {  // the DMA cannot have started yet
                pool_wait_[i] = PoolWait{t, called};
                return;  // finished when the DMA starts (start_copy)
            }
            stage_end_[i] = staged;
            return finish_host(t, i, staged);
        }
        submit(i, called, false);
        if (pageable(op)) {  // D2H: blocks until the copy is done and unstaged
            note_host_touch(i);
            Time unstage = staging_time(hw_, op.dir, staging_chunk(hw_, op.bytes));
            return block_on(t, i, {static_cast<int32_t>(i)}, called, unstage);
        }
        if (op.sync) return block_on(t, i, {static_cast<int32_t>(i)}, called, wakeup());
        finish_host(t, i, called);
    }

    void finish_host(uint32_t t, uint32_t i, Time end) {
        OpRecord& r = tl_.ops[i];
        r.host_end = end;
        ThreadState& th = threads_[t];
        th.pc++;
        th.next_cause = Cause{static_cast<int32_t>(i), Phase::Host, CauseKind::ProgramOrder};
        // Host-only ops release their successors when the host phase ends; ops with a GPU phase
        // release them from gpu_done (a blocking call must not release them twice).
        if (succ_[i] >= 0 && !Program::has_gpu_phase(pg_.ops[i].kind)) q_.push(end, prio(kHostDone), kHostDone, i);
        q_.push(end, prio(kHostStep), kHostStep, t);
    }

    // Blocks thread t in op i until every op in `targets` (-1 = none) has finished its GPU phase.
    void block_on(uint32_t t, uint32_t i, const std::vector<int32_t>& targets, Time min_end, Time wake_after) {
        ThreadState& th = threads_[t];
        th.wait_count = 0;
        th.wait_min_end = min_end;
        th.wake_extra = wake_after;
        th.wait_done = Time{};
        th.wait_cause = Cause{};
        for (int32_t g : targets) {
            if (g < 0 || done_[g]) continue;  // already done when called: only the call cost
            ++th.wait_count;
            add_edge(static_cast<uint32_t>(g), t | kThreadBit, CauseKind::Sync);
        }
        if (th.wait_count == 0) wake(t, i);
    }

    void note_wait(ThreadState& th, uint32_t g, Time end) {
        if (th.wait_cause.op < 0 || end >= th.wait_done) {
            th.wait_done = end;
            th.wait_cause = Cause{static_cast<int32_t>(g), Phase::Gpu, CauseKind::Sync};
        }
    }

    void wake(uint32_t t, uint32_t i) {
        ThreadState& th = threads_[t];
        OpRecord& r = tl_.ops[i];
        Time end = th.wait_min_end;
        if (th.wait_cause.op >= 0 && th.wait_done + th.wake_extra > end) {
            end = th.wait_done + th.wake_extra;
            r.host_cause = th.wait_cause;
        }
        if (th.resume) {  // the wait was the first part of the call: run the rest at `end`
            th.resume = false;
            th.presynced = true;
            q_.push(end, prio(kHostStep), kHostStep, t);
            return;
        }
        r.sync_wait += end - th.wait_min_end;
        finish_host(t, i, end);
    }

    // ------------------------------------------------------------ unified memory
    // Residency of each managed buffer per um.block_size block: 1 = on the device.
    void init_managed() {
        um_.resize(pg_.buffers.size());
        for (size_t b = 0; b < pg_.buffers.size(); ++b) {
            const Buffer& buf = pg_.buffers[b];
            if (buf.kind != MemKind::Managed) continue;
            uint64_t blocks = (buf.bytes + hw_.um_block - 1) / hw_.um_block;
            um_[b].on_device.assign(blocks, buf.managed_on_device ? 1 : 0);
            um_[b].device_blocks = buf.managed_on_device ? blocks : 0;
        }
    }

    uint64_t block_bytes(uint32_t b, uint64_t k) const {
        uint64_t size = pg_.buffers[b].bytes;
        return std::min(hw_.um_block, size - k * hw_.um_block);
    }

    // Blocks [0, n) that cover the first `upto_bytes` of managed buffer b.
    uint64_t blocks_upto(uint32_t b, uint64_t upto_bytes) const {
        uint64_t bytes = std::min(upto_bytes, pg_.buffers[b].bytes);
        return std::min<uint64_t>(um_[b].on_device.size(), (bytes + hw_.um_block - 1) / hw_.um_block);
    }

    // Moves blocks [0, upto) of buffer b to the device (or host); returns the bytes that moved.
    uint64_t migrate(uint32_t b, bool to_device, uint64_t upto_bytes = UINT64_MAX) {
        ManagedState& m = um_[b];
        if (m.on_device.empty() || !hw_.rules.um_migration) return 0;
        if (to_device ? m.device_blocks == m.on_device.size() : m.device_blocks == 0) return 0;  // all there
        uint64_t last = blocks_upto(b, upto_bytes);
        uint64_t moved = 0;
        for (uint64_t k = 0; k < last; ++k) {
            if (m.on_device[k] == (to_device ? 1 : 0)) continue;
            m.on_device[k] = to_device ? 1 : 0;
            moved += block_bytes(b, k);
            m.device_blocks += to_device ? 1 : static_cast<uint64_t>(-1);
        }
        return moved;
    }

    // Bytes of blocks [0, upto) not yet where a prefetch sends them.
    uint64_t to_move(uint32_t b, bool to_device, uint64_t upto_bytes) const {
        const ManagedState& m = um_[b];
        if (m.on_device.empty() || !hw_.rules.um_migration) return 0;
        uint64_t last = blocks_upto(b, upto_bytes);
        uint64_t bytes = 0;
        for (uint64_t k = 0; k < last; ++k)
            if (m.on_device[k] != (to_device ? 1 : 0)) bytes += block_bytes(b, k);
        return bytes;
    }

    Time migrate_to_host(const Op& op) {
        Time extra;
        for (uint32_t k = 0; k < pg_.uses_count(op); ++k)
            extra += transfer_time(migrate(pg_.uses_begin(op)[k], false), hw_.um_cpu_fault_bw);
        return extra;
    }

    // ------------------------------------------------------------ GPU submission and dependencies
    static bool is_marker(OpKind k) {
        return k == OpKind::EventRecord || k == OpKind::StreamWaitEvent || k == OpKind::GraphLaunch ||
               k == OpKind::MallocAsync || k == OpKind::FreeAsync;
    }

    Time gap(uint32_t from, uint32_t to, CauseKind kind, bool from_host) const {
        if (from_host) return pg_.ops[to].thread >= 0 ? Time{} : hw_.launch_latency;
        const Op& t = pg_.ops[to];
        if (t.kind == OpKind::HostFunc) return hw_.host_func_latency;  // the stream reaches the callback
        if (pg_.ops[from].kind == OpKind::HostFunc && kind == CauseKind::StreamOrder) return hw_.host_func_gap;
        if (t.graph_node && pg_.ops[from].graph_node && kind == CauseKind::StreamOrder) return hw_.graph_node_gap;
        // Markers (event record, stream wait) take no gap on the way in; the op after a marker
        // pays the gap of the dependency that released the marker (an event: the event gap).
        if (is_marker(pg_.ops[to].kind)) return Time{};
        if (is_marker(pg_.ops[from].kind)) {
            kind = tl_.ops[from].gpu_cause.kind;
            if (kind != CauseKind::StreamOrder && kind != CauseKind::Event && kind != CauseKind::Legacy &&
                kind != CauseKind::After)
                return Time{};
        }
        if (kind == CauseKind::StreamOrder) return hw_.stream_gap;
        if (kind == CauseKind::After && pg_.ops[from].stream == pg_.ops[to].stream) return hw_.stream_gap;
        return hw_.event_gap;
    }

    void add_edge(uint32_t from, uint32_t to, CauseKind kind) {
        edges_.push_back(Edge{to, succ_[from], kind});
        succ_[from] = static_cast<int32_t>(edges_.size() - 1);
    }

    // GPU phase of `i` depends on the GPU phase of `dep`.
    void add_dep(uint32_t i, int32_t dep, CauseKind kind) {
        if (dep < 0) return;
        uint32_t d = static_cast<uint32_t>(dep);
        if (done_[d]) {
            Time t = tl_.ops[d].gpu_end + gap(d, i, kind, false);
            if (t > ready_[i]) {
                ready_[i] = t;
                ready_cause_[i] = Cause{dep, Phase::Gpu, kind};
            }
        } else {
            ++pending_[i];
            add_edge(d, i, kind);
        }
    }

    // Tasks form: `after` dependencies of op i (host ops gate their start, GPU ops their dispatch).
    void add_task_deps(uint32_t i, bool host) {
        for (uint32_t k = 0; k < pg_.after_count(i); ++k) {
            uint32_t d = pg_.after_begin(i)[k];
            ++(host ? host_pending_[i] : pending_[i]);
            add_edge(d, i, CauseKind::After);
        }
    }

    void submit(uint32_t i, Time at, bool task) {
        const Op& op = pg_.ops[i];
        ready_[i] = at + (task ? Time{} : op.kind == OpKind::HostFunc ? hw_.host_func_latency : hw_.launch_latency);
        ready_cause_[i] = task ? Cause{} : Cause{static_cast<int32_t>(i), Phase::Host, CauseKind::Submit};
        if (!task && pageable(op) && op.dir == CopyDir::H2D) {
            Time first = at + stage(i, staging_chunk(hw_, op.bytes));
            if (first > ready_[i]) ready_[i] = first;
        }
        int32_t s = op.stream;
        StreamKind sk = pg_.streams[s].kind;
        add_dep(i, stream_last_[s], CauseKind::StreamOrder);
        if (hw_.rules.legacy_sync) {
            if (sk == StreamKind::Legacy) {
                for (size_t b = 1; b < pg_.streams.size(); ++b)
                    if (pg_.streams[b].kind == StreamKind::Blocking) add_dep(i, stream_last_[b], CauseKind::Legacy);
            } else if (sk == StreamKind::Blocking) {
                add_dep(i, stream_last_[0], CauseKind::Legacy);
            }
        }
        if (op.kind == OpKind::StreamWaitEvent) {
            int32_t rec = event_last_[op.event];
            if (rec < 0) warn_unrecorded(i);
            add_dep(i, rec, CauseKind::Event);
        }
        if (task) add_task_deps(i, false);
        if (op.kind == OpKind::EventRecord) event_last_[op.event] = static_cast<int32_t>(i);
        if (!task && nq_) {
            // Streams share hardware queues: an op leaves its queue only after the op issued
            // before it to the same queue has left, whatever its stream (a false dependency).
            uint32_t q = s == 0 ? nq_ : static_cast<uint32_t>(s - 1) % nq_;
            int32_t tail = queue_tail_[q];
            if (tail >= 0 && !left_[tail] && pg_.ops[tail].stream != s) {
                queue_next_[tail] = static_cast<int32_t>(i);
                ++pending_[i];
            }
            queue_tail_[q] = static_cast<int32_t>(i);
        }
        if (!task && !op.graph_node && hw_.launch_queue_depth) lq_ops_[s].push_back(i);
        stream_last_[s] = static_cast<int32_t>(i);
        if (pending_[i] == 0) q_.push(ready_[i], prio(kGpuReady), kGpuReady, i);
    }

    void warn_unrecorded(uint32_t i) {
        const Op& op = pg_.ops[i];
        tl_.warnings.push_back(pg_.op_name(i) + ": waits on event '" + pg_.events[op.event].name +
                               "' before any record of it; the wait completes at once (as in CUDA)");
    }

    // A phase of op `from` finished at `end`: release what waits on it.
    void release_successors(uint32_t from, Time end) {
        bool from_host = !Program::has_gpu_phase(pg_.ops[from].kind);
        for (int32_t e = succ_[from]; e >= 0; e = edges_[e].next) {
            const Edge& ed = edges_[e];
            if (ed.to & kThreadBit) {
                uint32_t t = ed.to & ~kThreadBit;
                ThreadState& th = threads_[t];
                note_wait(th, from, end);
                if (--th.wait_count == 0) wake(t, pg_.threads[t].ops[th.pc]);
                continue;
            }
            uint32_t to = ed.to;
            Time at = end + gap(from, to, ed.kind, from_host);
            Cause c{static_cast<int32_t>(from), from_host ? Phase::Host : Phase::Gpu, ed.kind};
            if (Program::has_gpu_phase(pg_.ops[to].kind)) {
                if (at > ready_[to] || ready_cause_[to].kind == CauseKind::None) {
                    ready_[to] = max(ready_[to], at);
                    ready_cause_[to] = c;
                }
                if (--pending_[to] == 0) q_.push(ready_[to], prio(kGpuReady), kGpuReady, to);
            } else {
                if (from_host == false) at = end + wakeup();
                if (at >= ready_[to]) {
                    ready_[to] = at;
                    ready_cause_[to] = c;
                }
                if (--host_pending_[to] == 0) {
                    uint32_t t = static_cast<uint32_t>(pg_.ops[to].thread);
                    if (threads_[t].waiting_deps && pg_.threads[t].ops[threads_[t].pc] == to) {
                        threads_[t].waiting_deps = false;
                        q_.push(max(ready_[to], now_), prio(kHostStep), kHostStep, t);
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------ GPU resources
    void dispatch(uint32_t i) {
        const Op& op = pg_.ops[i];
        OpRecord& r = tl_.ops[i];
        r.gpu_cause = ready_cause_[i];
        leave_queues(i);
        switch (op.kind) {
            case OpKind::EventRecord:
            case OpKind::StreamWaitEvent:
            case OpKind::GraphLaunch:
            case OpKind::MallocAsync:
            case OpKind::FreeAsync:
                r.gpu_start = now_;
                r.gpu_end = now_;
                return gpu_done(i);
            case OpKind::HostFunc:  // runs on a driver thread; the stream waits for it
                r.gpu_start = now_;
                q_.push(now_ + op.duration, prio(kGpuDone), kGpuDone, i);
                return;
            case OpKind::Kernel: return enqueue_kernel(i);
            case OpKind::Memset:
                return start_device_copy(i);
            case OpKind::Memcpy:
                if (op.dir == CopyDir::D2D) return start_device_copy(i);
                if (pageable(op) && op.dir == CopyDir::H2D && pg_.tasks_form && !stage_end_.count(i)) {
                    // Tasks form: no host call staged the data; staging starts when the copy is
                    // ready, and the DMA may start once the first chunk is staged.
                    note_host_touch(i);
                    stage_end_[i] = now_ + stage(i, op.bytes);
                    q_.push(now_ + stage(i, staging_chunk(hw_, op.bytes)), prio(kGpuReady), kGpuReady, i);
                    return;
                }
                [[fallthrough]];
            case OpKind::Prefetch: {
                CopyDir dir = op.kind == OpKind::Prefetch ? (op.to_device ? CopyDir::H2D : CopyDir::D2H) : op.dir;
                CopyQueue& cq = copy_[static_cast<int>(dir)];
                if (!hw_.rules.copy_fifo) {  // every copy on an engine of its own
                    r.engine = dir == CopyDir::H2D ? Engine::H2D : Engine::D2H;
                    r.gpu_start = now_;
                    q_.push(now_ + copy_work(i, dir), prio(kGpuDone), kGpuDone, i);
                    return;
                }
                if (active_copy_[static_cast<int>(dir)].op < 0) start_copy(i, dir);
                else cq.waiting.push_back(i);
                return;
            }
            default: return;
        }
    }

    void start_device_copy(uint32_t i) {
        OpRecord& r = tl_.ops[i];
        r.engine = Engine::DeviceCopy;
        r.gpu_start = now_;
        Time extra = pg_.ops[i].graph_node ? hw_.graph_copy_node_extra : Time{};
        q_.push(now_ + copy_duration(hw_, pg_.ops[i]) + extra, prio(kGpuDone), kGpuDone, i);
    }

    // Op i leaves its hardware queue and its stream's launch queue when the GPU takes it.
    void leave_queues(uint32_t i) {
        const Op& op = pg_.ops[i];
        if (nq_ && !left_[i]) {
            left_[i] = 1;
            int32_t next = queue_next_[i];
            if (next >= 0) {
                uint32_t j = static_cast<uint32_t>(next);
                if (now_ > ready_[j] || ready_cause_[j].kind == CauseKind::None) {
                    ready_[j] = max(ready_[j], now_);
                    ready_cause_[j] = Cause{static_cast<int32_t>(i), Phase::Gpu, CauseKind::Queue};
                }
                if (--pending_[j] == 0) q_.push(ready_[j], prio(kGpuReady), kGpuReady, j);
            }
        }
        if (op.thread >= 0 && !op.graph_node && hw_.launch_queue_depth && !lq_ops_[op.stream].empty() &&
            lq_ops_[op.stream].front() == i) {
            lq_ops_[op.stream].pop_front();
            for (uint32_t t : lq_waiters_[op.stream]) q_.push(now_, prio(kHostStep), kHostStep, t);
            lq_waiters_[op.stream].clear();
        }
    }


    // GPU time of a copy on its engine at full speed (pageable copies: paced by the host).
    Time copy_work(uint32_t i, CopyDir dir) {
        const Op& op = pg_.ops[i];
        Time end = now_ + copy_duration(hw_, op);
        if (op.kind == OpKind::Prefetch) {
            uint64_t bytes = to_move(static_cast<uint32_t>(op.buffer), op.to_device, op.bytes);
            end = now_ + transfer_time(bytes, op.to_device ? hw_.um_prefetch_h2d_bw : hw_.um_prefetch_d2h_bw);
        }
        if (pageable(op)) {
            Time chunk_dma = transfer_time(staging_chunk(hw_, op.bytes), dir == CopyDir::H2D ? hw_.h2d_bw : hw_.d2h_bw);
            Time fixed = dir == CopyDir::H2D ? hw_.h2d_fixed : hw_.d2h_fixed;
            if (dir == CopyDir::H2D) {
                auto pw = pool_wait_.find(i);
                if (pw != pool_wait_.end()) {
                    // Staging stalled with the pool full until now (the DMA start); it resumes
                    // as the DMA frees bounce buffers, at the host's speed.
                    Time staged = max(pw->second.called + stage(i, op.bytes), now_ + stage(i, op.bytes - hw_.staging_pool));
                    stage_end_[i] = staged;
                    OpRecord& r = tl_.ops[i];
                    Time unblocked = pw->second.called + stage(i, op.bytes);
                    if (staged > unblocked) {
                        r.sync_wait += staged - unblocked;
                        r.host_cause = Cause{static_cast<int32_t>(i), Phase::Gpu, CauseKind::Resource};
                    }
                    uint32_t t = pw->second.thread;
                    pool_wait_.erase(pw);
                    finish_host(t, i, staged);
                }
                end = max(end, stage_end_.at(i) + fixed + chunk_dma);  // DMA trails the staging by a chunk
            } else {
                end = max(end, now_ + fixed + staging_time(hw_, dir, op.bytes));  // paced by the host draining
            }
        }
        if (op.graph_node) end += hw_.graph_copy_node_extra;
        return end - now_;
    }

    // Slow-down of the copy on `dir`'s engine while the other direction's engine is busy.
    double copy_factor(int dir) const {
        const ActiveCopy& other = active_copy_[1 - dir];
        const ActiveCopy& self = active_copy_[dir];
        if (other.op < 0 || self.op < 0) return 1;
        bool other_pageable = pageable(pg_.ops[other.op]), self_pageable = pageable(pg_.ops[self.op]);
        if (other_pageable && !self_pageable)  // measured: a pinned H2D halves beside a pageable D2H;
            return dir == 0 ? hw_.pageable_contention : 1.0;  // a pinned D2H beside a pageable H2D is not slowed
        return hw_.duplex_factor;
    }

    void schedule_copy(int dir) {
        ActiveCopy& c = active_copy_[dir];
        auto ps = static_cast<int64_t>(std::ceil(static_cast<double>(c.work_left.ps()) * c.factor));
        q_.push(now_ + Time::ps(ps), prio(kCopyDone), kCopyDone, static_cast<uint32_t>(dir), ++c.version);
    }

    // The other direction started or stopped: bring `dir`'s copy up to date at its new speed.
    void rescale_copy(int dir) {
        ActiveCopy& c = active_copy_[dir];
        if (c.op < 0) return;
        double f = copy_factor(dir);
        if (f == c.factor) return;
        auto done = static_cast<int64_t>(static_cast<double>((now_ - c.last).ps()) / c.factor);
        c.work_left = c.work_left > Time::ps(done) ? c.work_left - Time::ps(done) : Time{};
        c.last = now_;
        c.factor = f;
        schedule_copy(dir);
    }

    void start_copy(uint32_t i, CopyDir dir) {
        OpRecord& r = tl_.ops[i];
        r.engine = dir == CopyDir::H2D ? Engine::H2D : Engine::D2H;
        r.gpu_start = now_;
        int d = static_cast<int>(dir);
        ActiveCopy& c = active_copy_[d];
        c.op = static_cast<int32_t>(i);
        c.work_left = copy_work(i, dir);
        c.last = now_;
        c.factor = copy_factor(d);
        schedule_copy(d);
        rescale_copy(1 - d);
    }

    void copy_done(uint32_t dir, uint32_t version) {
        ActiveCopy& c = active_copy_[dir];
        if (c.op < 0 || c.version != version) return;  // superseded by a rescale
        uint32_t i = static_cast<uint32_t>(c.op);
        c.op = -1;
        CopyQueue& cq = copy_[dir];
        if (!cq.waiting.empty()) {
            uint32_t next = cq.waiting.front();
            cq.waiting.pop_front();
            tl_.ops[next].gpu_cause = Cause{static_cast<int32_t>(i), Phase::Gpu, CauseKind::Resource};
            start_copy(next, static_cast<CopyDir>(dir));
        } else {
            rescale_copy(1 - static_cast<int>(dir));
        }
        gpu_done(i);
    }

    void gpu_done(uint32_t i) {
        const Op& op = pg_.ops[i];
        OpRecord& r = tl_.ops[i];
        r.gpu_end = now_;
        done_[i] = 1;
        if (op.kind == OpKind::Prefetch) migrate(static_cast<uint32_t>(op.buffer), op.to_device, op.bytes);
        release_successors(i, now_);
    }

    // ------------------------------------------------------------ kernels on the SMs
    void enqueue_kernel(uint32_t i) {
        const Op& op = pg_.ops[i];
        const Site& site = pg_.site(op);
        KernelCost cost = kernel_cost(hw_, op, site.flops);
        uint32_t per_sm = blocks_per_sm(hw_, site.shape);
        uint64_t wave = static_cast<uint64_t>(per_sm) * hw_.sm_count;
        uint64_t waves = (site.shape.grid + wave - 1) / wave;
        Time faults;
        for (uint32_t u = 0; u < site.uses_count; ++u)
            faults += transfer_time(migrate(pg_.uses_begin(op)[u], true), hw_.um_fault_bw);
        if (!hw_.rules.sm_residency) {  // the kernel runs as if alone on the device
            OpRecord& r = tl_.ops[i];
            r.gpu_start = now_;
            r.engine = Engine::Compute;
            q_.push(now_ + cost.duration + faults, prio(kGpuDone), kGpuDone, i);
            return;
        }
        ActiveKernel k{i, site.shape.grid, 0, Time::ps(cost.duration.ps() / static_cast<int64_t>(waves)), faults,
                       BlockNeed::of(site.shape), cost.memory_bound && hw_.hbm_sharing, false,
                       hw_.rules.priorities ? pg_.streams[op.stream].priority : 0, order_++};
        uint32_t slot;
        if (!free_kernels_.empty()) {
            slot = free_kernels_.back();
            free_kernels_.pop_back();
            active_[slot] = k;
        } else {
            slot = static_cast<uint32_t>(active_.size());
            active_.push_back(k);
        }
        waiting_kernels_.push_back(slot);
        fill_sms();
    }

    void fill_sms() {
        while (!waiting_kernels_.empty()) {
            // Highest priority first (lower number), then the order kernels became ready.
            size_t best = 0;
            for (size_t w = 1; w < waiting_kernels_.size(); ++w) {
                const ActiveKernel &a = active_[waiting_kernels_[w]], &b = active_[waiting_kernels_[best]];
                if (a.priority < b.priority || (a.priority == b.priority && a.order < b.order)) best = w;
            }
            uint32_t slot = waiting_kernels_[best];
            ActiveKernel& k = active_[slot];
            if (!k.started && running_kernels_ >= hw_.max_kernels) return;
            uint32_t b = new_batch(slot);
            Batch& bt = batches_[b];
            uint32_t placed = sm_.place(k.need, k.unplaced, bt.runs);
            if (placed == 0) {
                bt.live = false;
                free_batches_.push_back(b);
                return;
            }
            account_occupancy();
            OpRecord& r = tl_.ops[k.op];
            if (!k.started) {
                k.started = true;
                ++running_kernels_;
                r.gpu_start = now_;
                r.engine = Engine::Compute;
                if (now_ > ready_[k.op] && last_release_op_ >= 0)
                    r.gpu_cause = Cause{last_release_op_, Phase::Gpu, CauseKind::Resource};
            }
            bt.blocks = placed;
            k.unplaced -= placed;
            ++k.running_batches;
            Time work = k.block_time + k.first_extra;
            k.first_extra = Time{};
            if (k.mem_bound) {
                bt.work_left = work;
                bt.last = now_;
                mem_batches_.push_back(b);
                mem_dirty_ = true;
                schedule_batch(b, now_ + Time::ps(work.ps() * std::max<int64_t>(1, mem_active_)));
            } else {
                schedule_batch(b, now_ + work);
            }
            if (k.unplaced == 0) waiting_kernels_.erase(waiting_kernels_.begin() + static_cast<long>(best));
        }
    }

    uint32_t new_batch(uint32_t slot) {
        uint32_t b;
        if (!free_batches_.empty()) {
            b = free_batches_.back();
            free_batches_.pop_back();
        } else {
            b = static_cast<uint32_t>(batches_.size());
            batches_.emplace_back();
        }
        Batch& bt = batches_[b];
        bt.kernel = slot;
        bt.live = true;
        bt.runs.clear();
        return b;
    }

    void schedule_batch(uint32_t b, Time end) {
        q_.push(end, prio(kBatchDone), kBatchDone, b, ++batches_[b].version);
    }

    void batch_done(uint32_t b, uint32_t version) {
        Batch& bt = batches_[b];
        if (!bt.live || bt.version != version) return;  // superseded by a rescale
        ActiveKernel& k = active_[bt.kernel];
        account_occupancy();
        sm_.release(k.need, bt.runs);
        last_release_op_ = static_cast<int32_t>(k.op);
        bt.live = false;
        free_batches_.push_back(b);
        if (k.mem_bound) {
            mem_batches_.erase(std::find(mem_batches_.begin(), mem_batches_.end(), b));
            mem_dirty_ = true;
        }
        --k.running_batches;
        if (k.unplaced == 0 && k.running_batches == 0) {
            --running_kernels_;
            free_kernels_.push_back(bt.kernel);
            gpu_done(k.op);
        }
        fill_sms();
    }

    // Memory-bound kernels share HBM equally: when their number changes, running batches are
    // brought up to date and their ends moved.
    void rescale_memory_bound() {
        mem_dirty_ = false;
        std::vector<uint32_t> kernels;
        for (uint32_t b : mem_batches_) kernels.push_back(batches_[b].kernel);
        std::sort(kernels.begin(), kernels.end());
        int64_t n = std::unique(kernels.begin(), kernels.end()) - kernels.begin();
        if (n == mem_active_) return;
        int64_t old = std::max<int64_t>(1, mem_active_);
        mem_active_ = n;
        for (uint32_t b : mem_batches_) {
            Batch& bt = batches_[b];
            Time done = Time::ps((now_ - bt.last).ps() / old);
            bt.work_left = bt.work_left > done ? bt.work_left - done : Time{};
            bt.last = now_;
            schedule_batch(b, now_ + Time::ps(bt.work_left.ps() * std::max<int64_t>(1, n)));
        }
    }

    void account_occupancy() {
        tl_.sm_thread_occupancy_ps += static_cast<double>((now_ - occ_last_).ps()) * static_cast<double>(sm_.used_threads()) /
                                      static_cast<double>(sm_.total_threads());
        occ_last_ = now_;
    }

    // ------------------------------------------------------------ end of run
    // For the deadlock message: the unfinished ops that `i` waits on, with the kind of each
    // dependency ("h2d1 (after), k0 (stream order)"), from the edges still pending.
    std::string waited_on(uint32_t i, uint32_t pending) const {
        std::string s;
        uint32_t named = 0;
        for (uint32_t d = 0; d < pg_.ops.size() && named < 4; ++d)
            for (int32_t e = finished(d) ? -1 : succ_[d]; e >= 0; e = edges_[static_cast<size_t>(e)].next)
                if (edges_[static_cast<size_t>(e)].to == i) {
                    s += (named++ ? ", " : "") + pg_.op_name(d) + " (" + to_string(edges_[static_cast<size_t>(e)].kind) + ")";
                    break;
                }
        if (named == 0) return std::to_string(pending) + " unfinished dependencies";
        if (pending > named) s += " and " + std::to_string(pending - named) + " more";
        return s;
    }

    bool finished(uint32_t i) const {
        const Op& op = pg_.ops[i];
        return (op.thread < 0 || tl_.ops[i].host_end.ps() != OpRecord::kUnset) && (!Program::has_gpu_phase(op.kind) || done_[i]);
    }

    // " (blocked at OP)": the op at which host thread `t` stopped.
    std::string blocked_at(int32_t t) const {
        const auto& list = pg_.threads[static_cast<size_t>(t)].ops;
        const uint32_t pc = threads_[static_cast<size_t>(t)].pc;
        return pc < list.size() ? " (it is blocked at " + pg_.op_name(list[pc]) + ")" : "";
    }

    void check_finished() {
        std::string stuck;
        int count = 0;
        for (uint32_t i = 0; i < pg_.ops.size(); ++i) {
            const Op& op = pg_.ops[i];
            const OpRecord& r = tl_.ops[i];
            if (finished(i)) continue;
            if (++count <= 10) {
                stuck += "\n  " + pg_.op_name(i) + " (" + to_string(op.kind) + ")";
                if (host_pending_[i] || pending_[i])
                    stuck += ": waits on " + waited_on(i, host_pending_[i] + pending_[i]);
                else if (op.thread >= 0 && !r.has_host())
                    stuck += ": its host thread '" + pg_.threads[op.thread].name + "' never reached it" + blocked_at(op.thread);
            }
        }
        if (count)
            throw DeadlockError("deadlock: " + std::to_string(count) + " ops never finished when no event remained:" + stuck);
    }

    const Program& pg_;
    const HwProfile hw_;
    EngineOptions opts_;
    Timeline tl_;
    EventQueue q_;
    Time now_;
    std::vector<uint32_t> pending_, host_pending_;
    std::vector<Time> ready_;
    std::vector<Cause> ready_cause_;
    std::vector<int32_t> succ_;
    std::vector<uint8_t> done_;
    std::vector<Edge> edges_;
    std::vector<int32_t> stream_last_, event_last_;
    std::vector<ThreadState> threads_;
    std::vector<Time> api_end_;  // per host thread: end of its current API call
    struct ManagedState {
        std::vector<uint8_t> on_device;  // per block
        uint64_t device_blocks = 0;
    };
    std::vector<ManagedState> um_;
    std::unordered_map<uint32_t, Time> stage_end_;
    std::vector<int32_t> host_lru_;           // pageable buffers by last staging, most recent last
    std::unordered_set<uint32_t> warm_;       // pageable H2D ops whose source is in the CPU caches
    struct PoolWait {
        uint32_t thread;
        Time called;
    };
    std::unordered_map<uint32_t, PoolWait> pool_wait_;  // pageable H2D calls stalled on a full pool
    CopyQueue copy_[2];
    ActiveCopy active_copy_[2];
    std::vector<std::deque<uint32_t>> lq_ops_;       // per stream: issued ops the GPU has not taken
    std::vector<std::vector<uint32_t>> lq_waiters_;  // per stream: threads blocked on a full launch queue
    uint32_t nq_ = 0;                                // hardware queues (0: no sharing)
    std::vector<int32_t> queue_tail_, queue_next_;
    std::vector<uint8_t> left_, loaded_;
    SmPool sm_;
    std::vector<ActiveKernel> active_;
    std::vector<uint32_t> free_kernels_, waiting_kernels_;
    std::vector<Batch> batches_;
    std::vector<uint32_t> free_batches_, mem_batches_;
    uint32_t running_kernels_ = 0;
    uint64_t order_ = 0;
    int32_t last_release_op_ = -1;
    int64_t mem_active_ = 0;
    bool mem_dirty_ = false;
    Time occ_last_;
};

}  // namespace

Timeline simulate(const Program& program, const HwProfile& hw, const EngineOptions& opts) {
    Simulator e(program, hw, opts);
    return e.run();
}

}  // namespace hetsim
