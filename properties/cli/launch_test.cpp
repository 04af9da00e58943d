// The launcher environments scanlab reads its rank from, and the binding arguments it derives.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "cli/launch.hpp"

namespace {

using scanlab::cli::detect_launch_world;

// Sets the given variables (and clears every other launcher variable) for one test.
class LauncherEnv {
 public:
  explicit LauncherEnv(const std::map<std::string, std::string>& vars) {
    for (const char* name : kAll) {
      if (const char* v = std::getenv(name)) saved_[name] = v;
      unsetenv(name);
    }
    for (const auto& [k, v] : vars) setenv(k.c_str(), v.c_str(), 1);
  }
  ~LauncherEnv() {
    for (const char* name : kAll) unsetenv(name);
    for (const auto& [k, v] : saved_) setenv(k.c_str(), v.c_str(), 1);
  }

 private:
  static constexpr const char* kAll[] = {
      "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
      "PMI_SIZE",             "PMI_RANK",             "MPI_LOCALRANKID",            "MPI_LOCALNRANKS",
      "TORCHELASTIC_RUN_ID",  "WORLD_SIZE",           "RANK",                       "LOCAL_RANK",
      "LOCAL_WORLD_SIZE",     "SLURM_STEP_NUM_TASKS", "SLURM_PROCID",               "SLURM_LOCALID",
      "SLURM_STEP_TASKS_PER_NODE", "GROUP_RANK", "OMP_NUM_THREADS"};
  std::map<std::string, std::string> saved_;
};

TEST(CliLaunch, NoLauncherIsOneProcess) {
  LauncherEnv env({});
  const auto w = detect_launch_world();
  EXPECT_FALSE(w.distributed());
  EXPECT_EQ(w.launcher, "none");
  EXPECT_TRUE(scanlab::cli::rank_binding_arguments(w, {}).empty());
}

TEST(CliLaunch, ReadsEachLaunchersVariables) {
  struct Row {
    std::map<std::string, std::string> vars;
    std::string launcher;
    int rank, size, local_rank, local_size;
  };
  const Row rows[] = {
      {{{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
        {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}, "Open MPI", 3, 4, 1, 2},
      {{{"PMI_SIZE", "3"}, {"PMI_RANK", "2"}, {"MPI_LOCALRANKID", "2"}, {"MPI_LOCALNRANKS", "3"}},
       "MPICH/Hydra (PMI)", 2, 3, 2, 3},
      {{{"TORCHELASTIC_RUN_ID", "x"}, {"WORLD_SIZE", "2"}, {"RANK", "1"}, {"LOCAL_RANK", "1"},
        {"LOCAL_WORLD_SIZE", "2"}}, "torchrun", 1, 2, 1, 2},
      {{{"GROUP_RANK", "0"}, {"WORLD_SIZE", "4"}, {"RANK", "2"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "4"}},
       "torchrun", 2, 4, 2, 4},
      {{{"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"},
        {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"}}, "Slurm srun", 5, 8, 1, 4},
  };
  for (const auto& row : rows) {
    LauncherEnv env(row.vars);
    const auto w = detect_launch_world();
    EXPECT_EQ(w.launcher, row.launcher);
    EXPECT_EQ(w.rank, row.rank) << row.launcher;
    EXPECT_EQ(w.size, row.size) << row.launcher;
    EXPECT_EQ(w.local_rank, row.local_rank) << row.launcher;
    EXPECT_EQ(w.local_size, row.local_size) << row.launcher;
  }
}

TEST(CliLaunch, AnSbatchScriptOutsideSrunIsOneProcess) {
  LauncherEnv env({{"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"}});  // no SLURM_STEP_NUM_TASKS
  EXPECT_FALSE(detect_launch_world().distributed());
}

TEST(CliLaunch, InconsistentOrMalformedVariablesAreErrors) {
  {
    LauncherEnv env({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "2"}});
    EXPECT_THROW(detect_launch_world(), std::runtime_error);
  }
  {
    LauncherEnv env({{"OMPI_COMM_WORLD_SIZE", "two"}, {"OMPI_COMM_WORLD_RANK", "0"}});
    EXPECT_THROW(detect_launch_world(), std::runtime_error);
  }
}

TEST(CliLaunch, RanksShareTheCoresUnlessTheUserSetThreads) {
  LauncherEnv env({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  const auto w = detect_launch_world();
  bool threads = false;
  for (const auto& a : scanlab::cli::rank_binding_arguments(w, {}))
    threads = threads || a.rfind("--kokkos-threads=", 0) == 0 || a.rfind("--kokkos-num-threads=", 0) == 0;
  EXPECT_TRUE(threads);
  for (const auto& a : scanlab::cli::rank_binding_arguments(w, {"--kokkos-threads=3"}))
    EXPECT_NE(a.rfind("--kokkos-threads", 0), 0u) << "the user's own thread count must win";
}

}  // namespace
