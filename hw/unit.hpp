// What the hardware units of hw/ report to the engine, through one narrow interface the engine
// implements (ns-3's NetDevice -> Channel callbacks, SimGrid's model -> kernel actions): a unit
// reads the clock, writes its ops' timeline records, asks to be woken, and says when an op's
// GPU phase or a host call it held is done. Units never see each other or the event queue.
//
// The units are templates on their sink, the engine's type, rather than callers of a virtual
// interface: these calls are on the engine's hot path (a copy's completion calls wake and
// finished), and called directly they inline into the unit, with the unit's id a constant.
// A sink provides:
//   const Time& clock() const;      the engine's clock, and
//   OpRecord* records();            the ops' timeline records (parallel to Program::ops), both
//                                   fixed for the whole run: units keep them;
//   void wake(UnitId unit, Time at, uint32_t a, uint32_t b);
//                                   calls `unit`'s on_event(a, b) at `at` (after the
//                                   completions already due then);
//   void finish_at(uint32_t op, Time at);  op's GPU phase ends at `at`,
//   void finished(uint32_t op);            or now;
//   void host_returns(uint32_t thread, uint32_t op, Time at);
//                                   a host call the unit held (a pageable upload waiting for
//                                   the staging pool) returns at `at`;
//   void after_event_work();        the unit's after_event() must run once the current event
//                                   is done (the engine calls it only after such events);
//   void copy_engines_changed();    a copy engine went from idle to busy or back, or from a
//                                   pageable copy to a pinned one or back (the SMs' memory-bound
//                                   kernels slow while pinned copies run: rules.copy_hbm).
// A unit takes its sink in its constructor and keeps the clock and the records (UnitBase).
#pragma once
#include <cstdint>

#include "core/time.hpp"
#include "core/timeline.hpp"

namespace hetsim {

enum class UnitId : uint8_t { CopyEngines, Sms };

// What every unit holds of its sink.
template <class Sink>
class UnitBase {
protected:
    explicit UnitBase(Sink& s) : sink_(s), now_(s.clock()), rec_(s.records()) {}
    Sink& sink_;
    const Time& now_;  // the engine's clock
    OpRecord* rec_;    // rec_[op]: the op's timeline record
};

}  // namespace hetsim
