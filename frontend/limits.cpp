#include "frontend/limits.hpp"

#include <unistd.h>

#include <cstdio>

#include "frontend/expr.hpp"

namespace hetsim {

uint64_t default_max_memory() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return uint64_t{64} << 30;
    return static_cast<uint64_t>(pages) / 4 * 3 * static_cast<uint64_t>(page);
}

ProgramSize size_of(const Program& p) {
    return ProgramSize{p.ops.size(), p.iter_indices.size(), p.uses.size(), p.after.size(), p.locs.size(), p.names.size(),
                       p.streams.size(), p.events.size(), p.buffers.size()};
}

namespace {
uint64_t sat_mul(uint64_t a, uint64_t b) {
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
}  // namespace

uint64_t estimated_run_bytes(const ProgramSize& s, uint64_t per_op) {
    uint64_t b = sat_mul(s.ops, sizeof(Op));
    b = sat_add(b, sat_mul(s.iter_indices, sizeof(uint32_t)));
    b = sat_add(b, sat_mul(s.uses, sizeof(uint32_t)));
    b = sat_add(b, sat_mul(s.after, sizeof(uint32_t)));
    b = sat_add(b, sat_mul(s.locs, sizeof(SourceLoc)));
    b = sat_add(b, sat_mul(s.names, sizeof(std::string)));
    // Interned labels: assume short ones (their count, not their text, is what grows).
    b = sat_add(b, sat_mul(s.names, 32));
    b = sat_add(b, sat_mul(s.streams, sizeof(Stream) + kRunBytesPerStream));
    b = sat_add(b, sat_mul(sat_add(s.events, s.buffers), kRunBytesPerDecl));
    return sat_add(b, sat_mul(s.ops, per_op));
}

uint64_t estimated_run_bytes(const Program& p, uint64_t per_op) { return estimated_run_bytes(size_of(p), per_op); }

std::string bytes_text(uint64_t bytes) {
    char buf[32];
    if (bytes >= (uint64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.3g GiB", static_cast<double>(bytes) / (1 << 30));
    else if (bytes >= (uint64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.3g MiB", static_cast<double>(bytes) / (1 << 20));
    else std::snprintf(buf, sizeof buf, "%.3g KiB", static_cast<double>(bytes) / 1024);
    return buf;
}

void check_memory_cap(const Program& p, uint64_t cap, uint64_t per_op, const SourceLoc& where) {
    if (cap == 0) return;
    const uint64_t need = estimated_run_bytes(p, per_op);
    if (need <= cap) return;
    throw InputError(where, "the scenario needs more memory than the cap of " + bytes_text(cap) + " (--max-memory): at " +
                                std::to_string(p.ops.size()) + " ops it already needs about " + bytes_text(need) +
                                " (about " + std::to_string(per_op) +
                                " bytes per op for the run and its reports); lower the loop counts, or raise the cap with --max-memory "
                                "(e.g. --max-memory 64GiB) if this machine has the memory");
}

void check_declaration_caps(const Program& p, uint64_t more_streams, uint64_t more_others, uint64_t max_ops, uint64_t max_memory,
                            uint64_t per_op, const SourceLoc& where) {
    ProgramSize size = size_of(p);
    size.streams += more_streams;
    size.events += more_others;
    const uint64_t n = size.streams + size.events + size.buffers;
    if (n > max_ops)
        throw InputError(where, "the scenario declares more than " + std::to_string(max_ops) +
                                    " streams, events and buffers in all (array elements each count; the cap is --max-ops); "
                                    "declare fewer, or raise the cap with --max-ops if this is intended");
    if (max_memory == 0) return;
    const uint64_t need = estimated_run_bytes(size, per_op);
    if (need > max_memory)
        throw InputError(where, "the scenario needs more memory than the cap of " + bytes_text(max_memory) + " (--max-memory): " +
                                    std::to_string(size.streams) + " streams and " + std::to_string(size.events + size.buffers) +
                                    " events and buffers already need about " +
                                    bytes_text(need) + "; declare fewer, or raise the cap with --max-memory if this machine has the memory");
}

uint64_t parse_max_memory(const std::string& text) {
    if (text.empty()) return default_max_memory();
    if (text == "0") return 0;
    Value v;
    try {
        v = parse_literal(text);
    } catch (const std::exception& e) {
        throw InputError({"--max-memory"}, std::string(e.what()) + "; expected a size such as 8GiB (0: no cap)");
    }
    if (v.dim != Dim::Bytes || v.i <= 0)
        throw InputError({"--max-memory"}, "expected a size such as 8GiB (0: no cap), got '" + text + "'");
    return static_cast<uint64_t>(v.i);
}

}  // namespace hetsim
