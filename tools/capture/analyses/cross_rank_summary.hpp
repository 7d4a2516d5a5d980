/// @file
/// @brief merge's cross-rank summary: per range, how its total time spreads over the ranks
/// (which rank is the slow one), and the same for each range's GPU projection.
#pragma once

#include "summary.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

/// @brief Collects one summary per rank and prints the cross-rank tables.
///
/// Per range (domain:name and style): Ranks (how many ranks have it), Instances (over all
/// ranks), the per-rank total time's Min, Med (the middle rank, or the mean of the middle two),
/// Max and Mean over the ranks that have it, Max Rank (the rank with the largest total; the
/// lowest such rank on a tie) and Imbalance (Max / Mean: 1.00 is perfectly balanced). The GPU
/// table does the same with each rank's total projected time (nvtx_gpu_proj_sum's). Below the
/// range table, the ranges whose slowest instance stands out (at least twice the median of the
/// other ranks' slowest) name that instance's rank: one slow step on one rank, which the totals
/// hide when the other ranks spent the same time waiting for it.
class cross_rank_summary {
 public:
  /// @brief Adds one rank's totals (read from its summary).
  void add(long rank, summary_sink const& per_rank);
  /// @brief Prints the range table and, with GPU data, the projection table.
  void print(std::FILE* out, summary_options const& options) const;

  /// @brief One per-rank total of a range.
  struct cell {
    long rank = 0;
    std::uint64_t instances = 0;
    std::int64_t total_ns = 0;
    std::int64_t longest_ns = 0;
  };
  using table_data = std::map<std::pair<std::string, bool>, std::vector<cell>>;

 private:
  table_data ranges_;
  table_data projections_;
  std::size_t ranks_ = 0;
  bool gpu_ = false;
  std::vector<double> sampled_;  ///< the sampled ranks' shares of time with GPU detail (%)
};

}  // namespace nvtxpp::capture
