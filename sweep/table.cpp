#include "sweep/table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/csv_report.hpp"
#include "core/input_file.hpp"
#include "core/error.hpp"

namespace hetsim::sweep {
namespace {

const char* const kDefPrefix = "# hetsim sweep ";
const char* const kShardPrefix = "# shard ";
const char* const kCriticalKinds[] = {"host_thread", "stream", "copy_engine", "sm", "device_copy", "latency"};
const char* const kEngineResources[] = {"copy:h2d", "copy:d2h", "sm", "device_copy"};
const char* const kIdleLanes[] = {"gpu", "sm"};  // idle columns: the GPU as a whole and the SMs

}  // namespace

const std::vector<std::string>& metric_columns() {
    static const std::vector<std::string> cols = [] {
        std::vector<std::string> c{"end_to_end_ns",       "serial_ns",           "busy_union_ns",      "hidden_ns",          "speedup",
                                   "exposed_sync_ns",     "exposed_sync_fraction", "gpu_active_union_ns", "gpu_active_fraction",
                                   "busiest_resource",    "busiest_busy_ns",     "busiest_utilization"};
        for (const char* k : kCriticalKinds) c.push_back(std::string("critical_") + k);
        return c;
    }();
    return cols;
}

namespace {
// Appends ",field" (append, not operator+: GCC 12 -Wrestrict false positive).
void cell(std::string& row, const std::string& field) { row.append(1, ',').append(field); }
}  // namespace

std::vector<std::string> utilization_columns(const SweepDef& def) {
    std::vector<std::string> c;
    for (const std::string& t : def.host_threads) c.push_back("util:host:" + t);
    for (const char* e : kEngineResources) c.push_back(std::string("util:") + e);
    return c;
}

std::vector<std::string> idle_columns() {
    std::vector<std::string> c;
    for (const char* l : kIdleLanes) {
        c.push_back(std::string("idle:") + l);
        for (const std::string& k : report::idle_cause_kinds()) c.push_back(std::string("idle:") + l + ":" + k);
    }
    return c;
}

std::string header_row(const SweepDef& def) {
    std::string h = "point";
    for (const Axis& a : def.axes) cell(h, report::csv_field(a.name));
    for (const std::string& c : metric_columns()) cell(h, c);
    for (const std::string& c : utilization_columns(def)) cell(h, report::csv_field(c));
    for (const std::string& c : idle_columns()) cell(h, report::csv_field(c));
    return h;
}

std::string format_double(double v) {
    if (v == 0) return "0";  // also -0
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string format_row(const SweepDef& def, uint64_t point, const report::Analysis& an) {
    std::string r = std::to_string(point);
    std::vector<size_t> c = def.coords(point);
    for (size_t i = 0; i < def.axes.size(); ++i) cell(r, report::csv_field(def.axes[i].values[c[i]]));
    const report::Metrics& m = an.metrics;
    for (const std::string& s : {report::format_ns(an.measured), report::format_ns(m.serial), report::format_ns(m.busy_union),
                                 report::format_ns(m.hidden),
                                 format_double(m.speedup), report::format_ns(m.exposed_sync),
                                 format_double(m.exposed_sync_fraction), report::format_ns(m.gpu_active_union),
                                 format_double(m.gpu_active_fraction)})
        cell(r, s);
    // The busiest resource: the most busy time among host threads and engines; the first on ties.
    const report::Resource* busiest = nullptr;
    for (const report::Resource& res : an.resources)
        if (res.kind != "stream" && (!busiest || res.busy > busiest->busy)) busiest = &res;
    cell(r, busiest ? report::csv_field(busiest->name) : "");
    cell(r, busiest ? report::format_ns(busiest->busy) : "0");
    cell(r, busiest ? format_double(busiest->utilization) : "0");
    for (const char* k : kCriticalKinds) {
        double share = 0;
        for (const report::KindShare& s : an.critical_share)
            if (s.kind == k) share = s.share;
        cell(r, format_double(share));
    }
    // Utilisation of each host thread and engine; 0 for one this point does not use.
    for (const std::string& col : utilization_columns(def)) {
        const std::string name = col.substr(5);  // after "util:"
        double u = 0;
        for (const report::Resource& res : an.resources)
            if (res.name == name) u = res.utilization;
        cell(r, format_double(u));
    }
    // Idle nanoseconds of the GPU and the SMs, then by cause (integers that sum to the first).
    for (const char* l : kIdleLanes) {
        const report::IdleLane* lane = an.idle.lane(l);
        cell(r, std::to_string(lane ? lane->idle_ns : an.end_to_end.ps() / 1000));
        for (const std::string& k : report::idle_cause_kinds()) {
            int64_t ns = 0;
            if (lane) {
                for (const report::IdleCause& ic : lane->causes)
                    if (ic.cause == k) ns += ic.ns;
            } else if (k == "nothing_left") {
                ns = (an.end_to_end.ps() + 500) / 1000;  // a lane the point never used idles throughout
            }
            cell(r, std::to_string(ns));
        }
    }
    return r;
}

std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        char ch = line[i];
        if (quoted) {
            if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
            else if (ch == '"') quoted = false;
            else out.back() += ch;
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            out.emplace_back();
        } else {
            out.back() += ch;
        }
    }
    return out;
}

bool looks_like_sweep_file(const std::string& path) {
    if (is_special_file(path)) return false;
    std::ifstream in(path, std::ios::binary);
    std::string first;
    return in && std::getline(in, first) && first.rfind(kDefPrefix, 0) == 0;
}

SweepFile read_sweep_file(const std::string& path) {
    require_regular_input(path, "give the path of a CSV that hetsim sweep wrote");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError({path}, "cannot read the file");
    SweepFile f;
    f.path = path;
    std::string line;
    int n = 0;
    auto fail = [&](const std::string& what) -> void { throw InputError({path, n, 1}, what); };
    size_t fields = 0;
    while (std::getline(in, line)) {
        ++n;
        if (n == 1) {
            if (line.rfind(kDefPrefix, 0) != 0) fail("not a hetsim sweep CSV (the first line is not '# hetsim sweep {...}')");
            f.definition = line.substr(std::string(kDefPrefix).size());
            try {
                SweepDef::identity_of(f.definition);
                auto j = nlohmann::json::parse(f.definition);
                if (!j.at("points").is_number_unsigned()) throw std::runtime_error("\"points\" is not a whole number of at least 0");
                f.points = j.at("points").get<uint64_t>();
                // The count the axes make (as SweepDef::points): a forged count would have the
                // merge list billions of missing points.
                const auto& axes = j.at("axes");
                const bool zip = j.at("zip").get<bool>(), compare = j.at("compare").get<bool>();
                if (!axes.is_array() || (compare && axes.empty())) throw std::runtime_error("\"axes\" is not a list of axes");
                const size_t nvary = axes.size() - (compare ? 1 : 0);
                uint64_t want = 1;
                for (size_t i = 0; i < axes.size(); ++i) {
                    if (zip && i > 0 && i < nvary) continue;
                    const uint64_t k = axes[i].at("values").size();
                    if (k != 0 && want > UINT64_MAX / k) throw std::runtime_error("its axes make more than 2^64 points");
                    want *= k;
                }
                if (f.points != want)
                    throw std::runtime_error("it says " + std::to_string(f.points) + " points, but its axes make " + std::to_string(want));
            } catch (const std::exception& e) {
                fail(std::string("the sweep definition is not readable: ") + e.what());
            }
        } else if (f.header.empty() && line.rfind(kShardPrefix, 0) == 0 && !f.shard) {
            try {
                f.shard = parse_shard(line.substr(std::string(kShardPrefix).size()));
            } catch (const InputError& e) {
                fail("bad shard line: " + e.message());
            }
        } else if (f.header.empty()) {
            if (line.rfind("point,", 0) != 0) fail("expected the header 'point,...'");
            f.header = line;
            fields = split_csv_line(line).size();
        } else {
            std::vector<std::string> cells = split_csv_line(line);
            if (cells.size() != fields)
                fail("a row of " + std::to_string(cells.size()) + " fields; the header has " + std::to_string(fields));
            const std::string& p = cells[0];
            if (p.empty() || p.size() > 19 || p.find_first_not_of("0123456789") != std::string::npos)
                fail("the point index '" + p + "' is not a number");
            uint64_t point = std::stoull(p);
            if (point >= f.points) fail("point " + p + " is out of range: the sweep has " + std::to_string(f.points) + " points");
            f.rows.push_back({point, line, n});
        }
    }
    if (n == 0) throw InputError({path}, "the file is empty; not a hetsim sweep CSV");
    if (f.header.empty()) throw InputError({path}, "no header row 'point,...'");
    return f;
}

std::string render_sweep_csv(const std::string& definition, const std::optional<Shard>& shard, const std::string& header,
                             const std::vector<const std::string*>& rows) {
    std::string out = kDefPrefix + definition + "\n";
    if (shard) out += kShardPrefix + shard->text() + "\n";
    out += header + "\n";
    size_t bytes = out.size();
    for (const std::string* r : rows) bytes += r->size() + 1;
    out.reserve(bytes);
    for (const std::string* r : rows) out.append(*r).append(1, '\n');
    return out;
}

double row_number(const std::string& header, const std::string& row, const std::string& column) {
    std::vector<std::string> h = split_csv_line(header), r = split_csv_line(row);
    for (size_t i = 0; i < h.size() && i < r.size(); ++i)
        if (h[i] == column) {
            double v = NAN;
            const std::string& s = r[i];
            std::from_chars(s.data(), s.data() + s.size(), v);
            return v;
        }
    return NAN;
}

MergeResult merge_sweep_files(const std::vector<std::string>& paths) {
    if (paths.empty()) throw InputError({"sweep-merge"}, "no files to merge");
    MergeResult m;
    std::string definition, identity, header;
    std::map<uint64_t, std::pair<std::string, std::string>> rows;  // point -> (row, "file:line")
    for (const std::string& path : paths) {
        SweepFile f = read_sweep_file(path);
        std::string id = SweepDef::identity_of(f.definition);
        if (m.files == 0) {
            definition = f.definition;
            identity = id;
            header = f.header;
            m.points = f.points;
        } else if (id != identity) {
            throw InputError({path}, "a different sweep than " + paths[0] + " (the scenario, its params or the --vary values differ)");
        } else if (f.header != header) {
            throw InputError({path}, "its columns differ from those of " + paths[0]);
        }
        ++m.files;
        for (const SweepFile::Row& r : f.rows) {
            std::string where = path + ":" + std::to_string(r.line);
            auto [it, fresh] = rows.emplace(r.point, std::make_pair(r.text, where));
            if (!fresh)
                m.duplicates.push_back("point " + std::to_string(r.point) + " in " + it->second.second + " and " + where);
        }
    }
    for (uint64_t p = 0; p < m.points; ++p)
        if (!rows.count(p)) m.missing.push_back(p);
    std::vector<const std::string*> ordered;
    ordered.reserve(rows.size());
    for (const auto& kv : rows) ordered.push_back(&kv.second.first);
    m.csv = render_sweep_csv(definition, std::nullopt, header, ordered);
    return m;
}

}  // namespace hetsim::sweep
