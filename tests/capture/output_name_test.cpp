// The trace file's name (tools/capture/launch/output_name.hpp): patterns, rank detection, where the
// rank goes. The launcher's behaviour end to end is in scale_tests.py.
#include "launch/output_name.hpp"
#include "flight/job_channel.hpp"

#include "catch.hpp"

#include <map>

namespace cli = nvtxpp::capture::cli;

namespace {
cli::env_lookup env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string const& name) -> std::optional<std::string> {
    if (auto it = vars.find(name); it != vars.end()) {
      return it->second;
    }
    return std::nullopt;
  };
}
}  // namespace

TEST_CASE("patterns expand") {
  auto const e = env({{"JOB", "42"}, {"EMPTY", ""}});
  CHECK(cli::expand_pattern("t.%p.json", 123, e) == "t.123.json");
  CHECK(cli::expand_pattern("%q{JOB}-%%-%p%p", 7, e) == "42-%-77");
  CHECK(cli::expand_pattern("x%q{EMPTY}y", 1, e) == "xy");  // set but empty is set
  CHECK(cli::expand_pattern("plain", 1, e) == "plain");
  CHECK_FALSE(cli::expand_pattern("%h", 1, e).empty());
  CHECK_THROWS_AS(cli::expand_pattern("%q{NOPE}", 1, e), cli::name_error);
  CHECK_THROWS_AS(cli::check_pattern("a%", e), cli::name_error);
  CHECK_THROWS_AS(cli::check_pattern("a%d", e), cli::name_error);
  CHECK_THROWS_AS(cli::check_pattern("%q{JOB", e), cli::name_error);
  CHECK_THROWS_AS(cli::check_pattern("%qJOB", e), cli::name_error);
  CHECK_NOTHROW(cli::check_pattern("%p.%h.%q{JOB}.%%", e));
}

TEST_CASE("multi-rank launches are recognised by their launcher's variables") {
  CHECK_FALSE(cli::detect_rank(env({})));
  CHECK_FALSE(
      cli::detect_rank(env({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}})));
  CHECK_FALSE(cli::detect_rank(env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "four"}})));
  CHECK_FALSE(cli::detect_rank(env({{"PMI_RANK", "-1"}, {"PMI_SIZE", "2"}})));
  auto r = cli::detect_rank(env({{"OMPI_COMM_WORLD_RANK", "3"},
                                 {"OMPI_COMM_WORLD_SIZE", "4"},
                                 {"SLURM_PROCID", "9"},
                                 {"SLURM_NTASKS", "16"}}));
  REQUIRE(r);
  CHECK(r->rank == 3);  // Open MPI's own variables win over Slurm's
  CHECK(r->size == 4);
  CHECK(r->variable == "OMPI_COMM_WORLD_RANK");
  r = cli::detect_rank(env({{"PMIX_RANK", "5"}, {"SLURM_NTASKS", "8"}}));
  REQUIRE(r);
  CHECK((r->rank == 5 && r->variable == "PMIX_RANK"));
  r = cli::detect_rank(env({{"SLURM_PROCID", "1"}, {"SLURM_NPROCS", "2"}}));
  REQUIRE(r);
  CHECK(r->rank == 1);
}

TEST_CASE("PyTorch's launchers: RANK of WORLD_SIZE, first under torchrun") {
  auto r = cli::detect_rank(
      env({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"TORCHELASTIC_RUN_ID", "j"}}));
  REQUIRE(r);
  CHECK((r->rank == 1 && r->size == 2 && r->variable == "RANK"));
  // torchrun started by srun: Slurm's variables number the torchruns, not the ranks.
  r = cli::detect_rank(env({{"RANK", "3"},
                            {"WORLD_SIZE", "4"},
                            {"TORCHELASTIC_RUN_ID", "j"},
                            {"SLURM_PROCID", "0"},
                            {"SLURM_NTASKS", "2"}}));
  REQUIRE(r);
  CHECK((r->rank == 3 && r->variable == "RANK"));
  // No torchrun (DeepSpeed over mpirun copies the ranks): the MPI launcher's own variables.
  r = cli::detect_rank(env({{"RANK", "2"},
                            {"WORLD_SIZE", "4"},
                            {"OMPI_COMM_WORLD_RANK", "2"},
                            {"OMPI_COMM_WORLD_SIZE", "4"}}));
  REQUIRE(r);
  CHECK(r->variable == "OMPI_COMM_WORLD_RANK");
  r = cli::detect_rank(env({{"RANK", "2"}, {"WORLD_SIZE", "4"}}));
  REQUIRE(r);
  CHECK((r->rank == 2 && r->variable == "RANK"));
  // Partly set: RANK alone, or a size of 1, or not a number, is no multi-rank launch.
  CHECK_FALSE(cli::detect_rank(env({{"RANK", "1"}})));
  CHECK_FALSE(cli::detect_rank(env({{"RANK", "1"}, {"TORCHELASTIC_RUN_ID", "j"}})));
  CHECK_FALSE(cli::detect_rank(env({{"RANK", "0"}, {"WORLD_SIZE", "1"}})));
  CHECK_FALSE(cli::detect_rank(env({{"RANK", " 1"}, {"WORLD_SIZE", "2"}})));
  CHECK_FALSE(cli::detect_rank(env({{"RANK", "1"}, {"WORLD_SIZE", "two"}})));
  CHECK_FALSE(cli::detect_rank(env({{"RANK", "99999999999"}, {"WORLD_SIZE", "2"}})));
}

TEST_CASE("torchrun's job: its run id, made unique when it is the default") {
  auto j = cli::detect_job(env({{"RANK", "0"},
                                {"WORLD_SIZE", "2"},
                                {"TORCHELASTIC_RUN_ID", "r/7"},
                                {"MASTER_ADDR", "node1"},
                                {"MASTER_PORT", "29500"}}));
  REQUIRE(j);
  CHECK((j->id == "r_7" && j->variable == "TORCHELASTIC_RUN_ID" && j->rank == 0 && j->size == 2));
  j = cli::detect_job(env({{"RANK", "1"},
                           {"WORLD_SIZE", "2"},
                           {"TORCHELASTIC_RUN_ID", "none"},
                           {"MASTER_ADDR", "127.0.0.1"},
                           {"MASTER_PORT", "29500"}}));
  REQUIRE(j);
  CHECK(j->id == "none.127.0.0.1.29500");
  // NVTXPP_JOB_ID still wins; without a run id (RANK and WORLD_SIZE alone) there is no job.
  j = cli::detect_job(env({{"RANK", "1"},
                           {"WORLD_SIZE", "2"},
                           {"TORCHELASTIC_RUN_ID", "r"},
                           {"NVTXPP_JOB_ID", "mine"}}));
  REQUIRE(j);
  CHECK(j->id == "mine");
  CHECK_FALSE(cli::detect_job(env({{"RANK", "1"}, {"WORLD_SIZE", "2"}})));
  CHECK_FALSE(cli::detect_job(env({{"RANK", "1"}, {"TORCHELASTIC_RUN_ID", "r"}})));
}

TEST_CASE("which patterns tell ranks apart") {
  CHECK(cli::pattern_tells_ranks_apart("t.%q{RANK}.json"));
  CHECK(cli::pattern_tells_ranks_apart("t.%h.%q{LOCAL_RANK}.json"));
  CHECK(cli::pattern_tells_ranks_apart("t.%p.json"));
  CHECK(cli::pattern_tells_ranks_apart("t.%q{OMPI_COMM_WORLD_RANK}.json"));
  CHECK(cli::pattern_tells_ranks_apart("t.%q{SLURM_PROCID}.sqlite"));
  CHECK(cli::pattern_tells_ranks_apart("t.%h.%q{SLURM_LOCALID}.json"));
  CHECK_FALSE(cli::pattern_tells_ranks_apart("t.%q{SLURM_LOCALID}.json"));  // per host only
  CHECK_FALSE(cli::pattern_tells_ranks_apart("t.%h.json"));
  CHECK_FALSE(cli::pattern_tells_ranks_apart("t.%q{JOB}.json"));
  CHECK_FALSE(cli::pattern_tells_ranks_apart("t.json"));
}

TEST_CASE("the rank goes before the extension") {
  CHECK(cli::insert_before_extension("trace.json", "rank3") == "trace.rank3.json");
  CHECK(cli::insert_before_extension("out/trace.sqlite", "rank0") == "out/trace.rank0.sqlite");
  CHECK(cli::insert_before_extension("a.b/trace", "rank1") == "a.b/trace.rank1");
  CHECK(cli::insert_before_extension(".hidden", "rank1") == ".hidden.rank1");
  CHECK(cli::insert_before_extension("dir/.hidden", "rank1") == "dir/.hidden.rank1");
  CHECK(cli::insert_before_extension("trace.tar.json", "pid7") == "trace.tar.pid7.json");
}
