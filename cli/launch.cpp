#include "launch.hpp"

#include <Kokkos_Core.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace scanlab::cli {

namespace fs = std::filesystem;

static const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

static int env_int(const char* name, int fallback) {
  const char* v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  // Slurm writes counts like "2(x3)" in *_TASKS_PER_NODE: the leading number is this node's.
  if (end == v || x < 0 || x > 1 << 24)
    throw std::runtime_error(std::string("cannot read ") + name + "='" + v + "' as a rank or count");
  return int(x);
}

// A world from the launcher's variables for its size and rank; the node-local numbers the caller read.
static LaunchWorld world_from(const char* launcher, const char* size, const char* rank, int local_rank, int local_size) {
  LaunchWorld w;
  w.launcher = launcher;
  w.size = env_int(size, 1);
  w.rank = env_int(rank, 0);
  w.local_rank = local_rank;
  w.local_size = local_size;
  return w;
}

LaunchWorld detect_launch_world() {
  LaunchWorld w;
  if (env("OMPI_COMM_WORLD_SIZE")) {
    w = world_from("Open MPI", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0),
                   env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1));
  } else if (env("PMI_SIZE") && env("PMI_RANK")) {
    w = world_from("MPICH/Hydra (PMI)", "PMI_SIZE", "PMI_RANK", env_int("MPI_LOCALRANKID", env_int("SLURM_LOCALID", 0)),
                   env_int("MPI_LOCALNRANKS", 1));
  } else if ((env("TORCHELASTIC_RUN_ID") || env("GROUP_RANK")) && env("WORLD_SIZE") && env("RANK")) {
    // torchrun --no-python: the launcher ML machines have (no MPI needed there).
    w = world_from("torchrun", "WORLD_SIZE", "RANK", env_int("LOCAL_RANK", 0), env_int("LOCAL_WORLD_SIZE", 1));
  } else if (env("SLURM_STEP_NUM_TASKS") && env("SLURM_PROCID")) {
    w = world_from("Slurm srun", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", env_int("SLURM_LOCALID", 0),
                   env_int("SLURM_STEP_TASKS_PER_NODE", 1));
  }
  if (w.size < 1 || w.rank < 0 || w.rank >= w.size || w.local_size < 1 || w.local_rank < 0)
    throw std::runtime_error("inconsistent launcher environment (" + w.launcher + "): rank " + std::to_string(w.rank) +
                             " of " + std::to_string(w.size) + ", local rank " + std::to_string(w.local_rank) +
                             " of " + std::to_string(w.local_size));
  if (w.local_rank >= w.local_size) w.local_size = w.local_rank + 1;
  return w;
}

std::vector<std::string> rank_binding_arguments(const LaunchWorld& world, const std::vector<std::string>& user_args) {
  std::vector<std::string> out;
  if (!world.distributed()) return out;
  auto given = [&](const std::string& prefix) {
    for (const auto& a : user_args)
      if (a.rfind(prefix, 0) == 0) return true;
    return false;
  };
#if defined(KOKKOS_ENABLE_CUDA)
  int devices = 0;
  if (!given("--kokkos-device") && !given("--kokkos-num-devices") && cudaGetDeviceCount(&devices) == cudaSuccess &&
      devices > 0)
    out.push_back("--kokkos-device-id=" + std::to_string(world.local_rank % devices));
#endif
  if (!given("--kokkos-threads") && !given("--kokkos-num-threads") && !env("OMP_NUM_THREADS")) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const int threads = std::max(1, int(cores) / world.local_size);
#if defined(KOKKOS_VERSION) && KOKKOS_VERSION >= 40000
    out.push_back("--kokkos-num-threads=" + std::to_string(threads));
#else
    out.push_back("--kokkos-threads=" + std::to_string(threads));
#endif
  }
  return out;
}

int bound_device_id() {
#if defined(KOKKOS_ENABLE_CUDA)
  int device = -1;
  if (cudaGetDevice(&device) == cudaSuccess) return device;
#endif
  return -1;
}

static bool file_ready(const std::string& path) { return fs::exists(path); }

std::vector<int> wait_for_rank_files(const std::vector<std::string>& paths, double timeout_s, const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  auto last_note = start;
  for (;;) {
    std::vector<int> missing;
    for (std::size_t r = 0; r < paths.size(); ++r)
      if (!file_ready(paths[r])) missing.push_back(int(r));
    const auto now = std::chrono::steady_clock::now();
    const double waited = std::chrono::duration<double>(now - start).count();
    if (missing.empty() || waited >= timeout_s) return missing;
    if (std::chrono::duration<double>(now - last_note).count() >= 30) {
      std::string list;
      for (int r : missing) list += (list.empty() ? "" : ",") + std::to_string(r);
      std::fprintf(stderr, "rank 0: waiting for the %s of rank(s) %s (%.0f s)\n", what.c_str(), list.c_str(), waited);
      last_note = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

void fault_point(const LaunchWorld& world, const std::string& point) {
  const char* kill_rank = env("SCANLAB_FAULT_KILL_RANK");
  if (!kill_rank || std::atoi(kill_rank) != world.rank) return;
  const char* at = env("SCANLAB_FAULT_POINT");
  if (point != (at ? at : "after_first_case")) return;
  const char* signal_text = env("SCANLAB_FAULT_SIGNAL");
  const int signal = signal_text ? std::atoi(signal_text) : SIGKILL;
  std::fprintf(stderr, "rank %d: SCANLAB_FAULT_KILL_RANK: killing myself at %s (signal %d)\n", world.rank, point.c_str(),
               signal);
  std::fflush(stderr);
  ::kill(::getpid(), signal);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  fs::rename(tmp, p);
}

}  // namespace scanlab::cli
