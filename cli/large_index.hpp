// 64-bit indexing check: runs selective_scan forward and backward on a problem whose (b,d,t)
// tensors hold more than 2^31 elements, then compares sampled channels — always including the
// highest offsets and the channel that straddles 2^31 — with the float64 oracle run on those
// channels alone. mamba_ssm had int32 overflow bugs here (its issues #880 and #884).
//
// Inputs are filled on the device by a counter-based hash of (tensor, flat index), so the host
// regenerates a sampled channel's inputs without copying gigabytes back. batch is 1, so every
// gradient except per-step dB and dC (sums over all channels) belongs to one channel and is
// checked; per-step dB and dC are not.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/backend.hpp"

namespace scanlab::cli {

struct LargeIndexOptions {
  BackendKind backend = BackendKind::cuda;
  std::int64_t dim = 845799, dstate = 16, seqlen = 2539;  // 845799 · 2539 = 2^31 + 13
  bool time_invariant_BC = false;
  int random_channels = 6;
  std::uint64_t seed = 1;
  std::string impl;                    // empty: the heuristic config
  bool corrupt_one_output = false;     // testing only: perturb one checked output element
};

struct LargeIndexResult {
  bool pass = false;
  std::int64_t elements_per_tensor = 0;
  std::int64_t highest_offset_checked = 0;
  std::string report;  // a table per sampled channel
};

LargeIndexResult run_large_index_check(const LargeIndexOptions& options);

}  // namespace scanlab::cli
