#include "op_traits.hpp"

namespace scanlab::cli {

void throw_unknown_op(const std::string& op) {
  std::string list;
  for (const auto& name : op_names()) list += (list.empty() ? "" : ", ") + name;
  throw std::invalid_argument("unknown op '" + op + "' (expected one of: " + list + ")");
}

// The values below are what the properties try beyond the registry's candidates: the edges of
// each field (1, odd and prime sizes, sizes past the longest sequence the generators draw) and
// every value a kernel instantiates as a template parameter. Fields a config does not have are
// skipped, values a problem cannot run are dropped by invalid_reason().
using J = nlohmann::json;

// selective_scan: dstate_static is the kernels' template parameter kN (0 = the generic path);
// a value equal to the problem's dstate is the only one that runs, so the generators draw dstate
// 32 and 64 as well. Team sizes above the backend's limit, and sizes that do not divide the
// channels per team, are dropped as invalid.
std::vector<ConfigAxis> OpTraits<SelectiveScanProblem>::config_axes() {
  return {
      {"dstate_static", {J(0), J(1), J(2), J(4), J(8), J(16), J(32), J(64)}, true},
      {"chunk_len", {J(1), J(3), J(8), J(16), J(32), J(128)}, false},
      {"channels_per_team", {J(1), J(3), J(16), J(32)}, false},
      {"team_size", {J(1), J(2), J(32), J(64)}, false},
      {"time_tile", {J(1), J(5), J(32), J(64)}, false},
      {"stage_io", {J(0), J(1)}, false},
      {"bwd_channels_per_team", {J(1), J(3), J(16), J(32)}, false},
      {"bwd_team_size", {J(1), J(2), J(32)}, false},
      {"scratch_level", {J(0), J(1)}, false},
      // tiled's kS; not asserted as drawn: it runs only with tiled and team sizes it divides
      // (KernelSelectiveScan.ForwardAndBackwardMatchOracle asserts a split ran)
      {"state_split", {J(1), J(2), J(4)}, false},
      {"bwd_state_split", {J(1), J(2), J(4)}, false},  // likewise tiled's backward
      {"bwd_state_interleave", {J(1), J(2), J(4)}, false},  // tiled's backward at split 1, chunk 8
      {"bwd_stage_inputs", {J(0), J(1)}, false},  // tiled's backward at interleave 2
      {"bwd_normal_loop", {J(0), J(1)}, false},  // tiled's backward at interleave 2, unstaged, teams of 32
      {"fast_activations", {J(0), J(1)}, false},  // tiled's compile-time activation form, likewise
      {"bwd_time_segments", {J(1), J(2), J(3), J(1000)}, false},  // tiled's backward; 1000: a chunk each
      {"bwd_summary_blocks", {J(1), J(2), J(3), J(1000)}, false},  // its summary pass; 1000: a chunk each
      {"fwd_time_segments", {J(1), J(2), J(3), J(1000)}, false},  // tiled's forward; 1000: a tile each
      {"direct_io", {J(0), J(1), J(2)}, false},  // tiled's forward form; 1 with state_split 1, 2 or 4, 2 with 1
  };
}

// s7_scan: states_per_thread and dims_per_thread are the GROUP template parameter of the
// streaming stages (1, 2, 4, 8).
std::vector<ConfigAxis> OpTraits<S7ScanProblem>::config_axes() {
  return {
      {"states_per_thread", {J(1), J(2), J(4), J(8)}, true},
      {"dims_per_thread", {J(1), J(2), J(4), J(8)}, true},
      {"chunk_len", {J(1), J(3), J(16), J(64), J(256)}, false},
      {"team_size", {J(1), J(2), J(32), J(128)}, false},
      {"items_per_thread", {J(1), J(3), J(64)}, false},
      {"walk_team_size", {J(1), J(2), J(32)}, false},
      {"fwd_dim_splits", {J(1), J(2), J(3)}, false},
      {"bwd_dim_splits", {J(1), J(2), J(3)}, false},
  };
}

std::vector<ConfigAxis> OpTraits<S7InnerProblem>::config_axes() {
  auto axes = OpTraits<S7ScanProblem>::config_axes();
  axes.push_back({"elementwise_team_size", {J(1), J(32), J(128)}, false});
  axes.push_back({"elementwise_items_per_thread", {J(1), J(3), J(4)}, false});
  axes.push_back({"transpose_tile", {J(1), J(5), J(32)}, false});
  axes.push_back({"reduce_block", {J(1), J(7), J(256)}, false});
  return axes;
}

}  // namespace scanlab::cli
