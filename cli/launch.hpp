// Runs under a parallel launcher: mpirun/mpiexec (Open MPI, MPICH/Hydra), Slurm's srun or torchrun start K
// copies of scanlab, and each copy learns its rank from the launcher's environment. scanlab uses
// MPI as the launcher HPC users already have, and does not link an MPI library: ranks share
// nothing but the output directory, each writes its own shard file when it is done, and rank 0
// merges them (the merge of `scanlab merge`). So the binary carried to a GPU machine needs no MPI
// runtime of its own, one rank that dies cannot hang the others in a collective, and a re-run
// with --resume finds what the finished ranks wrote.
#pragma once

#include <string>
#include <vector>

namespace scanlab::cli {

struct LaunchWorld {
  int rank = 0, size = 1;              // world rank and size
  int local_rank = 0, local_size = 1;  // on this node
  std::string launcher = "none";       // "Open MPI", "MPICH/Hydra (PMI)", "Slurm srun", "none"
  bool distributed() const { return size > 1; }
};

// From the launcher's environment (Open MPI's OMPI_COMM_WORLD_*, PMI's PMI_RANK/PMI_SIZE with
// MPI_LOCALRANKID/MPI_LOCALNRANKS, torchrun's RANK/WORLD_SIZE/LOCAL_RANK with TORCHELASTIC_RUN_ID or GROUP_RANK,
// srun's SLURM_PROCID/SLURM_STEP_NUM_TASKS/SLURM_LOCALID). An sbatch script outside srun is one
// process, not a world. Malformed values throw.
LaunchWorld detect_launch_world();

// The Kokkos arguments that bind this rank to its hardware, unless the user gave their own:
// with CUDA, --kokkos-device-id = local rank mod the node's GPUs; on the host spaces, threads =
// the node's cores / local ranks (when OMP_NUM_THREADS is unset).
std::vector<std::string> rank_binding_arguments(const LaunchWorld& world, const std::vector<std::string>& user_args);

// The CUDA device this process runs on (-1 without CUDA), for the sweep's context block.
int bound_device_id();

// Rank 0 waits for the files of every rank (each written atomically by its rank); returns the
// ranks whose file did not appear within timeout_s. A progress line every 30 s names the ranks
// still missing.
std::vector<int> wait_for_rank_files(const std::vector<std::string>& paths, double timeout_s, const std::string& what);

// Test hook (fault injection, documented in README): SCANLAB_FAULT_KILL_RANK=R makes rank R
// kill itself with SIGKILL (or signal SCANLAB_FAULT_SIGNAL, e.g. 11 for a segmentation fault) at
// the first call with `point` = SCANLAB_FAULT_POINT (default "after_first_case"), as an
// out-of-memory kill would.
void fault_point(const LaunchWorld& world, const std::string& point);

// Writes text to path through a temporary file and a rename, so a reader never sees half a file.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace scanlab::cli
