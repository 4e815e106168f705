#include "calibrate/fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <utility>

namespace hetsim::fit {

LeastSquares least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                           const std::vector<double>& weights) {
    const size_t n = rows.size();
    if (n != y.size()) throw FitError("least squares: " + std::to_string(n) + " rows but " + std::to_string(y.size()) + " values");
    if (!weights.empty() && weights.size() != n) throw FitError("least squares: weights do not match the rows");
    if (n == 0) throw FitError("no points to fit (the measurement has none in this range)");
    const size_t cols = rows[0].size();
    if (cols == 0) throw FitError("least squares: no columns");
    if (n < 2 || n < cols)
        throw FitError("a fit of " + std::to_string(cols) + " parameter" + (cols == 1 ? "" : "s") + " needs at least " +
                       std::to_string(std::max<size_t>(2, cols)) + " points, got " + std::to_string(n));
    Eigen::MatrixXd a(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(cols));
    Eigen::VectorXd b(static_cast<Eigen::Index>(n));
    for (size_t i = 0; i < n; ++i) {
        if (rows[i].size() != cols) throw FitError("least squares: rows of different lengths");
        const double w = weights.empty() ? 1.0 : weights[i];
        if (!std::isfinite(w) || w <= 0) throw FitError("least squares: weights must be positive and finite");
        const double sw = std::sqrt(w);
        if (!std::isfinite(y[i])) throw FitError("least squares: a non-finite value");
        b(static_cast<Eigen::Index>(i)) = sw * y[i];
        for (size_t j = 0; j < cols; ++j) {
            if (!std::isfinite(rows[i][j])) throw FitError("least squares: a non-finite value");
            a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = sw * rows[i][j];
        }
    }
    // Scale each column to unit max so that a column of bytes (1e9) and one of ones are comparable.
    Eigen::VectorXd scale(static_cast<Eigen::Index>(cols));
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
        const double m = a.col(j).cwiseAbs().maxCoeff();
        if (m == 0) throw FitError("least squares: a column is all zero (the parameter is not determined by the data)");
        scale(j) = m;
        a.col(j) /= m;
    }
    Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
    qr.setThreshold(1e-12);
    if (qr.rank() < a.cols())
        throw FitError("degenerate fit: the points do not determine all " + std::to_string(cols) +
                       " parameters (e.g. all at one size)");
    const Eigen::VectorXd c = qr.solve(b);
    LeastSquares r;
    r.n = n;
    r.coef.resize(cols);
    for (size_t j = 0; j < cols; ++j) r.coef[j] = c(static_cast<Eigen::Index>(j)) / scale(static_cast<Eigen::Index>(j));
    double ss = 0;
    for (size_t i = 0; i < n; ++i) {
        double pred = 0;
        for (size_t j = 0; j < cols; ++j) pred += rows[i][j] * r.coef[j];
        ss += (y[i] - pred) * (y[i] - pred);
    }
    r.rms = std::sqrt(ss / static_cast<double>(n));
    return r;
}

Line fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& weights) {
    if (x.size() != y.size()) throw FitError("line fit: x and y differ in length");
    std::vector<std::vector<double>> rows;
    rows.reserve(x.size());
    for (double v : x) rows.push_back({1.0, v});
    if (x.size() >= 2 && std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; }))
        throw FitError("a line fit needs at least 2 distinct x values, got " + std::to_string(x.size()) +
                       " points all at x = " + std::to_string(x[0]));
    LeastSquares ls = least_squares(rows, y, weights);
    return Line{ls.coef[0], ls.coef[1], ls.rms, ls.n};
}

double median(std::vector<double> v) {
    if (v.empty()) throw FitError("a median of no samples");
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double rms_about(const std::vector<double>& v, double c) {
    if (v.empty()) return 0;
    double ss = 0;
    for (double x : v) ss += (x - c) * (x - c);
    return std::sqrt(ss / static_cast<double>(v.size()));
}

double median_abs_about(const std::vector<double>& v, double c) {
    std::vector<double> dev;
    dev.reserve(v.size());
    for (double x : v) dev.push_back(std::abs(x - c));
    return median(std::move(dev));
}

Ramp fit_ramp(std::vector<std::pair<double, double>>& s, double step, double max, size_t min_side) {
    std::sort(s.begin(), s.end());
    Ramp best;
    if (s.size() < 2 * min_side) return best;
    auto median_of = [&](size_t lo, size_t hi) {  // y of s[lo, hi)
        std::vector<double> v;
        for (size_t k = lo; k < hi; ++k) v.push_back(s[k].second);
        return median(v);
    };
    // The medians of every prefix and suffix the grid asks for, each computed once (the grid has
    // 10^4 points; a pooled fit a few thousand samples).
    std::vector<double> head(s.size() + 1, std::nan("")), tail(s.size() + 1, std::nan(""));
    auto head_median = [&](size_t below) { return std::isnan(head[below]) ? (head[below] = median_of(0, below)) : head[below]; };
    auto tail_median = [&](size_t above) { return std::isnan(tail[above]) ? (tail[above] = median_of(above, s.size())) : tail[above]; };
    const int steps = static_cast<int>(std::lround(max / step));
    for (int a = 0; a <= steps; ++a)
        for (int b = 0; b <= steps; ++b) {
            const double f = a * step, r = b * step;
            const size_t below = static_cast<size_t>(std::upper_bound(s.begin(), s.end(), std::make_pair(f, 1e300)) - s.begin());
            const size_t above = static_cast<size_t>(std::lower_bound(s.begin(), s.end(), std::make_pair(f + r, -1e300)) - s.begin());
            if (below < min_side || s.size() - above < min_side) continue;
            Ramp cand{0, f, r, head_median(below), tail_median(above), true};
            for (const auto& [x, y] : s) cand.cost += std::fabs(y - cand.at(x));
            if (!best.set || cand.cost < best.cost - 1e-9) best = cand;
        }
    return best;
}

}  // namespace hetsim::fit
