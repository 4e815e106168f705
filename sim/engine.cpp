#include "sim/engine.hpp"

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>

#include "hw/sm_pool.hpp"
#include "models/copy_model.hpp"
#include "models/kernel_model.hpp"
#include "sim/event_queue.hpp"

namespace hetsim {

namespace {

enum EvType : uint32_t { kGpuDone, kBatchDone, kHostDone, kGpuReady, kHostStep };
constexpr uint32_t prio(EvType t) { return t <= kHostDone ? 0 : t == kGpuReady ? 1 : 2; }

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
};

struct CopyQueue {
    int32_t current = -1;
    std::deque<uint32_t> waiting;
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
        : pg_(pg), hw_(hw), opts_(o), sm_(hw) {
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
        on_device_.resize(pg.buffers.size());
        for (size_t b = 0; b < pg.buffers.size(); ++b) on_device_[b] = pg.buffers[b].managed_on_device;
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
        switch (op.kind) {
            case OpKind::HostWork: {
                Time d = op.duration + migrate_to_host(op);
                finish_host(t, i, call + d);
                return;
            }
            case OpKind::Kernel: return async_call(t, i, hw_.launch_cost);
            case OpKind::EventRecord: return async_call(t, i, hw_.event_record_cost);
            case OpKind::StreamWaitEvent: return async_call(t, i, hw_.stream_wait_event_cost);
            case OpKind::Prefetch: return async_call(t, i, hw_.prefetch_call_cost);
            case OpKind::Memset: {
                if (!op.sync) return async_call(t, i, hw_.memset_call_cost);
                Time called = call + api_cost(t, hw_.memset_call_cost);
                submit(i, called, false);
                return block_on(t, i, {static_cast<int32_t>(i)}, called, hw_.sync_wakeup);
            }
            case OpKind::Memcpy: return memcpy_call(t, i);
            case OpKind::StreamSync: return block_on(t, i, {stream_last_[op.stream]}, call + hw_.sync_call_cost, hw_.sync_wakeup);
            case OpKind::EventSync: {
                int32_t rec = event_last_[op.event];
                if (rec < 0) warn_unrecorded(i);
                return block_on(t, i, {rec}, call + hw_.sync_call_cost, hw_.sync_wakeup);
            }
            case OpKind::DeviceSync: return block_on(t, i, stream_last_, call + hw_.sync_call_cost, hw_.sync_wakeup);
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

    void async_call(uint32_t t, uint32_t i, Time base) {
        Time end = now_ + api_cost(t, base);
        submit(i, end, false);
        finish_host(t, i, end);
    }

    void memcpy_call(uint32_t t, uint32_t i) {
        const Op& op = pg_.ops[i];
        Time called = now_ + api_cost(t, hw_.memcpy_call_cost);
        if (op.host_mem == MemKind::Pageable && op.dir == CopyDir::H2D) {
            // The host stages the data itself; the call returns once everything is staged.
            Time staged = called + staging_time(hw_, op.dir, op.bytes);
            stage_end_[i] = staged;
            submit(i, called, false);
            return finish_host(t, i, staged);
        }
        submit(i, called, false);
        if (op.host_mem == MemKind::Pageable) {  // D2H: blocks until the copy is done and unstaged
            Time unstage = staging_time(hw_, op.dir, staging_chunk(hw_, op.bytes));
            return block_on(t, i, {static_cast<int32_t>(i)}, called, unstage);
        }
        if (op.sync) return block_on(t, i, {static_cast<int32_t>(i)}, called, hw_.sync_wakeup);
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
        r.sync_wait += end - th.wait_min_end;
        finish_host(t, i, end);
    }

    Time migrate_to_host(const Op& op) {
        Time extra;
        for (uint32_t k = 0; k < op.uses_count; ++k) {
            uint32_t b = pg_.uses[op.uses_begin + k];
            if (on_device_[b]) {
                extra += transfer_time(pg_.buffers[b].bytes, hw_.um_cpu_fault_bw);
                on_device_[b] = 0;
            }
        }
        return extra;
    }

    // ------------------------------------------------------------ GPU submission and dependencies
    static bool is_marker(OpKind k) { return k == OpKind::EventRecord || k == OpKind::StreamWaitEvent; }

    Time gap(uint32_t from, uint32_t to, CauseKind kind, bool from_host) const {
        if (from_host) return pg_.ops[to].thread >= 0 ? Time{} : hw_.launch_latency;
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
        const Op& op = pg_.ops[i];
        for (uint32_t k = 0; k < op.after_count; ++k) {
            uint32_t d = pg_.after[op.after_begin + k];
            ++(host ? host_pending_[i] : pending_[i]);
            add_edge(d, i, CauseKind::After);
        }
    }

    void submit(uint32_t i, Time at, bool task) {
        const Op& op = pg_.ops[i];
        ready_[i] = at + (task ? Time{} : hw_.launch_latency);
        ready_cause_[i] = task ? Cause{} : Cause{static_cast<int32_t>(i), Phase::Host, CauseKind::Submit};
        if (!task && op.kind == OpKind::Memcpy && op.host_mem == MemKind::Pageable && op.dir == CopyDir::H2D) {
            Time first = at + staging_time(hw_, op.dir, staging_chunk(hw_, op.bytes));
            if (first > ready_[i]) ready_[i] = first;
        }
        int32_t s = op.stream;
        StreamKind sk = pg_.streams[s].kind;
        add_dep(i, stream_last_[s], CauseKind::StreamOrder);
        if (sk == StreamKind::Legacy) {
            for (size_t b = 1; b < pg_.streams.size(); ++b)
                if (pg_.streams[b].kind == StreamKind::Blocking) add_dep(i, stream_last_[b], CauseKind::Legacy);
        } else if (sk == StreamKind::Blocking) {
            add_dep(i, stream_last_[0], CauseKind::Legacy);
        }
        if (op.kind == OpKind::StreamWaitEvent) {
            int32_t rec = event_last_[op.event];
            if (rec < 0) warn_unrecorded(i);
            add_dep(i, rec, CauseKind::Event);
        }
        if (task) add_task_deps(i, false);
        if (op.kind == OpKind::EventRecord) event_last_[op.event] = static_cast<int32_t>(i);
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
                if (from_host == false) at = end + hw_.sync_wakeup;
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
        switch (op.kind) {
            case OpKind::EventRecord:
            case OpKind::StreamWaitEvent:
                r.gpu_start = now_;
                r.gpu_end = now_;
                return gpu_done(i);
            case OpKind::Kernel: return enqueue_kernel(i);
            case OpKind::Memset:
                return start_device_copy(i);
            case OpKind::Memcpy:
                if (op.dir == CopyDir::D2D) return start_device_copy(i);
                if (op.host_mem == MemKind::Pageable && op.dir == CopyDir::H2D && !stage_end_.count(i)) {
                    // Tasks form: no host call staged the data; staging starts when the copy is
                    // ready, and the DMA may start once the first chunk is staged.
                    stage_end_[i] = now_ + staging_time(hw_, op.dir, op.bytes);
                    q_.push(now_ + staging_time(hw_, op.dir, staging_chunk(hw_, op.bytes)), prio(kGpuReady), kGpuReady, i);
                    return;
                }
                [[fallthrough]];
            case OpKind::Prefetch: {
                CopyDir dir = op.kind == OpKind::Prefetch ? (op.to_device ? CopyDir::H2D : CopyDir::D2H) : op.dir;
                CopyQueue& cq = copy_[static_cast<int>(dir)];
                if (cq.current < 0) start_copy(i, dir);
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
        q_.push(now_ + copy_duration(hw_, pg_.ops[i]), prio(kGpuDone), kGpuDone, i);
    }

    void start_copy(uint32_t i, CopyDir dir) {
        const Op& op = pg_.ops[i];
        OpRecord& r = tl_.ops[i];
        r.engine = dir == CopyDir::H2D ? Engine::H2D : Engine::D2H;
        r.gpu_start = now_;
        Time end = now_ + copy_duration(hw_, op);
        if (op.kind == OpKind::Memcpy && op.host_mem == MemKind::Pageable) {
            Time chunk_dma = transfer_time(staging_chunk(hw_, op.bytes), dir == CopyDir::H2D ? hw_.h2d_bw : hw_.d2h_bw);
            Time fixed = dir == CopyDir::H2D ? hw_.h2d_fixed : hw_.d2h_fixed;
            if (dir == CopyDir::H2D) {
                end = max(end, stage_end_.at(i) + fixed + chunk_dma);  // DMA trails the staging by a chunk
            } else {
                end = max(end, now_ + fixed + staging_time(hw_, dir, op.bytes));  // paced by the host draining
            }
        }
        copy_[static_cast<int>(dir)].current = static_cast<int32_t>(i);
        q_.push(end, prio(kGpuDone), kGpuDone, i);
    }

    void gpu_done(uint32_t i) {
        const Op& op = pg_.ops[i];
        OpRecord& r = tl_.ops[i];
        r.gpu_end = now_;
        done_[i] = 1;
        if (op.kind == OpKind::Prefetch) on_device_[op.buffer] = op.to_device;
        if (r.engine == Engine::H2D || r.engine == Engine::D2H) {
            CopyQueue& cq = copy_[r.engine == Engine::H2D ? 0 : 1];
            cq.current = -1;
            if (!cq.waiting.empty()) {
                uint32_t next = cq.waiting.front();
                cq.waiting.pop_front();
                tl_.ops[next].gpu_cause = Cause{static_cast<int32_t>(i), Phase::Gpu, CauseKind::Resource};
                start_copy(next, r.engine == Engine::H2D ? CopyDir::H2D : CopyDir::D2H);
            }
        }
        release_successors(i, now_);
    }

    // ------------------------------------------------------------ kernels on the SMs
    void enqueue_kernel(uint32_t i) {
        const Op& op = pg_.ops[i];
        KernelCost cost = kernel_cost(hw_, op);
        uint32_t per_sm = blocks_per_sm(hw_, op.shape);
        uint64_t wave = static_cast<uint64_t>(per_sm) * hw_.sm_count;
        uint64_t waves = (op.shape.grid + wave - 1) / wave;
        ActiveKernel k{i, op.shape.grid, 0, Time::ps(cost.duration.ps() / static_cast<int64_t>(waves)), Time{},
                       BlockNeed::of(op.shape), cost.memory_bound && hw_.hbm_sharing, false,
                       pg_.streams[op.stream].priority, order_++};
        for (uint32_t u = 0; u < op.uses_count; ++u) {
            uint32_t b = pg_.uses[op.uses_begin + u];
            if (!on_device_[b]) {
                k.first_extra += transfer_time(pg_.buffers[b].bytes, hw_.um_fault_bw);
                on_device_[b] = 1;
            }
        }
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
            if (!k.started && running_kernels_ >= kMaxConcurrentKernels) return;
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

    static constexpr uint32_t kMaxConcurrentKernels = 128;

    const Program& pg_;
    const HwProfile& hw_;
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
    std::vector<uint8_t> on_device_;
    std::unordered_map<uint32_t, Time> stage_end_;
    CopyQueue copy_[2];
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
