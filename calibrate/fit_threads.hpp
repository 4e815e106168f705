// Fits from the pageable_threads microbenchmark section (bench_v5.cu): 64 KiB pageable copies
// issued by 1-8 host threads at once, every call stamped on one clock. Plain vectors in, so that
// the fit is testable without an input file (tests/test_calibrate.cpp).
#pragma once
#include <cstddef>
#include <vector>

namespace hetsim::calib {

// One release of the staging lock while another thread's pageable D2H call waited for it: the
// releasing thread's next D2H call started `gap_us` after its call returned, and it took the lock
// again before the waiter (`barged`: its call returned first) or not.
struct LockRelease {
    double gap_us = 0;
    bool barged = false;
};

// The releases in one run: `d2h[t]` is thread t's D2H calls as [start, end] pairs (us, one clock
// for all threads; a flat list, start0, end0, start1, ...). A D2H call holds the lock from its
// start to its end (docs/model.md rule 2). At each call's end with another thread's call in
// progress (started before, ending after) and a next D2H call of the same thread: whose call
// ends next. A list of odd length is the caller's error (checked before).
std::vector<LockRelease> lock_releases(const std::vector<std::vector<double>>& d2h);

struct WakeupFit {
    double us = 0;         // host.staging_lock_wakeup: the waiter's median wake-up after the release
    double spread_us = 0;  // host.staging_lock_wakeup_spread: wake-ups spread evenly over us +- spread
    double brier = 0;      // mean squared error of the fitted probability against the outcomes
    size_t n = 0;          // releases
};

// The waiter wakes a time w after the release, spread evenly over W +- S; the releasing thread
// takes the lock again iff it asks before, with probability P(gap) = 1 below W - S, 0 above
// W + S, linear between (S = 0: a threshold at W). W and S (0.1 us steps, W <= 40 us, S <= 25
// us) minimise the mean squared error of P(gap) against the outcomes (barged: 1, else 0), gaps
// rounded to 0.25 us; ties go to the smaller W, then S. Needs at least one release.
WakeupFit fit_lock_wakeup(const std::vector<LockRelease>& r);

// P(gap) of fit_lock_wakeup: the chance that a thread asking `gap_us` after the release takes
// the lock before the waiter.
double barge_chance(double gap_us, double wakeup_us, double spread_us);

}  // namespace hetsim::calib
