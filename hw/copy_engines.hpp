// The copy engines: one per direction (H2D, D2H), each running one copy at a time, the others
// waiting in FIFO order of readiness whatever their stream (hardware-notes #4); a copy runs
// slower while the opposite direction's engine is busy (duplex, and a pinned H2D beside a
// pageable D2H). Device-to-device copies and memsets are kernels on the SMs (SmScheduler,
// rules.device_copy_sms); with that rule off they take the device-copy path here, which has no
// queue. Each duration comes from models/copy_model.
#pragma once
#include <cmath>
#include <cstdint>

#include "hw/fifo.hpp"
#include "hw/managed_memory.hpp"
#include "hw/staging.hpp"
#include "hw/unit.hpp"
#include "models/copy_model.hpp"
#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

template <class Sink>
class CopyEngines : UnitBase<Sink> {
    using UnitBase<Sink>::sink_, UnitBase<Sink>::now_, UnitBase<Sink>::rec_;

public:
    CopyEngines(const Program& pg, const HwProfile& hw, Sink& sink, Staging& staging, const ManagedMemory& um)
        : UnitBase<Sink>(sink), pg_(pg), hw_(hw), staging_(staging), um_(um) {
        for (int d = 0; d < 2; ++d)
            for (int self = 0; self < 2; ++self)
                for (int other = 0; other < 2; ++other) duplex_[d][self][other] = duplex_slowdown(hw, static_cast<CopyDir>(d), self, other);
    }
    // Copy or prefetch `op` is ready now: it starts if its engine is idle, else it queues.
    void submit(uint32_t op);
    // A completion event this unit asked for.
    void on_event(uint32_t dir, uint32_t version);
    // Whether an engine runs a copy or prefetch now (rule 8: host CPU-fault migration slows
    // meanwhile). With rules.copy_fifo off the engines keep no state: never busy.
    bool busy() const { return running_[0].op >= 0 || running_[1].op >= 0; }
    // Whether direction dir's engine runs a pinned copy or a prefetch now: a transfer at DMA speed
    // (a pageable copy's DMA follows the host's staging and does not slow kernels: rules.copy_hbm).
    bool dma_busy(CopyDir dir) const {
        const Running& c = running_[static_cast<int>(dir)];
        return c.op >= 0 && !c.pageable;
    }

private:
    struct Running {  // the copy on one engine; its speed changes while the other direction runs
        int32_t op = -1;
        Time work_left;  // at full speed
        Time last;       // when work_left was last brought up to date
        double factor = 1;
        uint32_t version = 0;
        bool pageable = false;  // the copy stages through host memory (is_pageable_copy)
    };
    static CopyDir direction(const Op& op) { return op.kind == OpKind::Prefetch ? (op.to_device ? CopyDir::H2D : CopyDir::D2H) : op.dir; }
    Time work(uint32_t op, CopyDir dir);  // GPU time at full speed
    Time other_work(uint32_t op, CopyDir dir);  // the same for a prefetch, a graph node or a pageable copy
    Time copy_time(const Op& op);  // a memcpy's copy_duration, memoised per direction (Last)
    void start(uint32_t op, CopyDir dir);
    void schedule(int dir);
    void rescale(int dir, double f);  // the other direction started or stopped: dir's running copy now runs at factor f

    const Program& pg_;
    const Op* const ops_ = pg_.ops.data();  // fixed for the run
    const HwProfile& hw_;
    Staging& staging_;
    const ManagedMemory& um_;
    Running running_[2];
    Fifo<uint32_t> waiting_[2];
    // The last pinned copy's duration per direction: loops copy the same size again and again,
    // and the efficiency curve and the 128-bit division are not free.
    struct Last {
        uint64_t bytes = UINT64_MAX;
        Time duration;
        uint32_t rows = 1;
        uint64_t pitch = 0;
        uint32_t site = UINT32_MAX;  // the site of the last copy: its rows and pitch are `rows`, `pitch`
    } last_[2];
    double duplex_[2][2][2];  // duplex_slowdown by [direction][self pageable][other pageable]
};

template <class Sink>
class DeviceCopies : UnitBase<Sink> {
    using UnitBase<Sink>::sink_, UnitBase<Sink>::now_, UnitBase<Sink>::rec_;

public:
    DeviceCopies(const Program& pg, const HwProfile& hw, Sink& sink) : UnitBase<Sink>(sink), pg_(pg), hw_(hw) {}
    // A D2D copy or memset: it starts now (rules.device_copy_sms off).
    void submit(uint32_t op);
    // Its GPU time on an otherwise idle device.
    Time duration(uint32_t op) const;

private:
    const Program& pg_;
    const HwProfile& hw_;
};

// ------------------------------------------------------------ implementation

namespace detail {
inline Engine engine_of(CopyDir dir) { return dir == CopyDir::H2D ? Engine::H2D : Engine::D2H; }
}  // namespace detail

template <class Sink>
[[gnu::flatten]] void CopyEngines<Sink>::submit(uint32_t i) {
    const CopyDir dir = direction(ops_[i]);
    if (!hw_.rules.copy_fifo) {  // every copy on an engine of its own
        OpRecord& r = rec_[i];
        r.engine = detail::engine_of(dir);
        r.gpu_start = now_;
        sink_.finish_at(i, now_ + work(i, dir));
        return;
    }
    if (running_[static_cast<int>(dir)].op < 0) {
        start(i, dir);
        sink_.copy_engines_changed();  // an idle engine starts
    } else {
        waiting_[static_cast<int>(dir)].push_back(i);
    }
}

template <class Sink>
Time CopyEngines<Sink>::work(uint32_t i, CopyDir dir) {
    const Op& op = ops_[i];
    if (op.kind == OpKind::Prefetch || op.graph_node || is_pageable_copy(hw_, op)) return other_work(i, dir);
    return copy_time(op);  // a pinned copy launched on its own (the other cases out of line: other_work())
}

// copy_duration depends on direction, size, rows and host pitch only; the rows and the host pitch
// depend on the site and the size: the same site and size as the last copy's, the same rows and pitch.
template <class Sink>
[[gnu::always_inline]] inline Time CopyEngines<Sink>::copy_time(const Op& op) {
    Last& last = last_[static_cast<int>(op.dir)];
    if (last.site == op.site && last.bytes == op.bytes) return last.duration;  // the same rows and pitch too
    const uint32_t rows = dma_rows(pg_.site(op), op.bytes);
    const uint64_t pitch = host_pitch(pg_.site(op), op.dir);
    if (last.bytes != op.bytes || last.rows != rows || last.pitch != pitch)
        last = Last{op.bytes, copy_duration(hw_, op, rows, pitch), rows, pitch, op.site};
    last.site = op.site;
    return last.duration;
}

template <class Sink>
[[gnu::noinline]] Time CopyEngines<Sink>::other_work(uint32_t i, CopyDir dir) {
    const Op& op = pg_.ops[i];
    const Time now = now_;
    Time t;
    if (op.kind == OpKind::Prefetch) {
        t = prefetch_time(hw_, um_.to_move(static_cast<uint32_t>(op.buffer), op.to_device, op.bytes), op.to_device);
    } else {
        t = copy_time(op);  // a Memcpy
    }
    if (is_pageable_copy(hw_, op))
        t = pageable_dma_time(hw_, op, now, dir == CopyDir::H2D ? staging_.dma_starts(i, sink_) : now, dma_rows(pg_.site(op), op.bytes),
                              host_pitch(pg_.site(op), op.dir));
    if (op.graph_node) t += hw_.graph_copy_node_extra;
    return t;
}

template <class Sink>
void CopyEngines<Sink>::schedule(int dir) {
    Running& c = running_[dir];
    // At full speed and below 2^53 ps this is the work left itself, exactly; ps_ceil is a few
    // integer steps, cheaper than testing for that case first.
    const Time left = Time::ps_ceil(static_cast<double>(c.work_left.ps()) * c.factor);
    sink_.wake(UnitId::CopyEngines, now_ + left, static_cast<uint32_t>(dir), ++c.version);
}

template <class Sink>
void CopyEngines<Sink>::rescale(int dir, double f) {
    Running& c = running_[dir];
    if (f == c.factor) return;
    const Time now = now_;
    const Time done = Time::ps_of(static_cast<double>((now - c.last).ps()) / c.factor);
    c.work_left = c.work_left > done ? c.work_left - done : Time{};
    c.last = now;
    c.factor = f;
    schedule(dir);
}

template <class Sink>
void CopyEngines<Sink>::start(uint32_t i, CopyDir dir) {
    OpRecord& r = rec_[i];
    r.engine = detail::engine_of(dir);
    r.gpu_start = now_;
    const int d = static_cast<int>(dir);
    Running& c = running_[d];
    c.op = static_cast<int32_t>(i);
    c.pageable = is_pageable_copy(hw_, ops_[i]);
    c.work_left = work(i, dir);
    c.last = now_;
    // Its time factor, and the other direction's copy's if one runs: the duplex factor while both
    // engines are busy, 1 while one runs alone.
    const Running& o = running_[1 - d];
    c.factor = o.op >= 0 ? duplex_[d][c.pageable][o.pageable] : 1;
    schedule(d);
    if (o.op >= 0) rescale(1 - d, duplex_[1 - d][o.pageable][c.pageable]);
}

template <class Sink>
[[gnu::flatten]] void CopyEngines<Sink>::on_event(uint32_t dir, uint32_t version) {
    Running& c = running_[dir];
    if (c.op < 0 || c.version != version) return;  // superseded by a rescale
    const uint32_t i = static_cast<uint32_t>(c.op);
    c.op = -1;
    Fifo<uint32_t>& q = waiting_[dir];
    if (!q.empty()) {
        const uint32_t next = q.front();
        q.pop_front();
        rec_[next].gpu_cause = Cause{static_cast<int32_t>(i), Phase::Gpu, CauseKind::Resource};
        const bool was_pageable = c.pageable;
        start(next, static_cast<CopyDir>(dir));
        if (c.pageable != was_pageable) sink_.copy_engines_changed();  // a pinned copy after a pageable one, or back
    } else {
        // The other direction's copy, if one runs, now runs alone: factor 1.
        if (running_[1 - static_cast<int>(dir)].op >= 0) rescale(1 - static_cast<int>(dir), 1);
        sink_.copy_engines_changed();  // the engine is idle
    }
    sink_.finished(i);
}

template <class Sink>
void DeviceCopies<Sink>::submit(uint32_t i) {
    OpRecord& r = rec_[i];
    r.engine = Engine::DeviceCopy;
    r.gpu_start = now_;
    sink_.finish_at(i, now_ + duration(i));
}

template <class Sink>
Time DeviceCopies<Sink>::duration(uint32_t i) const {
    const Op& op = pg_.ops[i];
    const Time extra = op.graph_node ? hw_.graph_copy_node_extra : Time{};
    return copy_duration(hw_, op, op.kind == OpKind::Memcpy ? dma_rows(pg_.site(op), op.bytes) : 1) + extra;
}

}  // namespace hetsim
