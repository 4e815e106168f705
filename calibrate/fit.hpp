// Least-squares and robust estimators for `hetsim calibrate` (Eigen under the hood).
// Inputs are plain vectors so that callers need not include Eigen; every function throws
// FitError (a std::runtime_error) on a fit it cannot make, with a one-line message.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetsim::fit {

class FitError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct LeastSquares {
    std::vector<double> coef;  // one per column
    double rms = 0;            // RMS of the (unweighted) residuals y - X * coef
    size_t n = 0;              // rows used
};

// Solves min sum_i w_i (y_i - rows_i . coef)^2 with a column-pivoting Householder QR
// (columns scaled to unit max first). `weights` empty = all 1. Needs at least as many rows as
// columns, at least 2 rows, finite inputs, positive weights and full column rank.
LeastSquares least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                           const std::vector<double>& weights = {});

struct Line {
    double intercept = 0, slope = 0;
    double rms = 0;  // RMS residual
    size_t n = 0;
};

// y = intercept + slope * x; needs at least 2 distinct x.
Line fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& weights = {});

// y flat at `low` up to x = from, linear over `ramp` to `high`, flat after (the form of the
// callback latency and the blocking-sync wake-up, models/host_model.cpp).
struct Ramp {
    double cost = 0;  // sum of |y - at(x)|
    double from = 0, ramp = 0, low = 0, high = 0;
    bool set = false;  // false: no split of the grid leaves min_side samples on either side
    double at(double x) const { return x <= from ? low : x >= from + ramp ? high : low + (high - low) * (x - from) / ramp; }
};

// Fits a Ramp to (x, y) samples: from and ramp on a grid of `step` up to `max` each, low and high
// the medians of the samples at or below from and at or above from + ramp (at least `min_side`
// each); the least sum of absolute residuals, the smallest from and ramp among equals. Sorts s.
Ramp fit_ramp(std::vector<std::pair<double, double>>& s, double step, double max, size_t min_side);

// Median (mean of the two middle values for an even count); throws on an empty input.
double median(std::vector<double> v);

// RMS of v - c (the residual of a constant estimate such as a median).
double rms_about(const std::vector<double>& v, double c);

// Median of |v - c| (the spread of v about a constant estimate such as its median); throws on an
// empty input.
double median_abs_about(const std::vector<double>& v, double c);

}  // namespace hetsim::fit
