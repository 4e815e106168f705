#include "report/csv_report.hpp"

#include "report/analysis.hpp"

namespace hetsim::report {

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += c;
    }
    return q + "\"";
}

void write_csv(std::ostream& os, const Program& p, const Timeline& t) {
    os << "op,name,kind,thread,stream,engine,host_start_ns,host_end_ns,gpu_start_ns,gpu_end_ns,sync_wait_ns,bytes\n";
    for (uint32_t i = 0; i < p.ops.size() && i < t.ops.size(); ++i) {
        const Op& op = p.ops[i];
        const OpRecord& r = t.ops[i];
        std::string thread = op.thread >= 0 && static_cast<size_t>(op.thread) < p.threads.size()
                                 ? p.threads[static_cast<size_t>(op.thread)].name : "";
        std::string stream = op.stream >= 0 && static_cast<size_t>(op.stream) < p.streams.size()
                                 ? p.streams[static_cast<size_t>(op.stream)].name : "";
        os << i << ',' << csv_field(p.op_name(i)) << ',' << to_string(op.kind) << ',' << csv_field(thread) << ','
           << csv_field(stream) << ',' << (r.has_gpu() ? engine_lane(r.engine) : "") << ',';
        if (r.has_host()) os << format_ns(r.host_start) << ',' << format_ns(r.host_end) << ',';
        else os << ",,";
        if (r.has_gpu()) os << format_ns(r.gpu_start) << ',' << format_ns(r.gpu_end) << ',';
        else os << ",,";
        os << format_ns(r.sync_wait) << ',' << op.bytes_or_0() << '\n';
    }
}

}  // namespace hetsim::report
