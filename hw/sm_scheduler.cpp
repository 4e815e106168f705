#include "hw/sm_scheduler.hpp"

#include <algorithm>

#include "models/kernel_model.hpp"

namespace hetsim {

[[gnu::flatten]] void SmScheduler::submit(uint32_t i, Time ready, Time faults) {
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
    Kernel k{i, site.shape.grid, 0, Time::ps(cost.duration.ps() / static_cast<int64_t>(w)), faults, BlockNeed::of(site.shape),
             cost.memory_bound && hw_.hbm_sharing, false, hw_.rules.priorities ? pg_.streams[op.stream].priority : 0, order_++,
             ready};
    uint32_t slot;
    if (!free_kernels_.empty()) {
        slot = free_kernels_.back();
        free_kernels_.pop_back();
        kernels_[slot] = k;
    } else {
        slot = static_cast<uint32_t>(kernels_.size());
        kernels_.push_back(k);
    }
    waiting_.push_back(slot);
    fill();
}

void SmScheduler::fill() {
    while (!waiting_.empty()) {
        // Highest priority first (lower number), then the order kernels became ready.
        size_t best = 0;
        for (size_t w = 1; w < waiting_.size(); ++w) {
            const Kernel &a = kernels_[waiting_[w]], &b = kernels_[waiting_[best]];
            if (a.priority < b.priority || (a.priority == b.priority && a.order < b.order)) best = w;
        }
        const uint32_t slot = waiting_[best];
        Kernel& k = kernels_[slot];
        if (!k.started && running_ >= hw_.max_kernels) return;
        const uint32_t b = new_batch(slot);
        Batch& bt = batches_[b];
        const uint32_t placed = sm_.place(k.need, k.unplaced, bt.runs);
        if (placed == 0) {
            bt.live = false;
            free_batches_.push_back(b);
            return;
        }
        account_occupancy();
        const Time now = now_;
        if (!k.started) {
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
        const Time work = k.block_time + k.first_extra;
        k.first_extra = Time{};
        if (k.mem_bound) {
            bt.work_left = work;
            bt.last = now;
            mem_batches_.push_back(b);
            mem_dirty_ = true;
            schedule(b, now + Time::ps_times(work.ps(), std::max<int64_t>(1, mem_active_)));
        } else {
            schedule(b, now + work);
        }
        if (k.unplaced == 0) waiting_.erase(waiting_.begin() + static_cast<long>(best));
    }
}

uint32_t SmScheduler::new_batch(uint32_t kernel) {
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
    bt.runs.clear();
    return b;
}

void SmScheduler::schedule(uint32_t b, Time end) { sink_.wake(UnitId::Sms, end, b, ++batches_[b].version); }

[[gnu::flatten]] void SmScheduler::on_event(uint32_t b, uint32_t version) {
    Batch& bt = batches_[b];
    if (!bt.live || bt.version != version) return;  // superseded by a rescale
    Kernel& k = kernels_[bt.kernel];
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
        --running_;
        free_kernels_.push_back(bt.kernel);
        sink_.finished(k.op);
    }
    fill();
}

// Memory-bound kernels share HBM equally: when their number changes, running batches are
// brought up to date and their ends moved.
void SmScheduler::rescale_memory_bound() {
    mem_dirty_ = false;
    std::vector<uint32_t> kernels;
    for (uint32_t b : mem_batches_) kernels.push_back(batches_[b].kernel);
    std::sort(kernels.begin(), kernels.end());
    const int64_t n = std::unique(kernels.begin(), kernels.end()) - kernels.begin();
    if (n == mem_active_) return;
    const int64_t old = std::max<int64_t>(1, mem_active_);
    mem_active_ = n;
    const Time now = now_;
    for (uint32_t b : mem_batches_) {
        Batch& bt = batches_[b];
        const Time done = Time::ps((now - bt.last).ps() / old);
        bt.work_left = bt.work_left > done ? bt.work_left - done : Time{};
        bt.last = now;
        schedule(b, now + Time::ps_times(bt.work_left.ps(), std::max<int64_t>(1, n)));
    }
}

void SmScheduler::account_occupancy() {
    const Time now = now_;
    occupancy_ps_ += static_cast<double>((now - occ_last_).ps()) * static_cast<double>(sm_.used_threads()) /
                     static_cast<double>(sm_.total_threads());
    occ_last_ = now;
}

}  // namespace hetsim
