/// @file
/// @brief Where `nvtxpp-capture top` gets its rows: a program running under the flight recorder,
/// attached to by PID through the launcher's request directory (flight/flight_control.hpp, as
/// `dump PID`: same user only), or launched under a launcher of our own. Either way it follows
/// the program's rings itself with the flight recorder's watcher (flight/flight_watch.hpp) and
/// feeds the live table (analyses/live_table.hpp); it only reads them: the program and its
/// launcher go on as if nobody watched.
#pragma once

#include "../analyses/live_table.hpp"

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nvtxpp::capture {

class flight_watch;

namespace live {

/// @brief What the header of a table says about the program.
struct program_state {
  std::uint32_t pid = 0;
  std::string command;
  std::int64_t start_ns = 0;       ///< its recording's start (CLOCK_MONOTONIC ns)
  std::uint64_t dropped = 0;       ///< records its rings refused (too large)
  std::uint64_t lapped_bytes = 0;  ///< ring bytes overwritten before top read them
  std::size_t processes = 0;       ///< processes followed
  bool ended = false;
  std::int64_t refresh_ns = 0;  ///< how long the last snapshot took to compute (top's own cost)
  double top_cpu_s = 0;         ///< top's own CPU time so far (user and system)
};

/// @brief One program watched.
class top_source {
 public:
  /// @param options the table's window and slices
  explicit top_source(live_options options);
  ~top_source();
  top_source(top_source const&) = delete;
  top_source& operator=(top_source const&) = delete;

  /// @brief Attaches to process `pid` (the program or any process of it, or its launcher).
  /// @return false when it cannot (another user's process, no process, no recorder, an
  /// untrusted directory), said on stderr
  [[nodiscard]] bool attach(long pid);

  /// @brief Starts `program` under `nvtxpp-capture [capture_options] --flight-recorder ...`
  /// (this executable; --flight-recorder=64MB unless the options give one). `output_to`: a new
  /// file for the launcher's and the program's stdout and stderr (the terminal belongs to the
  /// screen then; stdin is /dev/null), "" to leave them.
  /// @return false when it cannot, said on stderr; `status` then holds the exit status to give
  [[nodiscard]] bool launch(std::vector<std::string> const& capture_options,
                            std::vector<std::string> const& program, std::string const& output_to,
                            int* status);

  /// @brief Reads what the rings gained; notices the program's end.
  void poll();

  /// @brief The rows of the window ending now (the program's end once it ended).
  [[nodiscard]] live_snapshot snapshot(bool by_thread);

  /// @brief The program, as the header shows it.
  [[nodiscard]] program_state state() const;

  /// @brief Whether the program has ended (all its processes; a launch: its launcher said so).
  [[nodiscard]] bool ended() const noexcept { return ended_; }

  /// @brief A launch: lets the launcher finish (clean up, exit) and waits for it.
  /// @return its wait status (-1 when there is none: attached)
  int finish();

  /// @brief The launcher's pid (a launch), else 0.
  [[nodiscard]] pid_t launcher() const noexcept { return launcher_; }

 private:
  /// Follows `raw_dir` (checked: a real directory of this user, closed to others' writes).
  bool follow(std::string const& raw_dir);
  void read_channel();
  [[nodiscard]] std::int64_t now_ns() const;

  live_options options_;
  std::unique_ptr<live_table> table_;
  std::unique_ptr<flight_watch> watch_;
  std::string raw_dir_;
  std::uint32_t program_ = 0;
  pid_t launcher_ = 0;
  int channel_ = -1;  ///< a launch: the launcher's side channel (read end)
  std::string channel_text_;
  bool launcher_done_ = false;  ///< the launcher said the program ended
  int launcher_status_ = -1;
  bool ended_ = false;
  std::int64_t ended_ns_ = 0;
  std::int64_t refresh_ns_ = 0;
};

}  // namespace live
}  // namespace nvtxpp::capture
