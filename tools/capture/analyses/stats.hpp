/// @file
/// @brief The statistics the analyses over traces share (the summary at exit, merge's
/// cross-rank summary, `nvtxpp-capture diff`, `top`'s live table): medians, the Mann-Whitney U
/// test, and the interval of the change that goes with it (Hodges-Lehmann / Moses), and a
/// histogram of durations for quantiles of streams too long to keep. One room, so every table
/// computes a median the same way.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
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

/// @brief Durations (non-negative integers; ns) in log buckets, for quantiles of streams too
/// long to keep (`top`'s rows: millions of ranges a second). Values 0..31 have a bucket each;
/// above, 16 buckets a power of two, each within 1/16 of its lower edge. A bucket keeps the sum
/// of its values, and a quantile is its bucket's mean: within 3% of the value, exact when the
/// values in the bucket are equal (a step that always takes 6 ms). Buckets are a sorted list
/// while few values came; after 64, the 128 buckets around their median are counted in place
/// (1.5 KiB; add() is then an index and two additions).
class log_histogram {
 public:
  log_histogram() = default;
  log_histogram(log_histogram&&) noexcept = default;
  log_histogram& operator=(log_histogram&&) noexcept = default;
  log_histogram(log_histogram const& o);
  log_histogram& operator=(log_histogram const& o);
  ~log_histogram() = default;

  /// @brief The bucket of `value` (negative values count as 0).
  [[nodiscard]] static std::uint16_t bucket_of(std::int64_t value) noexcept {
    if (value < 32) {
      return static_cast<std::uint16_t>(value < 0 ? 0 : value);
    }
    int const e = 63 - __builtin_clzll(static_cast<unsigned long long>(value));
    return static_cast<std::uint16_t>(32 + (e - 5) * 16 +
                                      static_cast<int>((value >> (e - 4)) & 15));
  }

  /// @brief Counts one value.
  void add(std::int64_t value) {
    std::uint16_t const b = bucket_of(value);
    if (dense_) {
      auto const i = static_cast<unsigned>(b - dense_->base);
      if (i < dense_buckets) {
        ++dense_->count[i];
        dense_->sum[i] += value;
        return;
      }
    }
    add_listed(b, value);
  }

  /// @brief Adds what `o` counted.
  void merge(log_histogram const& o);

  /// @brief The nearest-rank p-quantile (p in 0..1): the mean of its bucket's values; 0 when
  /// empty.
  [[nodiscard]] double quantile(double p) const;

 private:
  struct bin {
    std::uint16_t bucket;
    std::uint64_t count;
    std::int64_t sum;
  };
  static constexpr unsigned dense_buckets = 128;
  static constexpr std::uint32_t dense_after = 64;
  struct dense {
    std::uint16_t base = 0;
    std::array<std::uint32_t, dense_buckets> count{};
    std::array<std::int64_t, dense_buckets> sum{};
  };

  void add_listed(std::uint16_t b, std::int64_t value);
  void make_dense();
  /// Every bucket with a count, in order.
  [[nodiscard]] std::vector<bin> sorted() const;

  std::vector<bin> bins_;  ///< sorted by bucket: those not counted in place
  std::unique_ptr<dense> dense_;
  std::uint32_t adds_ = 0;
};

}  // namespace nvtxpp::capture::stats
