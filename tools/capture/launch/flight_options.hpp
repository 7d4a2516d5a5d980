/// @file
/// @brief The flight recorder's options (docs/leave-it-on.md): `--flight-recorder=LIMIT`,
/// `--dump-on-exit`, `--trigger`, `--trigger-max`, `--trigger-cooldown`, `--hang-timeout`,
/// `--dump-scope`, and
/// the dump files' names. Parsed before the program starts: a bad value is exit 2.
#pragma once

#include "../common/option_parsing.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace nvtxpp::capture::cli {

/// @brief `RANGE[@DOMAIN]>FACTORx` or `RANGE[@DOMAIN]>DURATION`. RANGE and DOMAIN are names or
/// shell-style patterns (common/name_pattern.hpp: `Train step *`), split at the last '>' and
/// then at the last '@' that no '\' escapes.
struct trigger_spec {
  std::string text;           ///< as given
  std::string range;          ///< the range's name or pattern (escapes kept)
  std::string domain;         ///< "" the default domain; a name or pattern ("*" any)
  double factor = 0;          ///< > 0: times the running median of earlier instances
  std::int64_t bound_ns = 0;  ///< > 0: an absolute bound
};

/// @brief The flight recorder's settings.
struct flight_options {
  bool enabled = false;
  std::uint64_t ring_bytes = 0;  ///< the ring per process
  std::int64_t keep_ns = 0;      ///< a duration LIMIT: what a dump keeps (0: all the ring holds)
  bool dump_on_exit = true;      ///< at the program's normal end (signals always dump)
  std::vector<trigger_spec> triggers;
  std::uint32_t trigger_max = 10;
  std::int64_t cooldown_ns = 10'000'000'000;
  std::int64_t hang_ns = 0;  ///< 0: no hang report
  bool job_scope = false;    ///< --dump-scope=job: a dump on any rank dumps every rank
  /// --cuda-raise (gpu_sample_options.hpp, set by the launcher): GPU recording in full for this
  /// long after a dump that a trigger, hang or request started, then a dump of it (0: none).
  std::int64_t raise_ns = 0;

  /// @brief Takes `arg` if it is one of these options (`next` gives the value of the
  /// `--opt VALUE` form). @return false when it is not. @throws option_error naming the option.
  template <class Next>
  bool parse(std::string const& arg, Next&& next) {
    return parse_option(
        names, arg, next,
        [this](std::string const& name, std::string const& value) { set(name, value); });
  }

  /// @brief Checks the options together (the others need --flight-recorder). @throws option_error
  void validate() const;

 private:
  static constexpr char const* names[] = {
      "--flight-recorder",  "--dump-on-exit", "--trigger",   "--trigger-max",
      "--trigger-cooldown", "--hang-timeout", "--dump-scope"};
  void set(std::string const& name, std::string const& value);
  bool set_any_ = false;
};

/// @brief Ring bytes for a duration LIMIT (the ring is what bounds memory; a dump keeps only
/// the last LIMIT of it).
inline constexpr std::uint64_t duration_ring_bytes = 256ULL << 20U;

/// @brief `30s`, `5m`, `250ms`, `1h`, `2.5s`, `100us`, `10ns` in nanoseconds. @throws option_error
[[nodiscard]] std::int64_t parse_duration(std::string const& option, std::string const& value);

/// @brief `64MB`, `1GB`, `512KB`, `4096B` (also KiB/MiB/GiB, any case, powers of 1024 all) in
/// bytes. @return 0 when `value` is a duration (its unit is one: `5m`)
/// @throws option_error when malformed, without a unit, or with a unit of neither kind (`1TB`:
/// an unknown size unit)
[[nodiscard]] std::uint64_t parse_size(std::string const& option, std::string const& value);

/// @brief Parses a trigger. @throws option_error naming --trigger (and a malformed pattern)
[[nodiscard]] trigger_spec parse_trigger(std::string const& value);

/// @brief Marks the place of `%n` in an -o pattern so that it survives the pattern's expansion
/// (the other patterns are expanded before the program starts, %n at each dump).
[[nodiscard]] std::string protect_dump_number(std::string const& pattern);

/// @brief The name of dump `n` of the trace file `output` (already expanded): its `%n` mark
/// replaced by n, else `.dump<n>` before the extension (trace.dump1.sqlite).
[[nodiscard]] std::string dump_name(std::string const& output, unsigned n);

/// @brief The hang report's name beside the trace file `output`: its stem and `.stacks.txt`
/// (trace.rank3.json -> trace.rank3.stacks.txt).
[[nodiscard]] std::string stacks_name(std::string const& output);

}  // namespace nvtxpp::capture::cli
