// merge's cross-rank summary (cross_rank_summary.hpp).

#include "cross_rank_summary.hpp"

#include "stats.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nvtxpp::capture {

namespace {

std::string grouped(std::int64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > (v < 0 ? 1 : 0); i -= 3) {
    s.insert(static_cast<std::size_t>(i), ",");
  }
  return s;
}

std::string grouped(double v) {
  auto const whole = static_cast<std::int64_t>(v);
  auto tenth = static_cast<int>(std::llround((v - static_cast<double>(whole)) * 10.0));
  std::int64_t w = whole;
  if (tenth == 10) {
    ++w;
    tenth = 0;
  }
  return grouped(w) + "." + std::to_string(tenth);
}

text_table make_table(std::string title, cross_rank_summary::table_data const& data) {
  text_table t;
  t.title = std::move(title);
  t.header = {"Range",    "Style",    "Ranks",    "Instances", "Min (ns)",
              "Med (ns)", "Max (ns)", "Max Rank", "Mean (ns)", "Imbalance"};
  t.left = {true, true, false, false, false, false, false, false, false, false};
  struct row {
    std::string const* range;
    bool push_pop;
    std::size_t ranks;
    std::uint64_t instances;
    std::int64_t min, max;
    double med, mean;
    long max_rank;
  };
  std::vector<row> rows;
  for (auto const& [key, cells] : data) {
    std::vector<std::int64_t> totals;
    row r{&key.first, key.second, cells.size(), 0, INT64_MAX, INT64_MIN, 0, 0, 0};
    double sum = 0;
    for (auto const& c : cells) {
      totals.push_back(c.total_ns);
      r.instances += c.instances;
      sum += static_cast<double>(c.total_ns);
      r.min = std::min(r.min, c.total_ns);
      if (c.total_ns > r.max || (c.total_ns == r.max && c.rank < r.max_rank)) {
        r.max = c.total_ns;
        r.max_rank = c.rank;
      }
    }
    std::sort(totals.begin(), totals.end());
    r.med = stats::median_sorted(totals);
    r.mean = sum / static_cast<double>(totals.size());
    rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](row const& a, row const& b) {
    return a.max != b.max ? a.max > b.max : *a.range < *b.range;
  });
  for (auto const& r : rows) {
    double const imbalance = r.mean > 0 ? static_cast<double>(r.max) / r.mean : 1.0;
    char const* style = r.push_pop ? "PushPop" : "StartEnd";
    t.rows.push_back({*r.range, style, std::to_string(r.ranks),
                      grouped(static_cast<std::int64_t>(r.instances)), grouped(r.min),
                      grouped(r.med), grouped(r.max), std::to_string(r.max_rank), grouped(r.mean),
                      fmt::format("{:.2f}", imbalance)});
    t.csv_rows.push_back({*r.range, style, std::to_string(r.ranks), std::to_string(r.instances),
                          std::to_string(r.min), fmt::format("{:.1f}", r.med),
                          std::to_string(r.max), std::to_string(r.max_rank),
                          fmt::format("{:.1f}", r.mean), fmt::format("{:.4f}", imbalance)});
  }
  return t;
}

/// The ranges whose slowest instance is on one rank, at least twice the median of the other
/// ranks' slowest instances: "step: slowest instance on rank 2, 1,014,566,000 ns (412.3x)".
std::vector<std::string> standouts(cross_rank_summary::table_data const& data) {
  std::vector<std::pair<double, std::string>> found;
  for (auto const& [key, cells] : data) {
    if (cells.size() < 2) {
      continue;
    }
    auto const top = std::max_element(cells.begin(), cells.end(), [](auto const& a, auto const& b) {
      return a.longest_ns < b.longest_ns || (a.longest_ns == b.longest_ns && a.rank > b.rank);
    });
    std::vector<std::int64_t> others;
    for (auto const& c : cells) {
      if (&c != &*top) {
        others.push_back(c.longest_ns);
      }
    }
    std::sort(others.begin(), others.end());
    std::size_t const n = others.size();
    double const med =
        n % 2 == 1
            ? static_cast<double>(others[n / 2])
            : (static_cast<double>(others[n / 2 - 1]) + static_cast<double>(others[n / 2])) / 2.0;
    double const ratio = med > 0 ? static_cast<double>(top->longest_ns) / med : 0;
    if (med > 0 && ratio >= 2.0) {
      found.emplace_back(ratio, fmt::format("{}: slowest instance on rank {}, {} ns ({:.1f}x the "
                                            "other ranks' median slowest)",
                                            key.first, top->rank, grouped(top->longest_ns), ratio));
    }
  }
  std::sort(found.begin(), found.end(),
            [](auto const& a, auto const& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < found.size() && i < 10; ++i) {
    out.push_back(found[i].second);
  }
  return out;
}

}  // namespace

void cross_rank_summary::add(long rank, summary_sink const& per_rank) {
  ++ranks_;
  for (auto const& r : per_rank.range_totals()) {
    ranges_[{r.range, r.push_pop}].push_back({rank, r.instances, r.total_ns, r.longest_ns});
  }
  if (double const share = per_rank.gpu_sampled_share(); share >= 0) {
    sampled_.push_back(share);
  }
  if (per_rank.has_gpu()) {
    gpu_ = true;
    for (auto const& r : per_rank.projection_totals()) {
      projections_[{r.range, r.push_pop}].push_back({rank, r.instances, r.total_ns, r.longest_ns});
    }
  }
}

void cross_rank_summary::print(std::FILE* out, summary_options const& options) const {
  auto const ranges = make_table(
      fmt::format("Cross-rank NVTX Range Summary ({} rank(s); per-rank total time)", ranks_),
      ranges_);
  print_text_table(out, ranges, options.csv, options.name_width, true);
  if (ranges.rows.empty() && !options.csv) {
    std::fputs("\n (no NVTX ranges recorded)\n", out);
  }
  if (!options.csv) {
    for (auto const& line : standouts(ranges_)) {
      std::fprintf(out, " %s\n", line.c_str());
    }
  }
  if (gpu_) {
    // Sampled ranks' GPU numbers cover their periods only: said in the title, never silent.
    std::string const sampled =
        sampled_.empty() ? std::string{}
                         : fmt::format(
                               " - GPU detail in sampled periods only on {} rank(s) ({:.1f}% to "
                               "{:.1f}% of their time)",
                               sampled_.size(), *std::min_element(sampled_.begin(), sampled_.end()),
                               *std::max_element(sampled_.begin(), sampled_.end()));
    auto const proj =
        make_table(fmt::format("Cross-rank NVTX GPU Projection Summary ({} rank(s); per-rank total "
                               "projected time){}",
                               ranks_, sampled),
                   projections_);
    print_text_table(out, proj, options.csv, options.name_width, false);
  }
}

}  // namespace nvtxpp::capture
