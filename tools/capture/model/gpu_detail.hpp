/// @file
/// @brief The sampled GPU mode in the trace model (--cuda-sample; docs/leave-it-on-gpu.md): the
/// periods a process recorded GPU activity in, read from its `gpu_sample` and `gpu_detail` info
/// records (recording/gpu_format.hpp), and how the outputs mark them: ranges of a domain of our
/// own, `nvtxpp-capture`, named `GPU detail: sampled` or `GPU detail: raised` (a trigger's
/// raise), which every format keeps and every reader gives back, so the summary knows what its
/// GPU tables cover from any trace of ours.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

/// @brief The domain of the periods' ranges, and its index in each process (out of NVTX's way).
inline constexpr std::string_view gpu_detail_domain = "nvtxpp-capture";
inline constexpr std::uint32_t gpu_detail_domain_index = 0x7FFF'FF00U;
inline constexpr std::string_view gpu_detail_prefix = "GPU detail: ";
inline constexpr std::string_view gpu_detail_sampled = "GPU detail: sampled";
inline constexpr std::string_view gpu_detail_raised = "GPU detail: raised";
/// @brief The periods' start/end range ids (NVTX's own count up from 1).
inline constexpr std::uint64_t gpu_detail_range_id = 0x4000'0000'0000ULL;

/// @brief Whether a range is one of the periods' marks.
[[nodiscard]] inline bool is_gpu_detail_range(std::string_view domain,
                                              std::string_view name) noexcept {
  return domain == gpu_detail_domain &&
         name.substr(0, gpu_detail_prefix.size()) == gpu_detail_prefix;
}

/// @brief One process's sampled periods, on CUPTI's clock (CLOCK_MONOTONIC ns).
class gpu_detail_periods {
 public:
  struct period {
    std::int64_t start;
    std::int64_t end;  ///< INT64_MAX while open
    bool raised;
  };

  /// @brief Takes one info record (key, value); ignores others. False for a malformed edge.
  bool on_info(std::string_view key, std::string_view value) {
    if (key == "gpu_sample") {
      sampled_ = true;
      return true;
    }
    if (key == "gpu_window") {
      set_window(value);
      return true;
    }
    if (key != "gpu_detail") {
      return true;
    }
    sampled_ = true;
    bool const on = value.substr(0, 3) == "on:";
    if (!on && value.substr(0, 4) != "off:") {
      return false;
    }
    std::string_view rest = value.substr(on ? 3 : 4);
    std::int64_t const t =
        std::strtoll(std::string{rest.substr(0, rest.find(':'))}.c_str(), nullptr, 10);
    if (std::size_t const last = rest.rfind(':'); last != std::string_view::npos) {
      std::int64_t const took =
          std::strtoll(std::string{rest.substr(last + 1)}.c_str(), nullptr, 10);
      if (took > 0) {
        (on ? switch_on_ns_ : switch_off_ns_).push_back(took);
      }
    }
    if (on) {
      bool const raised = rest.find(":raise") != std::string_view::npos;
      if (!periods_.empty() && periods_.back().end == open) {
        if (periods_.back().raised == raised) {
          return true;  // the same period
        }
        periods_.back().end = t;  // a raise inside a period (or the period after it): split
      }
      periods_.push_back({t, open, raised});
    } else if (!periods_.empty() && periods_.back().end == open) {
      periods_.back().end = std::max(t, periods_.back().start);
    }
    return true;
  }

  /// @brief A flight recorder's window (`gpu_window=FROM:UNTIL`, 0 for no bound): the periods
  /// are marked inside it only.
  void set_window(std::string_view value) {
    std::size_t const colon = value.find(':');
    from_ = std::strtoll(std::string{value.substr(0, colon)}.c_str(), nullptr, 10);
    if (colon != std::string_view::npos) {
      std::int64_t const until =
          std::strtoll(std::string{value.substr(colon + 1)}.c_str(), nullptr, 10);
      until_ = until > 0 ? until : open;
    }
  }

  /// @brief The periods inside the window (all of them without one), cut to it.
  [[nodiscard]] std::vector<period> in_window() const {
    std::vector<period> out;
    for (auto p : periods_) {
      p.start = std::max(p.start, from_);
      p.end = std::min(p.end, until_);
      if (p.start < p.end) {
        out.push_back(p);
      }
    }
    return out;
  }

  /// @brief Closes a period still open at `end_ns` (the process's end).
  void close(std::int64_t end_ns) {
    if (!periods_.empty() && periods_.back().end == open) {
      periods_.back().end = std::max(end_ns, periods_.back().start);
    }
  }

  /// @brief The process ran with --cuda-sample.
  [[nodiscard]] bool sampled() const noexcept { return sampled_; }

  /// @brief Whether `t` lies in a period ([start, end): the edge rule of docs/leave-it-on-gpu.md).
  [[nodiscard]] bool contains(std::int64_t t) const noexcept {
    auto it = std::upper_bound(periods_.begin(), periods_.end(), t,
                               [](std::int64_t x, period const& p) { return x < p.start; });
    return it != periods_.begin() && t < std::prev(it)->end;
  }

  [[nodiscard]] std::vector<period> const& periods() const noexcept { return periods_; }

  /// @brief How long CUPTI took to switch on and off (ns, as the process measured each switch).
  [[nodiscard]] std::vector<std::int64_t> const& switch_on_ns() const noexcept {
    return switch_on_ns_;
  }
  [[nodiscard]] std::vector<std::int64_t> const& switch_off_ns() const noexcept {
    return switch_off_ns_;
  }

 private:
  static constexpr std::int64_t open = INT64_MAX;
  std::vector<period> periods_;  // by start (edges come in time order)
  std::vector<std::int64_t> switch_on_ns_;
  std::vector<std::int64_t> switch_off_ns_;
  bool sampled_ = false;
  std::int64_t from_ = 0;
  std::int64_t until_ = open;
};

/// @brief A process's capture window (--delay, --duration, --capture-range), on CUPTI's clock,
/// from its `gpu_capture=on:<ns>` / `gpu_capture=off:<ns>` info records. CUPTI's records of the
/// driver launch functions stay on outside the window (switched off, CUPTI would not record them
/// again), so the readers keep only the API calls that started while the window was open.
class capture_window_spans {
 public:
  /// @brief Takes the value of one `gpu_capture` record; false when malformed.
  bool on_edge(std::string_view value) {
    bool const on = value.substr(0, 3) == "on:";
    if (!on && value.substr(0, 4) != "off:") {
      return false;
    }
    std::int64_t const t = std::strtoll(std::string{value.substr(on ? 3 : 4)}.c_str(), nullptr, 10);
    any_ = true;
    bool const is_open = !spans_.empty() && spans_.back().second == open;
    if (on && !is_open) {
      spans_.emplace_back(t, open);
    } else if (!on && is_open) {
      spans_.back().second = std::max(t, spans_.back().first);
    }
    return true;
  }

  /// @brief Whether the process had a capture window (its calls are then filtered).
  [[nodiscard]] bool any() const noexcept { return any_; }

  /// @brief Whether `t` lies in a span the window was open ([start, end)).
  [[nodiscard]] bool contains(std::int64_t t) const noexcept {
    auto it = std::upper_bound(
        spans_.begin(), spans_.end(), t,
        [](std::int64_t x, std::pair<std::int64_t, std::int64_t> const& s) { return x < s.first; });
    return it != spans_.begin() && t < std::prev(it)->second;
  }

 private:
  static constexpr std::int64_t open = INT64_MAX;
  std::vector<std::pair<std::int64_t, std::int64_t>> spans_;  // by start
  bool any_ = false;
};

}  // namespace nvtxpp::capture
