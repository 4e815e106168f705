// The copy engines: one per direction (H2D, D2H), each running one copy at a time, the others
// waiting in FIFO order of readiness whatever their stream (hardware-notes #4); a copy runs
// slower while the opposite direction's engine is busy (duplex, and a pinned H2D beside a
// pageable D2H). Device-to-device copies and memsets take the device-copy path, which has no
// queue. Each duration comes from models/copy_model.
#pragma once
#include <cstdint>

#include "hw/fifo.hpp"
#include "hw/managed_memory.hpp"
#include "hw/staging.hpp"
#include "hw/unit.hpp"
#include "models/copy_model.hpp"
#include "models/profile.hpp"
#include "core/program.hpp"

namespace hetsim {

class CopyEngines : UnitBase {
public:
    CopyEngines(const Program& pg, const HwProfile& hw, UnitSink& sink, Staging& staging, const ManagedMemory& um)
        : UnitBase(sink), pg_(pg), hw_(hw), staging_(staging), um_(um) {
        for (int d = 0; d < 2; ++d)
            for (int self = 0; self < 2; ++self)
                for (int other = 0; other < 2; ++other) duplex_[d][self][other] = duplex_slowdown(hw, static_cast<CopyDir>(d), self, other);
    }
    // Copy or prefetch `op` is ready now: it starts if its engine is idle, else it queues.
    void submit(uint32_t op);
    // A completion event this unit asked for.
    void on_event(uint32_t dir, uint32_t version);

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
    double factor(int dir) const;
    void start(uint32_t op, CopyDir dir);
    void schedule(int dir);
    void rescale(int dir);  // the other direction started or stopped

    const Program& pg_;
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

class DeviceCopies : UnitBase {
public:
    DeviceCopies(const Program& pg, const HwProfile& hw, UnitSink& sink) : UnitBase(sink), pg_(pg), hw_(hw) {}
    // A D2D copy or memset: it starts now.
    void submit(uint32_t op);

private:
    const Program& pg_;
    const HwProfile& hw_;
};

}  // namespace hetsim
