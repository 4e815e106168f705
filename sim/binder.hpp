// The CUDA binding rules, one rule set for the engine (which binds at each op's simulated
// issue time) and the dependency graph of sim/graph.cpp (which binds in issue order): a GPU op
// issued to a stream depends on the stream's last op (stream order); on the legacy default
// stream, on every blocking stream's last op, and on a blocking stream, on the legacy stream's
// (hardware-notes #12); a stream wait on its event's most recent record issued before it.
#pragma once
#include <cstdint>
#include <vector>

#include "core/program.hpp"
#include "core/timeline.hpp"

namespace hetsim {

class Binder {
public:
    Binder(const Program& pg, bool legacy_sync)
        : pg_(pg), legacy_sync_(legacy_sync), stream_last_(pg.streams.size(), -1), event_last_(pg.events.size(), -1) {}

    // Calls dep(op, kind) for each op that GPU op i, issued now, depends on (op -1: none yet;
    // for an event wait: the event has no record yet). Then call issued(i).
    template <class Dep>
    void bind(uint32_t i, Dep&& dep) const {
        const Op& op = pg_.ops[i];
        const int32_t s = op.stream;
        dep(stream_last_[s], CauseKind::StreamOrder);
        if (legacy_sync_) {
            const StreamKind sk = pg_.streams[s].kind;
            if (sk == StreamKind::Legacy) {
                for (size_t b = 1; b < pg_.streams.size(); ++b)
                    if (pg_.streams[b].kind == StreamKind::Blocking) dep(stream_last_[b], CauseKind::Legacy);
            } else if (sk == StreamKind::Blocking) {
                dep(stream_last_[0], CauseKind::Legacy);
            }
        }
        if (op.kind == OpKind::StreamWaitEvent) dep(event_last_[op.event], CauseKind::Event);
    }
    void issued(uint32_t i) {
        const Op& op = pg_.ops[i];
        if (op.kind == OpKind::EventRecord) event_last_[op.event] = static_cast<int32_t>(i);
        stream_last_[op.stream] = static_cast<int32_t>(i);
    }

    // What a sync waits for: a stream's last op, an event's last record, every stream's last op.
    int32_t stream_last(int32_t s) const { return stream_last_[s]; }
    int32_t event_last(int32_t e) const { return event_last_[e]; }
    const std::vector<int32_t>& stream_lasts() const { return stream_last_; }

private:
    const Program& pg_;
    const bool legacy_sync_;
    std::vector<int32_t> stream_last_, event_last_;
};

}  // namespace hetsim
