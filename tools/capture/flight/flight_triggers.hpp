/// @file
/// @brief The flight recorder's triggers as the launcher's watcher (flight_watch.hpp) measures
/// them: which triggers a range that ended belongs to, the running median of each, and whether
/// an instance fires one. A trigger's range and domain are names or shell-style patterns
/// (name_pattern.hpp); the instances of a pattern are one series (`Train step *`: one running
/// median over every numbered step). Exact names are compared (a few) or found in a hash map; a
/// name is matched against the patterns once, and the triggers it belongs to are kept with it,
/// so the end of a range costs a few compares or a hash lookup or two, whatever the triggers.
#pragma once

#include "../common/name_pattern.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

/// @brief One trigger (as flight_options' trigger_spec, without the command line's types).
struct watch_trigger {
  std::string text;
  std::string range;          ///< a name or pattern
  std::string domain;         ///< "" default domain; else a name or pattern ("*" any)
  double factor = 0;          ///< > 0: FACTORx
  std::int64_t bound_ns = 0;  ///< > 0: an absolute bound
};

/// @brief Instances of a FACTORx trigger's range needed before it can fire.
inline constexpr std::size_t min_median_instances = 10;
/// @brief Earlier instances the running median is taken over (the most recent ones).
inline constexpr std::size_t median_window = 1001;
/// @brief Names whose triggers are kept (past it the cache starts again: numbered names that
/// never repeat, `Train step 812345`, cost one match each and no memory past this).
inline constexpr std::size_t max_cached_names = 1U << 16U;

/// @brief Running median of the last `median_window` values.
class running_median {
 public:
  void add(std::int64_t v);
  [[nodiscard]] std::size_t size() const noexcept { return order_.size(); }
  [[nodiscard]] std::int64_t median() const noexcept;

 private:
  std::deque<std::int64_t> order_;
  std::vector<std::int64_t> sorted_;
};

/// @brief The triggers of one launch.
class trigger_set {
 public:
  trigger_set() = default;
  /// @throws std::invalid_argument for a malformed pattern (the launcher checked them before)
  explicit trigger_set(std::vector<watch_trigger> triggers);

  [[nodiscard]] bool empty() const noexcept { return triggers_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return triggers_.size(); }

  /// @brief The triggers (indices, in the order given) whose range `name` matches. Valid until
  /// the next call.
  [[nodiscard]] std::vector<std::uint32_t> const& matching(std::string_view name) {
    if (patterns_.empty() && exact_.empty()) {
      for (auto const& [n, hits] : few_) {  // the common case, inline: a few exact names
        if (n == name) {
          return hits;
        }
      }
      return none_;
    }
    return match_slowly(std::string{name});
  }

  /// @brief Whether trigger `i` watches `domain` (0: the default domain, whose name is "";
  /// `domain_name` "" when unknown).
  [[nodiscard]] bool domain_matches(std::size_t i, std::uint32_t domain,
                                    std::string_view domain_name) const {
    state const& t = triggers_[i];
    if (t.spec.domain.empty()) {
      return domain == 0;
    }
    return t.domain.matches(domain == 0 ? std::string_view{} : domain_name);
  }

  /// @brief Measures an instance of trigger `i` that took `dur_ns`: why it fires, or "".
  [[nodiscard]] std::string measure(std::size_t i, std::int64_t dur_ns);

  /// @brief Trigger `i` as given.
  [[nodiscard]] std::string const& text(std::size_t i) const { return triggers_[i].spec.text; }
  /// @brief Instances and firings of trigger `i` so far.
  [[nodiscard]] std::uint64_t seen(std::size_t i) const { return triggers_[i].seen; }
  [[nodiscard]] std::uint64_t fired(std::size_t i) const { return triggers_[i].fired; }
  /// @brief The running median of trigger `i` (ns).
  [[nodiscard]] running_median const& median(std::size_t i) const { return triggers_[i].median; }

  /// @brief Notes for the end: triggers whose range never ended.
  [[nodiscard]] std::vector<std::string> never_seen() const;

  /// @brief Names whose triggers are cached now (for tests).
  [[nodiscard]] std::size_t cached_names() const noexcept { return cache_.size(); }

 private:
  struct state {
    watch_trigger spec;
    name_pattern range;
    name_pattern domain;
    running_median median;
    std::uint64_t seen = 0;
    std::uint64_t fired = 0;
  };
  [[nodiscard]] std::vector<std::uint32_t> const& match_slowly(std::string const& name);
  /// The triggers of exact name `name`, or nullptr.
  [[nodiscard]] std::vector<std::uint32_t> const* exact(std::string const& name) const;

  std::vector<state> triggers_;
  /// Exact names: a few are compared in turn (cheaper than hashing the name: measured in
  /// bench/flight_trigger_bench.cpp), more are looked up in the map.
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> few_;
  std::unordered_map<std::string, std::vector<std::uint32_t>> exact_;
  std::vector<std::uint32_t> none_;
  std::vector<std::uint32_t> patterns_;  ///< triggers whose range is a pattern
  std::unordered_map<std::string, std::vector<std::uint32_t>> cache_;  ///< with patterns only
};

}  // namespace nvtxpp::capture
