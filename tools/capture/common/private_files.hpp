/// @file
/// @brief Files in places other users share (/tmp, /dev/shm, $XDG_RUNTIME_DIR): the launcher's
/// rules, in one place. A directory is trusted only when it is a real directory (no symlink),
/// owned by this user and closed to everyone else; files there are made exclusively and never
/// through a symlink; a file is read only when it is a regular file of this user. Working
/// directories are locked by every process that uses them, so a later launcher can tell the
/// leftovers of killed runs (no holder) from directories in use, and remove only those.
#pragma once

#include <sys/types.h>

#include <string>

namespace nvtxpp::capture::cli {

/// @brief What is wrong with `dir` as a private directory ("" when nothing): not there, a
/// symlink, not a directory, owned by another user, open to the group or others.
[[nodiscard]] std::string private_dir_problem(std::string const& dir);

/// @brief Makes `dir` (mode 0700) unless it exists, then checks it as private_dir_problem does.
/// @return "" when it can be trusted, else what is wrong with it (nothing was written in it)
[[nodiscard]] std::string ensure_private_dir(std::string const& dir);

/// @brief Writes `text` to `path` whole: a new file (O_EXCL, no symlink followed, mode 0600)
/// beside it, then renamed over `path`. Only for directories checked private. @return success
bool write_new_file(std::string const& path, std::string const& text);

/// @brief Reads `path` when it is a regular file owned by this user (no symlink followed).
/// @return false with `why` set otherwise (the file is left as it is)
bool read_own_file(std::string const& path, std::string* text, std::string* why);

/// @brief Removes `dir` and everything below it, never following a symlink.
void remove_tree(std::string const& dir);

/// @brief Takes a shared lock on directory `dir` for as long as the returned descriptor is
/// open (close-on-exec). @return the descriptor, or -1
[[nodiscard]] int hold_dir(std::string const& dir);

/// @brief Marks working directory `dir` as kept on purpose (a raw recording left for a later
/// `--convert`): remove_abandoned leaves it alone.
void mark_kept(std::string const& dir);

/// @brief Removes this user's working directories in `parent` whose names start with `prefix`
/// and that no process holds any more (hold_dir), nor names as a living process (directories of
/// older versions, which held no lock), made more than `min_age_s` seconds ago, and not marked
/// kept (mark_kept). Only names of the prefix and six characters (mkdtemp's) unless `any_suffix`.
/// @return how many were removed
int remove_abandoned(std::string const& parent, std::string const& prefix, int min_age_s,
                     bool any_suffix = false);

}  // namespace nvtxpp::capture::cli
