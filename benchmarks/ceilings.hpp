// Machine ceilings, measured on the machine that runs the sweep and never taken from a datasheet
// (DESIGN.md's measurement model): device-to-device copy (native and in Kokkos, several launch
// shapes and vector widths), memory read, L2 read, FP32 FMA rate and SFU rates (exp2, log2,
// reciprocal through kernels/sfu.hpp). Each figure is the median of repetitions after warm-ups,
// timed by benchmarks/device_timer.hpp, on random data; copies are checked element by element.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/backend.hpp"

namespace scanlab::bench {

struct CeilingOptions {
  std::int64_t copy_bytes = 0;  // bytes per copy buffer; 0: 1 GiB on CUDA, max(8 x last-level cache, 128 MiB) on a host
  int repetitions = 0;          // 0: 20 on CUDA, 10 on a host
  int warmups = 2;
  bool quick = false;           // small sizes and few repetitions: for tests and CI, not for publishing
};

// Measures every ceiling on the backend's Kokkos space and returns the ceilings JSON
// (schema "scanlab.ceilings/1"; reports/README.md documents every field). Throws for backends
// without a Kokkos space (reference, exec).
nlohmann::json measure_ceilings(const Backend& backend, const CeilingOptions& options);

// The four numbers a sweep and a roofline use, read from a ceilings JSON's "roofline" object.
struct Roofline {
  double memory_bytes_per_s = 0;  // the fastest device-to-device copy measured, bytes read + written
  double l2_bytes_per_s = 0;
  double fp32_flops_per_s = 0;    // 2 per FMA
  double sfu_ops_per_s = 0;       // exp2 rate
  std::string memory_label;       // "HBM" on a GPU, "DRAM" on a host
};
// Throws std::invalid_argument naming the field when one is missing or not positive.
Roofline roofline_of(const nlohmann::json& ceilings);

}  // namespace scanlab::bench
