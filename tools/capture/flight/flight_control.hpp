/// @file
/// @brief How `nvtxpp-capture dump PID` and `nvtxpp-capture stacks PID` reach the launcher that
/// records PID: each flight-recorder launcher has an entry in a request directory
/// ($XDG_RUNTIME_DIR, else /tmp, then nvtxpp-capture-<uid>/): `<launcher pid>.launcher` holding
/// its program's pid. A client drops `<launcher pid>.req.<client pid>` holding its verb; the
/// launcher answers in `<launcher pid>.ans.<client pid>` (written whole, then renamed).
///
/// Nothing there is trusted that another user could have made: the directory is used only when
/// it is a real directory of this user, mode 0700 (no fallback to anything weaker); files are
/// made exclusively, never through a symlink (private_files.hpp), and read only when they are
/// regular files of this user. Clients refuse processes of other users.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace nvtxpp::capture::cli {

/// @brief The request directory (made on first use, mode 0700), checked.
/// @return "" with `problem` saying which directory and what is wrong with it, when it cannot
/// be trusted
[[nodiscard]] std::string control_dir(std::string* problem);

/// @brief The request directory's name (as control_dir() would use it), neither made nor
/// checked.
[[nodiscard]] std::string control_dir_name();

/// @brief Removes from request directory `dir` the entries (`PID.launcher`, and the requests
/// and answers of that launcher) of launchers that no longer live, which a launcher killed
/// together with its program (SIGKILL) leaves behind. Nothing is done unless `dir` is a real
/// directory of this user, mode 0700; only regular files of this user, of mode 0600 or
/// narrower, named as entries are removed, never through a symlink; an entry whose pid is a
/// running nvtxpp-capture of this user (or a process that cannot be told apart) stays.
/// @return how many files were removed
int remove_stale_entries(std::string const& dir);

/// @brief Registers this launcher (of `child`) in `dir` (control_dir()).
/// @return its entry's base path ("" on failure)
[[nodiscard]] std::string register_launcher(std::string const& dir, pid_t child);

/// @brief Removes the entry and any request or answer left.
void unregister_launcher(std::string const& base);

/// @brief A request waiting for the launcher.
struct control_request {
  long client = 0;
  std::string verb;  ///< "dump", "stacks" or "top"
};

/// @brief The requests waiting at `base` (each taken: its file removed).
[[nodiscard]] std::vector<control_request> take_requests(std::string const& base);

/// @brief Answers `client` with `text` (first line "ok" or "error").
void answer_request(std::string const& base, long client, std::string const& text);

/// @brief A launcher's answer to a request.
struct control_answer {
  int status = 0;    ///< 0 answered; 2 refused or nothing records the process; 1 no answer came
  bool ok = false;   ///< the answer's first line was "ok" (else "error")
  std::string body;  ///< the answer after its first line
};

/// @brief Finds the launcher that records process `pid` (the program, one of its processes, or
/// the launcher itself) and asks it `verb`, waiting for its answer. Refuses processes of other
/// users. Each problem is said on stderr after `who` ("nvtxpp-capture dump").
[[nodiscard]] control_answer ask_launcher(std::string const& who, std::string const& verb,
                                          long pid);

/// @brief `nvtxpp-capture dump PID` / `stacks PID` (argv after the verb).
/// @return the exit status: 0 done, 2 no nvtxpp-capture records PID (or bad usage)
int control_client(std::string const& verb, int argc, char** argv);

}  // namespace nvtxpp::capture::cli
