// The memory cap of a run (--max-memory). Loops expand op by op; everything after lowering (the
// engine's per-op state, the timeline, the analysis and the reports) grows with the op count, so
// the cap is checked on an estimate while the program expands, long before that memory is taken.
#pragma once
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/program.hpp"

namespace hetsim {

// Bytes a run takes per op beyond the lowered program itself (peak RSS of `hetsim run
// --no-suggest` on bench/analysis_pipeline.yaml, less the Program's own vectors; 3*10^5 and
// 1.5*10^6 ops: 43 and 187 MB in all, 122 bytes per op of which the Program holds 45): the
// engine's state, the timeline, the analysis and the text summary (and the SVG and HTML
// reports, which draw a bounded sample of the ops) ...
constexpr uint64_t kRunBytesPerOp = 80;
// ... and on top of that, what each output of every op holds until all are written: the JSON
// document (nlohmann, its text beside it: run --format json or --json, compare --format json),
// the Chrome trace's text (--trace) and the CSV's (--csv). Measured the same way (3*10^5 ops:
// 1210, 521 and 113 MB; the CSV again at 1.5*10^6: 543 MB).
constexpr uint64_t kJsonBytesPerOp = 4000;
constexpr uint64_t kTraceBytesPerOp = 1650;
constexpr uint64_t kCsvBytesPerOp = 240;
constexpr uint64_t kJsonRunBytesPerOp = kRunBytesPerOp + kJsonBytesPerOp;
// `hetsim lower`: no simulation, the program's JSON document and its text (3*10^5 ops: 920 MB).
constexpr uint64_t kLowerBytesPerOp = 3100;
// The per-op figure of a `hetsim run` with these outputs.
constexpr uint64_t run_bytes_per_op(bool json, bool trace, bool csv) {
    return kRunBytesPerOp + (json ? kJsonBytesPerOp : 0) + (trace ? kTraceBytesPerOp : 0) + (csv ? kCsvBytesPerOp : 0);
}

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

// Estimated peak bytes of a run of a program of size `s`: its vectors at their lengths (the
// lowering counts the ops before expanding them and reserves the final sizes), plus `per_op`
// per op.
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

// The value of a --max-memory option: "4GiB" -> bytes, "0" for no cap, "" (not given) for
// default_max_memory(); InputError({"--max-memory"}, ...) otherwise.
uint64_t parse_max_memory(const std::string& text);

// "1.5 GiB", "512 MiB".
std::string bytes_text(uint64_t bytes);

}  // namespace hetsim
