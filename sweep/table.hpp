// The sweep CSV: one row per point, written in point order, and read back to resume or merge.
//
//   # hetsim sweep {"axes":[...],"points":24,...}      the sweep definition (one line of JSON)
//   # shard 1/4                                         only in a shard's file
//   point,<axis names>,end_to_end_ns,serial_ns,...      the header
//   0,1MiB,1,...                                        a row per finished point
//
// Columns after `point` and the varied values: end-to-end time, the evidence metrics, the busiest
// resource (host threads and engines; streams are queues, not resources), the critical-path
// share of each resource kind (0 when the kind is not on the path) and the utilisation of every
// resource: util:host:<thread> for each thread of the scenario (SweepDef::host_threads), then
// util:copy:h2d, util:copy:d2h, util:sm, util:device_copy (0 where a point leaves it unused);
// then the idle time of the GPU as a whole and of the SMs in integer ns (report/idle.hpp):
// idle:gpu, idle:gpu:<cause> for every cause of report::idle_cause_kinds(), idle:sm, idle:sm:<cause>
// (a lane's causes sum to its idle column).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/analysis.hpp"
#include "sweep/spec.hpp"

namespace hetsim::sweep {

const std::vector<std::string>& metric_columns();  // end_to_end_ns ... critical_latency
std::vector<std::string> utilization_columns(const SweepDef& def);  // util:host:main ... util:device_copy
std::vector<std::string> idle_columns();  // idle:gpu, idle:gpu:host_work, ..., idle:sm:other
std::string header_row(const SweepDef& def);      // no newline
std::string format_row(const SweepDef& def, uint64_t point, const report::Analysis& an);  // no newline
// Shortest text that reads back as the same double ("0.25", "1.5", "0").
std::string format_double(double v);

std::vector<std::string> split_csv_line(const std::string& line);

struct SweepFile {
    std::string path;
    std::string definition;        // the JSON after "# hetsim sweep "
    std::optional<Shard> shard;    // from "# shard i/N"
    std::string header;
    uint64_t points = 0;           // from the definition
    struct Row {
        uint64_t point = 0;
        std::string text;
        int line = 0;
    };
    std::vector<Row> rows;         // file order
};

// Reads a sweep CSV; throws InputError({path, line}) when it is not one or a row is malformed
// (wrong field count, a point index that is not a number or is out of range).
SweepFile read_sweep_file(const std::string& path);
bool looks_like_sweep_file(const std::string& path);  // starts with "# hetsim sweep "

// The whole file: definition, the shard line when given, header, the given rows (in order).
std::string render_sweep_csv(const std::string& definition, const std::optional<Shard>& shard,
                             const std::string& header, const std::vector<const std::string*>& rows);

// The value of `column` in a row, as a double (end_to_end_ns and the like). NaN when absent.
double row_number(const std::string& header, const std::string& row, const std::string& column);

struct MergeResult {
    std::string csv;                         // definition (no shard line), header, rows by point
    uint64_t points = 0, files = 0;
    std::vector<uint64_t> missing;           // points no file has (all of them, in order)
    std::vector<std::string> duplicates;     // "point 7 in a.csv:9 and b.csv:4"
};
// Joins shard files of one sweep. Different sweeps or headers are bad input (InputError).
MergeResult merge_sweep_files(const std::vector<std::string>& paths);

}  // namespace hetsim::sweep
