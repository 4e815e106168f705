#include "calibrate/fit_threads.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace hetsim::calib {

std::vector<LockRelease> lock_releases(const std::vector<std::vector<double>>& d2h) {
    struct Call {
        double start, end;
        size_t thread;
    };
    std::vector<Call> calls;
    for (size_t t = 0; t < d2h.size(); ++t)
        for (size_t k = 0; k + 1 < d2h[t].size(); k += 2) calls.push_back(Call{d2h[t][k], d2h[t][k + 1], t});
    std::sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.end < b.end; });
    std::vector<LockRelease> out;
    for (size_t i = 0; i + 1 < calls.size(); ++i) {
        const Call& c = calls[i];
        bool waited = false;
        for (const Call& w : calls)
            if (w.thread != c.thread && w.start < c.end && w.end > c.end) waited = true;
        if (!waited) continue;
        // The releasing thread's next call: the first of its calls starting at or after c's end.
        double next = -1;
        for (const Call& n : calls)
            if (n.thread == c.thread && n.start >= c.end && (next < 0 || n.start < next)) next = n.start;
        if (next < 0) continue;
        out.push_back(LockRelease{next - c.end, calls[i + 1].thread == c.thread});
    }
    return out;
}

double barge_chance(double gap_us, double wakeup_us, double spread_us) {
    if (spread_us <= 0) return gap_us < wakeup_us ? 1.0 : 0.0;
    if (gap_us <= wakeup_us - spread_us) return 1.0;
    if (gap_us >= wakeup_us + spread_us) return 0.0;
    return (wakeup_us + spread_us - gap_us) / (2 * spread_us);
}

WakeupFit fit_lock_wakeup(const std::vector<LockRelease>& r) {
    if (r.empty()) throw std::invalid_argument("fit_lock_wakeup: no releases");
    std::map<long, std::pair<size_t, size_t>> bins;  // gap in 0.25 us -> (releases, barged)
    for (const LockRelease& x : r) {
        auto& b = bins[std::lround(x.gap_us * 4)];
        ++b.first;
        b.second += x.barged ? 1 : 0;
    }
    WakeupFit best{0, 0, -1, r.size()};
    for (int w = 0; w <= 400; ++w)
        for (int s = 0; s <= 250; ++s) {
            double err = 0;
            for (const auto& [k, b] : bins) {
                const double p = barge_chance(static_cast<double>(k) / 4, w / 10.0, s / 10.0);
                err += static_cast<double>(b.second) * (1 - p) * (1 - p) + static_cast<double>(b.first - b.second) * p * p;
            }
            err /= static_cast<double>(r.size());
            if (best.brier < 0 || err < best.brier - 1e-12) best = WakeupFit{w / 10.0, s / 10.0, err, r.size()};
        }
    return best;
}

}  // namespace hetsim::calib
