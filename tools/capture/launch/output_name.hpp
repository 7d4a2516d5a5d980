/// @file
/// @brief The trace file's name: nsys-style patterns (`%p`, `%h`, `%q{VAR}`, `%%`), the rank of a
/// multi-rank launch, and the claim that keeps two live writers off one file.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace nvtxpp::capture::cli {

/// @brief A pattern that cannot be expanded (unknown `%x`, an unset `%q{VAR}`, a bad `%q{`).
struct name_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// @brief Looks up an environment variable; nullopt when unset.
using env_lookup = std::function<std::optional<std::string>(std::string const&)>;

/// @brief The process environment (`getenv`).
[[nodiscard]] env_lookup process_env();

/// @brief Checks `pattern` without expanding `%p`: every `%` is followed by `p`, `h`, `%` or
/// `q{NAME}` with NAME set in `env`. @throws name_error naming the first fault.
void check_pattern(std::string const& pattern, env_lookup const& env);

/// @brief Expands `pattern`: `%p` the pid `pid`, `%h` this host's name, `%q{VAR}` VAR's value,
/// `%%` a `%`. @throws name_error as check_pattern.
[[nodiscard]] std::string expand_pattern(std::string const& pattern, long pid,
                                         env_lookup const& env);

/// @brief The rank of this process in a multi-rank launch, from the launchers' variables.
struct rank_info {
  long rank = 0;
  long size = 0;
  std::string variable;  ///< the rank variable it came from (e.g. OMPI_COMM_WORLD_RANK)
};

/// @brief The rank when the environment shows a launch of more than one rank (Open MPI, MPICH or
/// another PMI launcher, PMIx, Slurm, then PyTorch's RANK of WORLD_SIZE; PyTorch's first under
/// torchrun: common/rank_vars.hpp); nullopt otherwise (RANK without WORLD_SIZE too).
[[nodiscard]] std::optional<rank_info> detect_rank(env_lookup const& env);

/// @brief Whether names from `pattern` differ between the ranks of one launch: it holds `%p`,
/// a `%q{}` of a global rank variable, or `%h` with a `%q{}` of a node-local rank variable.
[[nodiscard]] bool pattern_tells_ranks_apart(std::string const& pattern);

/// @brief `path` with `tag` inserted before its extension: ("out/trace.json", "rank3") ->
/// "out/trace.rank3.json"; a name without extension gets ".rank3" appended.
[[nodiscard]] std::string insert_before_extension(std::string const& path, std::string const& tag);

/// @brief The name to write for the program `pid`: `pattern` expanded and, in a multi-rank
/// launch whose pattern does not tell ranks apart, `rank<N>` inserted before the extension (said
/// on stderr). @throws name_error as check_pattern.
[[nodiscard]] std::string resolve_output_name(std::string const& pattern, long pid,
                                              env_lookup const& env);

}  // namespace nvtxpp::capture::cli
