/// @file
/// @brief Keeps the flight recorder's rings nameless while they are in use. Each process of the
/// program makes its ring (and call table) as a named file in the ring directory; the launcher
/// opens each one it finds, removes its name, and points the raw directory's link at its own
/// descriptor (`/proc/<launcher>/fd/N`). From then on the pages belong only to the processes
/// that map or hold the file: when the launcher and the program are both killed, nothing is
/// left in /dev/shm, and while the launcher lives it still reads the window of a program that
/// was SIGKILLed.
#pragma once

#include <string>
#include <vector>

namespace nvtxpp::capture::cli {

/// @brief The launcher's descriptors of the rings it took over.
class ring_keeper {
 public:
  /// @param ring_dir where the processes make their rings (/dev/shm/nvtxpp-flight-XXXXXX, or
  ///   the raw directory itself when /dev/shm was not writable)
  /// @param raw_dir the raw directory, where the readers look for `nvtxpp-<pid>.ring`
  ring_keeper(std::string ring_dir, std::string raw_dir);
  ~ring_keeper();
  ring_keeper(ring_keeper const&) = delete;
  ring_keeper& operator=(ring_keeper const&) = delete;

  /// @brief Takes over the rings and call tables made since the last call. @return how many
  int adopt();

  /// @brief Gives the held files their names back, as copies (sparse) in the ring directory
  /// with the raw directory's links pointing at them: for a raw recording kept after a failed
  /// dump, which must outlive this launcher. @return how many could not be copied
  int restore();

 private:
  std::string ring_dir_;
  std::string raw_dir_;
  struct held_file {
    int fd;
    std::string name;
  };
  std::vector<held_file> files_;
};

}  // namespace nvtxpp::capture::cli
