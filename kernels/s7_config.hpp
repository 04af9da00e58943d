// Configurations, the implementation registry and the host bridges of the s7 kernels
// (kernels/s7_scan.hpp, kernels/s7_inner.hpp). Nothing here includes Kokkos, so the CLI, the
// tuner and the properties can name, validate and serialise configs cheaply.
//
// Every tunable a kernel has is a field here; no kernel hides a constant that changes its
// schedule. A config never changes the mathematical result beyond float32 rounding, and with a
// fixed config every backend is bitwise repeatable (no floating-point atomics; every reduction
// runs in a fixed order that depends on the config only, never on thread counts or timing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend.hpp"
#include "problem/s7_inner.hpp"
#include "problem/s7_scan.hpp"
#include "tensor.hpp"

namespace scanlab::kernels {

// s7_scan runs as three stages per pass (kernels/s7_scan.hpp explains them):
//   streaming stages, which read B or C exactly once, one thread per time step t of a tile of
//   team_size·items_per_thread consecutive steps, coalesced along seqlen;
//   the time walk over (b, n), the only sequential part, on tiles of walk_team_size states ×
//   chunk_len steps, one thread per state row.
// Implementations differ only in the time walk:
//   "sequential": one team walks a (b, n-tile) through all chunks in order (b·N/walk_team_size
//                 teams); bitwise independent of chunk_len.
//   "chunked":    parallel in time: every chunk walks from a zero state (summary: end state and
//                 product of A_bar), the carries are propagated across chunks in order per (b, n),
//                 and every chunk walks again from its true carry (b·N·⌈L/chunk_len⌉/walk_team_size
//                 teams per walk).
//   "scanned":    parallel in time in one launch: a team of walk_team_size threads per (b, n) row,
//                 one chunk of chunk_len ≤ kS7WalkBatch steps a thread, held in registers; the
//                 chunks' summaries are combined by a scan across the team (a tree fixed by
//                 walk_team_size), each chunk walks again from its carry, and rounds of
//                 walk_team_size chunks follow each other along the row (b·N teams per walk).
// Steps a walk thread loads and walks at once (the batch of every impl's walk).
constexpr int kS7WalkBatch = 16;

struct S7ScanConfig {
  std::string impl = "chunked";
  int team_size = 128;        // threads per team in the streaming stages
  int items_per_thread = 1;   // time steps per thread in the streaming stages (tile = product)
  int states_per_thread = 4;  // dstate rows one thread accumulates at once (Bu, dC pass): 1, 2, 4 or 8
  int dims_per_thread = 4;    // dim rows one thread accumulates at once (y, dB pass): 1, 2, 4 or 8
  int chunk_len = 64;         // time steps per walk tile (per chunk of "chunked", per thread of "scanned")
  int walk_team_size = 32;    // threads per walk team: one dstate row each ("scanned": one chunk each
                              // of one row)
  int fwd_dim_splits = 1;     // the forward's Bu stage splits dim into this many partial sums of
                              // Σ_h B·u, added by the walk in split order (more parallelism)
  int bwd_dim_splits = 1;     // the backward's C pass splits dim into this many partial sums of
                              // Σ_h C·dout, reduced afterwards in split order (more parallelism)

  // Empty when this config can run the problem on the backend, else why not.
  std::string invalid_reason(const S7ScanProblem& p, BackendKind backend) const;
  nlohmann::json to_json() const;
  // Fields missing from j keep their defaults above; an unknown field or a wrong type throws
  // std::invalid_argument naming it.
  static S7ScanConfig from_json(const nlohmann::json& j);
  bool operator==(const S7ScanConfig& o) const { return to_json() == o.to_json(); }
  bool operator!=(const S7ScanConfig& o) const { return !(*this == o); }
};

// s7_inner: the matrix products go through kernels/matmul.hpp (OpenBLAS on the host spaces,
// cuBLAS on CUDA), the elementwise stages are Kokkos kernels, the scan is s7_scan's own kernels
// run with `scan`. The implementation name of s7_inner is the name of its scan (impl()).
struct S7InnerConfig {
  S7ScanConfig scan;
  int elementwise_team_size = 128;       // threads per team in the elementwise stages
  int elementwise_items_per_thread = 4;  // elements per thread of the flat elementwise stages
  int transpose_tile = 32;               // edge of the tiles transposed through team scratch
                                         // between the (b,L,Dm) ends and the (b,Dm,L) inside
  int reduce_block = 256;                // time steps per partial sum of dbase_params = Σ_{b,t} dA
                                         // (partials are then summed in a fixed order)
  std::string gemm_math = "default";  // cuBLAS math mode: "default" (float32, no TF32) or
                                      // "pedantic" (CUBLAS_PEDANTIC_MATH); ignored by OpenBLAS

  const std::string& impl() const { return scan.impl; }
  std::string invalid_reason(const S7InnerProblem& p, BackendKind backend) const;
  // Flat JSON: the scan's fields and the layer's own side by side ("impl" is scan.impl).
  nlohmann::json to_json() const;
  static S7InnerConfig from_json(const nlohmann::json& j);
  bool operator==(const S7InnerConfig& o) const { return to_json() == o.to_json(); }
  bool operator!=(const S7InnerConfig& o) const { return !(*this == o); }
};

std::vector<std::string> s7_scan_implementations();  // {"sequential", "chunked", "scanned"}
// Team scratch of a "scanned" walk team: two buffers of walk_team_size (product, end) pairs and the
// value one round hands the next.
std::int64_t s7_scanned_walk_scratch_bytes(int walk_team_size);
std::vector<std::string> s7_scan_config_fields();     // every key of S7ScanConfig::to_json()

// The default without measuring. GPU (cuda): "scanned" (b·N alone is far too few threads for a
// walk over all of seqlen, and one launch beats "chunked"'s three), chunk_len 16, walk_team_size
// the row's chunk count rounded up to a power of two in [32, s7_walk_max_team_size], team_size 128, states/dims per
// thread 4 (fewer when N/H are smaller), and fwd_dim_splits and bwd_dim_splits raised until the
// Bu stage and the C pass have about three and four teams per SM. Host (serial/openmp): "sequential" (there
// are enough (b, n) walks for a few cores and no summary pass to pay), team_size 1, a tile of 64
// steps, chunk_len 16, walk_team_size 1, no dim splits. On every backend the heuristic with its
// impl replaced by any other is valid (what `scanlab check --impl NAME` runs).
S7ScanConfig s7_scan_heuristic_config(const S7ScanProblem& p, BackendKind backend);
// Valid configs worth timing, the heuristic first, without duplicates; at least 8 on GPU shapes
// that are not tiny.
std::vector<S7ScanConfig> s7_scan_candidate_configs(const S7ScanProblem& p, BackendKind backend);

std::vector<std::string> s7_inner_implementations();  // the scan's
std::vector<std::string> s7_inner_config_fields();
S7InnerConfig s7_inner_heuristic_config(const S7InnerProblem& p, BackendKind backend);
std::vector<S7InnerConfig> s7_inner_candidate_configs(const S7InnerProblem& p, BackendKind backend);

// Bytes of device workspace s7_scan allocates beside its inputs, outputs and gradients
// (kernels/s7_scan.hpp lists the buffers). Forward only, or forward + backward.
std::int64_t s7_scan_workspace_bytes(const S7ScanProblem& p, const S7ScanConfig& c);
// Modelled global-memory traffic beyond S7ScanProblem::bytes_moved(pass): the O(b·N·L)
// intermediates written and read again, and the inputs re-read by later stages (formula in
// s7_config.cpp). Sweeps report it beside the compulsory bytes.
double s7_scan_extra_bytes(const S7ScanProblem& p, const S7ScanConfig& c, Pass pass);
std::int64_t s7_inner_workspace_bytes(const S7InnerProblem& p, const S7InnerConfig& c);

// Host bridges: float64 host tensors → float32 device Views, every output and gradient poisoned
// with NaN first, the forward (and the backward when p.with_backward) run, device errors
// checked, results copied back as float64. They return exactly the tensors the oracle returns
// (reference/s7_scan.hpp, reference/s7_inner.hpp). An invalid config throws std::invalid_argument
// with invalid_reason().
TensorMap run_s7_scan(const S7ScanProblem& p, const TensorMap& inputs, BackendKind backend,
                      const S7ScanConfig& config);
TensorMap run_s7_inner(const S7InnerProblem& p, const TensorMap& inputs, BackendKind backend,
                       const S7InnerConfig& config);

// The largest team the backend's Kokkos space runs (CUDA: 1024; OpenMP: its threads per team;
// Serial: 1) and the team scratch (level 0) it offers in bytes. 0 when the backend is not
// compiled in. Defined with the kernels, so that this header stays free of Kokkos.
int s7_max_team_size(BackendKind backend);
// The largest walk_team_size every walk kernel launches with on the backend (CUDA: below
// s7_max_team_size, for the registers a walk thread holds); 0 when not compiled in.
int s7_walk_max_team_size(BackendKind backend);
std::int64_t s7_max_team_scratch_bytes(BackendKind backend);

}  // namespace scanlab::kernels
