/// @file
/// @brief Keeps two live nvtxpp-capture processes off one trace file: the launcher that will
/// write a file holds an advisory lock on it (flock) from before the program starts until it
/// exits; a second launcher that finds the name locked writes a name of its own instead.
#pragma once

#include <string>

namespace nvtxpp::capture::cli {

/// @brief The trace file this launcher writes, locked for as long as the object lives.
class output_claim {
 public:
  /// @brief Claims `path`, or, when another live launcher holds it, the first free name of
  /// `path` with `.pid<pid>` (then `.pid<pid>-2`, ...) before its extension, said on stderr.
  /// Opening `path` creates it without truncating it, so the file of a launcher that holds it is
  /// never touched. A path that cannot be opened is returned unclaimed (the caller's open
  /// reports the error); a file system without locks leaves it unlocked (no guarantee there).
  static output_claim take(std::string const& path, long pid);

  output_claim() = default;
  output_claim(output_claim&& other) noexcept;
  output_claim& operator=(output_claim&& other) noexcept;
  output_claim(output_claim const&) = delete;
  output_claim& operator=(output_claim const&) = delete;
  ~output_claim();

  /// @brief The name to write.
  [[nodiscard]] std::string const& path() const noexcept { return path_; }
  /// @brief Whether the lock is held.
  [[nodiscard]] bool locked() const noexcept { return fd_ >= 0; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace nvtxpp::capture::cli
