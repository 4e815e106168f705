// The SM scheduler: kernels ready to run are placed on the SMs' block slots in batches (as many
// blocks as fit: breadth-first for a kernel that finds room when it becomes ready, depth-first
// for blocks that waited for room, rules.refill_deep; within the shared-memory carveout of busy
// SMs, rules.smem_carveout; hw/sm_pool.hpp), highest stream priority first, then in the order
// they became ready; at most
// gpu.max_kernels run at once; a kernel from another stream starts only once room frees up
// (hardware-notes #14, #16). Memory-bound kernels share HBM equally. Durations (the kernel's
// cost, split into waves) come from models/kernel_model. Device-to-device copies and memsets are
// kernels too (rules.device_copy_sms): one starts when the SMs have any room, takes all of it,
// and no other kernel starts until it ends (validation/measurements/h200/2026-12-02o/x). While
// an H2D or D2H copy engine transfers, memory-bound kernels progress 1 + hbm.beside_h2d (+
// hbm.beside_d2h) times slower (rules.copy_hbm; the microbenchmark section hbm_beside_copies).
// A memory-bound kernel's blocks do not free their SMs together: its batch is split into
// kDrainParts parts over its SMs that end from hbm.drain_start of the batch's time to its end, and
// a kernel that is not memory-bound starting beside one takes kernel.beside_hbm_extra longer
// (rules.beside_streaming; probes of validation/measurements/h200/2026-12-03r).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hw/sm_pool.hpp"
#include "hw/unit.hpp"
#include "models/kernel_model.hpp"
#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

template <class Sink>
class SmScheduler : UnitBase<Sink> {
    using UnitBase<Sink>::sink_, UnitBase<Sink>::now_, UnitBase<Sink>::rec_;

public:
    SmScheduler(const Program& pg, const HwProfile& hw, Sink& sink) : UnitBase<Sink>(sink), pg_(pg), hw_(hw), sm_(hw) {
        for (const Stream& s : pg.streams) priorities_ = priorities_ || (hw.rules.priorities && s.priority != pg.streams[0].priority);
    }
    // Kernel `op`, ready since `ready`, asks for the SMs now; its first blocks stall `faults`
    // on managed-memory faults.
    void submit(uint32_t op, Time ready, Time faults);
    // D2D copy or memset `op`, ready since `ready`, taking `duration` on an otherwise idle device,
    // asks for the SMs now.
    void submit_device_copy(uint32_t op, Time ready, Time duration);
    // A completion event this unit asked for.
    void on_event(uint32_t batch, uint32_t version);
    // After an event that changed the memory-bound kernels (the unit asks for it through its
    // sink's after_event_work()): running memory-bound kernels are rescaled if their number changed.
    void after_event() {
        if (mem_dirty_) rescale_memory_bound();
    }
    // Whether the H2D and the D2H copy engines transfer now (rules.copy_hbm): called when either
    // changes; memory-bound kernels slow by hbm.beside_h2d / hbm.beside_d2h while they do.
    void copies_running(bool h2d, bool d2h) {
        const double slow = 1 + (h2d ? hw_.hbm_beside_h2d : 0) + (d2h ? hw_.hbm_beside_d2h : 0);
        if (slow == slow_) return;
        slow_ = slow;
        if (!mem_batches_.empty()) {
            mem_dirty_ = true;
            sink_.after_event_work();
        }
    }
    // Whether memory-bound batches run: only they feel the copy engines (copies_running).
    bool memory_bound_running() const { return !mem_batches_.empty(); }
    // Integral over time of (used threads / all threads), in ps.
    double thread_occupancy_ps() const { return occupancy_ps_; }

private:
    struct Kernel {
        uint32_t op;
        uint32_t unplaced;
        uint32_t running_batches = 0;
        Time block_time;   // one wave
        Time first_extra;  // managed-memory fault stall paid by the first batch
        BlockNeed need;
        bool mem_bound;
        bool started = false;
        int priority;
        uint64_t order;
        Time ready;
        bool device_copy = false;  // a D2D copy or memset: block_time is its time on an idle device
        bool draining = false;     // memory-bound: a part of its blocks ended, others run (rules.beside_streaming)
    };
    struct Batch {
        uint32_t kernel;  // index into kernels_
        uint32_t blocks = 0;
        uint32_t version = 0;
        bool live = false;
        bool held = false;  // its blocks are done; the kernel's completion waits for fault_until_ (rule fault_hold)
        bool final_part = false;  // a drain part of a memory-bound kernel's last placement (rules.beside_streaming)
        Time work_left;  // memory-bound batches: full-speed work still to do
        Time last;       // when work_left was last brought up to date
        std::vector<SmRun> runs;
    };
    void fill();
    void enqueue(uint32_t slot);
    uint32_t new_kernel();
    // One round of placing kernel `slot` as many blocks as fit: kStop when none can start now
    // (fill() stops there), else whether all its blocks are placed.
    enum class Round { kStop, kPlaced, kPartial };
    // `waited`: the kernel is one of waiting_ (it did not all fit when it became ready).
    Round place_round(uint32_t slot, bool waited);
    Round place_device_copy(uint32_t slot);
    uint32_t new_batch(uint32_t kernel);
    void schedule(uint32_t batch, Time end);
    void retire(uint32_t batch, bool last);
    [[gnu::noinline, gnu::cold]] void start_hold(uint32_t batch);
    [[gnu::noinline, gnu::cold]] void end_hold(uint32_t batch);
    void rescale_memory_bound();
    // Time to do `work` (at full speed) with `n` memory-bound kernels sharing HBM (1 without
    // hbm.sharing) and the copies' slow-down `slow`: exact integers while slow is 1.
    Time stretched(Time work, int64_t n, double slow) const {
        if (!hw_.hbm_sharing) n = 1;
        if (slow == 1) return Time::ps_times(work.ps(), std::max<int64_t>(1, n));
        return Time::ps_ceil(static_cast<double>(work.ps()) * static_cast<double>(std::max<int64_t>(1, n)) * slow);
    }
    void account_occupancy();

    const Program& pg_;
    const HwProfile& hw_;
    SmPool sm_;
    std::vector<Kernel> kernels_;
    std::vector<uint32_t> free_kernels_, waiting_;
    std::vector<Batch> batches_;
    std::vector<uint32_t> free_batches_, mem_batches_;
    uint32_t running_ = 0;
    uint64_t order_ = 0;
    int32_t last_release_op_ = -1;
    bool copy_holds_ = false;  // a D2D copy or memset runs: no kernel starts
    Time fault_until_;  // when the managed-memory faults of the kernels placed so far are served (rule fault_hold)
    int64_t mem_active_ = 0;
    bool mem_dirty_ = false;
    double slow_ = 1;          // the copies' slow-down of memory-bound kernels now (rules.copy_hbm)
    double applied_slow_ = 1;  // the one the running memory-bound batches' ends were computed with
    Time occ_last_;
    double occupancy_ps_ = 0;
    const double total_threads_ = static_cast<double>(static_cast<int64_t>(sm_.total_threads()));
    std::vector<uint64_t> waves_;  // per site: its kernels' waves (0: not computed yet)
    // Stream priorities order the waiting kernels (rules.priorities) and not all streams have the
    // same: otherwise every kernel takes priority 0, which orders them alike, without the look-up.
    bool priorities_ = false;
    // Copies slow memory-bound kernels (rules.copy_hbm with a nonzero hbm.beside_h2d or _d2h).
    const bool copy_hbm_ = hw_.rules.copy_hbm && (hw_.hbm_beside_h2d > 0 || hw_.hbm_beside_d2h > 0);
    // Memory-bound batches drain over their SMs; kernels beside them pay an extra (rules.beside_streaming).
    static constexpr uint32_t kDrainParts = 4;
    const bool drain_ = hw_.rules.beside_streaming && hw_.hbm_drain_start < 1;
    const Time beside_extra_ = hw_.rules.beside_streaming ? hw_.kernel_beside_hbm : Time{};
    std::vector<SmRun> split_scratch_;
    const bool refill_deep_ = hw_.rules.refill_deep;  // blocks that waited for room fill SMs deep
    int32_t draining_ = 0;  // memory-bound kernels draining (Kernel::draining)
    void place_drain_parts(uint32_t b, Time work);
};

// ------------------------------------------------------------ implementation

template <class Sink>
[[gnu::flatten]] void SmScheduler<Sink>::submit(uint32_t i, Time ready, Time faults) {
    const Op& op = pg_.ops[i];
    const Site& site = pg_.site(op);
    const KernelCost cost = kernel_cost(hw_, op, site.flops);
    if (!hw_.rules.sm_residency) {  // the kernel runs as if alone on the device
        OpRecord& r = rec_[i];
        r.gpu_start = now_;
        r.engine = Engine::Compute;
        sink_.finish_at(i, now_ + cost.duration + faults);
        return;
    }
    if (waves_.size() <= op.site) waves_.resize(pg_.sites.size(), 0);
    uint64_t& w = waves_[op.site];
    if (w == 0) w = waves(hw_, site.shape);
    const uint32_t slot = new_kernel();
    kernels_[slot] = Kernel{i, site.shape.grid, 0, Time::ps(cost.duration.ps() / static_cast<int64_t>(w)), faults, BlockNeed::of(site.shape),
                            cost.memory_bound && (hw_.hbm_sharing || copy_hbm_ || drain_ || beside_extra_ > Time{}), false, priorities_ ? pg_.streams[op.stream].priority : 0, order_++,
                            ready};
    enqueue(slot);
}

template <class Sink>
void SmScheduler<Sink>::submit_device_copy(uint32_t i, Time ready, Time duration) {
    const Op& op = pg_.ops[i];
    const uint32_t slot = new_kernel();
    kernels_[slot] = Kernel{i, 1, 0, duration, Time{}, BlockNeed{}, false, false, priorities_ ? pg_.streams[op.stream].priority : 0,
                            order_++, ready, true};
    enqueue(slot);
}

template <class Sink>
uint32_t SmScheduler<Sink>::new_kernel() {
    if (!free_kernels_.empty()) {
        const uint32_t slot = free_kernels_.back();
        free_kernels_.pop_back();
        return slot;
    }
    kernels_.emplace_back();
    return static_cast<uint32_t>(kernels_.size() - 1);
}

template <class Sink>
void SmScheduler<Sink>::enqueue(uint32_t slot) {
    if (waiting_.empty()) {
        // The only kernel waiting: its first round, breadth-first (it finds room as it becomes
        // ready), without going into the list unless blocks are left (then it is in the list, as
        // fill() would leave it, and its later rounds are those of a kernel that waited).
        const Round r = place_round(slot, false);
        if (r == Round::kPlaced) return;
        waiting_.push_back(slot);
        if (r == Round::kPartial) fill();
        return;
    }
    waiting_.push_back(slot);
    fill();
}

template <class Sink>
void SmScheduler<Sink>::fill() {
    while (!waiting_.empty()) {
        // Highest priority first (lower number), then the order kernels became ready.
        size_t best = 0;
        for (size_t w = 1; w < waiting_.size(); ++w) {
            const Kernel &a = kernels_[waiting_[w]], &b = kernels_[waiting_[best]];
            if (a.priority < b.priority || (a.priority == b.priority && a.order < b.order)) best = w;
        }
        const Round r = place_round(waiting_[best], true);
        if (r == Round::kStop) return;
        if (r == Round::kPlaced) waiting_.erase(waiting_.begin() + static_cast<long>(best));
    }
}

template <class Sink>
typename SmScheduler<Sink>::Round SmScheduler<Sink>::place_round(uint32_t slot, bool waited) {
    Kernel& k = kernels_[slot];
    if (copy_holds_ || (!k.started && running_ >= hw_.max_kernels)) return Round::kStop;
    if (k.device_copy) [[unlikely]]
        return place_device_copy(slot);
    // The room a memory-bound kernel's last placement frees as it drains goes to kernels that are
    // not memory-bound: another memory-bound kernel starts once none drains.
    if (draining_ > 0 && k.mem_bound && !k.started) [[unlikely]]
        return Round::kStop;
    const uint32_t b = new_batch(slot);
    Batch& bt = batches_[b];
    // Blocks that waited for room fill each SM as deep as it holds them (rules.refill_deep); a
    // kernel that finds room when it becomes ready spreads breadth-first.
    const uint32_t placed = refill_deep_ && waited ? sm_.place_deep(k.need, k.unplaced, bt.runs) : sm_.place(k.need, k.unplaced, bt.runs);
    if (placed == 0) {
        bt.live = false;
        free_batches_.push_back(b);
        return Round::kStop;
    }
    account_occupancy();
    const Time now = now_;
    const bool first = !k.started;
    if (first) {
        k.started = true;
        ++running_;
        OpRecord& r = rec_[k.op];
        r.gpu_start = now;
        r.engine = Engine::Compute;
        if (now > k.ready && last_release_op_ >= 0) r.gpu_cause = Cause{last_release_op_, Phase::Gpu, CauseKind::Resource};
    }
    bt.blocks = placed;
    k.unplaced -= placed;
    ++k.running_batches;
    Time work = k.block_time + k.first_extra;
    if (k.first_extra > Time{}) fault_until_ = max(fault_until_, now + k.first_extra);
    k.first_extra = Time{};
    // A kernel that is not memory-bound placing its first blocks beside a memory-bound one.
    if (first && beside_extra_ > Time{} && !k.mem_bound && !mem_batches_.empty()) [[unlikely]]
        work += beside_extra_;
    if (k.mem_bound && drain_) return place_drain_parts(b, work), k.unplaced == 0 ? Round::kPlaced : Round::kPartial;
    if (k.mem_bound) {
        bt.work_left = work;
        bt.last = now;
        mem_batches_.push_back(b);
        mem_dirty_ = true;
        sink_.after_event_work();
        schedule(b, now + stretched(work, mem_active_, applied_slow_));
    } else {
        schedule(b, now + work);
    }
    return k.unplaced == 0 ? Round::kPlaced : Round::kPartial;
}

// A memory-bound batch b placed now with `work` at full speed: its SMs are cut into up to
// kDrainParts parts in placement order, part i ending at hbm.drain_start + (1 - hbm.drain_start)
// x i / (parts - 1) of the batch's time, so the first SMs free up early and the batch's end does not
// move. Each part is a batch of its own (same kernel: HBM sharing counts the kernel once).
template <class Sink>
void SmScheduler<Sink>::place_drain_parts(uint32_t b, Time work) {
    split_scratch_.swap(batches_[b].runs);  // all the SMs of the batch; batches_[b] becomes part 0
    uint32_t sms = 0;
    for (const SmRun& r : split_scratch_) sms += r.end - r.begin;
    const uint32_t parts = std::min<uint32_t>(kDrainParts, sms);
    const uint32_t kernel = batches_[b].kernel;
    const Time now = now_;
    size_t ri = 0;
    uint32_t off = 0;  // SMs of split_scratch_[ri] already given out
    for (uint32_t i = 0; i < parts; ++i) {
        const uint32_t bi = i == 0 ? b : new_batch(kernel);
        if (i > 0) ++kernels_[kernel].running_batches;
        Batch& bt = batches_[bi];
        bt.runs.clear();
        uint32_t want = (sms * (i + 1)) / parts - (sms * i) / parts, blocks = 0;
        while (want > 0) {
            const SmRun& r = split_scratch_[ri];
            const uint32_t take = std::min<uint32_t>(want, r.end - r.begin - off);
            bt.runs.push_back(SmRun{static_cast<uint16_t>(r.begin + off), static_cast<uint16_t>(r.begin + off + take), r.blocks});
            blocks += take * r.blocks;
            want -= take;
            off += take;
            if (off == static_cast<uint32_t>(r.end - r.begin)) ++ri, off = 0;
        }
        bt.blocks = blocks;
        bt.final_part = kernels_[kernel].unplaced == 0;
        const double f = parts == 1 ? 1.0 : hw_.hbm_drain_start + (1 - hw_.hbm_drain_start) * static_cast<double>(i) / (parts - 1);
        bt.work_left = i + 1 == parts ? work : Time::ps_ceil(static_cast<double>(work.ps()) * f);
        bt.last = now;
        mem_batches_.push_back(bi);
        schedule(bi, now + stretched(bt.work_left, mem_active_, applied_slow_));
    }
    split_scratch_.clear();
    mem_dirty_ = true;
    sink_.after_event_work();
}

// A D2D copy or memset starts when any thread slot is free and takes them all: the kernels
// running go on, no other starts until it ends. It runs at min(1, free / copy.device_room) of
// its speed, the free part of the device's threads when it starts.
template <class Sink>
typename SmScheduler<Sink>::Round SmScheduler<Sink>::place_device_copy(uint32_t slot) {
    Kernel& k = kernels_[slot];
    const uint64_t used = sm_.used_threads(), total = sm_.total_threads();
    if (used >= total) return Round::kStop;
    const double free = static_cast<double>(total - used) / static_cast<double>(total);
    const double speed = std::min(1.0, free / hw_.device_copy_room);
    const uint32_t b = new_batch(slot);
    k.started = true;
    k.unplaced = 0;
    ++k.running_batches;
    ++running_;
    copy_holds_ = true;
    OpRecord& r = rec_[k.op];
    r.gpu_start = now_;
    r.engine = Engine::DeviceCopy;
    if (now_ > k.ready && last_release_op_ >= 0) r.gpu_cause = Cause{last_release_op_, Phase::Gpu, CauseKind::Resource};
    batches_[b].blocks = 0;
    schedule(b, now_ + (speed < 1 ? Time::ps(static_cast<int64_t>(std::ceil(static_cast<double>(k.block_time.ps()) / speed))) : k.block_time));
    return Round::kPlaced;
}

template <class Sink>
uint32_t SmScheduler<Sink>::new_batch(uint32_t kernel) {
    uint32_t b;
    if (!free_batches_.empty()) {
        b = free_batches_.back();
        free_batches_.pop_back();
    } else {
        b = static_cast<uint32_t>(batches_.size());
        batches_.emplace_back();
    }
    Batch& bt = batches_[b];
    bt.kernel = kernel;
    bt.live = true;
    bt.final_part = false;
    bt.runs.clear();
    return b;
}

template <class Sink>
void SmScheduler<Sink>::schedule(uint32_t b, Time end) { sink_.wake(UnitId::Sms, end, b, ++batches_[b].version); }

template <class Sink>
[[gnu::flatten]] void SmScheduler<Sink>::on_event(uint32_t b, uint32_t version) {
    Batch& bt = batches_[b];
    if (!bt.live || bt.version != version) return;  // superseded by a rescale
    Kernel& k = kernels_[bt.kernel];
    if (bt.held) return end_hold(b);
    if (k.device_copy) [[unlikely]] {
        copy_holds_ = false;
        last_release_op_ = static_cast<int32_t>(k.op);
        --k.running_batches;
        return retire(b, true);
    }
    account_occupancy();
    sm_.release(k.need, bt.runs);
    last_release_op_ = static_cast<int32_t>(k.op);
    if (k.mem_bound) {
        mem_batches_.erase(std::find(mem_batches_.begin(), mem_batches_.end(), b));
        mem_dirty_ = true;
        sink_.after_event_work();
    }
    --k.running_batches;
    const bool last = k.unplaced == 0 && k.running_batches == 0;
    // Its last placement starts draining (a part of it ended, others run) or the kernel completes.
    if (drain_ && k.mem_bound && (last ? k.draining : bt.final_part && !k.draining)) [[unlikely]] {
        k.draining = !last;
        draining_ += last ? -1 : 1;
    }
    if (last && fault_until_ > now_ && hw_.rules.fault_hold) return start_hold(b);
    retire(b, last);
}

// Batch b is free again; with `last`, its kernel has completed, and the sink hears of it after the
// batch is back in the free list. Then the waiting kernels may take the room.
template <class Sink>
void SmScheduler<Sink>::retire(uint32_t b, bool last) {
    Batch& bt = batches_[b];
    bt.live = false;
    free_batches_.push_back(b);
    if (last) {
        --running_;
        free_kernels_.push_back(bt.kernel);
        sink_.finished(kernels_[bt.kernel].op);
    }
    fill();
}

// Kernel batch b's blocks are done and their slots free, but the kernel completes only once the
// demand faults of a kernel beside it are served (rule fault_hold, docs/model.md Rule 8).
template <class Sink>
void SmScheduler<Sink>::start_hold(uint32_t b) {
    batches_[b].held = true;
    schedule(b, fault_until_);
    fill();
}

// A held kernel's completion: again later if a kernel placed meanwhile faults longer.
template <class Sink>
void SmScheduler<Sink>::end_hold(uint32_t b) {
    if (fault_until_ > now_) return schedule(b, fault_until_);
    batches_[b].held = false;
    retire(b, true);
}

// Memory-bound kernels share HBM equally: when their number changes, running batches are
// brought up to date and their ends moved.
template <class Sink>
void SmScheduler<Sink>::rescale_memory_bound() {
    mem_dirty_ = false;
    std::vector<uint32_t> kernels;
    for (uint32_t b : mem_batches_) kernels.push_back(batches_[b].kernel);
    std::sort(kernels.begin(), kernels.end());
    const int64_t n = std::unique(kernels.begin(), kernels.end()) - kernels.begin();
    if (n == mem_active_ && slow_ == applied_slow_) return;
    const int64_t old = hw_.hbm_sharing ? std::max<int64_t>(1, mem_active_) : 1;
    const double old_slow = applied_slow_;
    mem_active_ = n;
    applied_slow_ = slow_;
    const Time now = now_;
    for (uint32_t b : mem_batches_) {
        Batch& bt = batches_[b];
        const Time done = old_slow == 1 ? Time::ps((now - bt.last).ps() / old)
                                        : Time::ps_of(static_cast<double>((now - bt.last).ps()) / (static_cast<double>(old) * old_slow));
        bt.work_left = bt.work_left > done ? bt.work_left - done : Time{};
        bt.last = now;
        schedule(b, now + stretched(bt.work_left, n, slow_));
    }
}

template <class Sink>
void SmScheduler<Sink>::account_occupancy() {
    const Time now = now_;
    // The thread counts are far below 2^63: converted as signed numbers, the same doubles
    // without the unsigned conversion's test of the top bit.
    occupancy_ps_ += static_cast<double>((now - occ_last_).ps()) * static_cast<double>(static_cast<int64_t>(sm_.used_threads())) /
                     total_threads_;
    occ_last_ = now;
}

}  // namespace hetsim
