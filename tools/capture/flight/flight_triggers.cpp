// The flight recorder's triggers as the watcher measures them (flight_triggers.hpp).

#include "flight_triggers.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nvtxpp::capture {

void running_median::add(std::int64_t v) {
  order_.push_back(v);
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), v), v);
  if (order_.size() > median_window) {
    auto const old = order_.front();
    order_.pop_front();
    sorted_.erase(std::lower_bound(sorted_.begin(), sorted_.end(), old));
  }
}

std::int64_t running_median::median() const noexcept {
  if (sorted_.empty()) {
    return 0;
  }
  std::size_t const n = sorted_.size();
  return n % 2 == 1 ? sorted_[n / 2] : (sorted_[n / 2 - 1] + sorted_[n / 2]) / 2;
}

/// Up to this many exact names are compared in turn rather than hashed.
constexpr std::size_t max_compared_names = 4;

trigger_set::trigger_set(std::vector<watch_trigger> triggers) {
  triggers_.reserve(triggers.size());
  for (auto& t : triggers) {
    name_pattern range{t.range};
    name_pattern domain{t.domain};
    auto const i = static_cast<std::uint32_t>(triggers_.size());
    if (range.is_literal()) {
      exact_[range.literal()].push_back(i);
    } else {
      patterns_.push_back(i);
    }
    triggers_.push_back({std::move(t), std::move(range), std::move(domain), {}, 0, 0});
  }
  if (exact_.size() <= max_compared_names) {
    few_.assign(exact_.begin(), exact_.end());
    exact_.clear();
  }
}

std::vector<std::uint32_t> const* trigger_set::exact(std::string const& name) const {
  for (auto const& [n, hits] : few_) {
    if (n == name) {
      return &hits;
    }
  }
  if (exact_.empty()) {
    return nullptr;
  }
  auto const it = exact_.find(name);
  return it != exact_.end() ? &it->second : nullptr;
}

std::vector<std::uint32_t> const& trigger_set::match_slowly(std::string const& name) {
  if (patterns_.empty()) {
    auto const* hits = exact(name);
    return hits != nullptr ? *hits : none_;
  }
  if (auto const it = cache_.find(name); it != cache_.end()) {
    return it->second;
  }
  // First time this name ends: its exact triggers and the patterns it matches, in the order
  // given.
  std::vector<std::uint32_t> hits;
  if (auto const* e = exact(name)) {
    hits = *e;
  }
  for (std::uint32_t i : patterns_) {
    if (triggers_[i].range.matches(name)) {
      hits.push_back(i);
    }
  }
  std::sort(hits.begin(), hits.end());
  if (cache_.size() >= max_cached_names) {
    cache_.clear();
  }
  return cache_.emplace(name, std::move(hits)).first->second;
}

std::string trigger_set::measure(std::size_t i, std::int64_t dur) {
  state& t = triggers_[i];
  ++t.seen;
  std::string why;
  auto const ms = [](std::int64_t ns) { return static_cast<double>(ns) / 1e6; };
  if (t.spec.bound_ns > 0 && dur > t.spec.bound_ns) {
    why = fmt::format("took {:.3f} ms, more than {:.3f} ms", ms(dur), ms(t.spec.bound_ns));
  } else if (t.spec.factor > 0 && t.median.size() >= min_median_instances &&
             static_cast<double>(dur) > t.spec.factor * static_cast<double>(t.median.median())) {
    why = fmt::format("took {:.3f} ms, {:.1f}x the median {:.3f} ms of its {} earlier instance(s)",
                      ms(dur),
                      static_cast<double>(dur) /
                          static_cast<double>(std::max<std::int64_t>(1, t.median.median())),
                      ms(t.median.median()), t.median.size());
  }
  t.median.add(dur);
  if (!why.empty()) {
    ++t.fired;
  }
  return why;
}

std::vector<std::string> trigger_set::never_seen() const {
  std::vector<std::string> out;
  for (auto const& t : triggers_) {
    if (t.seen != 0) {
      continue;
    }
    out.push_back(t.range.is_literal()
                      ? "trigger '" + t.spec.text + "': range \"" + t.range.literal() +
                            "\" never ended in the program (no instance seen)"
                      : "trigger '" + t.spec.text + "': no range matching '" + t.spec.range +
                            "' ended in the program (no instance seen)");
  }
  return out;
}

}  // namespace nvtxpp::capture
