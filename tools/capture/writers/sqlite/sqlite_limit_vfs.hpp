/// @file
/// @brief A VFS over SQLite's default one whose writes fail with SQLITE_FULL past a byte budget:
/// the NVTXPP_CAPTURE_FAIL_WRITE_AFTER test hook, so the disk-full path is testable anywhere.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace nvtxpp::capture {

/// @brief One such VFS: `budget` bytes may be written through it, then writes fail.
struct limit_vfs {
  sqlite3_vfs vfs{};
  sqlite3_vfs* real = nullptr;
  std::string name;  ///< set before init_limit_vfs: the name it is registered under
  std::uint64_t budget = 0;
  std::uint64_t written = 0;
};

/// @brief Fills `v.vfs` over SQLite's default VFS (register it with sqlite3_vfs_register).
void init_limit_vfs(limit_vfs& v);

}  // namespace nvtxpp::capture
