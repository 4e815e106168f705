// What the hardware units of hw/ report to the engine, through one narrow interface the engine
// implements (ns-3's NetDevice -> Channel callbacks, SimGrid's model -> kernel actions): a unit
// reads the clock, writes its ops' timeline records, asks to be woken, and says when an op's
// GPU phase or a host call it held is done. Units never see each other or the event queue.
// A unit takes its sink in its constructor and keeps the clock and the records (UnitBase).
#pragma once
#include <cstdint>

#include "core/time.hpp"
#include "core/timeline.hpp"

namespace hetsim {

enum class UnitId : uint8_t { CopyEngines, Sms };

class UnitSink {
public:
    // The clock and the ops' timeline records (parallel to Program::ops), fixed for the whole
    // run: units keep them.
    virtual const Time& clock() const = 0;
    virtual OpRecord* records() = 0;
    // Calls `unit`'s on_event(a, b) at `at` (after the completions already due then).
    virtual void wake(UnitId unit, Time at, uint32_t a, uint32_t b) = 0;
    // Op's GPU phase ends at `at`, or now.
    virtual void finish_at(uint32_t op, Time at) = 0;
    virtual void finished(uint32_t op) = 0;
    // A host call the unit held (a pageable upload waiting for the staging pool) returns at `at`.
    virtual void host_returns(uint32_t thread, uint32_t op, Time at) = 0;

protected:
    ~UnitSink() = default;
};

// What every unit holds of its sink.
class UnitBase {
protected:
    explicit UnitBase(UnitSink& s) : sink_(s), now_(s.clock()), rec_(s.records()) {}
    UnitSink& sink_;
    const Time& now_;  // the engine's clock
    OpRecord* rec_;    // rec_[op]: the op's timeline record
};

}  // namespace hetsim
