/// @file
/// @brief The statistics the analyses over traces share (the summary at exit, merge's
/// cross-rank summary, `nvtxpp-capture diff`): medians, the Mann-Whitney U test, and the
/// interval of the change that goes with it (Hodges-Lehmann / Moses). One room, so every table
/// computes a median the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvtxpp::capture::stats {

/// @brief Median of sorted values: the middle one, or the mean of the middle two; 0 when empty.
[[nodiscard]] double median_sorted(std::vector<std::int64_t> const& sorted) noexcept;

/// @brief Median of any values (sorts a copy).
[[nodiscard]] double median(std::vector<std::int64_t> values);

/// @brief The result of a two-sided Mann-Whitney U test (Wilcoxon rank-sum).
struct rank_test {
  double u = 0;  ///< U of the first sample: pairs (a, b) with a > b, ties counting one half
  double z = 0;  ///< normal approximation, tie-corrected, with continuity correction
  double p = 1;  ///< two-sided p-value (1 when every value is tied)
};

/// @brief Mann-Whitney U test of `a` against `b` (both sorted ascending), normal approximation
/// with the tie correction of the variance and a continuity correction of 0.5. Meant for samples
/// of 5 or more on each side; below that the approximation is coarse (callers say "too few").
[[nodiscard]] rank_test mann_whitney(std::vector<std::int64_t> const& a,
                                     std::vector<std::int64_t> const& b);

/// @brief Two-sided p-value of a standard normal deviate z: P(|Z| >= |z|).
[[nodiscard]] double normal_two_sided_p(double z) noexcept;

/// @brief An interval [lo, hi].
struct interval {
  double lo = 0;
  double hi = 0;
};

/// @brief The inverse of normal_two_sided_p: the z with P(|Z| >= z) = p (0 < p < 1).
[[nodiscard]] double normal_two_sided_z(double p) noexcept;

/// @brief The ratio of `b` to `a` as a relative change (0.10: b is 10% longer), with the
/// distribution-free interval that goes with the U test (Hodges-Lehmann estimate and Moses
/// interval, on log durations): of the n x m ratios b_j / a_i, the estimate is the median, and
/// the interval runs from the K-th smallest to the K-th largest, K = n m / 2 - z sqrt(n m (n + m +
/// 1) / 12) with z for a two-sided `level`. Rank-based, so a few preempted instances on either
/// side (a shared machine) move it little. Both samples sorted ascending and non-empty; a side
/// longer than 1,000 values is first thinned to 1,000 of its quantiles (bounds the n x m pairs).
/// Values below 1 count as 1.
struct ratio_estimate {
  double change = 0;  ///< the Hodges-Lehmann estimate, as exp(shift) - 1
  interval ci{};      ///< the interval, as exp(bound) - 1
};
[[nodiscard]] ratio_estimate ratio_interval(std::vector<std::int64_t> const& a,
                                            std::vector<std::int64_t> const& b, double level);

/// @brief Two-sided p-value of Student's t with `df` degrees of freedom: P(|T| >= |t|). `df`
/// may be fractional; above 1e7 (or infinite) the normal distribution is used.
[[nodiscard]] double student_two_sided_p(double t, double df) noexcept;

/// @brief The inverse of student_two_sided_p: the t with P(|T| >= t) = p (0 < p < 1).
[[nodiscard]] double student_two_sided_t(double p, double df) noexcept;

/// @brief Two groups of values (one value per run: a run's median, count or total, as logs)
/// compared by the difference of their means.
struct mean_difference {
  double diff = 0;  ///< mean(b) - mean(a)
  double se = 0;    ///< its standard error (0: both groups constant)
  double df = 0;    ///< degrees of freedom of the t statistic
  double p = 1;     ///< two-sided p-value (0 or 1 when se is 0: a difference or none)
  interval ci{};    ///< diff -/+ t se at the level asked for
};

/// @brief Student's two-sample t on `a` and `b` (2 or more values each), pooled variance,
/// size(a) + size(b) - 2 degrees of freedom. `level`: of the interval (0.99).
[[nodiscard]] mean_difference two_sample_t(std::vector<double> const& a,
                                           std::vector<double> const& b, double level);

/// @brief The pooled sample variance of `a` and `b` about their own means, and its degrees of
/// freedom (size(a) + size(b) - 2).
[[nodiscard]] std::pair<double, double> pooled_variance(std::vector<double> const& a,
                                                        std::vector<double> const& b);

/// @brief Benjamini-Hochberg: the adjusted p-values (q-values) of `p`, in the same order. An item
/// whose q is at most alpha is a discovery at false discovery rate alpha.
[[nodiscard]] std::vector<double> benjamini_hochberg(std::vector<double> const& p);

}  // namespace nvtxpp::capture::stats
