// The engine: the event loop, the host threads running their op lists, dependency binding at
// each call's simulated time (sim/binder.hpp), and the timeline. The GPU's work is the units'
// (hw/): the engine hands each ready op to the unit its kind's row of the op table names, and
// the units report back to the engine, their sink (hw/unit.hpp).
#include "sim/engine.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "hw/copy_engines.hpp"
#include "hw/host_sync.hpp"
#include "hw/host_threads.hpp"
#include "hw/managed_memory.hpp"
#include "hw/sm_scheduler.hpp"
#include "hw/staging.hpp"
#include "hw/stream_queues.hpp"
#include "hw/unit.hpp"
#include "models/copy_model.hpp"
#include "models/host_model.hpp"
#include "models/kernel_model.hpp"
#include "models/rules.hpp"
#include "sim/binder.hpp"
#include "sim/event_queue.hpp"

namespace hetsim {

namespace {

// Event types. At equal times completions run first, then GPU work becoming ready, then host
// steps; within a priority, in the order the events were scheduled.
enum EvType : uint32_t { kGpuDone, kBatchDone, kHostDone, kCopyDone, kGpuReady, kHostStep, kLockGrant, kHostFaults };
constexpr uint32_t prio(EvType t) { return t <= kCopyDone ? 0 : t == kGpuReady || t == kLockGrant ? 1 : 2; }

// The event queue's unit slots: 0 and 1 the copy engines (by direction), then the first kernel
// batches. Host steps go to the queue itself: a step is never superseded, and the sorted near
// events take one for fewer instructions than a slot, whose earliest must be found again after
// each pop (35 instructions an op fewer at bench/engine_pipeline.cpp's 10^4 ops).
constexpr uint32_t kFirstBatchSlot = 2, kBatchSlots = 4;
static_assert(kFirstBatchSlot + kBatchSlots <= EventQueue::kSlots);

constexpr uint32_t kThreadBit = 0x80000000u;  // edge target is a waiting host thread
constexpr uint32_t kParkedBit = 0x80000000u;  // a launch queue's waiter is a parked thread (park_step)

// The op kinds whose gap (Simulator::gap) is not a plain stream or event gap: a host callback
// and the markers.
constexpr uint32_t gap_kinds() {
    static_assert(kOpKinds <= 32);
    uint32_t m = 1u << static_cast<int>(OpKind::HostFunc);
    for (int k = 0; k < kOpKinds; ++k)
        if (detail::kOpTable[k].gpu == GpuWork::Marker) m |= 1u << k;
    return m;
}
constexpr uint32_t kGapKinds = gap_kinds();

struct Edge {
    uint32_t to;  // op index, or thread | kThreadBit
    int32_t next;
    CauseKind kind;
};

// A host thread running its op list.
struct ThreadState {
    const uint32_t* ops = nullptr;  // its op list (Program's), and its length
    uint32_t n_ops = 0;
    uint32_t pc = 0;
    bool waiting_deps = false;  // tasks form: blocked until the current op's `after` deps finish
    uint32_t wait_count = 0;    // blocked in a sync call until this many GPU ops finish
    Time wait_min_end;          // the call cannot return before this
    Time wake_extra;            // added after the last awaited op finishes
    bool sleeps = false;        // the wait sleeps: its wake-up follows how long (host.blocking_sync_*)
    Time wait_done;             // latest finish among awaited ops
    Cause wait_cause;
    Cause next_cause;           // why the next op may start (program order by default)
    bool resume = false;        // the wait is the first part of the current call (pageable_sync)
    bool presynced = false;     // the current call's stream sync is done
    Time ended;                 // when its last op's host phase ends (once it has run it)
    bool at_barrier = false;    // the current sync is a barrier's: the thread then waits for the others
    // Rule 8: the current host work's CPU-fault migration, at the full rate, or at
    // um.cpu_fault_beside_copies of it while a copy engine is busy; the work's own duration follows.
    bool faulting = false;
    uint32_t fault_version = 0;
    double fault_slow = 1;  // time factor now: 1, or 1 / um.cpu_fault_beside_copies
    Time fault_left;        // migration time left at the full rate
    Time fault_last;        // when fault_left was brought up to date
    Time fault_then;        // the work's own duration, after the migration
    // Parked (park_step): its next step, at park_end with the queue key park_key, is held back
    // until its stream's launch queue frees an entry.
    Time park_end;
    uint64_t park_key = 0;  // 0: not parked (a host step's key has priority bits)
};

// A timeline with a record per op: the units keep a pointer to them from the start.
Timeline records_for(const Program& pg) {
    Timeline t;
    t.ops.resize(pg.ops.size());
    return t;
}

// A time in the largest unit that shows it exactly: "10 s", "1500 ns", "1 ps".
std::string exact_time(Time t) {
    static const std::pair<int64_t, const char*> units[] = {{1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}};
    for (const auto& [scale, name] : units)
        if (t.ps() % scale == 0) return std::to_string(t.ps() / scale) + " " + name;
    return std::to_string(t.ps()) + " ps";
}

// The hot paths (submit, dispatch, release_successors, and the async and memcpy calls, which
// then hold submit rather than call it) are [[gnu::flatten]]: every engine
// function they call is inlined into them (binding, gaps, edges, the event queue), which saves
// the calls' prologues and keeps state in registers; the rare paths they reach (thread starts
// and joins, barriers, blocked host calls, warnings) are [[gnu::noinline]] so that flattening
// does not copy them into every call site (host_step flattened was 1.3 MB of code). The units
// of hw/ are templates on this class (hw/unit.hpp): their calls back (wake, finished) inline.
class Simulator {
public:
    Simulator(const Program& pg, const HwProfile& hw, const EngineOptions& o)
        : pg_(pg), hw_(effective_profile(hw)), opts_(o), tl_(records_for(pg)), binder_(pg, hw_.rules.legacy_sync), host_(pg, hw_), um_(pg, hw_),
          staging_(pg, hw_), hw_queues_(pg, hw_), launch_queues_(pg, hw_), copies_(pg, hw_, *this, staging_, um_),
          device_copies_(pg, hw_, *this), sms_(pg, hw_, *this), host_queues_(pg, hw_), flags_(pg, hw_) {
        size_t n = pg.ops.size();
        pending_.assign(n, 0);
        succ_.assign(n, -1);
        if (pg.tasks_form) {
            host_pending_.assign(n, 0);
            host_ready_.assign(n, Time{});
            host_ready_cause_.resize(n);
        }
        threads_.resize(pg.threads.size());
        for (uint32_t t = 0; t < pg.threads.size(); ++t) {
            threads_[t].ops = pg.threads[t].ops.data();
            threads_[t].n_ops = static_cast<uint32_t>(pg.threads[t].ops.size());
        }
        for (uint32_t t = 0; t < pg.threads.size(); ++t)
            if (pg.threads[t].start_after >= 0) starts_.emplace_back(static_cast<uint32_t>(pg.threads[t].start_after), t);
        std::sort(starts_.begin(), starts_.end());
        has_starts_ = !starts_.empty();
        if (pg.threads.size() == 1 && !pg.tasks_form && launch_queues_.enabled()) park_ops_ = threads_[0].n_ops;
        q_.reserve(64);
    }

    Timeline run() {
        for (uint32_t op : pg_.gpu_tasks) submit(op, Time{}, true);
        if (pg_.tasks_form)
            for (const auto& t : pg_.threads)
                for (uint32_t op : t.ops) add_task_deps(op, true);
        for (uint32_t t = 0; t < threads_.size(); ++t)
            if (pg_.threads[t].start_after < 0) push_step(t, Time{});
        while (const SimEvent* p = q_.try_pop()) {
            // The event's fields, read before its handler pushes events (which may write where
            // it waited in the queue).
            const SimEvent& e = *p;
            const uint32_t type = e.type(), a = e.a, b = e.b;
            Time now = Time::ps(e.time);
            // Two comparisons for the three checks of check_time(): a time in [now_, last_quiet_ps_]
            // is not backwards, not past the limit and not at the end of the range.
            if (e.time < now_.ps() || e.time > last_quiet_ps_) check_time(e, now);
            now_ = now;
            // Tests in the order of how often each type comes (host steps, GPU-ready, copies,
            // kernel batches): fewer instructions than a switch's bounds test and jump table.
            if (type == kHostStep) host_step(a, b);
            else if (type == kGpuReady) dispatch(a);
            else if (type == kCopyDone) copies_.on_event(a, b);
            else if (type == kBatchDone) sms_.on_event(a, b);
            else if (type == kGpuDone) finished(a);
            else if (type == kLockGrant) lock_wakes(a);  // a download waiting for the staging lock wakes
            else if (type == kHostFaults) cpu_faults_done(a, b);
            else release_successors<true>(a, now_);  // kHostDone: an op without a GPU phase
            if (after_) after_event();
        }
        if (parked_) unpark_at_end();
        if (!all_finished()) check_finished();
        tl_.end_to_end = latest_end_;
        tl_.sm_thread_occupancy_ps = sms_.thread_occupancy_ps();
        return std::move(tl_);
    }

    // The event time checks, in their order: the end of the range, backwards, past the limit.
    // An event that passes them all is in [now_, last_quiet_ps_] and was let through by run().
    [[gnu::noinline]] void check_time(const SimEvent& e, Time now) const {
        if (now == Time::max()) throw_time_overflow(e);
        if (now < now_) throw std::logic_error("hetsim engine: time went backwards");
        if (now > opts_.time_limit)
            throw DeadlockError("simulated time passed the limit of " + exact_time(opts_.time_limit) +
                                "; raise it with --time-limit");
    }

    // An event at Time::max(): a sum of times saturated there (core/time.hpp). The op it is
    // about is at fault: its duration or size, or the ops before it.
    [[noreturn]] void throw_time_overflow(const SimEvent& e) const {
        int64_t op = -1;
        switch (e.type()) {
            case kGpuDone: case kGpuReady: case kHostDone: case kLockGrant: op = e.a; break;
            case kHostFaults: op = pg_.threads[e.a].ops[threads_[e.a].pc]; break;
            case kHostStep: {
                const auto& ops = pg_.threads[e.a].ops;
                const uint32_t pc = threads_[e.a].pc;
                if (!ops.empty()) op = ops[pc > 0 ? std::min<size_t>(pc - 1, ops.size() - 1) : 0];
                break;
            }
            default:  // a copy or kernel batch: the GPU op that started last and has not ended
                for (size_t k = 0; k < tl_.ops.size(); ++k)
                    if (rec_[k].has_gpu() && !done(static_cast<uint32_t>(k)) &&
                        (op < 0 || rec_[k].gpu_start >= rec_[static_cast<size_t>(op)].gpu_start))
                        op = static_cast<int64_t>(k);
        }
        const std::string what = "the simulated time would reach the end of its range (2^63 ps, about 106 days)";
        if (op < 0) throw InputError(SourceLoc{}, what + "; shorten the scenario's durations or sizes");
        const Op& o = ops_[static_cast<size_t>(op)];
        throw InputError(pg_.loc(o), "op '" + pg_.op_name(static_cast<uint32_t>(op)) + "': " + what +
                                         " where it ends; give it a smaller duration or size (or the ops before it)");
    }

    // ------------------------------------------------------------ the units' sink (hw/unit.hpp)
    const Time& clock() const { return now_; }
    OpRecord* records() { return rec_; }
    // A copy engine's next completion (a = its direction) and the first batches' (a = batch)
    // wait in unit slots: the unit asks again only to move it (a rescale), so the event it
    // replaces never runs. One past the time limit or at the end of the range goes to the queue
    // instead (and empties the slot), so that the run stops there as when every superseded event
    // ran (and did nothing): a slot never holds such an event, and a rescale drops what it holds.
    void wake(UnitId unit, Time at, uint32_t a, uint32_t b) {
        const EvType t = unit == UnitId::CopyEngines ? kCopyDone : kBatchDone;
        const uint32_t k = unit == UnitId::CopyEngines ? a : a < kBatchSlots ? kFirstBatchSlot + a : EventQueue::kSlots;
        if (k == EventQueue::kSlots) return q_.push(at, prio(t), t, a, b);
        if (at.ps() > last_quiet_ps_) [[unlikely]] {
            q_.clear_slot(k);
            return q_.push(at, prio(t), t, a, b);
        }
        q_.set_slot(k, at, prio(t), t, a, b);
    }
    void finish_at(uint32_t op, Time at) { q_.push(at, prio(kGpuDone), kGpuDone, op); }
    void host_returns(uint32_t thread, uint32_t op, Time at) { finish_host(thread, op, at); }
    void after_event_work() { after_ = 1; }
    // The SMs hear of the copy engines only while memory-bound batches run, the only ones the
    // copies slow; after an event that may have started one, after_event() tells them again.
    void copy_engines_changed() {
        if (copy_hbm_ && sms_.memory_bound_running()) note_copies();
    }
    void finished(uint32_t i) {
        const Op& op = ops_[i];
        rec_[i].gpu_end = now_;
        --gpu_open_;
        latest_end_ = max(latest_end_, now_);
        if (op.kind == OpKind::Prefetch) um_.migrate(static_cast<uint32_t>(op.buffer), op.to_device, op.bytes);
        if (op.kind == OpKind::HostFunc && op.flag >= 0) release_blocked(flags_.set(static_cast<uint32_t>(op.flag), i, now_), CauseKind::Flag, Time{});
        release_successors<false>(i, now_);
    }

private:
    // What runs after an event once after_ is set: the CPU-fault migrations rescale while a
    // thread's run (rule 8), the SMs' memory-bound kernels when they changed (after_event_work).
    [[gnu::noinline]] void after_event() {
        if (faulting_ > 0) rescale_cpu_faults();
        if (copy_hbm_) note_copies();
        sms_.after_event();
        after_ = faulting_ > 0;
    }

    void note_copies() { sms_.copies_running(copies_.dma_busy(CopyDir::H2D), copies_.dma_busy(CopyDir::D2H)); }

    // ------------------------------------------------------------ host threads
    // Thread t's next step.
    // `entry`: its next op's launch queue is known to have an entry free then (park_step).
    void push_step(uint32_t t, Time at, uint32_t entry = 0) { q_.push(at, prio(kHostStep), kHostStep, t, entry); }

    void host_step(uint32_t t, uint32_t entry) {
        ThreadState& th = threads_[t];
        if (th.pc >= th.n_ops) return;
        uint32_t i = th.ops[th.pc];
        const Op& op = ops_[i];
        OpRecord& r = rec_[i];
        if (tasks_form_ && host_pending_[i] > 0) {
            th.waiting_deps = true;
            if (!r.has_host()) r.host_start = now_;  // the thread reached the op; it waits from here
            return;
        }
        if (!r.has_host()) r.host_start = now_;
        Time waited = now_ - r.host_start;
        r.host_cause = th.next_cause;
        if (tasks_form_ && waited > Time{}) r.host_cause = host_ready_cause_[i];
        r.sync_wait = waited;
        if (op.graph_node) return graph_node_step(t, i);  // issued by its GraphLaunch: no call of its own
        if (!entry && Program::is_stream_op(op.kind) && launch_queues_.full(op.stream)) return wait_launch_queue(t, i);
        // The calls a pipeline makes most here; the others, and what else a step may do, out of
        // line (host_call), so that this step keeps few registers to save.
        switch (op.kind) {
            case OpKind::Kernel: return async_call(t, i, hw_.launch_cost + host_.module_load(pg_.site(op).label));
            case OpKind::EventRecord: return async_call(t, i, hw_.event_record_cost);
            case OpKind::StreamWaitEvent: return async_call(t, i, hw_.stream_wait_event_cost);
            case OpKind::Memcpy:
                // A pinned (or device) async copy is what memcpy_call would make of it: a call
                // like a launch's.
                if (!op.sync && !is_pageable_copy(hw_, op)) {
                    th.presynced = false;
                    return async_call(t, i, hw_.memcpy_call_cost);
                }
                return memcpy_call(t, i);
            default: return host_call(t, i);
        }
    }

    [[gnu::noinline]] void graph_node_step(uint32_t t, uint32_t i) {
        submit(i, now_, false);
        finish_host(t, i, now_);
    }

    // The stream's launch queue is full: thread t waits for an entry.
    [[gnu::noinline]] void wait_launch_queue(uint32_t t, uint32_t i) {
        const Op& op = ops_[i];
        launch_queues_.wait(op.stream, t);
        note_queue_full(i, launch_queues_.oldest(op.stream));
    }
    // Op i's call waits for an entry of its stream's full launch queue, whose first op is `oldest`.
    void note_queue_full(uint32_t i, uint32_t oldest) {
        rec_[i].host_cause = Cause{static_cast<int32_t>(oldest), Phase::Gpu, CauseKind::Resource};
    }

    // Thread t calls op i now (host_step has noted its start and cause).
    [[gnu::noinline]] void host_call(uint32_t t, uint32_t i) {
        const Op& op = ops_[i];
        OpRecord& r = rec_[i];
        const Time call = now_;
        switch (op.kind) {
            case OpKind::HostWork: {
                const Time faults = cpu_faults(op);
                if (faults > Time{} && hw_.um_cpu_fault_beside_copies < 1) return start_cpu_faults(t, faults, op.duration);
                return finish_host(t, i, call + op.duration + faults);
            }
            case OpKind::Kernel: return async_call(t, i, hw_.launch_cost + host_.module_load(pg_.site(op).label));
            case OpKind::EventRecord: return async_call(t, i, hw_.event_record_cost);
            case OpKind::StreamWaitEvent: return async_call(t, i, hw_.stream_wait_event_cost);
            case OpKind::Prefetch: {
                // A prefetch to the device holds the host for part of its transfer (measured);
                // the transfer is issued at the start of the hold, not after it.
                const Time hold = op.to_device ? prefetch_host_hold(hw_, um_.to_move(static_cast<uint32_t>(op.buffer), true, op.bytes)) : Time{};
                const Time called = now_ + host_.call(t, hw_.prefetch_call_cost, now_);
                submit(i, called, false);
                return finish_host(t, i, called + hold);
            }
            case OpKind::Memset: return async_call(t, i, hw_.memset_call_cost);  // cudaMemset too (sync_call_waits)
            case OpKind::Memcpy: return memcpy_call(t, i);
            case OpKind::StreamSync: {
                targets_.clear();
                binder_.stream_tail(op.stream, [&](int32_t o) { targets_.push_back(o); });
                return block_on(t, i, targets_.data(), targets_.data() + targets_.size(), call + hw_.sync_call_cost, host_.sync_wakeup(),
                                host_.sync_wait());
            }
            case OpKind::EventSync: {
                const int32_t rec = binder_.event_last(op.event);
                if (rec < 0) warn_unrecorded(i);
                return block_on(t, i, &rec, &rec + 1, call + hw_.sync_call_cost, host_.event_wakeup(pg_.events[op.event]),
                                host_.event_wait(pg_.events[op.event]));
            }
            case OpKind::DeviceSync: return block_on_device(t, i, call + hw_.sync_call_cost, host_.sync_wakeup(), host_.sync_wait());
            case OpKind::HostFunc: return async_call(t, i, hw_.host_func_call_cost);
            case OpKind::GraphLaunch: {
                // The first launch of an executable uploads it to the device (Rule 7).
                const uint64_t nodes = pg_.graphs[op.graph].nodes.size();
                const Time upload = binder_.exec_last(op.exec) < 0 ? graph_upload_cost(hw_, nodes) : Time{};
                return async_call(t, i, graph_launch_cost(hw_, nodes) + upload);
            }
            case OpKind::GraphInstantiate: {
                const Graph& g = pg_.graphs[op.graph];
                Time cost = graph_instantiate_cost(hw_, g.nodes.size());
                for (const Op& node : g.nodes)
                    if (node.kind == OpKind::Kernel) cost += host_.module_load(pg_.site(node).label);
                return finish_host(t, i, call + host_.call(t, cost, now_));
            }
            case OpKind::Malloc: return finish_host(t, i, call + host_.call(t, malloc_cost(hw_, op.bytes), now_));
            case OpKind::MallocHost: return finish_host(t, i, call + host_.call(t, bytes_call_cost(op.bytes, hw_.malloc_host_bw), now_));
            case OpKind::HostRegister:
                return finish_host(t, i, call + host_.call(t, bytes_call_cost(op.bytes, hw_.host_register_bw), now_));
            case OpKind::Free:
            case OpKind::FreeHost: {
                // Both wait for the whole device first (they may release memory in use), then free.
                const Time cost = op.kind == OpKind::Free ? free_cost(hw_, op.bytes) : bytes_call_cost(op.bytes, hw_.free_host_bw);
                if (!hw_.rules.alloc_costs) return finish_host(t, i, call);
                return block_on_device(t, i, call + cost, cost);
            }
            case OpKind::MallocAsync:
            case OpKind::FreeAsync: return async_call(t, i, hw_.malloc_async_cost);
            case OpKind::QueuePut: {
                Time end;
                Release woken;
                if (!host_queues_.put(static_cast<uint32_t>(op.queue), Blocked{t, i}, now_, end, woken)) return;  // full: it waits
                finish_host(t, i, end);
                return release_blocked(woken, CauseKind::HostQueue, hw_.queue_get_cost);
            }
            case OpKind::QueueGet: {
                Time end;
                Release woken;
                int32_t from = -1;
                if (!host_queues_.get(static_cast<uint32_t>(op.queue), Blocked{t, i}, now_, end, woken, from)) return;  // empty: it waits
                if (end > now_ + hw_.queue_get_cost) {  // the item's put had not returned yet
                    r.sync_wait += end - now_ - hw_.queue_get_cost;
                    r.host_cause = Cause{from, Phase::Host, CauseKind::HostQueue};
                }
                finish_host(t, i, end);
                return release_blocked(woken, CauseKind::HostQueue, hw_.queue_put_cost);
            }
            case OpKind::HostWait: {
                Time end;
                if (!flags_.wait(static_cast<uint32_t>(op.flag), Blocked{t, i}, now_, end)) return;  // no set pending: it waits
                return finish_host(t, i, end);
            }
            case OpKind::Barrier:
                threads_[t].at_barrier = true;
                return block_on_device(t, i, call + hw_.sync_call_cost, host_.sync_wakeup(), host_.sync_wait());
            case OpKind::Join: {
                const uint32_t target = static_cast<uint32_t>(op.target);
                if (!thread_done(target)) {
                    joiners_.push_back(Blocked{t, i});  // it waits for the thread's last op
                    return;
                }
                const Time ended = threads_[target].ended;
                if (ended <= now_) return finish_host(t, i, now_);
                // Its last op is under way: the join returns when it ends.
                return release_blocked(Release{true, Blocked{t, i}, ended + hw_.join_wakeup, last_op(target)}, CauseKind::Thread, Time{});
            }
        }
    }

    // A thread blocked in a host queue, on a flag or in a join returns at w.end: the time
    // since it reached the op, less the call's own `cost`, was spent waiting.
    [[gnu::noinline]] void release_blocked(const Release& w, CauseKind kind, Time cost) {
        if (!w.any) return;
        OpRecord& r = rec_[w.who.op];
        r.sync_wait = w.end - cost - r.host_start;
        r.host_cause = Cause{static_cast<int32_t>(w.cause), kind == CauseKind::Flag ? Phase::Gpu : Phase::Host, kind};
        finish_host(w.who.thread, w.who.op, w.end);
    }

    // Thread t has run (or is running, until threads_[t].ended) its last op.
    bool thread_done(uint32_t t) const { return threads_[t].pc >= threads_[t].n_ops; }
    uint32_t last_op(uint32_t t) const { return pg_.threads[t].ops.back(); }

    // Host work touching managed buffers faults their pages back to the host first; the
    // pageable buffers it reads or writes are then in the CPU caches (an upload of one stages warm).
    Time cpu_faults(const Op& op) {
        Time extra;
        for (uint32_t k = 0; k < pg_.uses_count(op); ++k) {
            const uint32_t b = pg_.uses_begin(op)[k];
            if (pg_.buffers[b].kind == MemKind::Pageable) staging_.touch_buffer(static_cast<int32_t>(b));
            else extra += cpu_fault_time(hw_, um_.migrate(b, false));
        }
        return extra;
    }

    // Rule 8, CPU faults beside copies: host work whose pages migrate back runs its migration
    // first (`left` at the full rate), at um.cpu_fault_beside_copies of the rate while a copy
    // engine is busy, then its own duration `then`. Each change of the engines' state rescales
    // the migration (rescale_cpu_faults, after every event while one runs), as a copy's duplex
    // factor is rescaled (hw/copy_engines.hpp); a superseded completion event is ignored.
    [[gnu::noinline]] void start_cpu_faults(uint32_t t, Time left, Time then) {
        ThreadState& th = threads_[t];
        th.faulting = true;
        ++faulting_;
        after_ = 1;
        th.fault_left = left;
        th.fault_last = now_;
        th.fault_then = then;
        th.fault_slow = cpu_fault_slow();
        schedule_cpu_faults(t);
    }
    double cpu_fault_slow() const { return copies_.busy() ? 1.0 / hw_.um_cpu_fault_beside_copies : 1.0; }
    void schedule_cpu_faults(uint32_t t) {
        ThreadState& th = threads_[t];
        const Time left = th.fault_slow == 1 ? th.fault_left : Time::ps_of(std::ceil(static_cast<double>(th.fault_left.ps()) * th.fault_slow));
        q_.push(now_ + left, prio(kHostFaults), kHostFaults, t, ++th.fault_version);
    }
    [[gnu::noinline]] void rescale_cpu_faults() {
        const double slow = cpu_fault_slow();
        for (uint32_t t = 0; t < threads_.size(); ++t) {
            ThreadState& th = threads_[t];
            if (!th.faulting || th.fault_slow == slow) continue;
            const Time done = Time::ps_of(static_cast<double>((now_ - th.fault_last).ps()) / th.fault_slow);
            th.fault_left = th.fault_left > done ? th.fault_left - done : Time{};
            th.fault_last = now_;
            th.fault_slow = slow;
            schedule_cpu_faults(t);
        }
    }
    [[gnu::noinline]] void cpu_faults_done(uint32_t t, uint32_t version) {
        ThreadState& th = threads_[t];
        if (!th.faulting || th.fault_version != version) return;  // superseded by a rescale
        th.faulting = false;
        --faulting_;
        finish_host(t, pg_.threads[t].ops[th.pc], now_ + th.fault_then);
    }

    [[gnu::flatten]] void async_call(uint32_t t, uint32_t i, Time base) {
        Time end = now_ + host_.call(t, base, now_);
        submit(i, end, false);
        finish_host(t, i, end);
    }

    [[gnu::flatten]] void memcpy_call(uint32_t t, uint32_t i) {
        const Op& op = ops_[i];
        ThreadState& th = threads_[t];
        const bool pageable = is_pageable_copy(hw_, op);
        if (pageable && hw_.pageable_sync && !th.presynced) {
            // The documented behaviour: a pageable copy first synchronises its stream.
            targets_.clear();
            binder_.stream_tail(op.stream, [&](int32_t o) {
                if (o >= 0 && !done(static_cast<uint32_t>(o))) targets_.push_back(o);
            });
            if (!targets_.empty()) {
                th.resume = true;
                return block_on(t, i, targets_.data(), targets_.data() + targets_.size(), now_, host_.sync_wakeup(), host_.sync_wait());
            }
        }
        th.presynced = false;
        const Time called = now_ + host_.call(t, hw_.memcpy_call_cost, now_);
        const bool upload = pageable && op.dir == CopyDir::H2D;
        if (upload) staging_.touch(i);
        Time start = called;
        int32_t prev = -1;
        if (pageable && staging_.locks(op)) {
            // A pageable copy takes its direction's staging lock when called (rules.staging_lock):
            // while another thread's copy holds it, the call waits its turn, an upload until
            // release_staging_lock grants it, a download until it wakes (lock_wakes).
            prev = staging_.holder(i);
            start = staging_.acquire(i, t, called);
            if (start == Time::max()) return;
        }
        if (upload) return stage_upload(t, i, called, start, prev);
        issue_copy(t, i, called, start, prev);
    }

    // Copy i (not a pageable upload), called at `called`, goes on at `start` (later when it waited
    // for the staging lock, held by op `prev`).
    void issue_copy(uint32_t t, uint32_t i, Time called, Time start, int32_t prev) {
        const Op& op = ops_[i];
        const bool pageable = is_pageable_copy(hw_, op);
        if (start > called) {
            OpRecord& r = rec_[i];
            r.sync_wait += start - called;
            r.host_cause = Cause{prev, Phase::Host, CauseKind::Resource};
        }
        // A pageable D2H behind unfinished work of its stream returns host.pageable_d2h_wakeup after
        // its last chunk drains, one on an idle stream the sync wake-up after it (rule 2).
        bool behind = false;
        if (pageable)
            binder_.stream_tail(op.stream, [&](int32_t o) { behind = behind || (o >= 0 && !done(static_cast<uint32_t>(o))); });
        submit(i, start, false);
        const int32_t self = static_cast<int32_t>(i);
        if (pageable) {  // D2H: blocks until the copy is done and unstaged
            staging_.touch(i);
            const Time unstage = pageable_unstage_time(hw_, op, dma_rows(pg_.site(op), op.bytes), host_pitch(pg_.site(op), op.dir));
            return block_on(t, i, &self, &self + 1, start, unstage + (behind ? hw_.pageable_d2h_wakeup : host_.sync_wakeup()));
        }
        if (sync_call_waits(op)) return block_on(t, i, &self, &self + 1, start, host_.sync_wakeup(), host_.sync_wait());
        finish_host(t, i, start);
    }

    // Pageable upload i, called at `called`, stages from `start` (later when it waited for the
    // upload lock, held by op `prev`); the call returns once everything is staged. With more
    // bytes than the bounce-buffer pool holds, staging stalls until the DMA starts.
    void stage_upload(uint32_t t, uint32_t i, Time called, Time start, int32_t prev) {
        const Op& op = pg_.ops[i];
        if (start > called) {
            OpRecord& r = rec_[i];
            r.sync_wait += start - called;
            r.host_cause = Cause{prev, Phase::Host, CauseKind::Resource};
        }
        const Time staged = start + staging_.stage_time(i, op.bytes);
        submit(i, start, false);
        if (staging_.overfills_pool(op)) {  // the DMA cannot have started yet
            staging_.hold(i, t, start);
            return;  // the call returns when the DMA starts (Staging::dma_starts)
        }
        staging_.set_staged(i, staged);
        finish_host(t, i, staged);
    }

    // Copy i held its direction's staging lock and its call returns at `end`: the next upload
    // waiting stages; a download waiting wakes host.staging_lock_wakeup later (lock_wakes).
    [[gnu::noinline]] void release_staging_lock(uint32_t i, Time end) {
        staging_.release(
            i, end, [&](const Staging::Waiter& w, Time at) { stage_upload(w.thread, w.op, w.at, at, static_cast<int32_t>(i)); },
            [&](Time at) { q_.push(at, prio(kLockGrant), kLockGrant, i); });
    }

    // The first download waiting for the staging lock wakes: its call goes on if the lock is
    // still free (a call that asked since took it first; it waits for the next release then).
    [[gnu::noinline]] void lock_wakes(uint32_t released_by) {
        Staging::Waiter w{};
        if (staging_.wake(now_, w)) issue_copy(w.thread, w.op, w.at, now_, static_cast<int32_t>(released_by));
    }

    void finish_host(uint32_t t, uint32_t i, Time end) {
        OpRecord& r = rec_[i];
        if (staging_.holds(i)) release_staging_lock(i, end);
        r.host_end = end;
        latest_end_ = max(latest_end_, end);
        ThreadState& th = threads_[t];
        th.pc++;
        th.next_cause = Cause{static_cast<int32_t>(i), Phase::Host, CauseKind::ProgramOrder};
        if (has_starts_) start_threads(i, end);
        if (th.pc >= th.n_ops) {  // thread_done(t)
            th.ended = end;
            if (!joiners_.empty()) end_thread(t, i, end);
        }
        // Host-only ops release their successors when the host phase ends; ops with a GPU phase
        // release them when it ends (a blocking call must not release them twice).
        if (succ_[i] != -1 && !Program::has_gpu_phase(ops_[i].kind)) q_.push(end, prio(kHostDone), kHostDone, i);
        if (th.pc < park_ops_) {  // one thread (park_step), with an op after this one
            const Op& next = ops_[th.ops[th.pc]];
            if (Program::is_stream_op(next.kind) && launch_queues_.full_enabled(next.stream)) return park_step(t, end);
            return push_step(t, end, 1);  // no other thread fills the queue before the step
        }
        push_step(t, end);
    }

    // One host thread (park_ops_), whose next op goes to a stream whose launch queue is full now: its
    // step at `end` would find it still full unless an entry frees first, since no other thread
    // fills it. Instead of a step that waits for an entry (wait_launch_queue), the thread parks
    // in the queue's waiters with the step's queue key, taken now: when an entry frees by `end`,
    // the step goes to the queue with that key and runs as it would have; when later, what the
    // failed step did is done then (parked_step) and the thread steps now, as a waiter does.
    [[gnu::noinline]] void park_step(uint32_t t, Time end) {
        ThreadState& th = threads_[t];
        const Op& next = ops_[th.ops[th.pc]];
        // A graph node's step makes no call (graph_node_step); a step past the time limit or
        // before now stops the run (check_time).
        if (next.graph_node || end < now_ || end.ps() > last_quiet_ps_) return step_unparked(t, end);
        const int32_t stream = next.stream;
        th.park_end = end;
        th.park_key = q_.take_key(prio(kHostStep), kHostStep);
        launch_queues_.wait(stream, t | kParkedBit);
        ++parked_;
    }
    [[gnu::noinline]] void step_unparked(uint32_t t, Time end) { push_step(t, end); }
    // An entry of parked thread t's stream frees now, op `oldest` leaving it (in a GPU-ready
    // event: before any host step at the same time).
    [[gnu::noinline]] void unpark(uint32_t t, uint32_t oldest) {
        ThreadState& th = threads_[t];
        --parked_;
        const uint64_t key = th.park_key;
        th.park_key = 0;
        if (now_ <= th.park_end) return q_.push_keyed(th.park_end, key, t, 1);
        parked_step(t, oldest);
        push_step(t, now_, 1);
    }
    // What the step at park_end did, finding the launch queue full with op `oldest` first in it
    // (host_step and wait_launch_queue).
    void parked_step(uint32_t t, uint32_t oldest) {
        ThreadState& th = threads_[t];
        const uint32_t i = th.ops[th.pc];
        OpRecord& r = rec_[i];
        if (!r.has_host()) r.host_start = th.park_end;
        r.sync_wait = th.park_end - r.host_start;
        note_queue_full(i, oldest);
    }
    // No event is left and a thread is still parked: its step was the last event, and waits.
    [[gnu::noinline]] void unpark_at_end() {
        for (uint32_t t = 0; t < threads_.size(); ++t) {
            ThreadState& th = threads_[t];
            if (th.pc >= th.n_ops || th.park_key == 0) continue;
            now_ = max(now_, th.park_end);
            parked_step(t, launch_queues_.oldest(ops_[th.ops[th.pc]].stream));
            th.park_key = 0;
        }
        parked_ = 0;
    }

    // Threads created when op i's host phase ends start their first op a thread start later.
    [[gnu::noinline]] void start_threads(uint32_t i, Time end) {
        auto it = std::lower_bound(starts_.begin(), starts_.end(), std::make_pair(i, uint32_t{0}));
        for (; it != starts_.end() && it->first == i; ++it) {
            threads_[it->second].next_cause = Cause{static_cast<int32_t>(i), Phase::Host, CauseKind::Thread};
            push_step(it->second, end + hw_.thread_start);
        }
    }

    // Thread t ran its last op (i, ending at `end`): the joins waiting for it return.
    [[gnu::noinline]] void end_thread(uint32_t t, uint32_t i, Time end) {
        std::vector<Blocked> done;
        for (size_t k = 0; k < joiners_.size();) {
            if (static_cast<uint32_t>(ops_[joiners_[k].op].target) == t) {
                done.push_back(joiners_[k]);
                joiners_.erase(joiners_.begin() + static_cast<long>(k));
            } else {
                ++k;
            }
        }
        for (const Blocked& b : done) release_blocked(Release{true, b, end + hw_.join_wakeup, i}, CauseKind::Thread, Time{});
    }

    // Blocks thread t in op i until every op in [first, last) (-1 = none) has finished its GPU phase;
    // `how`: the thread spins while it waits (host.spin_contention on the other threads' calls), or
    // sleeps (it wakes after a time that follows how long it slept, not `wake_after`).
    void block_on(uint32_t t, uint32_t i, const int32_t* first, const int32_t* last, Time min_end, Time wake_after,
                  Wait how = Wait::Fixed) {
        ThreadState& th = threads_[t];
        if (how == Wait::Spin) host_.spin(t, now_);
        th.sleeps = how == Wait::Sleep;
        th.wait_count = 0;
        th.wait_min_end = min_end;
        th.wake_extra = wake_after;
        th.wait_done = Time{};
        th.wait_cause = Cause{};
        for (const int32_t* g = first; g != last; ++g) {
            if (*g < 0 || done(static_cast<uint32_t>(*g))) continue;  // already done when called: only the call cost
            ++th.wait_count;
            add_edge(static_cast<uint32_t>(*g), t | kThreadBit, CauseKind::Sync);
        }
        if (th.wait_count == 0) wake(t, i);
    }

    // The same for every stream's last work (device sync; cudaFree).
    [[gnu::noinline]] void block_on_device(uint32_t t, uint32_t i, Time min_end, Time wake_after, Wait how = Wait::Fixed) {
        targets_.clear();
        binder_.device_tail([&](int32_t o) { targets_.push_back(o); });
        block_on(t, i, targets_.data(), targets_.data() + targets_.size(), min_end, wake_after, how);
    }

    void note_wait(ThreadState& th, uint32_t g, Time end) {
        if (th.wait_cause.op < 0 || end >= th.wait_done) {
            th.wait_done = end;
            th.wait_cause = Cause{static_cast<int32_t>(g), Phase::Gpu, CauseKind::Sync};
        }
    }

    [[gnu::noinline]] void wake(uint32_t t, uint32_t i) {
        ThreadState& th = threads_[t];
        OpRecord& r = rec_[i];
        Time end = th.wait_min_end;
        const Time extra = th.sleeps ? host_.sleep_wakeup(th.wait_done - th.wait_min_end) : th.wake_extra;
        if (th.wait_cause.op >= 0 && th.wait_done + extra > end) {
            end = th.wait_done + extra;
            r.host_cause = th.wait_cause;
        }
        host_.unspin(t, end);
        if (th.resume) {  // the wait was the first part of the call: run the rest at `end`
            th.resume = false;
            th.presynced = true;
            push_step(t, end);
            return;
        }
        r.sync_wait += end - th.wait_min_end;
        if (th.at_barrier) return arrive(t, i, end);
        finish_host(t, i, end);
    }

    // Thread t reached a barrier between iterations and its device sync returned at `end`:
    // once every thread has, all go on together, when the last one arrived.
    [[gnu::noinline]] void arrive(uint32_t t, uint32_t i, Time end) {
        threads_[t].at_barrier = false;
        barrier_.push_back(Arrival{t, i, end});
        barrier_last_ = max(barrier_last_, end);
        if (barrier_.size() < threads_.size()) return;
        for (const Arrival& a : barrier_) {
            rec_[a.op].sync_wait += barrier_last_ - a.at;
            finish_host(a.thread, a.op, barrier_last_);
        }
        if (++barriers_passed_ == pg_.warmup) tl_.measured_from = barrier_last_;
        barrier_.clear();
    }

    // ------------------------------------------------------------ GPU submission and dependencies
    Time gap(uint32_t from, uint32_t to, CauseKind kind, bool from_host) const {
        if (from_host) return ops_[to].thread >= 0 ? Time{} : hw_.launch_latency;
        const Op& t = ops_[to];
        // Stream order between two ops that are neither callbacks nor markers, nor both graph
        // nodes: the stream gap (what the tests below come to), with one test of both kinds.
        if (kind == CauseKind::StreamOrder && !(((1u << static_cast<int>(t.kind)) | (1u << static_cast<int>(ops_[from].kind))) & kGapKinds) &&
            !(t.graph_node && ops_[from].graph_node))
            return hw_.stream_gap;
        if (t.kind == OpKind::HostFunc) return callback_latency(rec_[from].gpu_end);  // the stream reaches the callback
        if (ops_[from].kind == OpKind::HostFunc && kind == CauseKind::StreamOrder) return hw_.host_func_gap;
        if (t.graph_node && ops_[from].graph_node && kind == CauseKind::StreamOrder)
            return graph_node_gap(hw_, ops_[from], rec_[from].gpu_end - rec_[from].gpu_start);
        // Markers (event record, stream wait) take no gap on the way in; the op after a marker
        // pays the gap of the dependency that released the marker (an event: the event gap).
        if (Program::is_marker(ops_[to].kind)) return Time{};
        if (Program::is_marker(ops_[from].kind)) {
            kind = rec_[from].gpu_cause.kind;
            if (kind == CauseKind::GraphExec) {  // a launch held by the previous one
                // rules.graphs off: behind it in the same stream, a stream launch's gap.
                const int32_t held_by = rec_[from].gpu_cause.op;
                if (!hw_.rules.graphs && held_by >= 0 && ops_[static_cast<uint32_t>(held_by)].stream == ops_[from].stream)
                    return hw_.stream_gap;
                return hw_.graph_relaunch_gap;
            }
            if (kind != CauseKind::StreamOrder && kind != CauseKind::Event && kind != CauseKind::Legacy &&
                kind != CauseKind::After)
                return Time{};
        }
        if (kind == CauseKind::StreamOrder) return hw_.stream_gap;
        if (kind == CauseKind::After && ops_[from].stream == ops_[to].stream) return hw_.stream_gap;
        return hw_.event_gap;
    }

    // Rule 6: a callback whose stream's work is done (or that was called onto an idle stream) at
    // `signalled` starts this much later; the longer the driver's callback thread had been idle
    // since its last callback returned, the later.
    Time callback_latency(Time signalled) const {
        return host_func_latency(hw_, callback_op_ >= 0 ? signalled - callback_free_ : Time::max());
    }

    // The extra hand-over between a kernel and a pinned H2D/D2H copy, in either order:
    // gpu.cross_engine_wait between stream launches, graph.cross_engine_wait between the nodes of
    // a graph, none between a graph node and a stream launch.
    Time cross_engine_wait(uint32_t from, uint32_t to) const {
        const Op& a = ops_[from];
        const Op& b = ops_[to];
        auto engine_copy = [&](const Op& o) {
            return o.kind == OpKind::Memcpy && o.dir != CopyDir::D2D && !is_pageable_copy(hw_, o);
        };
        if (a.graph_node != b.graph_node) return Time{};
        const Time wait = a.graph_node ? hw_.graph_cross_engine_wait : hw_.cross_engine_wait;
        return (a.kind == OpKind::Kernel && engine_copy(b)) || (b.kind == OpKind::Kernel && engine_copy(a)) ? wait : Time{};
    }

    // When GPU op i may start, as its dependencies have said so far: kept in its record's
    // gpu_start from its submission until a unit starts it (and writes the real start there),
    // so that the engine holds no per-op times of its own.
    Time& ready(uint32_t i) { return rec_[i].gpu_start; }

    // A GPU phase is done once it has an end.
    bool done(uint32_t i) const { return rec_[i].gpu_end.ps() != OpRecord::kUnset; }

    // Successor edges live in one pool; an op's edges go back to it once they are released.
    // An op whose one successor so far is a GPU op in stream order (the usual case) holds it in
    // succ_ itself, as kDirect - to, without a pool edge; a second successor moves it to the
    // pool first, behind the new edge, so the successors are released in the same order.
    static constexpr int32_t kDirect = -2;
    static constexpr uint32_t kDirectMax = 0x7ffffffdu;  // kDirect - to stays in int32_t
    void add_edge(uint32_t from, uint32_t to, CauseKind kind) {
        int32_t head = succ_[from];
        if (head == -1 && kind == CauseKind::StreamOrder && to <= kDirectMax) {  // kThreadBit is above kDirectMax
            succ_[from] = kDirect - static_cast<int32_t>(to);
            return;
        }
        if (head <= kDirect) head = pool_edge(static_cast<uint32_t>(kDirect - head), -1, CauseKind::StreamOrder);
        succ_[from] = pool_edge(to, head, kind);
    }
    int32_t pool_edge(uint32_t to, int32_t next, CauseKind kind) {
        int32_t e;
        if (free_edge_ >= 0) {
            e = free_edge_;
            free_edge_ = edges_[e].next;
            edges_[e] = Edge{to, next, kind};
        } else {
            e = static_cast<int32_t>(edges_.size());
            edges_.push_back(Edge{to, next, kind});
        }
        return e;
    }

    // GPU phase of `i` depends on the GPU phase of `dep`.
    void add_dep(uint32_t i, int32_t dep, CauseKind kind) {
        if (dep < 0) return;
        uint32_t d = static_cast<uint32_t>(dep);
        if (done(d)) {
            Time t = rec_[d].gpu_end + gap(d, i, kind, false);
            if (t > ready(i)) {
                ready(i) = t;
                rec_[i].gpu_cause = Cause{dep, Phase::Gpu, kind};
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

    [[gnu::flatten]] void submit(uint32_t i, Time at, bool task) {
        const Op& op = ops_[i];
        ++gpu_open_;
        ready(i) = at + (task ? Time{} : op.kind == OpKind::HostFunc ? callback_latency(at) : hw_.launch_latency);
        rec_[i].gpu_cause = task ? Cause{} : Cause{static_cast<int32_t>(i), Phase::Host, CauseKind::Submit};
        if (!task && is_pageable_copy(hw_, op) && op.dir == CopyDir::H2D) {
            Time first = at + staging_.stage_time(i, staging_chunk(hw_, op.bytes));
            if (first > ready(i)) ready(i) = first;
        }
        binder_.bind(i, [&](int32_t dep, CauseKind kind) {
            if (kind == CauseKind::Event && dep < 0) warn_unrecorded(i);
            add_dep(i, dep, kind);
        });
        if (task) add_task_deps(i, false);
        // Copies on the H2D/D2H engines (and prefetches) do not wait in the stream's hardware
        // queue behind other streams' kernels (docs/model.md Rule 5; validation 67).
        if (hw_queues_.enabled() && !task) {
            const bool engine_copy = (op.kind == OpKind::Memcpy && op.dir != CopyDir::D2D) || op.kind == OpKind::Prefetch;
            if (!engine_copy && hw_queues_.join(i, op.stream)) ++pending_[i];
        }
        if (!task && !op.graph_node && launch_queues_.enabled()) launch_queues_.push(op.stream, i);
        binder_.issued(i);
        if (pending_[i] == 0) q_.push(ready(i), prio(kGpuReady), kGpuReady, i);
    }

    [[gnu::noinline]] void warn_unrecorded(uint32_t i) {
        const Op& op = ops_[i];
        tl_.warnings.push_back(pg_.op_name(i) + ": waits on event '" + pg_.events[op.event].name +
                               "' before any record of it; the wait completes at once (as in CUDA)");
    }

    // A phase of op `from` finished at `end`: release what waits on it. `from_host`: the phase
    // is the host phase of an op without a GPU phase (kHostDone), else the GPU phase (finished()).
    template <bool from_host>
    [[gnu::flatten]] void release_successors(uint32_t from, Time end) {
        int32_t e = succ_[from];
        succ_[from] = -1;
        if (e <= kDirect) return release<from_host>(from, end, static_cast<uint32_t>(kDirect - e), CauseKind::StreamOrder);
        while (e >= 0) {
            const Edge ed = edges_[e];
            edges_[e].next = free_edge_;  // back to the pool
            free_edge_ = e;
            e = ed.next;
            release<from_host>(from, end, ed.to, ed.kind);
        }
    }

    // A thread blocked in a sync call waits for one op fewer.
    [[gnu::noinline]] void release_thread(uint32_t from, Time end, uint32_t t) {
        ThreadState& th = threads_[t];
        note_wait(th, from, end);
        if (--th.wait_count == 0) wake(t, th.ops[th.pc]);
    }

    // The edge from `from` to `to` (an op, or a thread | kThreadBit), of `kind`, is released.
    template <bool from_host>
    void release(uint32_t from, Time end, uint32_t to, CauseKind kind) {
        if (to & kThreadBit) return release_thread(from, end, to & ~kThreadBit);
        Time at = end + gap(from, to, kind, from_host);
        // Rule 1: a pinned copy that already waited on the GPU for the kernel before it in
        // its stream (or a kernel for such a copy) is handed over later than a kernel to a kernel;
        // rule 7: the same between the nodes of a graph, by graph.cross_engine_wait.
        if (!from_host && kind == CauseKind::StreamOrder && ready(to) <= end) at += cross_engine_wait(from, to);
        Cause c{static_cast<int32_t>(from), from_host ? Phase::Host : Phase::Gpu, kind};
        if (Program::has_gpu_phase(ops_[to].kind)) {
            Cause& why = rec_[to].gpu_cause;
            if (at > ready(to) || why.kind == CauseKind::None) {
                ready(to) = max(ready(to), at);
                why = c;
            }
            if (--pending_[to] == 0) q_.push(ready(to), prio(kGpuReady), kGpuReady, to);
        } else {
            if (!from_host) at = end + host_.sync_wakeup();
            if (at >= host_ready_[to]) {
                host_ready_[to] = at;
                host_ready_cause_[to] = c;
            }
            if (--host_pending_[to] == 0) {
                uint32_t t = static_cast<uint32_t>(ops_[to].thread);
                if (threads_[t].waiting_deps && pg_.threads[t].ops[threads_[t].pc] == to) {
                    threads_[t].waiting_deps = false;
                    push_step(t, max(host_ready_[to], now_));
                }
            }
        }
    }

    // ------------------------------------------------------------ GPU work to its unit
    [[gnu::flatten]] void dispatch(uint32_t i) {
        const Op& op = ops_[i];
        // A kernel that touches no managed buffer, and a copy on the H2D or D2H engine (not a
        // tasks-form pageable upload): to their units here; every other case in dispatch_other.
        // Such a copy never joined a hardware queue (submit): it leaves its launch queue only.
        if (op.kind == OpKind::Memcpy && op.dir != CopyDir::D2D && !(tasks_form_ && op.dir == CopyDir::H2D && is_pageable_copy(hw_, op))) {
            leave_launch_queue(i);
            return copies_.submit(i);
        }
        // Rule 6: the driver runs callbacks one at a time; one whose work is done while another
        // runs starts gpu.host_func_latency after that one returns (it stays in its queues).
        if (op.kind == OpKind::HostFunc && hw_.rules.callback_idle && callback_free_ > now_) {
            ready(i) = callback_free_ + hw_.host_func_latency;
            rec_[i].gpu_cause = Cause{callback_op_, Phase::Gpu, CauseKind::Resource};
            return q_.push(ready(i), prio(kGpuReady), kGpuReady, i);
        }
        leave_queues(i);
        const GpuWork work = op_info(op.kind).gpu;
        if (work == GpuWork::Kernel && pg_.uses_count(op) == 0) return sms_.submit(i, ready(i), Time{});
        dispatch_other(i);
    }

    [[gnu::noinline]] void dispatch_other(uint32_t i) {
        const Op& op = ops_[i];
        OpRecord& r = rec_[i];  // its gpu_cause says what released it last
        switch (op_info(op.kind).gpu) {
            case GpuWork::Marker:
                r.gpu_start = now_;
                r.gpu_end = now_;
                return finished(i);
            case GpuWork::Callback:  // runs on a driver thread; the stream waits for it
                r.gpu_start = now_;
                callback_free_ = now_ + op.duration;
                callback_op_ = static_cast<int32_t>(i);
                return finish_at(i, now_ + op.duration);
            case GpuWork::Kernel: {
                // A kernel touching managed buffers faults them to the device first.
                Time faults;
                for (uint32_t u = 0; u < pg_.uses_count(op); ++u) faults += gpu_fault_time(hw_, um_.migrate(pg_.uses_begin(op)[u], true));
                return sms_.submit(i, ready(i), faults);
            }
            case GpuWork::Copy:
                if (op.kind == OpKind::Memset || (op.kind == OpKind::Memcpy && op.dir == CopyDir::D2D)) {
                    if (hw_.rules.device_copy_sms && hw_.rules.sm_residency) return sms_.submit_device_copy(i, ready(i), device_copies_.duration(i));
                    return device_copies_.submit(i);
                }
                if (is_pageable_copy(hw_, op) && op.dir == CopyDir::H2D && pg_.tasks_form && !staging_.has_staged(i)) {
                    // Tasks form: no host call staged the data; staging starts when the copy is
                    // ready, and the DMA may start once the first chunk is staged.
                    staging_.touch(i);
                    staging_.set_staged(i, now_ + staging_.stage_time(i, op.bytes));
                    q_.push(now_ + staging_.stage_time(i, staging_chunk(hw_, op.bytes)), prio(kGpuReady), kGpuReady, i);
                    return;
                }
                return copies_.submit(i);
            case GpuWork::None: return;
        }
    }

    // Op i leaves its hardware queue and its stream's launch queue when the GPU takes it.
    void leave_queues(uint32_t i) {
        const Op& op = ops_[i];
        if (int32_t next = hw_queues_.leave(i, op.stream); next >= 0) {
            const uint32_t j = static_cast<uint32_t>(next);
            Cause& why = rec_[j].gpu_cause;
            if (now_ > ready(j) || why.kind == CauseKind::None) {
                ready(j) = max(ready(j), now_);
                why = Cause{static_cast<int32_t>(i), Phase::Gpu, CauseKind::Queue};
            }
            if (--pending_[j] == 0) q_.push(ready(j), prio(kGpuReady), kGpuReady, j);
        }
        leave_launch_queue(i);
    }
    void leave_launch_queue(uint32_t i) {
        const Op& op = ops_[i];
        if (op.thread >= 0 && !op.graph_node && launch_queues_.enabled())
            launch_queues_.take(op.stream, i, [&](uint32_t t) {
                if (t & kParkedBit) return unpark(t & ~kParkedBit, i);
                push_step(t, now_);
            });
    }

    // ------------------------------------------------------------ end of run
    // For the deadlock message: the unfinished ops that `i` waits on, with the kind of each
    // dependency ("h2d1 (after), k0 (stream order)"), from the edges still pending.
    std::string waited_on(uint32_t i, uint32_t pending) const {
        std::string s;
        uint32_t named = 0;
        for (uint32_t d = 0; d < pg_.ops.size() && named < 4; ++d) {
            const int32_t head = is_finished(d) ? -1 : succ_[d];
            if (head <= kDirect) {  // one stream-order successor, held in succ_
                if (static_cast<uint32_t>(kDirect - head) == i)
                    s += (named++ ? ", " : "") + pg_.op_name(d) + " (" + to_string(CauseKind::StreamOrder) + ")";
                continue;
            }
            for (int32_t e = head; e >= 0; e = edges_[static_cast<size_t>(e)].next)
                if (edges_[static_cast<size_t>(e)].to == i) {
                    s += (named++ ? ", " : "") + pg_.op_name(d) + " (" + to_string(edges_[static_cast<size_t>(e)].kind) + ")";
                    break;
                }
        }
        if (named == 0) return std::to_string(pending) + " unfinished dependencies";
        if (pending > named) s += " and " + std::to_string(pending - named) + " more";
        return s;
    }

    bool is_finished(uint32_t i) const {
        const Op& op = ops_[i];
        return (op.thread < 0 || rec_[i].host_end.ps() != OpRecord::kUnset) && (!Program::has_gpu_phase(op.kind) || done(i));
    }

    // " (blocked at OP)": the op at which host thread `t` stopped.
    std::string blocked_at(int32_t t) const {
        const auto& list = pg_.threads[static_cast<size_t>(t)].ops;
        const uint32_t pc = threads_[static_cast<size_t>(t)].pc;
        return pc < list.size() ? " (it is blocked at " + pg_.op_name(list[pc]) + ")" : "";
    }

    // ": waits for ..." for a thread blocked on another host thread.
    std::string blocked_reason(const Op& op) const {
        switch (op.kind) {
            case OpKind::QueueGet:
                return ": waits for a put into host queue '" + pg_.queues[op.queue].name +
                       "', which stays empty: no thread puts into it any more";
            case OpKind::QueuePut:
                return ": waits for a get from host queue '" + pg_.queues[op.queue].name + "', which stays full (" +
                       std::to_string(host_queues_.items(static_cast<uint32_t>(op.queue))) + " of " +
                       std::to_string(host_queues_.capacity(static_cast<uint32_t>(op.queue))) + " items): no thread gets from it any more";
            case OpKind::HostWait:
                return ": waits for a host_func callback to set flag '" + pg_.flags[op.flag].name + "'; none sets it any more";
            case OpKind::Join:
                return ": waits for host thread '" + pg_.threads[op.target].name + "' to run its last op" + blocked_at(op.target);
            default: return "";
        }
    }

    // Every op finished, without walking them: each op is in one thread's list or in gpu_tasks
    // (core/program_json.cpp checks it), so when the lists hold every op and each thread ran its
    // whole list (each list op's host phase ended), every GPU op was submitted; and none is
    // still open. Otherwise check_finished() walks the ops to name the unfinished ones.
    bool all_finished() const {
        if (gpu_open_ != 0) return false;
        size_t listed = pg_.gpu_tasks.size();
        for (uint32_t t = 0; t < threads_.size(); ++t) {
            if (!thread_done(t)) return false;
            listed += pg_.threads[t].ops.size();
        }
        return listed == pg_.ops.size();
    }

    void check_finished() {
        std::string stuck;
        int count = 0;
        for (uint32_t i = 0; i < pg_.ops.size(); ++i) {
            const Op& op = ops_[i];
            const OpRecord& r = rec_[i];
            if (is_finished(i)) continue;
            if (++count <= 10) {
                stuck += "\n  " + pg_.op_name(i) + " (" + to_string(op.kind) + ")";
                const uint32_t host_deps = pg_.tasks_form ? host_pending_[i] : 0;
                if (host_deps || pending_[i]) stuck += ": waits on " + waited_on(i, host_deps + pending_[i]);
                else if (op.thread >= 0 && !r.has_host())
                    stuck += ": its host thread '" + pg_.threads[op.thread].name + "' never reached it" + blocked_at(op.thread);
                else if (op.thread >= 0)
                    stuck += blocked_reason(op);
            }
        }
        if (count > 10) stuck += "\n  ... and " + std::to_string(count - 10) + " more";
        if (count)
            throw DeadlockError("deadlock: " + std::to_string(count) + " ops never finished when no event remained:" + stuck);
    }

    const Program& pg_;
    const HwProfile hw_;
    EngineOptions opts_;
    Timeline tl_;
    // The ops and their records, fixed for the run: raw pointers, which the compiler keeps in
    // registers where a vector's data pointer would be loaded again after every store.
    const Op* const ops_ = pg_.ops.data();
    OpRecord* const rec_ = tl_.ops.data();
    const bool tasks_form_ = pg_.tasks_form;
    EventQueue q_;
    Time now_;
    Binder binder_;
    HostThreads host_;
    ManagedMemory um_;
    Staging staging_;
    HardwareQueues hw_queues_;
    LaunchQueues launch_queues_;
    CopyEngines<Simulator> copies_;
    DeviceCopies<Simulator> device_copies_;
    SmScheduler<Simulator> sms_;
    HostQueues host_queues_;
    Flags flags_;
    std::vector<std::pair<uint32_t, uint32_t>> starts_;  // (op, thread created when its host phase ends), sorted
    bool has_starts_ = false;                            // starts_ is not empty
    std::vector<Blocked> joiners_;                       // joins waiting for their thread
    struct Arrival {
        uint32_t thread, op;
        Time at;
    };
    std::vector<Arrival> barrier_;  // threads waiting at the current barrier
    Time barrier_last_;
    uint32_t barriers_passed_ = 0;
    std::vector<uint32_t, LargeAlloc<uint32_t>> pending_, host_pending_;
    std::vector<Time> host_ready_;  // tasks form: when each host op's `after` dependencies let it start
    // Until an op's GPU phase is dispatched, its record's gpu_cause says what released it last;
    // tasks-form host ops keep theirs here.
    std::vector<Cause> host_ready_cause_;
    std::vector<int32_t, LargeAlloc<int32_t>> succ_;  // per op: -1 none, a pool edge, or kDirect - a successor (add_edge)
    std::vector<Edge> edges_;
    int64_t gpu_open_ = 0;  // GPU phases submitted and not finished
    Time latest_end_;       // the latest end of any phase so far: the run's end-to-end time
    Time callback_free_;    // when the driver's callback thread returns from the last callback started
    int32_t callback_op_ = -1;  // ... that callback (-1: none has run)
    int32_t free_edge_ = -1;
    // The latest time at which an event that does nothing stops nothing either: below the time
    // limit and the end of the range (wake()).
    const int64_t last_quiet_ps_ = std::min(opts_.time_limit.ps(), Time::max().ps() - 1);
    std::vector<int32_t> targets_;  // scratch: the ops a sync waits for
    std::vector<ThreadState> threads_;
    uint32_t faulting_ = 0;  // threads whose host work migrates managed memory back (start_cpu_faults)
    // Copies slow memory-bound kernels (rules.copy_hbm, with the SM scheduler and a slow-down).
    const bool copy_hbm_ = hw_.rules.copy_hbm && hw_.rules.sm_residency && (hw_.hbm_beside_h2d > 0 || hw_.hbm_beside_d2h > 0);
    uint32_t after_ = 0;     // nonzero while faulting_ > 0 or the SMs asked for after_event_work()
    // One host thread, not tasks form, launch queues: its op count, else 0 (no step parks: park_step).
    uint32_t park_ops_ = 0;
    uint32_t parked_ = 0;    // threads parked now
};

}  // namespace

Timeline simulate(const Program& program, const HwProfile& hw, const EngineOptions& opts) {
    Simulator e(program, hw, opts);
    return e.run();
}

}  // namespace hetsim
