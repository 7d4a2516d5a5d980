/// @file
/// @brief Which process of a multi-rank launch this is, from the launchers' variables: one table
/// for the output names and job dumps (launch/output_name, flight/job_channel), the rank the
/// outputs record for merge (common/launch_meta), and the rank each process of one trace is
/// labelled with (the injection library). Header-only, no dependency: both halves include it.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>

namespace nvtxpp::capture {

/// @brief A launcher's rank variable and the variables that may hold the number of ranks.
struct rank_source {
  char const* rank;
  std::array<char const*, 3> sizes;
};

/// @brief MPI and batch launchers, preferred first. A launcher may set several (Open MPI under
/// Slurm sets both its own and Slurm's); the first whose size is above 1 wins.
inline constexpr rank_source mpi_rank_sources[] = {
    {"OMPI_COMM_WORLD_RANK", {"OMPI_COMM_WORLD_SIZE", nullptr, nullptr}},
    {"PMI_RANK", {"PMI_SIZE", nullptr, nullptr}},
    {"PMIX_RANK", {"PMIX_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"}},
    {"SLURM_PROCID", {"SLURM_NTASKS", "SLURM_NPROCS", nullptr}},
};

/// @brief PyTorch's launchers (torchrun, torch.distributed.run; DeepSpeed's and Accelerate's
/// set the same): RANK of WORLD_SIZE.
inline constexpr rank_source torch_rank_source{"RANK", {"WORLD_SIZE", nullptr, nullptr}};

/// @brief Set by torchrun in every rank it starts (its rendezvous id; "none" unless given).
inline constexpr char torch_run_id_var[] = "TORCHELASTIC_RUN_ID";

/// @brief Node-local ranks: unique per host only, so they tell ranks apart together with a host.
inline constexpr char const* local_rank_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK",
                                                  "MPI_LOCALRANKID",
                                                  "PMI_LOCAL_RANK",
                                                  "PMIX_LOCAL_RANK",
                                                  "SLURM_LOCALID",
                                                  "LOCAL_RANK"};

/// @brief Calls `f(source)` for each rank source in the order to try them: torchrun's first
/// when its run id is set (a torchrun started by srun or mpirun inherits their variables, which
/// number the torchruns, not the ranks), else after the MPI launchers' (whose ranks a PyTorch
/// launcher over MPI copies). Stops when `f` returns true.
template <class Env, class F>
void for_each_rank_source(Env&& env, F&& f) {
  bool const torchrun = static_cast<bool>(env(torch_run_id_var));
  if (torchrun && f(torch_rank_source)) {
    return;
  }
  for (auto const& s : mpi_rank_sources) {
    if (f(s)) {
      return;
    }
  }
  if (!torchrun) {
    f(torch_rank_source);
  }
}

/// @brief A variable's value as a count: a non-negative decimal number without sign or spaces,
/// below 2^31; -1 otherwise (unset, empty, malformed).
inline long parse_rank_number(char const* text) noexcept {
  if (text == nullptr || *text == '\0') {
    return -1;
  }
  long v = 0;
  for (char const* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || v > (INT32_MAX - 9) / 10) {
      return -1;
    }
    v = v * 10 + (*p - '0');
  }
  return v;
}

/// @brief This process's rank from its environment (getenv): the rank, the number of ranks and
/// the variable, when a launcher's variables say it is one rank of more than one.
struct process_rank {
  long rank = -1;
  long size = 0;
  char const* variable = nullptr;
};

/// @brief Reads the variables through `getenv`-like `get` (returns a char const*, nullptr when
/// unset): the first source whose rank is a number and one of its sizes a number above 1.
template <class Get>
process_rank find_process_rank(Get&& get) {
  process_rank found;
  for_each_rank_source([&](char const* name) { return get(name) != nullptr; },
                       [&](rank_source const& s) {
                         long const rank = parse_rank_number(get(s.rank));
                         if (rank < 0) {
                           return false;
                         }
                         for (char const* size_var : s.sizes) {
                           if (size_var == nullptr) {
                             break;
                           }
                           if (long const size = parse_rank_number(get(size_var)); size > 1) {
                             found = {rank, size, s.rank};
                             return true;
                           }
                         }
                         return false;
                       });
  return found;
}

}  // namespace nvtxpp::capture
