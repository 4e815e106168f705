#include "calibrate/calibration.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "frontend/expr.hpp"
#include "frontend/profile_loader.hpp"
#include "frontend/yaml_util.hpp"
#include "models/profile.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/fit_um.hpp"
#include "report/json_input.hpp"
#include "core/error.hpp"
#include "calibrate/fit_threads.hpp"

namespace hetsim::calib {

using nlohmann::json;

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;
const char* const kBenchmarks[] = {"device", "copy_sweep", "pageable_sweep", "d2d_memset", "launch", "gaps", "hbm", "um"};

std::string fmtg(double v, int digits = 4) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

std::string size_text(uint64_t b) {  // "16 MiB" in recipe texts
    if (b >= 1024 * MiB && b % (1024 * MiB) == 0) return std::to_string(b / (1024 * MiB)) + " GiB";
    if (b >= MiB && b % MiB == 0) return std::to_string(b / MiB) + " MiB";
    if (b >= KiB && b % KiB == 0) return std::to_string(b / KiB) + " KiB";
    return std::to_string(b) + " B";
}

// A time in microseconds for residuals and notes: "86.63ns", "5.284us", "1.2ms".
std::string us_text(double us) {
    const double a = std::fabs(us);
    if (a == 0) return "0us";
    if (a < 1) return fmtg(us * 1e3) + "ns";
    if (a < 1e3) return fmtg(us) + "us";
    return fmtg(us * 1e-3) + "ms";
}

std::string bytes_text(double b) {
    const double a = std::fabs(b);
    if (a < 1024) return fmtg(b) + "B";
    if (a < 1024 * 1024) return fmtg(b / 1024) + "KiB";
    return fmtg(b / (1024.0 * 1024.0)) + "MiB";
}

std::string bw_text(double bps) { return bps >= 1e12 ? fmtg(bps * 1e-12) + "TB/s" : fmtg(bps * 1e-9) + "GB/s"; }

int64_t ps_of_us(double us) { return static_cast<int64_t>(std::llround(us * 1e6)); }

// A node of one input file, with its path in the document for messages.
class J {
public:
    J(const json& j, const std::string& file, std::string path) : j_(&j), file_(&file), path_(std::move(path)) {}

    [[noreturn]] void fail(const std::string& what) const { throw InputError(report::json_file_loc(*file_, path_), path_ + ": " + what); }
    const std::string& file() const { return *file_; }
    const json& raw() const { return *j_; }

    bool has(const char* key) const { return j_->is_object() && j_->contains(key); }
    J operator[](const char* key) const {
        if (!j_->is_object()) fail(std::string("expected an object with '") + key + "', got " + type_name());
        auto it = j_->find(key);
        if (it == j_->end()) fail(std::string("missing '") + key + "' (hetsim.microbench v1 layout: validation/microbench/README.md)");
        return J(*it, *file_, path_ + "." + key);
    }
    size_t size() const {
        if (!j_->is_array()) fail("expected a list, got " + type_name());
        return j_->size();
    }
    // A list of measured points: an empty one means the benchmark measured nothing.
    J nonempty() const {
        if (size() == 0) fail("is an empty list: the benchmark measured no points (run it again)");
        return *this;
    }
    J at(size_t i) const {
        size();
        return J((*j_)[i], *file_, path_ + "[" + std::to_string(i) + "]");
    }
    double num() const {
        if (j_->is_null()) fail("is not a finite number (null: the microbenchmark writes null for NaN or infinity)");
        if (!j_->is_number()) fail("expected a number, got " + type_name());
        const double v = j_->get<double>();
        if (!std::isfinite(v)) fail("is not a finite number");
        return v;
    }
    // A time after a start the measurement took (a copy's end from its issue): above 0.
    double positive_time() const {
        const double v = num();
        if (!(v > 0)) fail("is " + fmtg(v) + "; a time from the measurement's start is above 0");
        return v;
    }
    int64_t integer() const {
        if (!j_->is_number_integer()) fail("expected a whole number, got " + (j_->is_number() ? std::string("a fraction") : type_name()));
        return j_->get<int64_t>();
    }
    uint64_t bytes() const {
        const int64_t v = integer();
        if (v <= 0) fail("expected a positive size in bytes, got " + std::to_string(v));
        return static_cast<uint64_t>(v);
    }
    std::string str() const {
        if (!j_->is_string()) fail("expected a string, got " + type_name());
        return j_->get<std::string>();
    }
    std::vector<double> nums() const {
        std::vector<double> v;
        const size_t n = size();
        v.reserve(n);
        for (size_t i = 0; i < n; ++i) v.push_back(at(i).num());
        return v;
    }
    // Durations of calls or of GPU work: none is negative (a negated sample would fit a negative
    // cost, which the profile would clamp to 0 without a word). Differences of clocks (a launch
    // latency from aligned host and GPU clocks) can be, and are read with nums().
    std::vector<double> durations() const {
        std::vector<double> v = nums();
        for (size_t i = 0; i < v.size(); ++i)
            if (v[i] < 0) at(i).fail("is negative (" + fmtg(v[i]) + "); a measured duration is 0 or more");
        return v;
    }
    // The repetitions of one GPU-timed measurement: each positive and below an hour, and within
    // `max_spread` of each other (a disturbed run gives a 10^6x spread, which a fit would take
    // for a slow copy engine).
    std::vector<double> repetitions(double max_spread = 1000) const {
        std::vector<double> v = nums();
        for (size_t i = 0; i < v.size(); ++i)
            if (!(v[i] > 0) || v[i] > 3.6e9) at(i).fail("expected a positive time below an hour, got " + fmtg(v[i]));
        if (v.size() >= 2) {
            const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
            if (*hi / *lo > max_spread)
                fail("its repetitions spread " + fmtg(*hi / *lo, 3) + "x (" + fmtg(*lo) + " to " + fmtg(*hi) +
                     "); repeated measurements of one point should agree within " + fmtg(max_spread) +
                     "x: the run was disturbed, measure again");
        }
        return v;
    }
    std::vector<int64_t> integers() const {
        std::vector<int64_t> v;
        const size_t n = size();
        v.reserve(n);
        for (size_t i = 0; i < n; ++i) v.push_back(at(i).integer());
        return v;
    }

private:
    std::string type_name() const { return j_->is_null() ? "null" : j_->type_name(); }
    const json* j_;
    const std::string* file_;
    std::string path_;
};

// The gaps start[k+1] - end[k] (us) of one run of %globaltimer stamps (ns) under `run`'s keys
// `start_key` and `end_key`, appended to `gaps`; lists of different lengths are an input error.
void append_gaps(const J& run, const char* start_key, const char* end_key, std::vector<double>& gaps) {
    const std::vector<int64_t> st = run[start_key].integers(), en = run[end_key].integers();
    if (st.size() != en.size()) run[end_key].fail(std::string("differs in length from ") + start_key);
    for (size_t k = 0; k + 1 < st.size(); ++k) gaps.push_back(static_cast<double>(st[k + 1] - en[k]) * 1e-3);
}

struct Pool {
    const std::vector<MicrobenchFile>& files;
    std::string label;  // input paths joined by " + "

    // The benchmark in every file that has it; throws when none has it.
    std::vector<J> bench(const std::string& name) const {
        std::vector<J> out;
        for (const auto& f : files) {
            J root(f.doc.at("benchmarks"), f.path, "benchmarks");
            if (root.raw().contains(name)) out.push_back(root[name.c_str()]);
        }
        if (out.empty()) {
            std::string all;
            for (const char* b : kBenchmarks) all += (all.empty() ? "" : ", ") + std::string(b);
            throw InputError(files.size() == 1 ? report::json_file_loc(files[0].path, "benchmarks") : SourceLoc{label},
                             "benchmark '" + name + "' is missing" +
                                                   (files.size() > 1 ? " from every input" : "") +
                                                   "; calibrate needs " + all +
                                                   " (run hetsim-microbench without --only, or add a file that has it)");
        }
        return out;
    }
    // The benchmark in every file that has it; empty when none has it (optional sections: their
    // parameters keep the base profile's entries).
    std::vector<J> maybe(const std::string& name) const {
        std::vector<J> out;
        for (const auto& f : files) {
            J root(f.doc.at("benchmarks"), f.path, "benchmarks");
            if (root.raw().contains(name) && !root[name.c_str()].has("skipped")) out.push_back(root[name.c_str()]);
        }
        return out;
    }
    std::string source(const std::string& bench_recipe, size_t n) const {
        return "fit: " + bench_recipe + ", " + std::to_string(n) + " sample" + (n == 1 ? "" : "s") + ", " + label;
    }
    // Where a message about `what` points: the benchmark it names (its first word, or the part
    // before the first '.': "hbm.bandwidth") in the first input that has it, else "benchmarks".
    SourceLoc loc_for(const std::string& what) const {
        const std::string b = what.substr(0, what.find_first_of(" .:("));
        for (const auto& f : files)
            if (f.doc.is_object() && f.doc.contains("benchmarks") && f.doc["benchmarks"].is_object() && f.doc["benchmarks"].contains(b))
                return report::json_file_loc(f.path, "benchmarks." + b);
        return files.empty() ? SourceLoc{label} : report::json_file_loc(files[0].path, "benchmarks");
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw InputError(loc_for(what), what + (files.size() > 1 ? " (samples pooled from " + label + ")" : ""));
    }
    // Runs a fit; a FitError becomes an InputError naming what was fitted.
    template <class F>
    auto guard(const std::string& what, F f) const {
        try {
            return f();
        } catch (const fit::FitError& e) {
            fail(what + ": " + e.what());
        }
    }
};

struct Builder {
    const Pool& pool;
    Calibration& cal;

    Fitted& add(const std::string& key, std::string value, const std::string& bench_recipe, std::string fit_text,
                std::string residual, size_t n) {
        Fitted f;
        f.key = key;
        f.value = std::move(value);
        f.source = pool.source(bench_recipe, n);
        f.fit = std::move(fit_text);
        f.residual = std::move(residual);
        f.samples = n;
        cal.params.push_back(std::move(f));
        return cal.params.back();
    }
    void time(const std::string& key, double us, const std::string& recipe, const std::string& fit_text, double rms_us,
              size_t n) {
        if (us < 0) {
            cal.checks.push_back(key + ": fitted " + us_text(us) + " is negative; written as 0 (the model's times are >= 0)");
            us = 0;
        }
        add(key, format_time_literal(ps_of_us(us)), recipe, fit_text, us_text(rms_us), n);
    }
    void bandwidth(const std::string& key, double bps, const std::string& recipe, const std::string& fit_text,
                   double rms_us, size_t n) {
        if (!(bps > 0) || !std::isfinite(bps))
            pool.fail(key + ": the fit gives a non-positive bandwidth (" + fmtg(bps) +
                                                        " B/s); the samples do not grow with the size");
        add(key, format_bandwidth_literal(round_bandwidth(bps)), recipe, fit_text, us_text(rms_us), n);
    }
    // Forgets a fit (a later, more specific section fits the parameter again).
    void drop(const std::string& key) {
        cal.params.erase(std::remove_if(cal.params.begin(), cal.params.end(), [&](const Fitted& f) { return f.key == key; }),
                         cal.params.end());
    }
    // A fitted value as the profile has it: ps, bytes or bytes/s.
    int64_t value_of(const std::string& key) const { return parse_literal(cal.find(key)->value).i; }
};

// ---- device ---------------------------------------------------------------------------------

void fit_device(const Pool& pool, Builder& b) {
    std::vector<J> dev = pool.bench("device");
    struct Attr {
        const char* key;
        const char* attr;
        const char* cuda;
    };
    const Attr attrs[] = {{"sm.count", "multiprocessor_count", "cudaDevAttrMultiProcessorCount"},
                          {"sm.max_threads", "max_threads_per_multiprocessor", "cudaDevAttrMaxThreadsPerMultiProcessor"},
                          {"sm.max_blocks", "max_blocks_per_multiprocessor", "cudaDevAttrMaxBlocksPerMultiprocessor"},
                          {"sm.registers", "max_registers_per_multiprocessor", "cudaDevAttrMaxRegistersPerMultiprocessor"},
                          {"sm.shared_memory", "max_shared_memory_per_multiprocessor",
                           "cudaDevAttrMaxSharedMemoryPerMultiprocessor"}};
    auto same = [&](const char* key, const std::vector<int64_t>& v, const std::vector<J>& where) {
        for (size_t i = 1; i < v.size(); ++i)
            if (v[i] != v[0])
                where[i].fail(std::string("differs between the inputs (") + std::to_string(v[0]) + " in " +
                              where[0].file() + ", " + std::to_string(v[i]) + " here) for " + key +
                              "; pool only measurements of the same device");
        return v[0];
    };
    for (const auto& a : attrs) {
        std::vector<int64_t> v;
        std::vector<J> where;
        for (const J& d : dev) {
            J x = d["attributes"][a.attr];
            v.push_back(x.integer());
            where.push_back(x);
            if (v.back() <= 0) x.fail("must be positive");
        }
        const int64_t val = same(a.key, v, where);
        const std::string text = std::string(a.key) == "sm.shared_memory" ? format_size_literal(static_cast<uint64_t>(val))
                                                                          : std::to_string(val);
        b.add(a.key, text, std::string("device ") + a.cuda, "read directly", "", v.size());
    }
    std::vector<int64_t> v;
    std::vector<J> where;
    for (const J& d : dev) {
        J x = d["mem_get_info"]["total"];
        v.push_back(static_cast<int64_t>(x.bytes()));
        where.push_back(x);
    }
    const int64_t total = same("device.memory", v, where);
    if (total < (int64_t{256} << 20))
        where[0].fail("is " + std::to_string(total) + " bytes; no GPU that runs these benchmarks has less than 256 MiB (a broken cudaMemGetInfo?)");
    b.add("device.memory", format_size_literal(static_cast<uint64_t>(total)), "device cudaMemGetInfo total",
          "read directly", "", v.size());
}

// ---- batches of back-to-back ops (copy_sweep, d2d_memset) ----------------------------------

struct OpSample {
    uint64_t bytes;
    int64_t k;
    double batch_us;
};

struct BatchData {
    std::vector<OpSample> largest_k;  // per file and size, the samples of the largest k (per-op = batch / k)
    std::vector<OpSample> all;        // every batch sample
    std::vector<double> calls_upto_1mib, calls_all;
    size_t dropped_points = 0;
};

BatchData batch_data(const std::vector<J>& benches, const std::string& op) {
    BatchData d;
    for (const J& bench : benches) {
        J pts = bench["points"].nonempty();
        std::map<uint64_t, int64_t> kmax;
        std::vector<J> mine;
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            if (p["op"].str() != op) continue;
            const int64_t k = p["k"].integer();
            if (k < 1) p["k"].fail("must be at least 1");
            const uint64_t bytes = p["bytes"].bytes();
            std::vector<double> calls = p["call_us"].nums();
            for (double c : calls) {
                d.calls_all.push_back(c);
                if (bytes <= MiB) d.calls_upto_1mib.push_back(c);
            }
            if (p.has("blocker_expired") && p["blocker_expired"].integer() > 0) {
                ++d.dropped_points;  // host-bound batches (README): not GPU time
                continue;
            }
            mine.push_back(p);
            kmax[bytes] = std::max(kmax[bytes], k);
        }
        for (const J& p : mine) {
            const int64_t k = p["k"].integer();
            const uint64_t bytes = p["bytes"].bytes();
            for (double t : p["batch_gpu_us"].repetitions()) {
                d.all.push_back({bytes, k, t});
                if (k == kmax[bytes]) d.largest_k.push_back({bytes, k, t});
            }
        }
    }
    return d;
}

struct BatchFit {
    double bw_bps = 0, f_us = 0, bw_rms = 0, f_rms = 0;
    size_t n_bw = 0, n_f = 0;
    uint64_t bw_from = 0;
};

// Bandwidth = factor / slope of per-op time (batch / k at the largest k) vs bytes over sizes >=
// bw_from; f = median over sizes <= fixed_upto of per-op time - factor * bytes / bandwidth, with
// the bandwidth as written to the profile.
BatchFit batch_fit(const Pool& pool, const BatchData& d, const std::string& what, double factor, uint64_t bw_from,
                   uint64_t fixed_upto) {
    BatchFit r;
    r.bw_from = bw_from;
    std::vector<double> x, y;
    for (const auto& s : d.largest_k)
        if (s.bytes >= bw_from) {
            x.push_back(static_cast<double>(s.bytes) * factor);
            y.push_back(s.batch_us / static_cast<double>(s.k));
        }
    fit::Line line = pool.guard(what + " bandwidth (sizes >= " + size_text(bw_from) + ")", [&] { return fit::fit_line(x, y); });
    r.bw_bps = line.slope > 0 ? 1e6 / line.slope : -1;
    r.bw_rms = line.rms;
    r.n_bw = line.n;
    if (r.bw_bps <= 0) return r;
    const double bw = static_cast<double>(round_bandwidth(r.bw_bps));
    std::vector<double> f;
    for (const auto& s : d.largest_k)
        if (s.bytes <= fixed_upto) f.push_back(s.batch_us / static_cast<double>(s.k) - static_cast<double>(s.bytes) * factor * 1e6 / bw);
    if (f.size() < 2)
        pool.fail(what + " fixed cost (sizes <= " + size_text(fixed_upto) +
                                                    "): needs at least 2 samples, got " + std::to_string(f.size()));
    r.f_us = fit::median(f);
    r.f_rms = fit::rms_about(f, r.f_us);
    r.n_f = f.size();
    return r;
}

// copy.<dir>.efficiency: per size 64 KiB..8 MiB, the median measured per-copy time t (batch/k,
// largest k) against the fit's own line f + bytes/bandwidth; "none" when every ratio is within 3%
// of 1, else a curve of eff = (bytes/bandwidth) / (t - f), so that the model's
// fixed + bytes/(bandwidth x eff) (+ gap) gives t.
void fit_efficiency(const Pool& pool, Builder& b, const BatchData& d, const std::string& key, const BatchFit& f) {
    const double bw = static_cast<double>(round_bandwidth(f.bw_bps));
    std::map<uint64_t, std::vector<double>> per;
    for (const auto& s : d.largest_k)
        if (s.bytes >= 64 * KiB && s.bytes <= 8 * MiB) per[s.bytes].push_back(s.batch_us / static_cast<double>(s.k));
    if (per.empty()) return;  // keeps the base entry
    bool flat = true;
    std::string curve, ratios;
    std::vector<double> resid;
    size_t n = 0;
    for (const auto& [bytes, v] : per) {
        const double t = fit::median(v);
        const double model = f.f_us + static_cast<double>(bytes) * 1e6 / bw;
        const double ratio = t / model;
        flat &= std::fabs(ratio - 1.0) <= 0.03;
        const double xfer = static_cast<double>(bytes) * 1e6 / bw;
        double eff = t - f.f_us > 0 ? xfer / (t - f.f_us) : 1.0;
        eff = std::min(std::max(eff, 0.01), 1.0);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4g", eff);
        curve += (curve.empty() ? "" : ", ") + format_size_literal(bytes) + ":" + buf;
        ratios += (ratios.empty() ? "" : ", ") + size_text(bytes) + " " + fmtg(ratio, 4);
        resid.push_back(ratio - 1.0);
        n += v.size();
    }
    (void)pool;
    double rms = 0;
    for (double r : resid) rms += r * r;
    rms = std::sqrt(rms / static_cast<double>(resid.size()));
    b.add(key + ".efficiency", flat ? "none" : curve,
          "copy_sweep per-copy time (batch/k, largest k) / (fixed + bytes/bandwidth of the fit), 64 KiB..8 MiB: " + ratios,
          flat ? "none: every ratio within 3% of 1" : "eff = (bytes/bandwidth) / (time - fixed), median per size, 64 KiB..8 MiB",
          fmtg(rms * 100, 3) + "%", n);
}

void fit_batches(const Pool& pool, Builder& b, double stream_gap_us, const std::string& gap_text) {
    // copy_sweep: pinned H2D / D2H.
    std::vector<J> cs = pool.bench("copy_sweep");
    std::vector<double> calls;
    for (const char* dir : {"h2d", "d2h"}) {
        BatchData d = batch_data(cs, dir);
        calls.insert(calls.end(), d.calls_upto_1mib.begin(), d.calls_upto_1mib.end());
        const std::string what = std::string("copy_sweep ") + dir;
        BatchFit f = batch_fit(pool, d, what, 1.0, 16 * MiB, 64 * KiB);
        const std::string key = std::string("copy.") + dir;
        b.bandwidth(key + ".bandwidth", f.bw_bps,
                    std::string("copy_sweep 1/slope of pinned ") + (dir[0] == 'h' ? "H2D" : "D2H") +
                        " per-copy GPU time (batch/k, largest k) vs bytes",
                    "linear least squares (Eigen QR), sizes >= 16 MiB", f.bw_rms, f.n_bw);
        b.time(key + ".fixed", f.f_us - stream_gap_us,
               "copy_sweep median of per-copy time - bytes/bandwidth, minus gpu.stream_gap " + gap_text +
                   " (back to back in one stream)",
               "median, sizes <= 64 KiB", f.f_rms, f.n_f);
        fit_efficiency(pool, b, d, key, f);
        if (d.dropped_points)
            b.cal.checks.push_back(what + ": dropped " + std::to_string(d.dropped_points) +
                                   " points whose blocker expired (host-bound batches)");
        // The README's full recipe, as a cross-check: weighted least squares over every batch.
        std::vector<std::vector<double>> rows;
        std::vector<double> y, w;
        for (const auto& s : d.all) {
            rows.push_back({1.0, static_cast<double>(s.k), static_cast<double>(s.k) * static_cast<double>(s.bytes)});
            y.push_back(s.batch_us);
            w.push_back(1.0 / (s.batch_us * s.batch_us));
        }
        try {
            fit::LeastSquares ls = fit::least_squares(rows, y, w);
            b.cal.checks.push_back(what + ": README weighted fit batch = a + k*f + k*bytes/B over " +
                                   std::to_string(ls.n) + " batches: a " + us_text(ls.coef[0]) + ", f " +
                                   us_text(ls.coef[1]) + ", B " + bw_text(1e6 / ls.coef[2]) +
                                   " (profile: per-copy f " + us_text(f.f_us) +
                                   "; batch/k at the largest k still holds a/k of the batch overhead)");
        } catch (const fit::FitError& e) {
            b.cal.checks.push_back(what + ": README weighted fit not possible: " + e.what());
        }
    }
    const double mcall = pool.guard("copy_sweep host.memcpy_call_cost (sizes <= 1 MiB)", [&] { return fit::median(calls); });
    b.time("host.memcpy_call_cost", mcall, "copy_sweep median cudaMemcpyAsync call time (pinned, H2D and D2H)",
           "median, sizes <= 1 MiB", fit::rms_about(calls, mcall), calls.size());

    // d2d_memset: bandwidth beyond L2 (sizes >= a quarter of the largest, 256 MiB in a full run).
    std::vector<J> dm = pool.bench("d2d_memset");
    for (const char* op : {"d2d", "memset"}) {
        BatchData d = batch_data(dm, op);
        uint64_t largest = 0;
        for (const auto& s : d.largest_k) largest = std::max(largest, s.bytes);
        const bool cp = op[0] == 'd';
        const double factor = cp ? 2.0 : 1.0;
        const std::string what = std::string("d2d_memset ") + op;
        BatchFit f = batch_fit(pool, d, what, factor, std::max<uint64_t>(largest / 4, 1), 64 * KiB);
        const std::string key = cp ? "copy.d2d" : "copy.memset";
        b.bandwidth(key + ".bandwidth", f.bw_bps,
                    cp ? "d2d_memset 2/slope of D2D per-copy GPU time (batch/k, largest k) vs bytes (read + write)"
                       : "d2d_memset 1/slope of memset per-op GPU time (batch/k, largest k) vs bytes",
                    "linear least squares (Eigen QR), sizes >= " + size_text(f.bw_from) + " (beyond L2)", f.bw_rms,
                    f.n_bw);
        b.time(key + ".fixed", f.f_us - stream_gap_us,
               std::string("d2d_memset median of per-op time - ") + (cp ? "2*bytes" : "bytes") +
                   "/bandwidth, minus gpu.stream_gap " + gap_text + " (back to back in one stream)",
               "median, sizes <= 64 KiB", f.f_rms, f.n_f);
        if (d.dropped_points)
            b.cal.checks.push_back(what + ": dropped " + std::to_string(d.dropped_points) +
                                   " points whose blocker expired (host-bound batches)");
        if (!cp) {
            const std::vector<double>& mc = d.calls_all;
            const double m = pool.guard("d2d_memset host.memset_call_cost", [&] { return fit::median(mc); });
            b.time("host.memset_call_cost", m, "d2d_memset median cudaMemsetAsync call time", "median, all sizes",
                   fit::rms_about(mc, m), mc.size());
        }
    }
}

// ---- pageable copies --------------------------------------------------------------------------

// Per size, the median of the values the files gave (one per file and size).
std::map<uint64_t, double> median_per_size(const std::map<uint64_t, std::vector<double>>& by_size) {
    std::map<uint64_t, double> out;
    for (const auto& [bytes, values] : by_size) out[bytes] = fit::median(values);
    return out;
}

// ---- host.pageable_h2d_near_bandwidth, host.staging_cache_near (h2d_warm / own_steady) ------------
// A source copied again at once stages faster up to about 1 MiB than from 2 MiB on (issue 14:
// 15-19 GB/s at 256 KiB-1 MiB, 11-15 GB/s at 2-16 MiB on every start): a nearer cache level.
// Rates are net of host.memcpy_call_cost (the model's call = that cost + bytes / the speed; at
// 256 KiB it is a tenth of the call). The samples: the 3rd and later copies of a source
// (fit_pageable). The speed: their median net rate at 256 KiB-1 MiB; the size: scanning up from the
// fastest size, the last whose median net rate (samples of every input pooled) is at least halfway
// between that speed and host.pageable_h2d_warm_bandwidth, when a larger size falls below it.
// Without such a size both keep the base profile's values. `from` names the samples in messages,
// `what` in the speed's source.
void fit_staging_near(Builder& b, double warm, const std::vector<std::pair<uint64_t, double>>& samples,
                      const std::string& from, const std::string& what) {
    const double cost_us = static_cast<double>(b.value_of("host.memcpy_call_cost")) * 1e-6;  // ps -> us
    std::map<uint64_t, std::vector<double>> by_size;  // bytes -> net rates (bytes/s)
    std::vector<double> rates, bytes, us;
    for (const auto& [size, call] : samples) {
        if (size < 256 * KiB || call <= cost_us) continue;
        const double rate = static_cast<double>(size) / ((call - cost_us) * 1e-6);
        by_size[size].push_back(rate);
        if (size <= MiB) {
            rates.push_back(rate);
            bytes.push_back(static_cast<double>(size));
            us.push_back(call);
        }
    }
    if (rates.size() < 2) return;
    const double near = fit::median(rates);
    const double mid = 0.5 * (near + warm);
    // Scanned up from the fastest size: at 256 KiB the call's fixed part, not net of its
    // variation, can pull a size below halfway while larger ones stage faster.
    uint64_t peak = 0;
    double peak_rate = 0;
    for (const auto& [size, r] : by_size)
        if (const double rate = fit::median(r); rate > peak_rate) peak = size, peak_rate = rate;
    uint64_t last_near = 0, first_far = 0;
    double far_rate = 0;
    for (const auto& [size, r] : by_size) {
        if (first_far) break;
        if (size < peak) continue;
        const double rate = fit::median(r);
        if (rate >= mid) last_near = size;
        else first_far = size, far_rate = rate;
    }
    if (near <= warm || !last_near || !first_far) {
        b.cal.checks.push_back(from + ": no nearer cache level (256 KiB-1 MiB not faster than the warm speed, "
                               "or no size falls below halfway); host.pageable_h2d_near_bandwidth and host.staging_cache_near "
                               "keep the base values");
        return;
    }
    double sq = 0;  // residual of the call times against the call cost + bytes / near
    for (size_t k = 0; k < us.size(); ++k) sq += std::pow(us[k] - cost_us - bytes[k] / near * 1e6, 2);
    b.bandwidth("host.pageable_h2d_near_bandwidth", near,
                what + ", 256 KiB-1 MiB",
                "median of per-call rates", std::sqrt(sq / static_cast<double>(us.size())), rates.size());
    b.add("host.staging_cache_near", format_size_literal(last_near),
          from + ": largest size from the fastest one (" + size_text(peak) + ") staging at >= (near + warm) / 2 = " + bw_text(mid) + ", " +
              size_text(first_far) + " stages at " + bw_text(far_rate) + " (rates net of host.memcpy_call_cost)",
          "threshold on the median rate per size", "", samples.size());
}

void fit_pageable(const Pool& pool, Builder& b) {
    std::vector<J> ps = pool.bench("pageable_sweep");
    auto mode_points = [&](const std::string& mode, auto&& each) {
        for (const J& bench : ps) {
            J pts = bench["points"].nonempty();
            for (size_t i = 0; i < pts.size(); ++i) {
                J p = pts.at(i);
                if (p["mode"].str() == mode) each(p);
            }
        }
    };
    for (const char* dir : {"h2d", "d2h"}) {
        const std::string mode = std::string(dir) + "_idle";
        std::vector<double> x, y;
        mode_points(mode, [&](const J& p) {
            const uint64_t bytes = p["bytes"].bytes();
            if (bytes < MiB) return;
            for (double t : p["call_us"].nums()) {
                x.push_back(static_cast<double>(bytes));
                y.push_back(t);
            }
        });
        fit::Line line = pool.guard("pageable_sweep " + mode + " bandwidth (sizes >= 1 MiB)", [&] { return fit::fit_line(x, y); });
        b.bandwidth(std::string("host.pageable_") + dir + "_bandwidth", line.slope > 0 ? 1e6 / line.slope : -1,
                    "pageable_sweep 1/slope of the " + std::string(dir[0] == 'h' ? "H2D" : "D2H") +
                        " call time (" + mode + ") vs bytes",
                    "linear least squares (Eigen QR), sizes >= 1 MiB", line.rms, line.n);
        b.cal.checks.push_back("pageable_sweep " + mode + ": call time = " + us_text(line.intercept) + " + bytes/" +
                               bw_text(1e6 / line.slope) + " (the model's intercept is host.memcpy_call_cost)");
    }
    // host.staging_chunk: the tail (total - call) of h2d_idle >= 16 MiB is, in the model,
    // copy.h2d.fixed + chunk / copy.h2d.bandwidth + host.sync_wakeup.
    std::vector<double> tails;
    mode_points("h2d_idle", [&](const J& p) {
        if (p["bytes"].bytes() < 16 * MiB) return;
        std::vector<double> call = p["call_us"].nums(), total = p["total_us"].nums();
        if (call.size() != total.size()) p["total_us"].fail("has " + std::to_string(total.size()) + " samples, call_us " + std::to_string(call.size()));
        for (size_t i = 0; i < call.size(); ++i) tails.push_back(total[i] - call[i]);
    });
    if (tails.size() < 2)
        pool.fail("pageable_sweep host.staging_chunk (h2d_idle, sizes >= 16 MiB): needs at least 2 samples, got " +
                                                    std::to_string(tails.size()));
    const double tail = fit::median(tails);
    const double fixed_us = static_cast<double>(b.value_of("copy.h2d.fixed")) * 1e-6;
    const double wake_us = static_cast<double>(b.value_of("host.sync_wakeup")) * 1e-6;
    const double bw = static_cast<double>(b.value_of("copy.h2d.bandwidth"));
    double chunk = (tail - fixed_us - wake_us) * 1e-6 * bw;
    const double page = 4096;
    uint64_t pages = chunk > page ? static_cast<uint64_t>(std::llround(chunk / page)) : 1;
    if (chunk <= page)
        b.cal.checks.push_back("host.staging_chunk: the fit gives " + bytes_text(chunk) + "; written as one 4 KiB page");
    b.add("host.staging_chunk", format_size_literal(pages * 4096),
          "pageable_sweep (median tail total - call of h2d_idle - copy.h2d.fixed - host.sync_wakeup) * "
          "copy.h2d.bandwidth, tail " + us_text(tail),
          "median, sizes >= 16 MiB, rounded to 4 KiB pages", bytes_text(fit::rms_about(tails, tail) * 1e-6 * bw),
          tails.size());
    // host.staging_pool: the largest size whose call did not wait for the busy stream (median
    // call <= half the blocker) below the first size that did, rounded down to a power of two.
    std::map<uint64_t, bool> waits;
    size_t nb = 0;
    mode_points("h2d_busy", [&](const J& p) {
        if (!p.has("blocker_us")) return;
        std::vector<double> call = p["call_us"].nums(), blocker = p["blocker_us"].nums();
        if (call.empty() || blocker.empty()) return;
        nb += call.size();
        bool w = fit::median(call) > 0.5 * fit::median(blocker);
        auto [it, fresh] = waits.emplace(p["bytes"].bytes(), w);
        if (!fresh) it->second = it->second || w;
    });
    uint64_t pool_bytes = 0, first_wait = 0;
    for (const auto& [bytes, w] : waits) {
        if (w) {
            first_wait = bytes;
            break;
        }
        pool_bytes = bytes;
    }
    if (pool_bytes) {
        uint64_t p2 = 1;
        while (p2 * 2 <= pool_bytes) p2 *= 2;
        b.add("host.staging_pool", format_size_literal(p2),
              "pageable_sweep h2d_busy: largest size whose call returned while the stream was busy (median call <= half the "
              "blocker)" + (first_wait ? ", calls wait from " + size_text(first_wait) : std::string(", no size waited")),
              "threshold on medians per size, rounded down to a power of two", "", nb);
    } else if (first_wait) {
        b.cal.checks.push_back("pageable_sweep h2d_busy: even the smallest size waits for the busy stream; host.staging_pool keeps the base value");
    }
    // host.pageable_h2d_warm_bandwidth: the median staging speed of a source copied again at once
    // (h2d_warm) at 1-8 MiB; host.staging_cache: the largest warm size still staging at least
    // halfway between the cold and the warm speed, when a larger one falls below it.
    // bytes -> bytes per second: the median over files of each file's median call at that size
    // (each file one vote, whatever the order the files come in)
    //
    // The speed samples (issue 14, 2026-12-03) are the 3rd and later copies of a source only: a
    // source copied again and again stages slowly for its first two copies, then settles (every
    // start; pageable_steady's fresh buffers show it is the copy path warming, docs/model.md Rule 2).
    // An input with pageable_steady gives its own_steady copies (a buffer of the copy's size, 12
    // copies back to back, as re-upload loops run), the others their h2d_warm copies (5 a size).
    // Every copy of h2d_warm pooled gave 13.2 GB/s on the shipped starts, the 3rd on 13.9; held out,
    // the re-upload loops 88/89 went from +10.7/+8.9 % to -1.9/-4.0 % (median over 28 starts). The
    // size thresholds stay on h2d_warm / h2d_warm_gap (each file's median per size).
    std::map<uint64_t, std::vector<double>> warm_rates;
    mode_points("h2d_warm", [&](const J& p) {
        std::vector<double> call = p["call_us"].nums();
        if (call.empty()) return;
        const uint64_t bytes = p["bytes"].bytes();
        warm_rates[bytes].push_back(static_cast<double>(bytes) / (fit::median(call) * 1e-6));
    });
    std::vector<double> mid_rates, mid_bytes, mid_us;
    std::vector<std::pair<uint64_t, double>> warm_samples;  // (bytes, call us) of every speed sample
    auto speed_sample = [&](uint64_t bytes, double t) {
        if (bytes >= MiB && bytes <= 8 * MiB) {
            mid_rates.push_back(static_cast<double>(bytes) / (t * 1e-6));
            mid_bytes.push_back(static_cast<double>(bytes));
            mid_us.push_back(t);
        }
        warm_samples.emplace_back(bytes, t);
    };
    // Per input: pageable_steady's own_steady when it has it, else pageable_sweep's h2d_warm, from
    // the 3rd copy of a source on either way (both rise over their first two copies).
    size_t n_steady = 0, n_warm = 0;
    for (const auto& f : pool.files) {
        J root(f.doc.at("benchmarks"), f.path, "benchmarks");
        const bool has_steady = root.raw().contains("pageable_steady") && !root["pageable_steady"].has("skipped");
        if (!has_steady && !root.raw().contains("pageable_sweep")) continue;
        J pts = root[has_steady ? "pageable_steady" : "pageable_sweep"]["points"].nonempty();
        (has_steady ? n_steady : n_warm) += 1;
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            if (p["mode"].str() != (has_steady ? "own_steady" : "h2d_warm")) continue;
            std::vector<double> call = p["call_us"].nums();
            for (size_t r = 2; r < call.size(); ++r) speed_sample(p["bytes"].bytes(), call[r]);
        }
    }
    const bool steady = n_steady > 0;
    std::string speed_from = "pageable_sweep bytes / call time of h2d_warm (the same source each time) from the 3rd copy on";
    if (steady)
        speed_from = "bytes / call time from the 3rd copy of a source on: pageable_steady own_steady (a buffer of the copy's "
                     "size copied 12 times back to back) in " + std::to_string(n_steady) + " input" + (n_steady == 1 ? "" : "s") +
                     (n_warm ? ", pageable_sweep h2d_warm (the same source each time) in the other " + std::to_string(n_warm) : "");
    const std::map<uint64_t, double> warm_rate = median_per_size(warm_rates);
    if (mid_rates.size() >= 2) {
        const double warm = fit::median(mid_rates);
        double sq = 0;  // residual of the call times against bytes / warm
        for (size_t k = 0; k < mid_us.size(); ++k) sq += std::pow(mid_us[k] - mid_bytes[k] / warm * 1e6, 2);
        b.bandwidth("host.pageable_h2d_warm_bandwidth", warm, speed_from + ", 1-8 MiB", "median of per-call rates",
                    std::sqrt(sq / static_cast<double>(mid_us.size())), mid_rates.size());
        const double cold = static_cast<double>(b.value_of("host.pageable_h2d_bandwidth"));
        fit_staging_near(b, warm, warm_samples, steady ? "pageable_steady own_steady / pageable_sweep h2d_warm (from the 3rd copy)"
                                                        : "pageable_sweep h2d_warm (from the 3rd copy)",
                         "bytes / (call time - host.memcpy_call_cost) from the 3rd copy of a source on, " +
                             std::string(steady ? "pageable_steady own_steady or pageable_sweep h2d_warm"
                                                : "pageable_sweep h2d_warm (the same source each time)"));
        const double half = 0.5 * (warm + cold);
        uint64_t last_warm = 0, first_cold = 0;
        for (const auto& [bytes, rate] : warm_rate) {
            if (bytes < MiB) continue;
            if (rate >= half && !first_cold) last_warm = bytes;
            else if (rate < half && !first_cold) first_cold = bytes;
        }
        // With h2d_warm_gap (the same, 2 ms of host spin before each copy, as programs that work
        // between their copies): the size is read there, the threshold halfway between the cold
        // speed and the fastest pause-warm one (issue 14: a source staged back to back stays warm
        // up to 48 MiB, one staged after a pause up to 24 MiB; validation 13 re-uploads 24 MiB after
        // a 12 MiB download and two pauses, and stages it cold).
        std::map<uint64_t, std::vector<double>> gap_rates;
        mode_points("h2d_warm_gap", [&](const J& p) {
            std::vector<double> call = p["call_us"].nums();
            if (call.empty()) return;
            const uint64_t bytes = p["bytes"].bytes();
            gap_rates[bytes].push_back(static_cast<double>(bytes) / (fit::median(call) * 1e-6));
        });
        const std::map<uint64_t, double> gap_rate = median_per_size(gap_rates);
        if (gap_rate.size() >= 2) {
            double fastest = 0;
            for (const auto& [bytes, rate] : gap_rate) fastest = std::max(fastest, rate);
            const double mid = 0.5 * (fastest + cold);
            uint64_t gap_warm = 0, gap_cold = 0;
            for (const auto& [bytes, rate] : gap_rate) {
                if (rate >= mid && !gap_cold) gap_warm = bytes;
                else if (rate < mid && !gap_cold) gap_cold = bytes;
            }
            if (gap_warm && gap_cold) {
                b.add("host.staging_cache", format_size_literal(gap_warm),
                      "pageable_sweep h2d_warm_gap (2 ms of host work before each copy): largest size staging at >= (fastest + "
                      "cold) / 2 = " + bw_text(mid) + ", " + size_text(gap_cold) + " stages at " + bw_text(gap_rate.at(gap_cold)) +
                          " (back to back, h2d_warm, stays warm up to " + size_text(last_warm) + ")",
                      "threshold on the median rate per size", "", gap_rate.size());
                return;
            }
            if (gap_warm) {
                // Every size stays warm after the pause (2026-12-02a and c: 32 MiB at 12-14 GB/s):
                // the cache holds at least the largest size measured. The back-to-back h2d_warm
                // threshold (48-64 MiB) measures copies without a pause, not this, and took
                // validation 13's 24 MiB frame warm (-20% instead of -10% held out).
                b.add("host.staging_cache", format_size_literal(gap_warm),
                      "pageable_sweep h2d_warm_gap (2 ms of host work before each copy): every size up to the largest "
                      "measured, " + size_text(gap_warm) + ", stages at >= (fastest + cold) / 2 = " + bw_text(mid) +
                          ": a lower bound (back to back, h2d_warm, stays warm up to " + size_text(last_warm) + ")",
                      "largest size measured, all warm", "", gap_rate.size());
                return;
            }
            b.cal.checks.push_back("pageable_sweep h2d_warm_gap: no size stages at >= (fastest + cold) / 2; "
                                   "host.staging_cache is read from h2d_warm");
        }
        if (last_warm && first_cold)
            b.add("host.staging_cache", format_size_literal(last_warm),
                  "pageable_sweep h2d_warm: largest size staging at >= (warm + cold) / 2 = " + bw_text(half) + ", " +
                      size_text(first_cold) + " stages at " + bw_text(warm_rate.at(first_cold)),
                  "threshold on the median rate per size", "", warm_rate.size());
        else
            b.cal.checks.push_back("pageable_sweep h2d_warm: no size >= 1 MiB falls below (warm + cold) / 2 after a warm one; "
                                   "host.staging_cache keeps the base value");
    }
}

// ---- host.pageable_d2h_wakeup (pageable_sweep d2h_busy) -----------------------------------------
// A pageable D2H queued behind a blocker kernel returns, in the model (docs/model.md rule 2), at
// the blocker's end + gpu.stream_gap + its DMA (copy.d2h.fixed + the first chunk at
// copy.d2h.bandwidth + the rest at host.pageable_d2h_bandwidth) + the last chunk's draining +
// host.pageable_d2h_wakeup. The blocker was launched before t0 (an event record in between), so it
// ends gpu.launch_latency - host.event_record_cost + blocker_us after t0. Sizes up to 1 MiB (the
// 16 MiB point moves by +-150 us between starts, the host's speed, not its wake-up).
void fit_pageable_d2h_wakeup(const Pool& pool, Builder& b) {
    std::vector<double> res;
    const double us = 1e-6;  // value_of gives ps for times
    const double lat = static_cast<double>(b.value_of("gpu.launch_latency")) * us;
    const double rec = static_cast<double>(b.value_of("host.event_record_cost")) * us;
    const double gap = static_cast<double>(b.value_of("gpu.stream_gap")) * us;
    const double fixed = static_cast<double>(b.value_of("copy.d2h.fixed")) * us;
    const double pin = static_cast<double>(b.value_of("copy.d2h.bandwidth"));
    const double host = static_cast<double>(b.value_of("host.pageable_d2h_bandwidth"));
    const double chunk_max = static_cast<double>(b.value_of("host.staging_chunk"));
    for (const J& bench : pool.bench("pageable_sweep")) {
        J pts = bench["points"].nonempty();
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            if (p["mode"].str() != "d2h_busy" || !p.has("blocker_us")) continue;
            const double bytes = static_cast<double>(p["bytes"].bytes());
            if (bytes > MiB) continue;
            const double chunk = std::min(bytes, chunk_max);
            const double model = gap + fixed + chunk / pin * 1e6 + (bytes - chunk) / host * 1e6 + chunk / host * 1e6;
            std::vector<double> call = p["call_us"].nums(), blocker = p["blocker_us"].nums();
            if (call.size() != blocker.size())
                p["blocker_us"].fail("has " + std::to_string(blocker.size()) + " samples, call_us " + std::to_string(call.size()));
            for (size_t k = 0; k < call.size(); ++k) res.push_back(call[k] - (blocker[k] + lat - rec) - model);
        }
    }
    if (res.size() < 2) {
        b.cal.checks.push_back("pageable_sweep d2h_busy: fewer than 2 samples of <= 1 MiB; host.pageable_d2h_wakeup keeps the base value");
        return;
    }
    const double m = fit::median(res);
    b.time("host.pageable_d2h_wakeup", m,
           "pageable_sweep d2h_busy median (call - blocker end - gpu.stream_gap - DMA - last chunk drained), the blocker "
           "ending gpu.launch_latency - host.event_record_cost + blocker_us after t0",
           "median, sizes <= 1 MiB", fit::rms_about(res, m), res.size());
}

// ---- host.staging_lock_wakeup (pageable_threads; calibrate/fit_threads.cpp) --------------------
void fit_staging_lock_wakeup(const Pool& pool, Builder& b) {
    std::vector<LockRelease> rel;
    for (const J& bench : pool.maybe("pageable_threads")) {
        J pts = bench["points"].nonempty();
        for (size_t i = 0; i < pts.size(); ++i) {
            J per = pts.at(i)["per_thread"];
            std::vector<std::vector<double>> d2h;
            for (size_t t = 0; t < per.size(); ++t) {
                if (!per.at(t).has("d2h")) continue;
                d2h.push_back(per.at(t)["d2h"].nums());
                if (d2h.back().size() % 2) per.at(t)["d2h"].fail("has an odd length: expected [start, end] pairs");
            }
            if (d2h.size() < 2) continue;
            std::vector<LockRelease> r = lock_releases(d2h);
            rel.insert(rel.end(), r.begin(), r.end());
        }
    }
    if (rel.empty()) {
        if (!pool.maybe("pageable_threads").empty())
            b.cal.checks.push_back("pageable_threads: no D2H call of one thread waited for another's; "
                                   "host.staging_lock_wakeup and _spread keep the base values");
        return;
    }
    const WakeupFit f = fit_lock_wakeup(rel);
    const std::string recipe =
        "pageable_threads (2-8 threads, modes with a pageable D2H): at each D2H call's return while another thread's "
        "D2H call waited, the releasing thread's next D2H call start - the return (gap), and whether its call "
        "returned before the waiter's (barged)";
    const std::string how = "least squares of P(barged | gap) = 1 below wakeup - spread, 0 above wakeup + spread, "
                            "linear between (0.1 us grid)";
    const std::string res = "Brier " + fmtg(f.brier, 3);
    b.add("host.staging_lock_wakeup", format_time_literal(ps_of_us(f.us)), recipe, how, res, f.n);
    b.add("host.staging_lock_wakeup_spread", format_time_literal(ps_of_us(f.spread_us)), recipe, how, res, f.n);
}

// A pinned copy of `bytes` in direction `dir` ("h2d" or "d2h") as the fits so far have it, in us:
// copy.<dir>.fixed + bytes / copy.<dir>.bandwidth.
double fitted_copy_us(const Builder& b, const std::string& dir, double bytes) {
    const double fixed = static_cast<double>(b.value_of("copy." + dir + ".fixed")) * 1e-6;
    const double bw = static_cast<double>(b.value_of("copy." + dir + ".bandwidth"));
    return fixed + (bw > 0 ? bytes / bw * 1e6 : 0.0);
}

// ---- gpu.cross_engine_wait (thread_launch_sync, one thread, spin kernel; docs/model.md rule 1) ----
// One host thread: launch a spin kernel of S us, a 4 KiB pinned D2H, a stream sync. The D2H call
// returns long before the kernel ends, so the copy waits on the GPU for it. Each iteration is, in
// the model: the launch call + gpu.launch_latency + S + gpu.stream_gap + gpu.cross_engine_wait +
// the copy + host.sync_wakeup; the fit is the median of what the iterations leave for the wait.
void fit_cross_engine_wait(const Pool& pool, Builder& b) {
    std::vector<double> x;
    const double ll = static_cast<double>(b.value_of("gpu.launch_latency")) * 1e-6;
    const double sw = static_cast<double>(b.value_of("host.sync_wakeup")) * 1e-6;
    const double sg = static_cast<double>(b.value_of("gpu.stream_gap")) * 1e-6;
    for (const J& bench : pool.maybe("thread_launch_sync")) {
        const double bytes = bench.has("config") && bench["config"].has("d2h_bytes")
                                 ? static_cast<double>(bench["config"]["d2h_bytes"].integer())
                                 : 4096.0;
        const double copy = fitted_copy_us(b, "d2h", bytes);
        J pts = bench["points"].nonempty();
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            const std::string k = p["kernel"].str();
            if (p["threads"].integer() != 1 || k.rfind("spin", 0) != 0) continue;
            double spin = 0;
            try {
                spin = std::stod(k.substr(4));  // "spin20us": 20
            } catch (const std::exception&) {
                p["kernel"].fail("names no spin time in us (expected spin<N>us)");
            }
            J per = p["per_thread"].nonempty();
            const std::vector<double> launch = per.at(0)["launch_us"].nums(), d2h = per.at(0)["d2h_us"].nums(),
                                      iter = per.at(0)["iter_us"].nums();
            if (launch.size() != iter.size() || d2h.size() != iter.size())
                per.at(0)["iter_us"].fail("differs in length from launch_us or d2h_us");
            for (size_t it = 1; it < iter.size(); ++it) {  // the first iteration warms up
                if (launch[it] + d2h[it] >= launch[it] + ll + spin) continue;  // the copy did not wait
                x.push_back(iter[it] - launch[it] - ll - spin - sg - copy - sw);
            }
        }
    }
    if (x.empty()) return;
    const double med = fit::median(x);
    b.time("gpu.cross_engine_wait", med,
           "thread_launch_sync, one thread, spin kernel: iteration - launch call - gpu.launch_latency - spin - "
           "gpu.stream_gap - the D2H copy - host.sync_wakeup",
           "median (iterations after the first)", fit::median_abs_about(x, med), x.size());
}

// ---- copy.duplex_factor (duplex) -----------------------------------------------------------------

void fit_duplex(const Pool& pool, Builder& b) {
    std::vector<J> ds = pool.maybe("duplex");
    if (ds.empty()) return;
    std::vector<double> h_alone, d_alone, h_both, d_both;
    for (const J& bench : ds) {
        J smp = bench["samples"];
        for (size_t i = 0; i < smp.size(); ++i) {
            J x = smp.at(i);
            const std::string c = x["case"].str();
            if (c == "h2d_alone") h_alone.push_back(x["h2d_end_us"].positive_time());
            else if (c == "d2h_alone") d_alone.push_back(x["d2h_end_us"].positive_time());
            else if (c == "both") {
                h_both.push_back(x["h2d_end_us"].positive_time());
                d_both.push_back(x["d2h_end_us"].positive_time());
            }
        }
    }
    const double f = pool.guard("duplex copy.duplex_factor", [&] {
        return 0.5 * (fit::median(h_both) / fit::median(h_alone) + fit::median(d_both) / fit::median(d_alone));
    });
    std::vector<double> r;
    for (double v : h_both) r.push_back(v / fit::median(h_alone));
    for (double v : d_both) r.push_back(v / fit::median(d_alone));
    b.add("copy.duplex_factor", fmtg(f, 4),
          "duplex mean over H2D and D2H of median end beside the other direction / median alone, 256 MiB",
          "ratio of medians", fmtg(fit::rms_about(r, f), 3), r.size());
}

// ---- sections of the hardware-fidelity rules (optional: absent = base values) ------------------------

std::vector<double> pooled_nums(const std::vector<J>& bs, const std::function<std::vector<double>(const J&)>& get) {
    std::vector<double> v;
    for (const J& x : bs) {
        std::vector<double> y = get(x);
        v.insert(v.end(), y.begin(), y.end());
    }
    return v;
}

// ---- pitched copies (memcpy2d, issue 10): copy.row_cost.* -----------------------------------------
// Per input and per (memory, direction, bytes), the reference is the widest contiguous point (a
// linear copy of the same bytes); a point is row-bound when its median time is at least twice the
// reference's (GPU time for pinned memory, call time for pageable). Pinned: per-row time =
// (GPU time - copy.<dir>.fixed) / rows; H2D is fitted as row_cost + h2d_dense x 128 B / pitch
// (rows packed densely in host memory cost more: 1.5 ns 32 B apart, 3.5 ns 4 B apart on the
// H200), D2H as the median (1.25 ns whatever the pitch). Pageable: the host's time per row
// beyond the linear copy's call, (call - reference call) / rows, least squares through the
// origin over the samples (the rows of the narrowest points weigh most). Returns false when no
// input has the section.
// The sparse factor of a pageable pitched D2H's rows (copy.row_cost.pageable_d2h_sparse):
// min(host pitch, 128 B) / 128 B for rows narrower than 64 B that lie apart, else 0.
static double d2h_sparse_factor(uint64_t width, uint64_t host_pitch) {
    if (width >= 64 || host_pitch <= width) return 0;
    return static_cast<double>(std::min<uint64_t>(host_pitch, 128)) / 128.0;
}

bool fit_memcpy2d(const Pool& pool, Builder& b) {
    std::vector<J> ms;
    std::vector<const MicrobenchFile*> ms_file;  // the input of each
    for (const auto& f : pool.files) {
        J root(f.doc.at("benchmarks"), f.path, "benchmarks");
        if (root.raw().contains("memcpy2d") && !root["memcpy2d"].has("skipped")) ms.push_back(root["memcpy2d"]), ms_file.push_back(&f);
    }
    if (ms.empty()) return false;
    struct Pt {
        std::string memory, dir;
        uint64_t width, height, pitch, bytes;
        std::vector<double> gpu, call;
    };
    std::vector<double> h2d_x, h2d_y, d2h_y;                    // pinned per-row times (us), x = 128 / pitch
    std::map<std::string, std::vector<double>> pg_rows, pg_extra;  // pageable, by direction
    std::vector<std::array<double, 2>> d2h_pts;                     // pageable D2H points: median excess / rows (us), factor
    size_t row_bound[2] = {0, 0};
    struct Near {  // a pinned point for copy.row_cost.blend
        bool h2d;
        double rows, pitch, lin, fixed;  // lin: the reference's median GPU time - fixed (us)
        std::vector<double> gpu;
    };
    std::vector<Near> near;
    for (size_t fi = 0; fi < ms.size(); ++fi) {
        const J& bench = ms[fi];
        J pts = bench["points"].nonempty();
        std::vector<Pt> v;
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            Pt x{p["memory"].str(), p["dir"].str(), p["width"].bytes(), p["height"].bytes(), p["pitch"].bytes(), p["bytes"].bytes(),
                 p["gpu_us"].repetitions(), p["call_us"].repetitions()};
            if (x.memory != "pinned" && x.memory != "pageable") p["memory"].fail("expected pinned or pageable, got '" + x.memory + "'");
            if (x.dir != "h2d" && x.dir != "d2h") p["dir"].fail("expected h2d or d2h, got '" + x.dir + "'");
            if (x.pitch < x.width) p["pitch"].fail("is less than the width (" + std::to_string(x.width) + ")");
            v.push_back(std::move(x));
        }
        for (const Pt& x : v) {
            if (x.height < 2) continue;
            const Pt* ref = nullptr;  // the widest contiguous point of the same memory, direction and bytes
            for (const Pt& r : v)
                if (r.memory == x.memory && r.dir == x.dir && r.bytes == x.bytes && r.pitch == r.width && (!ref || r.width > ref->width))
                    ref = &r;
            if (!ref || ref == &x) continue;
            const bool pinned = x.memory == "pinned";
            const double m = fit::median(pinned ? x.gpu : x.call), m_ref = fit::median(pinned ? ref->gpu : ref->call);
            if (pinned) {
                const double fixed = static_cast<double>(b.value_of(x.dir == "h2d" ? "copy.h2d.fixed" : "copy.d2h.fixed")) * 1e-6;
                near.push_back({x.dir == "h2d", static_cast<double>(x.height), static_cast<double>(x.pitch), m_ref - fixed, fixed, x.gpu});
            }
            if (m < 2 * m_ref) continue;
            const double rows = static_cast<double>(x.height);
            if (pinned) {
                const bool h2d = x.dir == "h2d";
                ++row_bound[h2d ? 0 : 1];
                const double fixed = static_cast<double>(b.value_of(h2d ? "copy.h2d.fixed" : "copy.d2h.fixed")) * 1e-6;
                for (double g : x.gpu) {
                    if (h2d) h2d_x.push_back(128.0 / static_cast<double>(x.pitch)), h2d_y.push_back((g - fixed) / rows);
                    else d2h_y.push_back((g - fixed) / rows);
                }
            } else {
                for (double c : x.call) pg_rows[x.dir].push_back(rows), pg_extra[x.dir].push_back(c - m_ref);
                if (x.dir == "d2h") d2h_pts.push_back({(m - m_ref) / rows, d2h_sparse_factor(x.width, x.pitch)});
            }
        }
        // memcpy2d_pitches of the same input (issue 14): pageable D2H rows at several host pitches
        // (destination pitch), against this input's widest contiguous pageable D2H of the same bytes.
        J root(ms_file[fi]->doc.at("benchmarks"), ms_file[fi]->path, "benchmarks");
        if (!root.raw().contains("memcpy2d_pitches") || root["memcpy2d_pitches"].has("skipped")) continue;
        J pp = root["memcpy2d_pitches"]["points"].nonempty();
        for (size_t i = 0; i < pp.size(); ++i) {
            J p = pp.at(i);
            if (p["memory"].str() != "pageable" || p["dir"].str() != "d2h") continue;
            const uint64_t width = p["width"].bytes(), height = p["height"].bytes(), dpitch = p["dpitch"].bytes(), bytes = p["bytes"].bytes();
            if (dpitch < width) p["dpitch"].fail("is less than the width (" + std::to_string(width) + ")");
            if (height < 2) continue;
            const Pt* ref = nullptr;
            for (const Pt& r : v)
                if (r.memory == "pageable" && r.dir == "d2h" && r.bytes == bytes && r.pitch == r.width && (!ref || r.width > ref->width))
                    ref = &r;
            if (!ref) continue;
            const std::vector<double> call = p["call_us"].repetitions();
            const double m = fit::median(call), m_ref = fit::median(ref->call);
            if (m < 2 * m_ref) continue;
            const double rows = static_cast<double>(height);
            for (double c : call)
                pg_rows["d2h"].push_back(rows), pg_extra["d2h"].push_back(c - m_ref);
            d2h_pts.push_back({(m - m_ref) / rows, d2h_sparse_factor(width, dpitch)});
        }
    }
    const std::string pinned_recipe =
        " of the row-bound pinned points (median GPU time >= 2x the widest contiguous point's of the same bytes)";
    if (h2d_y.empty()) pool.fail("memcpy2d copy.row_cost.h2d: no row-bound pinned H2D point");
    std::set<double> pitches(h2d_x.begin(), h2d_x.end());
    const fit::Line l = pitches.size() >= 2 ? pool.guard("memcpy2d copy.row_cost.h2d", [&] { return fit::fit_line(h2d_x, h2d_y); })
                                            : fit::Line{fit::median(h2d_y), 0, fit::rms_about(h2d_y, fit::median(h2d_y)), h2d_y.size()};
    if (l.slope >= 0) {
        b.time("copy.row_cost.h2d", l.intercept,
               "memcpy2d intercept of (GPU time - copy.h2d.fixed) / rows vs 128 B / pitch" + pinned_recipe + ", " +
                   std::to_string(row_bound[0]) + " points",
               "linear least squares (Eigen QR)", l.rms, l.n);
        b.time("copy.row_cost.h2d_dense", l.slope,
               "memcpy2d slope of (GPU time - copy.h2d.fixed) / rows vs 128 B / pitch" + pinned_recipe + ", " +
                   std::to_string(row_bound[0]) + " points",
               "linear least squares (Eigen QR)", l.rms, l.n);
    } else {  // rows cost less packed densely: no dense term
        const double m = fit::median(h2d_y);
        b.cal.checks.push_back("memcpy2d: H2D rows packed densely cost less per row (slope " + us_text(l.slope) +
                               " per 128 B / pitch); copy.row_cost.h2d_dense written as 0, copy.row_cost.h2d as the median");
        b.time("copy.row_cost.h2d", m, "memcpy2d median (GPU time - copy.h2d.fixed) / rows" + pinned_recipe, "median",
               fit::rms_about(h2d_y, m), h2d_y.size());
        b.time("copy.row_cost.h2d_dense", 0, "memcpy2d: no density effect in the row-bound pinned H2D points", "none", 0, h2d_y.size());
    }
    const double d = pool.guard("memcpy2d copy.row_cost.d2h", [&] {
        if (d2h_y.empty()) throw fit::FitError("no row-bound pinned D2H point");
        return fit::median(d2h_y);
    });
    b.time("copy.row_cost.d2h", d, "memcpy2d median (GPU time - copy.d2h.fixed) / rows" + pinned_recipe, "median",
           fit::rms_about(d2h_y, d), d2h_y.size());
    // copy.row_cost.blend: the pinned points whose row time (from the fits above) is within 3x of
    // the linear copy's either way; the exponent k of (rows^k + linear^k)^(1/k) with the least
    // squared log error, searched over 1..16 in steps of 0.25 (above 16 it is the larger of the two).
    {
        const double rh = std::max(0.0, static_cast<double>(b.value_of("copy.row_cost.h2d")) * 1e-6),
                     rhd = std::max(0.0, static_cast<double>(b.value_of("copy.row_cost.h2d_dense")) * 1e-6),
                     rd = static_cast<double>(b.value_of("copy.row_cost.d2h")) * 1e-6;
        std::vector<std::array<double, 4>> smp;        // fixed, rows time, linear, measured
        for (const Near& n : near) {
            const double rt = n.rows * (n.h2d ? rh + rhd * 128.0 / n.pitch : rd);
            if (!(n.lin > 0) || rt < n.lin / 3 || rt > 3 * n.lin) continue;
            for (double g : n.gpu) smp.push_back({n.fixed, rt, n.lin, g});
        }
        if (!smp.empty()) {
            auto err = [&](double k) {
                double e = 0;
                for (const auto& x : smp) {
                    const double pred = x[0] + std::pow(std::pow(x[1], k) + std::pow(x[2], k), 1.0 / k);
                    e += std::pow(std::log(pred / x[3]), 2);
                }
                return e;
            };
            double best = 16, best_e = err(16);
            for (double k = 1; k < 16; k += 0.25)
                if (const double e = err(k); e < best_e) best = k, best_e = e;
            b.add("copy.row_cost.blend", fmtg(best, 3),
                  "memcpy2d exponent k of (row time^k + linear time^k)^(1/k) over the pinned points whose row time (from the "
                  "fitted row costs) is within 3x of the widest contiguous point's GPU time - fixed",
                  "grid search 1-16 in steps of 0.25, least squares in log time", fmtg(std::sqrt(best_e / smp.size()) * 100, 3) + "%",
                  smp.size());
        }
    }
    for (const char* dir : {"h2d", "d2h"}) {
        const std::string key = std::string("copy.row_cost.pageable_") + dir;
        const std::vector<double>& x = pg_rows[dir];
        const std::vector<double>& y = pg_extra[dir];
        // D2H with sparse rows among the points: the per-row excess of each point (median call less
        // the reference's, over its rows) against its sparse factor, one sample per layout (the
        // samples' excess times would weigh each point by its rows squared: the 4 B rows of 1 MiB
        // would outweigh every 16 B layout 16 to 1).
        const size_t n_sparse = static_cast<size_t>(
            std::count_if(d2h_pts.begin(), d2h_pts.end(), [](const std::array<double, 2>& v) { return v[1] > 0; }));
        const bool sparse = std::string(dir) == "d2h" && n_sparse >= 2;
        const std::string recipe = " (median call >= 2x the contiguous one's of the same bytes; memcpy2d_pitches' too, where present)";
        if (!sparse) {
            const fit::LeastSquares ls = pool.guard("memcpy2d " + key, [&] {
                if (x.size() < 2) throw fit::FitError(std::string("fewer than 2 samples of row-bound pageable ") + dir + " points");
                std::vector<std::vector<double>> rows;
                for (double r : x) rows.push_back({r});
                return fit::least_squares(rows, y);
            });
            b.time(key, ls.coef[0],
                   std::string("memcpy2d slope through the origin of (call time - the widest contiguous point's median call) vs rows "
                               "of the row-bound pageable ") +
                       dir + " points" + recipe,
                   "least squares through the origin (Eigen QR)", ls.rms, ls.n);
            continue;
        }
        const fit::Line sparse_line = pool.guard("memcpy2d " + key, [&] {
            std::vector<double> fx, fy;
            for (const auto& pt : d2h_pts) fx.push_back(pt[1]), fy.push_back(pt[0]);
            return fit::fit_line(fx, fy);
        });
        const std::string line = "linear least squares over the points (Eigen QR)";
        const std::string per_row = "(median call time - the widest contiguous point's median call) / rows of the row-bound pageable d2h "
                                    "points vs min(host pitch, 128 B) / 128 B (rows < 64 B wide lying apart, else 0)";
        b.time(key, std::max(0.0, sparse_line.intercept), "memcpy2d intercept of " + per_row + ", " + std::to_string(d2h_pts.size()) + " points" + recipe,
               line, sparse_line.rms, sparse_line.n);
        b.time("copy.row_cost.pageable_d2h_sparse", std::max(0.0, sparse_line.slope),
               "memcpy2d slope of " + per_row + ", " + std::to_string(d2h_pts.size()) + " points, " + std::to_string(n_sparse) +
                   " sparse" + recipe,
               line, sparse_line.rms, sparse_line.n);
    }
    return true;
}

// ---- host.malloc_cost(_per_gib), host.free_cost(_per_gib) (alloc_sizes, alloc_streams) ----------
// cudaFree grows with the size freed (the alloc section: ~45 us at 16 MiB, ~550 us at 1 GiB on an
// idle device), and a program frees after its device work, where it takes longer than on an idle
// device: the free's return after the last kernel's end, over the size, from alloc_sizes' step loop
// (4 .. 512 MiB) pooled with alloc_streams' frees after one or two busy streams (16 and 256 MiB),
// is fitted as host.free_cost + host.free_cost_per_gib per GiB; cudaMalloc likewise from
// alloc_sizes' step loop (each malloc after a free of its size, as a program's loop allocates).
// Without alloc_sizes in any input the four keep the base profile's entries (alloc_streams alone
// has two sizes, and the alloc section's sizes are of an idle device).
void fit_alloc_lines(const Pool& pool, Builder& b) {
    const std::vector<J> sizes = pool.maybe("alloc_sizes");
    if (sizes.empty()) return;
    std::vector<double> fx, fy, mx, my;
    auto gib_of = [](const J& p) { return static_cast<double>(p["bytes"].bytes()) / static_cast<double>(1ull << 30); };
    for (const J& x : sizes) {
        J smp = x["loop"]["samples"].nonempty();
        for (size_t i = 0; i < smp.size(); ++i) {
            J p = smp.at(i);
            const double gib = gib_of(p);
            if (p.has("free_return_after_kernel_end_us")) fx.push_back(gib), fy.push_back(p["free_return_after_kernel_end_us"].num());
            if (p["iter"].integer() > 0) {  // the first follows the idle phase, not a free of its size
                const double m = p["malloc_us"].num();
                if (m < 0) p["malloc_us"].fail("is negative; a measured duration is 0 or more");
                mx.push_back(gib), my.push_back(m);
            }
        }
    }
    size_t streams = 0;
    for (const J& x : pool.maybe("alloc_streams")) {
        J smp = x["free_beside_work"]["samples"].nonempty();
        for (size_t i = 0; i < smp.size(); ++i) {
            J p = smp.at(i);
            if (p["mode"].str() == "idle" || !p.has("free_return_after_last_kernel_end_us")) continue;
            fx.push_back(gib_of(p));
            fy.push_back(p["free_return_after_last_kernel_end_us"].num());
            ++streams;
        }
    }
    const std::string fit_text = "linear least squares (Eigen QR)";
    const fit::Line lf = pool.guard("alloc_sizes host.free_cost", [&] { return fit::fit_line(fx, fy); });
    const std::string free_recipe = std::string("alloc_sizes cudaFree's return after the step loop's kernel end") +
                                    (streams ? " + alloc_streams' after the last kernel of one or two busy streams" : "") +
                                    " vs GiB freed";
    b.time("host.free_cost", lf.intercept, free_recipe + ": intercept", fit_text, lf.rms, lf.n);
    b.time("host.free_cost_per_gib", lf.slope, free_recipe + ": slope", fit_text, lf.rms, lf.n);
    const fit::Line lm = pool.guard("alloc_sizes host.malloc_cost", [&] { return fit::fit_line(mx, my); });
    const std::string malloc_recipe = "alloc_sizes cudaMalloc after a free of its size (step loop, 2nd iteration on) vs GiB";
    b.time("host.malloc_cost", lm.intercept, malloc_recipe + ": intercept", fit_text, lm.rms, lm.n);
    b.time("host.malloc_cost_per_gib", lm.slope, malloc_recipe + ": slope", fit_text, lm.rms, lm.n);
}

void fit_rules_sections(const Pool& pool, Builder& b) {
    auto med_time = [&](const char* key, const std::vector<double>& v, const std::string& recipe) {
        const double m = pool.guard(key, [&] { return fit::median(v); });
        b.time(key, m, recipe, "median", fit::rms_about(v, m), v.size());
        return m;
    };
    std::vector<std::string> absent;
    // gpu.hw_queues: the CUDA_DEVICE_MAX_CONNECTIONS whose 32-stream span is nearest the default's.
    if (std::vector<J> hq = pool.maybe("hw_queues"); !hq.empty()) {
        std::map<std::string, std::vector<double>> span;
        for (const J& bench : hq) {
            J runs = bench["runs"];
            for (size_t i = 0; i < runs.size(); ++i) {
                J r = runs.at(i);
                J reps = r["reps"];
                for (size_t k = 0; k < reps.size(); ++k) span[r["max_connections"].str()].push_back(reps.at(k)["gpu_span_us"].num());
            }
        }
        if (!span.count("default") || span.size() < 2)
            pool.fail("hw_queues: needs the default run and at least one CUDA_DEVICE_MAX_CONNECTIONS run");
        const double def = fit::median(span["default"]);
        int best = 0;
        double best_d = 1e300;
        std::string table;
        for (const auto& [k, v] : span) {
            if (k == "default") continue;
            const double m = fit::median(v);
            table += (table.empty() ? "" : ", ") + k + ": " + us_text(m);
            const double dist = std::fabs(std::log(m / def));
            if (dist < best_d) best_d = dist, best = std::atoi(k.c_str());
        }
        b.add("gpu.hw_queues", std::to_string(best),
              "hw_queues CUDA_DEVICE_MAX_CONNECTIONS whose GPU span of 32 streams x 2 dependent 1 ms kernels is nearest the "
              "default's (" + us_text(def) + "; " + table + ")",
              "nearest median span in log ratio", fmtg(best_d * 100, 3) + "%", span["default"].size());
    } else absent.push_back("hw_queues");
    if (std::vector<J> lq = pool.maybe("launch_queue"); !lq.empty()) {
        std::vector<double> idx;
        for (const J& bench : lq) {
            J reps = bench["same_stream"]["reps"];
            for (size_t i = 0; i < reps.size(); ++i) {
                const int64_t k = reps.at(i)["first_blocking_index"].integer();
                if (k >= 0) idx.push_back(static_cast<double>(k));
            }
        }
        if (idx.empty()) {
            b.cal.checks.push_back("launch_queue: no launch call blocked (the queue never filled); gpu.launch_queue_depth keeps the base value");
        } else {
        const double m = fit::median(idx);
        b.add("gpu.launch_queue_depth", std::to_string(std::llround(m)),
              "launch_queue index of the first launch call over 1 ms (empty kernels behind a 40 ms blocker, one stream)",
              "median, rounded", fmtg(fit::rms_about(idx, m), 3), idx.size());
        }
    } else absent.push_back("launch_queue");
    if (std::vector<J> ml = pool.maybe("module_load"); !ml.empty()) {
        std::vector<double> d;
        for (const J& bench : ml) {
            J smp = bench["samples"];
            for (size_t i = 0; i < smp.size(); ++i) d.push_back(smp.at(i)["first_a_us"].num() - smp.at(i)["second_a_us"].num());
        }
        med_time("host.module_load_cost", d, "module_load median (first - second launch of a kernel of an unused module), fresh processes");
    } else absent.push_back("module_load");
    if (std::vector<J> hf = pool.maybe("host_func"); !hf.empty()) {
        med_time("host.host_func_call_cost", pooled_nums(hf, [](const J& x) { return x["call"]["call_us"].nums(); }),
                 "host_func median cudaLaunchHostFunc call on an idle stream");
        // gpu.host_func_latency comes from host_func_wait with the other callback latencies
        // (fit_host_func_wait): this chain's callback thread is idle for a spread of times.
        med_time("gpu.host_func_gap", pooled_nums(hf, [](const J& x) { return x["chain"]["gap_after_us"].nums(); }),
                 "host_func median (next kernel's start stamp - callback end), clocks aligned by ping-pong");
    } else absent.push_back("host_func");
    if (std::vector<J> gr = pool.maybe("graphs"); !gr.empty()) {
        std::vector<double> ni, ti, nl, tl, ng, tg;
        std::vector<double> cg, cs;
        double ncopies = 0;
        for (const J& bench : gr) {
            J pts = bench["kernels"]["points"].nonempty();
            for (size_t i = 0; i < pts.size(); ++i) {
                J p = pts.at(i);
                const double n = static_cast<double>(p["nodes"].integer());
                for (double v : p["instantiate_us"].nums()) ni.push_back(n), ti.push_back(v);
                for (double v : p["launch_call_us"].nums()) nl.push_back(n), tl.push_back(v);
                for (double v : p["gpu_graph_us"].nums()) ng.push_back(n), tg.push_back(v);
            }
            J c = bench["copies"];
            ncopies = static_cast<double>(c["n"].integer());
            std::vector<double> a = c["gpu_graph_us"].nums(), z = c["gpu_stream_us"].nums();
            cg.insert(cg.end(), a.begin(), a.end());
            cs.insert(cs.end(), z.begin(), z.end());
        }
        const fit::Line li = pool.guard("graphs graph.instantiate_per_node", [&] { return fit::fit_line(ni, ti); });
        b.time("graph.instantiate_per_node", li.slope, "graphs slope of cudaGraphInstantiate host time vs nodes (empty kernels)",
               "linear least squares (Eigen QR), 10/100/1000 nodes", li.rms, li.n);
        const fit::Line ll = pool.guard("graphs graph.launch_cost", [&] { return fit::fit_line(nl, tl); });
        b.time("graph.launch_cost", ll.intercept, "graphs intercept of cudaGraphLaunch host time vs nodes", "linear least squares (Eigen QR)",
               ll.rms, ll.n);
        b.time("graph.launch_per_node", ll.slope, "graphs slope of cudaGraphLaunch host time vs nodes", "linear least squares (Eigen QR)",
               ll.rms, ll.n);
        // graph.node_gap: from graph_nodes (issue 14) when an input has it: the median gap
        // between one node's last block end and the next node's first block start, over graphs
        // of 20 and 200 spin kernels of 132-1056 blocks (0.86-0.90 us on the H200, 2026-12-01a),
        // and over graph_node_grids' chains of 2 us spin kernels of 1-264 blocks where an input
        // has that section (0.80-0.90 us at every grid, 2026-12-01d: the gap does not follow the
        // grid). Without graph_nodes, from this section's empty-kernel graphs: slope minus
        // kernel.min_duration, which says 0.45 us on the same machine start, too small for nodes
        // that do work (the validation graphs 43, 44, 60, 61 were 7-26% short with it).
        const std::vector<J> gn = pool.maybe("graph_nodes");
        if (!gn.empty()) {
            std::vector<double> gaps;
            auto graph_mode_gaps = [&](const J& modes) {
                for (size_t m = 0; m < modes.size(); ++m) {
                    if (modes.at(m)["mode"].str() != "graph") continue;
                    J reps = modes.at(m)["reps"];
                    for (size_t r = 0; r < reps.size(); ++r) append_gaps(reps.at(r), "node_start_ns", "node_end_ns", gaps);
                }
            };
            for (const J& bench : gn) {
                J pts = bench["spin_kernels"]["points"];
                for (size_t i = 0; i < pts.size(); ++i) graph_mode_gaps(pts.at(i)["modes"]);
            }
            const std::vector<J> gg = pool.maybe("graph_node_grids");
            for (const J& bench : gg) {
                J pts = bench["points"];
                for (size_t i = 0; i < pts.size(); ++i) graph_mode_gaps(pts.at(i)["modes"]);
            }
            const double g = pool.guard("graph_nodes graph.node_gap", [&] {
                if (gaps.empty()) throw fit::FitError("no graph-mode spin-kernel node stamps");
                return fit::median(gaps);
            });
            b.time("graph.node_gap", g,
                   "graph_nodes median gap (next node's first block start - this node's last block end) in graphs of 20 and "
                   "200 spin kernels of 132-1056 x 256 threads" +
                       std::string(gg.empty() ? "" : ", and in graph_node_grids' chains of 2 us spin kernels of 1-264 blocks"),
                   "median", fit::rms_about(gaps, g), gaps.size());
            // graph.node_gap_small: graphs of empty one-block kernels space their nodes by less
            // (0.68 us per node against 0.86 us + the kernel between spin kernels of any grid):
            // the slope of their GPU time vs nodes, minus kernel.min_duration.
            std::vector<double> en, et;
            for (const J& bench : gn) {
                J pts = bench["empty"]["points"].nonempty();
                for (size_t i = 0; i < pts.size(); ++i) {
                    const double n = static_cast<double>(pts.at(i)["nodes"].integer());
                    for (double v : pts.at(i)["gpu_graph_us"].repetitions()) en.push_back(n), et.push_back(v);
                }
            }
            const fit::Line le = pool.guard("graph_nodes graph.node_gap_small", [&] { return fit::fit_line(en, et); });
            const double md = static_cast<double>(b.value_of("kernel.min_duration")) * 1e-6;
            b.time("graph.node_gap_small", le.slope - md,
                   "graph_nodes slope of the GPU time of a graph of N one-block empty kernels vs N (" + us_text(le.slope) +
                       " per node) minus kernel.min_duration",
                   "linear least squares (Eigen QR), 10-2000 nodes", le.rms, le.n);
        } else {
            const fit::Line lg = pool.guard("graphs graph.node_gap", [&] { return fit::fit_line(ng, tg); });
            const double md = static_cast<double>(b.value_of("kernel.min_duration")) * 1e-6;
            // Without graph_nodes both gaps come from the empty (one-block) kernels of this section.
            for (const char* key : {"graph.node_gap", "graph.node_gap_small"})
                b.time(key, lg.slope - md,
                       "graphs slope of the GPU time of a graph of N empty kernels vs N (" + us_text(lg.slope) +
                           " per node) minus kernel.min_duration",
                       "linear least squares (Eigen QR), 100/1000 nodes", lg.rms, lg.n);
        }
        const double extra = pool.guard("graphs graph.copy_node_extra", [&] {
            if (ncopies <= 0) throw fit::FitError("no copy nodes");
            return (fit::median(cg) - fit::median(cs)) / ncopies;
        });
        b.time("graph.copy_node_extra", extra, "graphs (median GPU time of " + fmtg(ncopies) +
                                                   " 4 KiB H2D copy nodes - the same copies in a stream) / copies",
               "difference of medians", fit::rms_about(cg, fit::median(cg)) / ncopies, cg.size() + cs.size());
    } else absent.push_back("graphs");
    if (std::vector<J> al = pool.maybe("alloc"); !al.empty()) {
        auto pts_nums = [&](const char* group, const char* key) {
            return pooled_nums(al, [&](const J& x) {
                std::vector<double> v;
                J pts = x[group]["points"].nonempty();
                for (size_t i = 0; i < pts.size(); ++i)
                    if (!pts.at(i).has("skipped")) {
                        std::vector<double> y = pts.at(i)[key].nums();
                        v.insert(v.end(), y.begin(), y.end());
                    }
                return v;
            });
        };
        // cudaMalloc and cudaFree are lines over the size from alloc_sizes (fit_alloc_lines); the
        // idle device's medians over all sizes are a check.
        {
            const std::vector<double> m = pts_nums("device", "malloc_us"), f = pts_nums("device", "free_us");
            if (!m.empty() && !f.empty())
                b.cal.checks.push_back("alloc: median cudaMalloc " + us_text(fit::median(m)) + ", cudaFree on an idle device " +
                                       us_text(fit::median(f)) + " over 1 MiB .. 1 GiB; host.malloc_cost and host.free_cost are "
                                       "lines over the size from alloc_sizes");
        }
        med_time("host.malloc_async_cost", pts_nums("async", "malloc_async_us"), "alloc median cudaMallocAsync from a warm pool");
        auto bw_fit = [&](const char* key, const char* group, const char* field, const std::string& what) {
            std::vector<double> x, y;
            for (const J& bench : al) {
                J pts = bench[group]["points"].nonempty();
                for (size_t i = 0; i < pts.size(); ++i) {
                    J p = pts.at(i);
                    if (p.has("skipped")) continue;
                    for (double v : p[field].nums()) x.push_back(static_cast<double>(p["bytes"].bytes())), y.push_back(v);
                }
            }
            const fit::Line l = pool.guard(std::string("alloc ") + key, [&] { return fit::fit_line(x, y); });
            b.bandwidth(key, l.slope > 0 ? 1e6 / l.slope : -1, "alloc 1/slope of " + what + " host time vs bytes",
                        "linear least squares (Eigen QR), 64 MiB..1 GiB", l.rms, l.n);
        };
        bw_fit("host.malloc_host_bandwidth", "host", "malloc_host_us", "cudaMallocHost");
        bw_fit("host.free_host_bandwidth", "host", "free_host_us", "cudaFreeHost");
        bw_fit("host.host_register_bandwidth", "register", "register_us", "cudaHostRegister");
    } else absent.push_back("alloc");
    fit_alloc_lines(pool, b);
    if (std::vector<J> bs = pool.maybe("blocking_sync"); !bs.empty()) {
        std::vector<double> w = pooled_nums(bs, [](const J& x) {
            J c = x["child"];
            std::vector<double> us = c["wakeup_us"].nums(), out;
            J kind = c["kind"];
            if (kind.size() != us.size()) kind.fail("differs in length from wakeup_us");
            // Steady state: the second half of the samples (the first wake-ups of a process are
            // several times slower; a program past its warm-up sees the later ones).
            for (size_t i = us.size() / 2; i < us.size(); ++i)
                if (kind.at(i).str() == "stream") out.push_back(us[i]);
            return out;
        });
        // A check since the steady sweep (2026-12-03aa): the wake-up follows how long the thread
        // slept and what it slept before, and this phase mixes stream syncs with event syncs that
        // spin; fit_blocking_sleep fits the four blocking-sync parameters from the steady sweep.
        if (!w.empty())
            b.cal.checks.push_back("blocking_sync: stream sync wake-up after 1 ms kernels (between event syncs, the second half) "
                                   "median " + us_text(pool.guard("blocking_sync", [&] { return fit::median(w); })) +
                                   "; the blocking-sync wake-ups are fitted from the steady sweep only");
    } else absent.push_back("blocking_sync");
    if (std::vector<J> pc = pool.maybe("pageable_contention"); !pc.empty()) {
        std::vector<double> ratios, all;
        for (const J& bench : pc) {
            J cases = bench["cases"];
            for (size_t i = 0; i < cases.size(); ++i) {
                // The model slows a pinned H2D beside a pageable D2H (the host drains the D2H
                // bounce buffers from the memory the H2D reads); the reverse case is a check.
                if (cases.at(i)["pinned"].str() != "h2d") continue;
                std::vector<double> a = cases.at(i)["alone_us"].nums(), z = cases.at(i)["beside_pageable_us"].nums();
                const double r = pool.guard("pageable_contention", [&] { return fit::median(z) / fit::median(a); });
                ratios.push_back(r);
                for (double v : z) all.push_back(v / fit::median(a));
            }
        }
        const double f = pool.guard("pageable_contention copy.pageable_contention", [&] {
            if (ratios.empty()) throw fit::FitError("no case");
            double sum = 0;
            for (double r : ratios) sum += r;
            return sum / static_cast<double>(ratios.size());
        });
        b.add("copy.pageable_contention", fmtg(f, 4),
              "pageable_contention median pinned 256 MiB H2D time beside a pageable D2H / alone (mean over inputs)",
              "ratio of medians", fmtg(fit::rms_about(all, f), 3), all.size());
    } else absent.push_back("pageable_contention");
    if (!fit_memcpy2d(pool, b)) absent.push_back("memcpy2d");
    // host.queue_*, flag_wakeup, thread_start, join_wakeup (issue 11): medians of host_sync's
    // samples. The median, not the mean: the wake-up samples have a long tail (p90 about 1.7x the
    // median, single samples of 100-470 us when the VM deschedules a thread), a program's
    // hand-offs in steady state see the typical wake-up, and one slow sample must not move the
    // model's one value.
    if (std::vector<J> hs = pool.maybe("host_sync"); !hs.empty()) {
        const double put = med_time("host.queue_put_cost",
                                    pooled_nums(hs, [](const J& x) { return x["queue_uncontended"]["put_samples_us"].nums(); }),
                                    "host_sync median per-call time of a put into a std::deque + mutex + condition variable queue "
                                    "with room, uncontended (per-batch medians of 1000 calls)");
        const double get = med_time("host.queue_get_cost",
                                    pooled_nums(hs, [](const J& x) { return x["queue_uncontended"]["get_samples_us"].nums(); }),
                                    "host_sync median per-call time of a get from the queue holding an item, uncontended "
                                    "(per-batch medians of 1000 calls)");
        // The model returns a sleeper after the other side's call, the wake-up and its own call:
        // sample = put + host.queue_wakeup + get, whichever side slept.
        std::vector<double> wake = pooled_nums(hs, [](const J& x) {
            std::vector<double> v = x["queue_wakeups"]["get_woken_samples_us"].nums(), w = x["queue_wakeups"]["put_woken_samples_us"].nums();
            v.insert(v.end(), w.begin(), w.end());
            return v;
        });
        for (double& v : wake) v -= put + get;
        med_time("host.queue_wakeup", wake,
                 "host_sync median (the other side's put or get call start - the sleeping thread's return) less the put and "
                 "get costs, a thread asleep 300 us in get or in put on a full queue");
        med_time("host.flag_wakeup", pooled_nums(hs, [](const J& x) { return x["flag_spin"]["samples_us"].nums(); }),
                 "host_sync median (cudaLaunchHostFunc callback's stamp - the thread spinning on its atomic runs)");
        med_time("host.thread_start", pooled_nums(hs, [](const J& x) { return x["threads"]["thread_start_samples_us"].nums(); }),
                 "host_sync median (std::thread construction start - the thread's first instruction)");
        med_time("host.join_wakeup", pooled_nums(hs, [](const J& x) { return x["threads"]["join_wakeup_samples_us"].nums(); }),
                 "host_sync median (a thread's last instruction, after 300 us asleep - join returns in the creating thread)");
    } else absent.push_back("host_sync");
    if (!absent.empty()) {
        std::string t;
        for (const auto& a : absent) t += (t.empty() ? "" : ", ") + a;
        b.cal.checks.push_back("sections absent from the input (their parameters keep the base profile's entries): " + t);
    }
}

// ---- launch and gaps --------------------------------------------------------------------------

// ---- the issue-14 sections (bench_v3.cu): where present, they refit parameters that the older
// sections measure in a pattern unlike the programs' (docs/model.md says which and why) --------------
void fit_issue14_sections(const Pool& pool, Builder& b) {
    // um.fault_bandwidth: the runner's `uses` on a kernel is a sparse touch (one byte per 4 KiB
    // page); um_sparse (host-resident buffer, fault kernel) and um_roundtrip (the GPU passes after
    // a host pass) time exactly that at 64-256 MiB, where the um section's dense read of 1 GiB is
    // 30-40% faster per byte than the 64-128 MiB sparse passes.
    std::vector<double> fault_rates;  // GB/s per sample
    for (const J& bench : pool.maybe("um_sparse")) {
        J pts = bench["points"];
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            if (p["mode"].str() != "sparse_4k") continue;
            const double bytes = static_cast<double>(p["bytes"].bytes());
            for (double t : p["fault_us"].nums()) fault_rates.push_back(bytes / t * 1e-3);
        }
    }
    std::vector<double> cpu_rates;
    for (const J& bench : pool.maybe("um_roundtrip")) {
        J pts = bench["points"];
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            const std::string v = p["variant"].str();
            const double bytes = static_cast<double>(p["bytes"].bytes());
            J reps = p["reps"];
            for (size_t r = 0; r < reps.size(); ++r) {
                if (v == "sparse_gpu_read_host") {
                    std::vector<double> g = reps.at(r)["gpu_pass_us"].nums();
                    for (size_t k = 1; k < g.size(); ++k) fault_rates.push_back(bytes / g[k] * 1e-3);  // after a host pass
                }
                if (v == "sparse_gpu_read_host" || v == "dense_gpu_read_host")
                    for (double t : reps.at(r)["host_pass_us"].nums()) cpu_rates.push_back(bytes / t * 1e-3);
            }
        }
    }
    auto rate_fit = [&](const std::string& key, const std::vector<double>& rates, const std::string& recipe) {
        const double m = pool.guard(key, [&] { return fit::median(rates); });
        std::vector<double> inv;  // residual as time per GiB
        for (double r : rates) inv.push_back(1073741824.0 / (r * 1e3));
        b.drop(key);
        b.bandwidth(key, m * 1e9, recipe, "median of per-sample rates, 64-256 MiB", fit::rms_about(inv, 1073741824.0 / (m * 1e3)),
                    rates.size());
    };
    if (!fault_rates.empty())
        rate_fit("um.fault_bandwidth", fault_rates,
                 "um_sparse + um_roundtrip bytes / GPU time of a sparse-touch (one byte per 4 KiB page) kernel on host-resident "
                 "managed memory (residual: time per GiB)");
    if (!cpu_rates.empty())
        rate_fit("um.cpu_fault_bandwidth", cpu_rates,
                 "um_roundtrip bytes / host pass reading one byte per 4 KiB page of device-resident managed memory "
                 "(residual: time per GiB)");
    // host.host_register_bandwidth: host_register_copies registers mmap'd, written pages as a
    // program (and the runner) does, every rep; bytes / median call at its largest size.
    std::vector<J> hr = pool.maybe("host_register_copies");
    if (!hr.empty()) {
        uint64_t big = 0;
        for (const J& bench : hr) {
            J pts = bench["points"];
            for (size_t i = 0; i < pts.size(); ++i) big = std::max(big, pts.at(i)["bytes"].bytes());
        }
        std::vector<double> t;
        for (const J& bench : hr) {
            J pts = bench["points"];
            for (size_t i = 0; i < pts.size(); ++i) {
                if (pts.at(i)["bytes"].bytes() != big) continue;
                J reg = pts.at(i)["registered"];
                for (size_t r = 0; r < reg.size(); ++r) t.push_back(reg.at(r)["register_us"].num());
            }
        }
        const double m = pool.guard("host_register_copies host.host_register_bandwidth", [&] { return fit::median(t); });
        b.drop("host.host_register_bandwidth");
        b.bandwidth("host.host_register_bandwidth", static_cast<double>(big) / m * 1e6,
                    "host_register_copies bytes / median cudaHostRegister of written mmap pages, first and repeated, " +
                        size_text(big),
                    "median, " + size_text(big), fit::rms_about(t, m), t.size());
    }
    // graph.node_gap_ramp: graph_node_work's chains of one-block kernels spinning 0..S ns (and its
    // chain of empty kernels), behind the same blocker as the empty chain. For each chain, the
    // gap of the model = its node period (slope of GPU time vs nodes) - its run time
    // max(spin, kernel.min_duration); as a fraction f of the way from the empty chain's gap
    // (graph.node_gap_small's recipe) to the gap of the longest spin S: rule 7 says
    // f = min(1, max(0, spin - kernel.min_duration) / ramp). The ramp is the one (1 ns steps, 0..2S)
    // that minimises the squared error of f over the chains shorter than S (0 when the two gaps
    // differ by less than 20 ns: then the ramp changes nothing).
    if (std::vector<J> gw = pool.maybe("graph_node_work"); !gw.empty()) {
        const double md = static_cast<double>(b.value_of("kernel.min_duration")) * 1e-6;  // us
        struct Pt {
            double spin, gap;  // us
        };
        std::vector<Pt> pts;
        std::vector<double> empty_gap;
        size_t n_samples = 0;
        for (const J& bench : gw) {
            J ps = bench["points"].nonempty();
            // The empty chain's blocker: chains behind another (longer) one are left out.
            int64_t blocker = -1;
            for (size_t i = 0; i < ps.size(); ++i)
                if (ps.at(i)["kernel"].str() == "empty" && (blocker < 0 || ps.at(i)["blocker_ns"].integer() < blocker))
                    blocker = ps.at(i)["blocker_ns"].integer();
            for (size_t i = 0; i < ps.size(); ++i) {
                J p = ps.at(i);
                if (p["blocker_ns"].integer() != blocker) continue;
                const bool empty = p["kernel"].str() == "empty";
                if (!empty && p["grid"].integer() != 1) continue;
                std::vector<double> x, y;
                J sizes = p["sizes"].nonempty();
                for (size_t k = 0; k < sizes.size(); ++k) {
                    const double n = static_cast<double>(sizes.at(k)["nodes"].integer());
                    for (double v : sizes.at(k)["gpu_graph_us"].repetitions()) x.push_back(n), y.push_back(v);
                }
                const fit::Line l = pool.guard("graph_node_work graph.node_gap_ramp", [&] { return fit::fit_line(x, y); });
                n_samples += l.n;
                const double spin = empty ? 0.0 : static_cast<double>(p["spin_ns"].integer()) * 1e-3;
                const double gap = l.slope - std::max(spin, md);
                if (empty) empty_gap.push_back(gap);
                else pts.push_back({spin, gap});
            }
        }
        double best = 0, best_err = -1, rms = 0, smax = 0;
        pool.guard("graph_node_work graph.node_gap_ramp", [&] {
            if (empty_gap.empty()) throw fit::FitError("no chain of empty kernels");
            for (const Pt& q : pts) smax = std::max(smax, q.spin);
            double full = 0, nfull = 0;
            for (const Pt& q : pts)
                if (q.spin == smax) full += q.gap, ++nfull;
            const double small = fit::median(empty_gap);
            if (nfull == 0 || smax <= md) throw fit::FitError("no chain of one-block kernels spinning longer than kernel.min_duration");
            full /= nfull;
            if (full - small < 0.02) return best;  // no step between the two gaps: the ramp does not matter (0)
            std::vector<Pt> f;
            for (const Pt& q : pts)
                if (q.spin < smax) f.push_back({q.spin, (q.gap - small) / (full - small)});
            if (f.empty()) throw fit::FitError("no chain shorter than the longest spin");
            const int64_t steps = static_cast<int64_t>(std::llround(2 * smax * 1e3));
            for (int64_t s = 0; s <= steps; ++s) {
                const double ramp = static_cast<double>(s) * 1e-3;
                double err = 0;
                for (const Pt& q : f) {
                    const double over = std::max(0.0, q.spin - md);
                    const double model = over <= 0 ? 0.0 : over >= ramp ? 1.0 : over / ramp;
                    err += (q.gap - model) * (q.gap - model);
                }
                if (best_err < 0 || err < best_err - 1e-12) best_err = err, best = ramp;
            }
            rms = std::sqrt(best_err / static_cast<double>(f.size())) * (full - small);
            return best;
        });
        b.time("graph.node_gap_ramp", best,
               "graph_node_work one-block chains spinning 0-" + us_text(smax) + ": the run time beyond kernel.min_duration over "
               "which the node gap (node period - run time) grows from the empty kernels' to the " + us_text(smax) +
               " kernels'",
               "least squares over the ramp (1 ns steps) of the fraction of the way, residual in us of gap", rms, n_samples);
    }
    // graph.upload_per_node: graph_instantiate's chains of 100 and 2000 kernel nodes (four kernel
    // kinds, two build methods), each instantiated and launched three times with a sync after
    // each: the first launch's host call less the median of the later two, per node (the upload of
    // a fresh executable, 0.74-2.1 us a node on the H200, 2026-12-02d/e/f); the median over points.
    if (std::vector<J> gi = pool.maybe("graph_instantiate"); !gi.empty()) {
        std::vector<double> per_node;
        for (const J& bench : gi) {
            J ps = bench["points"].nonempty();
            for (size_t i = 0; i < ps.size(); ++i) {
                J p = ps.at(i);
                if (!p.has("launch_call_us")) continue;
                const double n = static_cast<double>(p["nodes"].integer());
                J reps = p["launch_call_us"];
                for (size_t r = 0; r < reps.size(); ++r) {
                    std::vector<double> c = reps.at(r).nums();
                    if (c.size() < 2 || n <= 0) continue;
                    std::vector<double> later(c.begin() + 1, c.end());
                    per_node.push_back((c[0] - fit::median(later)) / n);
                }
            }
        }
        const double m = pool.guard("graph_instantiate graph.upload_per_node", [&] { return fit::median(per_node); });
        b.time("graph.upload_per_node", m,
               "graph_instantiate (first cudaGraphLaunch call of a fresh executable - the median of its later calls) / nodes", "median",
               fit::rms_about(per_node, m), per_node.size());
    }
    // graph.relaunch_gap: graph_relaunch's launches of one exec alternately into two streams (each
    // launch waits for the previous launch of the exec): the median gap from a launch's last node
    // end to the next launch's first node start.
    if (std::vector<J> rl = pool.maybe("graph_relaunch"); !rl.empty()) {
        std::vector<double> gaps;
        for (const J& bench : rl) {
            J pts = bench["points"];
            for (size_t i = 0; i < pts.size(); ++i) {
                if (pts.at(i)["mode"].str() != "one_exec_two_streams") continue;
                J reps = pts.at(i)["reps"];
                for (size_t r = 0; r < reps.size(); ++r) {
                    J per = reps.at(r);
                    for (size_t e = 0; e < per.size(); ++e) append_gaps(per.at(e), "start_ns", "end_ns", gaps);
                }
            }
        }
        const double g = pool.guard("graph_relaunch graph.relaunch_gap", [&] {
            if (gaps.empty()) throw fit::FitError("no one_exec_two_streams launches");
            return fit::median(gaps);
        });
        b.time("graph.relaunch_gap", g,
               "graph_relaunch median gap (a launch's last node end -> the next launch of the same graph exec, queued in the "
               "other stream, starts its first node)",
               "median", fit::rms_about(gaps, g), gaps.size());
    }
}

void fit_gaps(const Pool& pool, Builder& b) {
    std::vector<J> gs = pool.bench("gaps");
    std::vector<double> g_stream, g_event;
    std::vector<std::vector<int64_t>> starts0;  // mode stream, spin 0: start stamps per rep
    for (const J& bench : gs) {
        J chains = bench["stamp_chains"]["chains"];
        for (size_t c = 0; c < chains.size(); ++c) {
            J ch = chains.at(c);
            const std::string mode = ch["mode"].str();
            const int64_t spin = ch["spin_ns"].integer();
            J reps = ch["reps"];
            for (size_t r = 0; r < reps.size(); ++r) {
                std::vector<int64_t> s = reps.at(r)["start_ns"].integers(), e = reps.at(r)["end_ns"].integers();
                if (s.size() != e.size()) reps.at(r)["end_ns"].fail("differs in length from start_ns");
                // Kernels of one stream: each ends at or after its start, and each starts after the one before.
                for (size_t i = 0; i < s.size(); ++i) {
                    if (e[i] < s[i])
                        reps.at(r)["end_ns"].at(i).fail("ends before its kernel starts (" + std::to_string(e[i]) + " < " + std::to_string(s[i]) +
                                                        "): the stamps are damaged");
                    if (i > 0 && s[i] <= s[i - 1])
                        reps.at(r)["start_ns"].at(i).fail("does not come after the previous kernel's start (" + std::to_string(s[i]) +
                                                          " <= " + std::to_string(s[i - 1]) + "): kernels of one stream start one after another");
                }
                if (spin > 0)
                    for (size_t i = 0; i + 1 < s.size(); ++i)
                        (mode == "event" ? g_event : g_stream).push_back(static_cast<double>(s[i + 1] - e[i]) * 1e-3);
                if (spin == 0 && mode == "stream") starts0.push_back(s);
            }
        }
    }
    const double sg = pool.guard("gaps gpu.stream_gap", [&] { return fit::median(g_stream); });
    const double eg = pool.guard("gaps gpu.event_gap", [&] { return fit::median(g_event); });
    b.time("gpu.stream_gap", sg, "gaps median %globaltimer gap start[i+1] - end[i], one stream, 10 us spin kernels",
           "median", fit::rms_about(g_stream, sg), g_stream.size());
    b.time("gpu.event_gap", eg,
           "gaps median %globaltimer gap start[i+1] - end[i], alternating streams through an event record + stream wait",
           "median", fit::rms_about(g_event, eg), g_event.size());
    // kernel.min_duration: start-to-start period of stamp-only kernels in one stream, one
    // least-squares fit of start = rep intercept + i * period over every rep, minus the gap.
    std::vector<std::vector<double>> rows;
    std::vector<double> y;
    for (size_t r = 0; r < starts0.size(); ++r)
        for (size_t i = 0; i < starts0[r].size(); ++i) {
            std::vector<double> row(starts0.size() + 1, 0.0);
            row[r] = 1.0;
            row.back() = static_cast<double>(i);
            rows.push_back(std::move(row));
            y.push_back(static_cast<double>(starts0[r][i] - starts0[r][0]) * 1e-3);
        }
    fit::LeastSquares ls = pool.guard("gaps kernel.min_duration (mode stream, spin 0)", [&] {
        if (starts0.empty()) throw fit::FitError("no chain of mode stream with spin_ns 0");
        return fit::least_squares(rows, y);
    });
    const double period = ls.coef.back();
    const double gap = static_cast<double>(b.value_of("gpu.stream_gap")) * 1e-6;
    b.time("kernel.min_duration", period - gap,
           "gaps start-to-start period of stamp-only kernels in one stream (" + us_text(period) +
               ") minus gpu.stream_gap",
           "linear least squares (Eigen QR), start = rep offset + i * period, " + std::to_string(starts0.size()) +
               " reps",
           ls.rms, ls.n);
    // Cross-checks: the event-timed fused method, and the launch benchmark's queued empty kernels.
    for (const J& bench : gs) {
        if (!bench.has("fused_vs_chain")) continue;
        J fv = bench["fused_vs_chain"];
        const int64_t n = fv["n"].integer();
        std::map<std::string, double> med;
        J modes = fv["modes"];
        for (size_t i = 0; i < modes.size(); ++i) {
            std::vector<double> t = modes.at(i)["gpu_us"].nums();
            if (!t.empty()) med[modes.at(i)["mode"].str()] = fit::median(t);
        }
        if (n > 1 && med.count("fused") && med.count("chain_stream") && med.count("chain_event"))
            b.cal.checks.push_back("gaps " + bench.file() + ": (chain - fused)/(n-1): stream " +
                                   us_text((med["chain_stream"] - med["fused"]) / static_cast<double>(n - 1)) + ", event " +
                                   us_text((med["chain_event"] - med["fused"]) / static_cast<double>(n - 1)) +
                                   " (profile: " + us_text(sg) + ", " + us_text(eg) + ")");
    }
}

void fit_launch(const Pool& pool, Builder& b) {
    std::vector<J> ls = pool.bench("launch");
    auto pooled = [&](auto&& get) {
        std::vector<double> v;
        for (const J& bench : ls) {
            std::vector<double> x = get(bench);
            v.insert(v.end(), x.begin(), x.end());
        }
        return v;
    };
    auto median_param = [&](const char* key, const std::vector<double>& v, const std::string& recipe) {
        const double m = pool.guard(std::string("launch ") + key, [&] { return fit::median(v); });
        b.time(key, m, "launch " + recipe, "median", fit::rms_about(v, m), v.size());
        return m;
    };
    const double lc = median_param("host.launch_cost",
                                   pooled([](const J& x) { return x["launch_cost"]["call_us"].durations(); }),
                                   "median host time of an empty-kernel launch (back-to-back launches)");
    median_param("host.sync_call_cost", pooled([](const J& x) { return x["small_calls"]["stream_sync_us"].durations(); }),
                 "median cudaStreamSynchronize on an idle stream");
    median_param("host.event_record_cost", pooled([](const J& x) { return x["small_calls"]["event_record_us"].durations(); }),
                 "median cudaEventRecord, timing disabled");
    median_param("host.stream_wait_event_cost",
                 pooled([](const J& x) { return x["small_calls"]["stream_wait_done_us"].durations(); }),
                 "median cudaStreamWaitEvent, event complete");
    const double ll = median_param("gpu.launch_latency",
                                   pooled([](const J& x) { return x["launch_latency"]["latency_us"].nums(); }),
                                   "median (GPU start stamp - launch call return), clocks aligned by ping-pong");
    const double sw = median_param("host.sync_wakeup", pooled([](const J& x) {
                                       J w = x["sync_wakeup"];
                                       std::vector<double> us = w["wakeup_us"].nums(), out;
                                       J kind = w["kind"];
                                       if (kind.size() != us.size()) kind.fail("differs in length from wakeup_us");
                                       for (size_t i = 0; i < us.size(); ++i)
                                           if (kind.at(i).str() == "stream") out.push_back(us[i]);
                                       return out;
                                   }),
                                   "median (stream sync return - 1 ms kernel's end stamp), kind stream");
    // Cross-checks.
    std::vector<double> x, y;
    for (const J& bench : ls) {
        if (!bench.has("empty_queued")) continue;
        J pts = bench["empty_queued"]["points"].nonempty();
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            if (p.has("blocker_expired") && p["blocker_expired"].integer() > 0) continue;
            for (double t : p["gpu_us"].nums()) {
                x.push_back(static_cast<double>(p["n"].integer()));
                y.push_back(t);
            }
        }
    }
    const double gap = static_cast<double>(b.value_of("gpu.stream_gap")) * 1e-6;
    const double md = static_cast<double>(b.value_of("kernel.min_duration")) * 1e-6;
    try {
        fit::Line l = fit::fit_line(x, y);
        b.cal.checks.push_back("launch empty_queued: GPU period of queued empty kernels " + us_text(l.slope) +
                               " (model: kernel.min_duration + gpu.stream_gap = " + us_text(md + gap) + ")");
    } catch (const fit::FitError&) {
    }
    std::vector<double> rt = pooled([](const J& j) {
        return j.has("small_calls") && j["small_calls"].has("launch_sync_roundtrip_us")
                   ? j["small_calls"]["launch_sync_roundtrip_us"].nums()
                   : std::vector<double>{};
    });
    if (!rt.empty())
        b.cal.checks.push_back("launch: empty launch + stream sync round trip " + us_text(fit::median(rt)) +
                               " (model: launch_cost + launch_latency + min_duration + sync_wakeup = " +
                               us_text(lc + ll + md + sw) + ")");
}

// ---- HBM and unified memory -------------------------------------------------------------------

void fit_hbm(const Pool& pool, Builder& b) {
    std::vector<J> hs = pool.bench("hbm");
    std::map<uint64_t, std::vector<double>> full;
    std::vector<double> half_alone, half_pair, overlap;
    for (const J& bench : hs) {
        J cases = bench["cases"];
        for (size_t i = 0; i < cases.size(); ++i) {
            J c = cases.at(i);
            const std::string kind = c["case"].str();
            if (kind == "full") {
                std::vector<double> t = c["gpu_us"].nums();
                auto& v = full[c["bytes"].bytes()];
                v.insert(v.end(), t.begin(), t.end());
            } else if (kind == "half_alone") {
                std::vector<double> t = c["gpu_us"].nums();
                half_alone.insert(half_alone.end(), t.begin(), t.end());
            } else if (kind == "half_pair") {
                std::vector<double> t = c["total_us"].nums(), o = c["overlap_us"].nums();
                half_pair.insert(half_pair.end(), t.begin(), t.end());
                overlap.insert(overlap.end(), o.begin(), o.end());
            }
        }
    }
    if (full.empty()) pool.fail("hbm: no case 'full' (full-grid read kernel)");
    const uint64_t big = full.rbegin()->first;
    const std::vector<double>& t = full.rbegin()->second;
    const double m = pool.guard("hbm.bandwidth", [&] {
        if (t.size() < 2) throw fit::FitError("needs at least 2 samples, got " + std::to_string(t.size()));
        return fit::median(t);
    });
    b.bandwidth("hbm.bandwidth", static_cast<double>(big) / m * 1e6,
                "hbm bytes / median GPU time of the read-only streaming kernel, full grid, " + size_text(big),
                "median, " + size_text(big), fit::rms_about(t, m), t.size());
    {
        std::vector<double> x, y;
        for (const auto& [bytes, v] : full) {
            if (v.empty()) continue;
            x.push_back(static_cast<double>(bytes));
            y.push_back(fit::median(v));
        }
        if (x.size() >= 2) {
            const fit::Line l = fit::fit_line(x, y);  // distinct sizes
            b.cal.checks.push_back("hbm: line over the full-grid medians: time = " + us_text(l.intercept) +
                                   " + bytes/" + bw_text(1e6 / l.slope) + " (the model's kernels have no fixed part)");
        }
    }
    // hbm.sharing: two half-grid kernels at once take about twice one alone (shared) or about
    // the same (not shared).
    const double ratio = pool.guard("hbm.sharing", [&] {
        if (half_alone.empty() || half_pair.empty()) throw fit::FitError("needs the half_alone and half_pair cases");
        return fit::median(half_pair) / fit::median(half_alone);
    });
    const double ov = overlap.empty() ? 0 : fit::median(overlap) / fit::median(half_pair);
    const bool shared = ratio >= 1.5;
    b.add("hbm.sharing", shared ? "true" : "false",
          "hbm two half-grid kernels at once / one alone = " + fmtg(ratio) + " (2: shared, 1: not), overlap " +
              fmtg(ov * 100, 3) + "% of the total",
          "median ratio, threshold 1.5", "", half_pair.size() + half_alone.size());
}

// hbm.beside_h2d / hbm.beside_d2h (hbm_beside_copies): a series of read-only streaming kernels
// (the runner's roofline kernel) in one stream, alone and beside one pinned H2D or D2H copy that
// lasts longer than the series: (series end beside the copy) / (alone) - 1, per input (machine
// start) at the largest kernel size and grid, the median over the inputs.
void fit_hbm_beside_copies(const Pool& pool, Builder& b) {
    std::vector<double> h2d, d2h;
    size_t n = 0;
    for (const J& bench : pool.maybe("hbm_beside_copies")) {
        J pts = bench["points"];
        uint64_t big = 0;
        int64_t grid = 0;
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            if (!p.has("kind") || p["kind"].str() != "read") continue;
            big = std::max(big, p["kernel_bytes"].bytes());
        }
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            if (p.has("kind") && p["kind"].str() == "read" && p["kernel_bytes"].bytes() == big) grid = std::max(grid, p["grid"].integer());
        }
        std::map<std::string, double> end;  // case -> median series end
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            if (!p.has("kind") || p["kind"].str() != "read" || p["kernel_bytes"].bytes() != big || p["grid"].integer() != grid) continue;
            std::vector<double> e;
            J reps = p["reps"];
            for (size_t r = 0; r < reps.size(); ++r) e.push_back(reps.at(r)["k_end_us"].nums().at(0));
            if (e.empty()) continue;
            end[p["case"].str()] = fit::median(e);
            n += e.size();
        }
        if (!end.count("K1") || !(end["K1"] > 0)) continue;
        if (end.count("K1+H")) h2d.push_back(end["K1+H"] / end["K1"] - 1);
        if (end.count("K1+D")) d2h.push_back(end["K1+D"] / end["K1"] - 1);
    }
    auto put = [&](const char* key, const std::vector<double>& v, const char* dir) {
        if (v.empty()) return;
        const double m = std::clamp(fit::median(v), 0.0, 1.0);
        b.add(key, fmtg(m, 3),
              std::string("hbm_beside_copies: a series of read-only streaming kernels (largest size, full grid, one stream) "
                          "beside one pinned ") + dir + " copy lasting longer than the series, series end / alone - 1",
              "median over the inputs of the per-input ratio of median series ends; residual: their spread",
              fmtg(fit::rms_about(v, m), 3), n);
    };
    put("hbm.beside_h2d", h2d, "H2D");
    put("hbm.beside_d2h", d2h, "D2H");
}

void fit_um(const Pool& pool, Builder& b) {
    std::vector<J> us = pool.bench("um");
    std::map<uint64_t, std::map<std::string, std::vector<double>>> by_size;
    std::vector<double> pf_calls;
    for (const J& bench : us) {
        J pts = bench["points"].nonempty();
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            if (p.has("skipped")) continue;
            auto& q = by_size[p["bytes"].bytes()];
            auto add = [&](const char* name, const std::vector<double>& v) { q[name].insert(q[name].end(), v.begin(), v.end()); };
            add("fault", p["gpu_fault_read_us"].nums());
            add("pf_d", p["prefetch_to_device"]["gpu_us"].nums());
            add("pf_h", p["prefetch_to_host"]["gpu_us"].nums());
            add("cpu", p["cpu_fault_touch_us"].nums());
            std::vector<double> d = p["prefetch_2MiB"]["to_device_call_us"].nums(), h = p["prefetch_2MiB"]["to_host_call_us"].nums();
            pf_calls.insert(pf_calls.end(), d.begin(), d.end());
            pf_calls.insert(pf_calls.end(), h.begin(), h.end());
        }
    }
    if (by_size.empty()) pool.fail("um: no measured size (every point skipped)");
    const uint64_t big = by_size.rbegin()->first;
    auto& q = by_size.rbegin()->second;
    struct P {
        const char* key;
        const char* name;
        const char* recipe;
    };
    const P params[] = {{"um.fault_bandwidth", "fault", "bytes / median GPU read kernel time on host-resident managed memory"},
                        {"um.prefetch_h2d_bandwidth", "pf_d", "bytes / median cudaMemPrefetchAsync to the device (events)"},
                        {"um.prefetch_d2h_bandwidth", "pf_h", "bytes / median cudaMemPrefetchAsync to the host (events)"},
                        {"um.cpu_fault_bandwidth", "cpu", "bytes / median host page-touch time on device-resident memory"}};
    for (const auto& p : params) {
        const std::vector<double>& v = q[p.name];
        const double m = pool.guard(std::string("um ") + p.key, [&] { return fit::median(v); });
        b.bandwidth(p.key, static_cast<double>(big) / m * 1e6, std::string("um ") + p.recipe + ", " + size_text(big),
                    "median, " + size_text(big), fit::rms_about(v, m), v.size());
    }
    const double m = pool.guard("um host.prefetch_call_cost", [&] { return fit::median(pf_calls); });
    b.time("host.prefetch_call_cost", m, "um median call time of 2 MiB prefetches, both directions, every buffer size",
           "median", fit::rms_about(pf_calls, m), pf_calls.size());
    // um.prefetch_host_block: host time of a large prefetch to the device / its GPU time.
    std::vector<double> ratios;
    for (const J& bench : pool.maybe("um_blocks")) {
        if (!bench.has("prefetch_blocking")) continue;
        J pts = bench["prefetch_blocking"]["points"].nonempty();
        for (size_t i = 0; i < pts.size(); ++i) {
            std::vector<double> call = pts.at(i)["call_us"].nums(), gpu = pts.at(i)["gpu_us"].nums();
            if (call.size() != gpu.size()) pts.at(i)["call_us"].fail("differs in length from gpu_us");
            for (size_t k = 0; k < call.size(); ++k)
                if (gpu[k] > 0) ratios.push_back(std::min(1.0, call[k] / gpu[k]));
        }
    }
    if (!ratios.empty()) {
        const double r = fit::median(ratios);
        b.add("um.prefetch_host_block", fmtg(r, 3),
              "um_blocks prefetch_blocking median (host time of cudaMemPrefetchAsync to the device / its GPU time), "
              "256 MiB and 1 GiB, host-resident buffer",
              "median of per-call ratios, capped at 1", fmtg(fit::rms_about(ratios, r), 3), ratios.size());
    }
}

// ---- um.cpu_fault_beside_copies (um_beside_faults; the fit is calibrate/fit_um.cpp) ------------

void fit_um_beside(const Pool& pool, Builder& b) {
    std::vector<J> ub = pool.maybe("um_beside_faults");
    std::vector<HostPassSample> smp;
    for (size_t f = 0; f < ub.size(); ++f) {
        if (!ub[f].has("host_pass")) continue;
        J hp = ub[f]["host_pass"];
        for (size_t i = 0; i < hp.size(); ++i) {
            J p = hp.at(i);
            const bool beside = p["variant"].str() == "beside_copies";
            const uint64_t bytes = static_cast<uint64_t>(p["bytes"].integer());
            J reps = p["reps"];
            for (size_t r = 0; r < reps.size(); ++r) {
                J x = reps.at(r);
                smp.push_back({f, bytes, x["host_fault_us"].num(), beside ? x["copies_us"].num() : 0.0});
            }
        }
    }
    if (smp.empty()) return;
    const BesideCopiesFit fit =
        pool.guard("um_beside_faults um.cpu_fault_beside_copies", [&] { return fit_cpu_fault_beside_copies(smp); });
    b.add("um.cpu_fault_beside_copies", fmtg(fit.fraction, 3),
          "um_beside_faults host read passes (one byte per 4 KiB page) of 8-64 MiB of device-resident managed memory "
          "beside 16 MiB pinned copies both ways in another stream, against the same passes alone: the part of its rate "
          "the migration keeps while the copies run",
          "median of per-pass (copies + alone - beside) / copies; residual: the model's pass time beside the copies",
          us_text(fit.rms_us), fit.n);
}

// ---- graph.cross_engine_wait (graph_copy_kernel) -----------------------------------------------
// Chains of kernel nodes with a pinned copy node between each two: the time from a kernel's end
// to the next kernel's start is the copy and its two hand-overs; in the model each hand-over is
// graph.node_gap + graph.cross_engine_wait, and the copy node copy.<dir>.fixed + bytes /
// copy.<dir>.bandwidth + graph.copy_node_extra.
void fit_graph_cross_engine_wait(const Pool& pool, Builder& b) {
    const std::vector<J> benches = pool.maybe("graph_copy_kernel");
    if (benches.empty()) return;
    for (const char* key : {"graph.node_gap", "graph.copy_node_extra"})
        if (!b.cal.find(key)) {
            b.cal.checks.push_back(std::string("graph_copy_kernel: ") + key +
                                   " is not fitted from these inputs; graph.cross_engine_wait keeps the base value");
            return;
        }
    std::vector<double> x;
    const double gap = static_cast<double>(b.value_of("graph.node_gap")) * 1e-6;
    const double extra = static_cast<double>(b.value_of("graph.copy_node_extra")) * 1e-6;
    for (const J& bench : benches) {
        J pts = bench["points"].nonempty();
        for (size_t i = 0; i < pts.size(); ++i) {
            J p = pts.at(i);
            if (p["mode"].str() != "graph") continue;
            const std::string dir = p["dir"].str();
            if (dir != "h2d" && dir != "d2h") p["dir"].fail("is neither h2d nor d2h");
            const double copy = fitted_copy_us(b, dir, static_cast<double>(p["bytes"].bytes())) + extra;
            J reps = p["reps"].nonempty();
            for (size_t r = 0; r < reps.size(); ++r) {
                const std::vector<double> a = reps.at(r)["start_ns"].nums(), e = reps.at(r)["end_ns"].nums();
                if (a.size() != e.size()) reps.at(r)["end_ns"].fail("differs in length from start_ns");
                for (size_t k = 0; k + 1 < a.size(); ++k) x.push_back(((a[k + 1] - e[k]) * 1e-3 - copy - 2 * gap) / 2);
            }
        }
    }
    if (x.empty()) return;
    const double med = pool.guard("graph_copy_kernel graph.cross_engine_wait", [&] { return fit::median(x); });
    b.time("graph.cross_engine_wait", med,
           "graph_copy_kernel, graph chains: (a kernel node's end -> the next kernel node's start across a pinned 4 KiB "
           "or 1 MiB copy node - the copy (copy.<dir>.fixed + bytes / bandwidth + graph.copy_node_extra) - 2 x "
           "graph.node_gap) / 2",
           "median over the copies of every chain", fit::median_abs_about(x, med), x.size());
}

// Writes a fitted ramp's parameters, keys {low level, high level, from, ramp}, each with the
// median absolute residual of the samples about the ramp.
void ramp_times(Builder& b, const fit::Ramp& r, const std::vector<std::pair<double, double>>& s, const std::array<const char*, 4>& keys,
                const std::string& recipe) {
    std::vector<double> res;
    for (const auto& [x, y] : s) res.push_back(y - r.at(x));
    const std::string how = std::string("least absolute residuals of: ") + keys[0] + " up to from, linear over ramp to " + keys[1] +
                            " (medians of either side), from and ramp on a 10 us grid";
    const double spread = fit::median_abs_about(res, 0);
    b.time(keys[0], r.low, recipe, how, spread, s.size());
    b.time(keys[1], r.high, recipe, how, spread, s.size());
    b.time(keys[2], r.from, recipe, how, spread, s.size());
    b.time(keys[3], r.ramp, recipe, how, spread, s.size());
}

// ---- gpu.host_func_latency{,_idle}, gpu.host_func_idle_{from,ramp} (host_func_wait) -----------
// Callbacks after spin kernels of 10 us .. 1 ms, each with the callback thread's idle time before
// it (the kernel's end - the previous callback's return): the model's latency is flat at `busy`
// up to `from`, linear over `ramp` to `idle`, flat after. Grid search over from and ramp (10 us
// steps up to 1 ms); busy and idle are the medians of the samples on either side; the fit is the
// least sum of absolute residuals (a few callbacks start 100-200 us late on this host), the
// smallest from and ramp among equals.
void fit_host_func_wait(const Pool& pool, Builder& b) {
    const std::vector<J> benches = pool.maybe("host_func_wait");
    if (benches.empty()) return;
    std::vector<std::pair<double, double>> s;  // (idle, latency) in us, by idle
    for (const J& bench : benches) {
        J pts = bench["points"].nonempty();
        for (size_t i = 0; i < pts.size(); ++i) {
            const std::vector<double> lat = pts.at(i)["latency_us"].nums(), idle = pts.at(i)["idle_us"].nums();
            if (lat.size() != idle.size()) pts.at(i)["idle_us"].fail("differs in length from latency_us");
            for (size_t k = 0; k < lat.size(); ++k)
                if (idle[k] >= 0) s.emplace_back(idle[k], lat[k]);  // the first callback of a series has none
        }
    }
    std::sort(s.begin(), s.end());
    const size_t kMinSide = 5;
    if (s.size() < 2 * kMinSide || s.front().first == s.back().first) {
        b.cal.checks.push_back("host_func_wait: fewer than " + std::to_string(2 * kMinSide) +
                               " callbacks with an idle time, or one idle time only; the callback latencies keep the base values");
        return;
    }
    const fit::Ramp best = fit::fit_ramp(s, 10, 1000, kMinSide);
    if (!best.set) {
        b.cal.checks.push_back("host_func_wait: no split leaves " + std::to_string(kMinSide) +
                               " callbacks on either side; the callback latencies keep the base values");
        return;
    }
    ramp_times(b, best, s, {"gpu.host_func_latency", "gpu.host_func_latency_idle", "gpu.host_func_idle_from", "gpu.host_func_idle_ramp"},
               "host_func_wait: callback start - its spin kernel's end stamp (10 us .. 1 ms kernels, one stream, chained and "
               "one at a time), against the callback thread's idle time before it (that end - the previous callback's return), "
               "clocks aligned by ping-pong");
}

// ---- host.blocking_sync_wakeup{,_short}, host.blocking_sync_sleep_{from,ramp} (blocking_sync steady) ----
// The child's steady sweep: blocks of syncs after spin kernels of one length (5 us .. 2 ms) under
// cudaDeviceScheduleBlockingSync, as a loop of identical iterations waits; the wake-up (return -
// the kernel's end stamp) of the 5th sync of a block on against how long the thread slept (that
// end - the sync call's start). Fitted as the callback latency is: flat up to from, linear over
// ramp, flat after. The mixed rounds of `sweep` (lengths in turn: the wake-up also follows the
// earlier sleeps) and the 1 ms phase are checks. Inputs without the steady sweep leave all four
// at their base values.
void fit_blocking_sleep(const Pool& pool, Builder& b) {
    std::vector<std::pair<double, double>> s;  // (slept, wake-up) in us
    for (const J& bench : pool.maybe("blocking_sync")) {
        J c = bench["child"];
        if (!c.has("steady")) continue;
        J st = c["steady"];
        const std::vector<double> sleep = st["sleep_us"].nums(), wake = st["wakeup_us"].nums(), index = st["index"].nums();
        if (sleep.size() != wake.size()) st["wakeup_us"].fail("differs in length from sleep_us");
        if (index.size() != wake.size()) st["index"].fail("differs in length from wakeup_us");
        for (size_t k = 0; k < sleep.size(); ++k)
            if (index[k] >= 4) s.emplace_back(sleep[k], wake[k]);
    }
    if (s.empty()) return;
    const size_t kMinSide = 5;
    const fit::Ramp best = fit::fit_ramp(s, 10, 2000, kMinSide);
    if (!best.set) {
        b.cal.checks.push_back("blocking_sync steady: no split leaves " + std::to_string(kMinSide) +
                               " wake-ups on either side; the blocking-sync wake-ups keep the base values");
        return;
    }
    ramp_times(b, best, s,
               {"host.blocking_sync_wakeup_short", "host.blocking_sync_wakeup", "host.blocking_sync_sleep_from",
                "host.blocking_sync_sleep_ramp"},
               "blocking_sync steady: stream sync return - the spin kernel's end stamp, the 5th on of each block of syncs "
               "after kernels of one length (5 us .. 2 ms, cudaDeviceScheduleBlockingSync child process), against how long "
               "the thread slept (that end - the sync call's start), clocks aligned by ping-pong");
}

void run_fits(const Pool& pool, Builder& b) {
    fit_device(pool, b);
    fit_gaps(pool, b);  // first: the fixed costs subtract gpu.stream_gap
    fit_launch(pool, b);
    const std::string gap_text = b.cal.find("gpu.stream_gap")->value;
    const double gap_us = static_cast<double>(b.value_of("gpu.stream_gap")) * 1e-6;
    fit_batches(pool, b, gap_us, gap_text);
    fit_pageable(pool, b);
    fit_pageable_d2h_wakeup(pool, b);
    fit_staging_lock_wakeup(pool, b);
    fit_cross_engine_wait(pool, b);
    fit_hbm(pool, b);
    fit_hbm_beside_copies(pool, b);
    fit_um(pool, b);
    fit_duplex(pool, b);
    fit_rules_sections(pool, b);
    fit_issue14_sections(pool, b);
    fit_um_beside(pool, b);
    fit_graph_cross_engine_wait(pool, b);
    fit_host_func_wait(pool, b);
    fit_blocking_sleep(pool, b);
}

std::string one_line(std::string s) {
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

std::string yaml_quote(const std::string& s) {
    std::string out = "\"";
    for (char c : one_line(s)) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// A scalar as written in a flow mapping: plain when safe, else double-quoted.
std::string yaml_scalar(const std::string& s) {
    if (s.empty()) return "\"\"";
    static const std::string special = "-?:,[]{}#&*!|>'\"%@`";
    bool plain = special.find(s[0]) == std::string::npos && s.front() != ' ' && s.back() != ' ';
    for (char c : s)
        if (c == ',' || c == '{' || c == '}' || c == '[' || c == ']' || c == '#' || c == ':' || c == '"' ||
            static_cast<unsigned char>(c) < 0x20)
            plain = false;
    return plain ? s : yaml_quote(s);
}

// A scalar as written in block context (name, description): plain when safe, else double-quoted.
std::string yaml_block_scalar(const std::string& s) {
    if (s.empty()) return "\"\"";
    static const std::string special = "-?:,[]{}#&*!|>'\"%@`";
    bool plain = special.find(s[0]) == std::string::npos && s.front() != ' ' && s.back() != ' ' &&
                 s.find(": ") == std::string::npos && s.find(" #") == std::string::npos && s.back() != ':';
    for (char c : s)
        if (static_cast<unsigned char>(c) < 0x20) plain = false;
    return plain ? s : yaml_quote(s);
}

}  // namespace

const Fitted* Calibration::find(const std::string& key) const {
    for (const auto& p : params)
        if (p.key == key) return &p;
    return nullptr;
}

const BaseEntry* BaseProfile::find(const std::string& key) const {
    for (const auto& p : params)
        if (p.key == key) return &p;
    return nullptr;
}

MicrobenchFile load_microbench(const std::string& path, uint64_t max_memory) {
    MicrobenchFile f;
    f.path = path;
    std::string text;
    f.doc = report::read_json_file(path, "the JSON output of validation/microbench/hetsim-microbench, \"schema\": \"hetsim.microbench\"", &text,
                                  max_memory);
    auto at = [&](const char* key) { return report::json_loc(path, text, {std::string(key)}); };
    if (!f.doc.is_object())
        throw InputError(at(""), std::string("expected a JSON object (hetsim-microbench output), got ") + (f.doc.is_null() ? "null" : f.doc.type_name()));
    const json& schema = f.doc.contains("schema") ? f.doc["schema"] : json();
    if (!schema.is_string() || schema.get<std::string>() != "hetsim.microbench")
        throw InputError(at("schema"), "schema is " + (schema.is_null() ? std::string("missing") : "'" + one_line(schema.dump()) + "'") +
                                              ", expected \"hetsim.microbench\" (the output of validation/microbench/hetsim-microbench)");
    const json& version = f.doc.contains("version") ? f.doc["version"] : json();
    if (!version.is_number_integer() || version.get<int64_t>() != 1)
        throw InputError(at("version"), "hetsim.microbench version " + one_line(version.dump()) +
                                              " is not supported; this hetsim reads version 1");
    if (!f.doc.contains("benchmarks") || !f.doc["benchmarks"].is_object())
        throw InputError(at("benchmarks"), "no 'benchmarks' object; expected \"benchmarks\": {\"device\": {...}, \"copy_sweep\": {...}, ...} "
                                           "(validation/microbench/README.md)");
    if (f.doc.contains("complete") && !(f.doc["complete"].is_boolean() && f.doc["complete"].get<bool>()))
        throw InputError(at("complete"), "\"complete\" is " + one_line(f.doc["complete"].dump()) +
                                             ": the microbenchmark run stopped before its end, so its samples may be partial; "
                                             "calibrate reads complete runs only (run hetsim-microbench again to the end)");
    return f;
}

Calibration calibrate(const std::vector<MicrobenchFile>& files) {
    if (files.empty()) throw InputError(SourceLoc{}, "no microbenchmark file given");
    Pool pool{files, ""};
    for (const auto& f : files) pool.label += (pool.label.empty() ? "" : " + ") + f.path;
    Calibration cal;
    Builder b{pool, cal};
    try {
        run_fits(pool, b);
    } catch (const fit::FitError& e) {
        pool.fail(e.what());
    }
    // Every fitted value must be accepted by the profile loader.
    HwProfile scratch;
    for (const auto& p : cal.params) set_profile_param(scratch, p.key, p.value, pool.loc_for(p.source.rfind("fit: ", 0) == 0 ? p.source.substr(5) : p.source));
    // Parameter order of the declaration table.
    std::vector<Fitted> ordered;
    for (const auto& d : param_decls())
        if (const Fitted* f = cal.find(d.key)) ordered.push_back(*f);
    cal.params = std::move(ordered);
    return cal;
}

BaseProfile read_base_profile(const std::string& path) {
    // Full check: every parameter once, units, ranges, and the chain of bases.
    const LoadedProfile lp = load_profile_sources(path, SourceLoc{path});
    BaseProfile bp;
    bp.path = path;
    // The entries of the profile's chain of bases, the farthest base first, in its order; each
    // nearer profile replaces the entries it gives, so that the result states every value.
    for (size_t k = lp.files.size(); k-- > 0;) {
        YAML::Node root = load_yaml_file(lp.files[k].path);
        if (k == 0) {
            bp.name = root["name"] && root["name"].IsScalar() ? root["name"].Scalar() : "";
            bp.description = root["description"] && root["description"].IsScalar() ? root["description"].Scalar() : "";
        }
        YAML::Node params = root["params"];
        if (!params || !params.IsMap()) continue;
        for (auto it = params.begin(); it != params.end(); ++it) {
            BaseEntry e;
            e.key = it->first.Scalar();
            YAML::Node v = it->second;
            if (v.IsMap()) {
                auto text = [&](const char* key) { return v[key] && v[key].IsScalar() ? v[key].Scalar() : std::string(); };
                e.value = text("value");
                e.source = text("source");
                e.status = text("status");
                e.residual = text("residual");
                e.fit = text("fit");
            } else {
                e.value = v.Scalar();
            }
            auto same = std::find_if(bp.params.begin(), bp.params.end(), [&](const BaseEntry& b) { return b.key == e.key; });
            if (same != bp.params.end()) *same = std::move(e);
            else bp.params.push_back(std::move(e));
        }
    }
    return bp;
}

std::string render_profile(const BaseProfile& base, const Calibration& cal, const std::vector<MicrobenchFile>& files,
                           const std::string& command_line) {
    std::ostringstream o;
    o << "# Hardware profile " << one_line(base.name) << ", generated by `hetsim calibrate` from microbenchmark samples.\n"
      << "# Regenerate it with the command below; do not edit the fitted (status: measured) entries by hand.\n"
      << "#   " << one_line(command_line) << "\n"
      << "# Inputs (hetsim-microbench, validation/microbench):\n";
    for (const auto& f : files) {
        const json& md = f.doc.contains("metadata") && f.doc["metadata"].is_object() ? f.doc["metadata"] : json::object();
        auto field = [&](const char* k) {
            if (!md.contains(k)) return std::string("?");
            const json& v = md[k];
            return one_line(v.is_string() ? v.get<std::string>() : v.dump());
        };
        const bool complete = f.doc.contains("complete") && f.doc["complete"].is_boolean() && f.doc["complete"].get<bool>();
        const bool quick = md.contains("quick") && md["quick"].is_boolean() && md["quick"].get<bool>();
        o << "#   " << one_line(f.path) << ": " << field("gpu") << ", " << field("date") << ", host " << field("host")
          << ", CUDA driver " << field("driver_cuda_version") << " runtime " << field("cuda_runtime")
          << (quick ? ", --quick" : "") << (complete ? "" : ", incomplete") << "\n";
    }
    o << "# Base profile: " << one_line(base.path)
      << "; parameters that no benchmark informs keep its value, source and status.\n"
      << "# Each entry: value (with its unit), source, status: measured (fitted from the inputs as `fit` says, with\n"
      << "# the RMS `residual` of the fit; recipes: validation/microbench/README.md), lead (hardware-notes, to\n"
      << "# re-measure), datasheet, or assumed (a guess to be calibrated).\n";
    o << "name: " << yaml_block_scalar(base.name) << "\n";
    if (!base.description.empty()) o << "description: " << yaml_block_scalar(base.description) << "\n";
    o << "params:\n";
    for (const auto& e : base.params) {
        std::string key = e.key + ":";
        key += std::string(key.size() < 28 ? 28 - key.size() : 1, ' ');
        std::string value, source, status, residual, fit_text;
        if (const Fitted* f = cal.find(e.key)) {
            value = f->value;
            source = f->source;
            status = "measured";
            residual = f->residual;
            fit_text = f->fit;
        } else {
            value = e.value;
            source = e.source;
            status = e.status;
            residual = e.residual;
            fit_text = e.fit;
        }
        std::string v = yaml_scalar(value) + ",";
        if (v.size() < 10) v += std::string(10 - v.size(), ' ');
        else v += ' ';
        std::string line = "  " + key + "{value: " + v;
        std::string rest;
        if (!source.empty()) rest += "source: " + yaml_quote(source);
        if (!status.empty()) rest += (rest.empty() ? "" : ", ") + std::string("status: ") + yaml_scalar(status);
        if (!residual.empty()) rest += (rest.empty() ? "" : ", ") + std::string("residual: ") + yaml_scalar(residual);
        if (!fit_text.empty()) rest += (rest.empty() ? "" : ", ") + std::string("fit: ") + yaml_quote(fit_text);
        if (rest.empty()) {
            line.resize(line.find_last_not_of(' ') + 1);
            line.pop_back();  // the comma after the value
        }
        o << line << rest << "}\n";
    }
    return o.str();
}

std::string format_time_literal(int64_t ps) {
    if (ps == 0) return "0us";
    const bool neg = ps < 0;
    uint64_t a = neg ? static_cast<uint64_t>(-(ps + 1)) + 1 : static_cast<uint64_t>(ps);
    const uint64_t unit = a >= 1000000000ULL ? 1000000000ULL : 1000000ULL;
    const char* name = unit == 1000000ULL ? "us" : "ms";
    const int decimals = unit == 1000000ULL ? 6 : 9;
    std::string frac = std::to_string(a % unit);
    frac = std::string(static_cast<size_t>(decimals) - frac.size(), '0') + frac;
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    return (neg ? "-" : "") + std::to_string(a / unit) + (frac.empty() ? "" : "." + frac) + name;
}

std::string format_bandwidth_literal(uint64_t bps) {
    struct U {
        uint64_t f;
        const char* name;
        int dec;
    };
    const U units[] = {{1000000000000ULL, "TB/s", 12}, {1000000000ULL, "GB/s", 9}, {1000000ULL, "MB/s", 6}};
    for (const auto& u : units)
        if (bps >= u.f) {
            std::string frac = std::to_string(bps % u.f);
            frac = std::string(static_cast<size_t>(u.dec) - frac.size(), '0') + frac;
            while (!frac.empty() && frac.back() == '0') frac.pop_back();
            return std::to_string(bps / u.f) + (frac.empty() ? "" : "." + frac) + u.name;
        }
    return std::to_string(bps) + "B/s";
}

std::string format_size_literal(uint64_t bytes) {
    struct U {
        int shift;
        const char* name;
    };
    const U units[] = {{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}};
    for (const auto& u : units) {
        const uint64_t f = 1ULL << u.shift;
        if (bytes < f) continue;
        // Exact with at most 4 decimals: bytes * 10^4 divisible by the unit.
        __extension__ typedef unsigned __int128 u128;
        const u128 scaled = static_cast<u128>(bytes) * 10000u;
        if (scaled % f != 0) continue;
        const uint64_t whole = bytes / f;
        uint64_t frac4 = static_cast<uint64_t>((scaled / f) % 10000u);
        std::string frac = std::to_string(frac4);
        frac = std::string(4 - frac.size(), '0') + frac;
        while (!frac.empty() && frac.back() == '0') frac.pop_back();
        return std::to_string(whole) + (frac.empty() ? "" : "." + frac) + u.name;
    }
    return std::to_string(bytes) + "B";
}

uint64_t round_bandwidth(double bps) {
    if (!(bps > 0) || !std::isfinite(bps)) return 0;
    const uint64_t v = static_cast<uint64_t>(std::llround(bps));
    uint64_t p = 1;
    while (v / p >= 10000000ULL) p *= 10;  // keep 7 significant digits
    return (v + p / 2) / p * p;
}

}  // namespace hetsim::calib
