// The memory cap of a run (--max-memory). Loops expand op by op; everything after lowering (the
// engine's per-op state, the timeline, the analysis and the reports) grows with the op count, so
// the cap is checked on an estimate while the program expands, long before that memory is taken.
#pragma once
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/program.hpp"

namespace hetsim {

// Bytes a run takes per op beyond the lowered program itself: engine state, the timeline, the
// analysis and the text summary (measured: peak RSS of `hetsim run` on 10^6 ops, 0.40 GB) ...
constexpr uint64_t kRunBytesPerOp = 450;
// ... and when the run builds a JSON document of every op (run --format json or --json, lower,
// compare --format json): `hetsim run --format json` on 10^6 ops peaks at 3.9 GB.
constexpr uint64_t kJsonRunBytesPerOp = 4000;

// The default cap: three quarters of this machine's physical memory (64 GiB when unknown).
uint64_t default_max_memory();

// The lengths of a program's vectors that grow with its ops.
struct ProgramSize {
    uint64_t ops = 0, iter_indices = 0, uses = 0, after = 0, locs = 0, names = 0;
    uint64_t streams = 0, events = 0, buffers = 0;  // declared (arrays count each element)
};
// Bytes a run takes per declared stream (the program's entry, the engine's queues and binding
// state: 8.2 * 10^6 streams took 6 GB) and per declared event or buffer.
constexpr uint64_t kRunBytesPerStream = 800;
constexpr uint64_t kRunBytesPerDecl = 160;
ProgramSize size_of(const Program& p);

// Estimated peak bytes of a run of a program of size `s`: its vectors as reserved when grown one
// element at a time (to the next power of two: the estimate does not change when the lowering
// reserves their final sizes instead), plus `per_op` per op.
uint64_t estimated_run_bytes(const ProgramSize& s, uint64_t per_op = kRunBytesPerOp);
// The same for `p` as lowered so far.
uint64_t estimated_run_bytes(const Program& p, uint64_t per_op = kRunBytesPerOp);

// Throws InputError at `where` when estimated_run_bytes(p, per_op) exceeds `cap` (0: no cap).
void check_memory_cap(const Program& p, uint64_t cap, uint64_t per_op, const SourceLoc& where);

// After a declaration of streams, events or buffers: they count against the op cap (`max_ops`
// items in all) and the memory cap; InputError at `where` when either is passed.
// Checked before `more_streams` streams and `more_others` events or buffers are added to `p`.
void check_declaration_caps(const Program& p, uint64_t more_streams, uint64_t more_others, uint64_t max_ops, uint64_t max_memory,
                            uint64_t per_op, const SourceLoc& where);

// "4GiB" -> bytes, or "0" for no cap; InputError({"--max-memory"}, ...) otherwise.
uint64_t parse_max_memory(const std::string& text);

// "1.5 GiB", "512 MiB".
std::string bytes_text(uint64_t bytes);

}  // namespace hetsim
