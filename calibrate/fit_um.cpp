#include "calibrate/fit_um.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "calibrate/fit.hpp"

namespace hetsim::calib {

double pass_beside_copies_us(double alone_us, double copies_us, double f) {
    if (alone_us <= f * copies_us) return alone_us / f;  // done while the copies still run
    return copies_us + (alone_us - f * copies_us);
}

BesideCopiesFit fit_cpu_fault_beside_copies(const std::vector<HostPassSample>& samples) {
    std::map<std::pair<size_t, uint64_t>, std::vector<double>> alone;
    for (const HostPassSample& s : samples)
        if (s.copies_us <= 0) alone[{s.file, s.bytes}].push_back(s.host_fault_us);
    std::vector<double> fs;
    std::vector<std::pair<double, const HostPassSample*>> used;  // (A, sample)
    for (const HostPassSample& s : samples) {
        if (s.copies_us <= 0 || s.host_fault_us <= 0) continue;
        auto it = alone.find({s.file, s.bytes});
        if (it == alone.end()) continue;
        const double a = fit::median(it->second), c = s.copies_us, t = s.host_fault_us;
        fs.push_back(t <= c ? a / t : (c + a - t) / c);
        used.emplace_back(a, &s);
    }
    if (fs.empty()) throw fit::FitError("no host pass beside copies with passes of its size alone");
    BesideCopiesFit out;
    out.fraction = std::clamp(fit::median(fs), 0.001, 1.0);
    double ss = 0;
    for (const auto& [a, s] : used) {
        const double d = pass_beside_copies_us(a, s->copies_us, out.fraction) - s->host_fault_us;
        ss += d * d;
    }
    out.rms_us = std::sqrt(ss / static_cast<double>(used.size()));
    out.n = used.size();
    return out;
}

}  // namespace hetsim::calib
