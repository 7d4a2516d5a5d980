/// @file
/// @brief The inputs of `nvtxpp-capture merge`: SQLite files in Nsight Systems' export layout
/// (ours, or `nsys export --type sqlite`), checked and described before anything is written.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvtxpp::capture {

/// @brief An input that cannot be merged (not SQLite, truncated, damaged, foreign tables); the
/// message starts with the file's name.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief An open SQLite connection, closed on destruction.
struct sqlite_db_closer {
  void operator()(sqlite3* db) const noexcept { sqlite3_close(db); }
};
using sqlite_db = std::unique_ptr<sqlite3, sqlite_db_closer>;

/// @brief A prepared statement over one input; every failure is an input_error naming it.
class input_query {
 public:
  input_query(sqlite3* db, std::string const& path, char const* sql);
  ~input_query();
  input_query(input_query&& other) noexcept
      : s_{std::exchange(other.s_, nullptr)}, db_{other.db_}, path_{other.path_} {}
  input_query(input_query const&) = delete;
  input_query& operator=(input_query const&) = delete;
  input_query& operator=(input_query&&) = delete;
  /// @brief Binds an integer parameter (1-based).
  void bind(int index, std::int64_t value);
  /// @brief Steps; false at the end. @throws input_error on SQLite errors (a damaged page).
  [[nodiscard]] bool next();
  [[nodiscard]] bool null(int col) const noexcept;
  [[nodiscard]] std::int64_t i64(int col) const noexcept;
  [[nodiscard]] double f64(int col) const noexcept;
  /// @brief Text of a column ("" for NULL), valid until the next step.
  [[nodiscard]] std::string_view text(int col) const noexcept;

 private:
  sqlite3_stmt* s_ = nullptr;
  sqlite3* db_;
  std::string const* path_;
};

/// @brief One process of an input that has events, with the id it gets in the merged trace.
///
/// Events: NVTX ranges and marks, CUDA API calls and counter samples (each on a thread), GPU
/// work (kernels, copies, memsets, synchronisations: on the process).
struct input_process {
  std::uint32_t pid = 0;      ///< pid as recorded (bits 24..47 of globalPid/globalTid)
  std::uint32_t new_pid = 0;  ///< pid in the merged trace (== pid unless another input has it)
  std::string name;           ///< PROCESSES.name ("" if none)
  std::string label;          ///< the merged trace's process name: rank, host, pid, name
  std::vector<std::uint32_t> tids;  ///< its threads with events (bits 0..23), sorted

  /// @brief Whether thread `tid` (bits 0..23 of a globalTid) has events.
  [[nodiscard]] bool has_thread(std::uint32_t tid) const noexcept;
};

/// @brief What merge needs to know about one input before reading its events.
struct merge_input {
  std::string path;       ///< the input as given: named in messages, ranks from its name
  std::string db_path;    ///< the SQLite file read: `path`, or a JSON input's (merge_json.hpp)
  std::size_t order = 0;  ///< position on the command line
  std::int64_t anchor_utc_ns = 0;  ///< TARGET_INFO_SESSION_START_TIME.utcEpochNs
  std::int64_t shift_ns = 0;       ///< added to its times: anchor - the merged trace's anchor
  long rank = -1;
  std::string rank_source;  ///< "OMPI_COMM_WORLD_RANK", "file name" or "input order"
  std::string host;         ///< "" when the file does not say
  bool has_rank_meta = false;
  std::vector<input_process> processes;  ///< those with events, by pid
  /// Processes the input lists (PROCESSES) without any event: an nsys export lists every
  /// process of the machine. Left out of the merged trace.
  std::size_t empty_processes = 0;
  /// Named threads (ThreadNames, NVTX thread names) without any event; left out.
  std::size_t empty_threads = 0;
};

/// @brief Checks `path` (an SQLite file, complete, with the export layout's StringIds and
/// TARGET_INFO_SESSION_START_TIME) and reads its anchor, rank, host, and the processes and
/// threads that have events (one scan of each event table).
/// @throws input_error naming the file
[[nodiscard]] merge_input inspect_input(std::string const& path, std::size_t order);

/// @brief Opens `path` read-only. @throws input_error naming the file
[[nodiscard]] sqlite_db open_input(std::string const& path);

/// @brief Whether the open database has table `name` (in schema `schema`).
[[nodiscard]] bool has_table(sqlite3* db, std::string const& path, std::string const& name,
                             char const* schema = "main");

/// @brief Column names of a table, in order.
[[nodiscard]] std::vector<std::string> table_columns(sqlite3* db, std::string const& path,
                                                     std::string const& table,
                                                     char const* schema = "main");

/// @brief Gives every input a rank (metadata, else `.rankN.`/`rankN` in the file name, else
/// its position), pids that do not collide across inputs, and process labels; sets shift_ns
/// against the earliest anchor, which it returns.
std::int64_t assign_identities(std::vector<merge_input>& inputs);

}  // namespace nvtxpp::capture
