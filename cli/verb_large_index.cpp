// `scanlab large-index selective_scan`: the 64-bit indexing check of cli/large_index.hpp.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "large_index.hpp"
#include "verbs.hpp"

namespace {

int large_index(int argc, char** argv) {
  CLI::App app{
      "Run selective_scan forward and backward on a problem whose (b,d,t) tensors hold more than 2^31\n"
      "elements (default (1, 845799, 16, 2539): 2^31 + 13, about 70 GB of device memory), then compare\n"
      "sampled channels, including the highest offsets and the channel straddling offset 2^31, with the\n"
      "float64 oracle. Exit status 0 when every sampled channel is within the error bound, 1 otherwise.",
      argv[0]};
  std::string op = "selective_scan", backend = "cuda";
  scanlab::cli::LargeIndexOptions o;
  app.add_option("op", op, "the op (selective_scan)")->check(CLI::IsMember({"selective_scan"}));
  app.add_option("--backend", backend, "serial, openmp or cuda")->capture_default_str();
  app.add_option("--dim", o.dim, "channels (batch is 1)")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--dstate", o.dstate, "states per channel")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--seqlen", o.seqlen, "time steps")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_flag("--time-invariant-bc", o.time_invariant_BC, "B and C of shape (dim, dstate); then dB and dC are checked too");
  app.add_option("--channels", o.random_channels, "random channels sampled besides the fixed ones")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the input hash and the channel sample")->capture_default_str();
  app.add_option("--impl", o.impl, "implementation (default: the heuristic config's)");
  CLI11_PARSE(app, argc, argv);
  o.backend = scanlab::parse_backend(backend).kind;
  if (!scanlab::parse_backend(backend).is_kokkos())
    throw std::invalid_argument("large-index runs scanlab's own kernels: --backend serial, openmp or cuda");
  auto result = scanlab::cli::run_large_index_check(o);
  std::printf("%s", result.report.c_str());
  std::printf("highest element offset checked: %lld (2^31 = %lld); %s\n", (long long)result.highest_offset_checked,
              1LL << 31, result.pass ? "PASS" : "FAIL");
  return result.pass ? 0 : 1;
}

const bool registered = scanlab::cli::register_verb(
    {"large-index", "64-bit indexing check: selective_scan past 2^31 elements vs the oracle on sampled channels",
     large_index});

}  // namespace
