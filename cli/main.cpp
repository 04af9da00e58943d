// scanlab: fuzz, time and report selective state-space scans. One executable serves every verb
// (and `scanlab test` runs the property and unit tests), so the same stripped binary that is
// carried to the GPU machine checks itself there.
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "launch.hpp"
#include "verbs.hpp"

int main(int argc, char** argv) {
  // Kokkos would also act on un-prefixed flags such as --help and --threads, which belong to the
  // CLI here: Kokkos sees only the --kokkos-* arguments, the verbs see everything else.
  std::vector<char*> kokkos_args{argv[0]}, cli_args{argv[0]};
  for (int i = 1; i < argc; ++i)
    (std::strncmp(argv[i], "--kokkos-", 9) == 0 ? kokkos_args : cli_args).push_back(argv[i]);
  // Thread binding is the user's choice; unset, Kokkos only warns, and tests run unbound.
  setenv("OMP_PROC_BIND", "false", 0);
  // Under mpirun/srun each rank takes its own GPU or its share of the cores (cli/launch.hpp).
  std::vector<std::string> binding;
  try {
    const std::vector<std::string> given(kokkos_args.begin() + 1, kokkos_args.end());
    binding = scanlab::cli::rank_binding_arguments(scanlab::cli::detect_launch_world(), given);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scanlab: error: %s\n", e.what());
    return 2;
  }
  for (auto& a : binding) kokkos_args.push_back(a.data());
  int kokkos_argc = static_cast<int>(kokkos_args.size());
  // Both lists end with the null pointer that ends a C argv (argv[argc]), for whatever parses them.
  kokkos_args.push_back(nullptr);
  const int cli_argc = static_cast<int>(cli_args.size());
  cli_args.push_back(nullptr);
  // A CUDA build started where CUDA cannot run (no driver, no GPU) throws from Kokkos' start-up:
  // a message that says so, not an uncaught exception.
  std::unique_ptr<Kokkos::ScopeGuard> kokkos;
  try {
    kokkos = std::make_unique<Kokkos::ScopeGuard>(kokkos_argc, kokkos_args.data());
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "scanlab: error: Kokkos could not start its backends: %s\n"
                 "scanlab: a CUDA build needs an NVIDIA GPU and driver; elsewhere use the CPU build "
                 "(bash scripts/build.sh cpu)\n",
                 e.what());
    return 2;
  }
  try {
    return scanlab::cli::dispatch(cli_argc, cli_args.data());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scanlab: error: %s\n", e.what());
    return 2;
  }
}
