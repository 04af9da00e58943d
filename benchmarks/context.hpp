// Where a measurement was made: the block every ceilings and sweep JSON carries, so a number is
// never separated from the machine, build and commit that produced it.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/backend.hpp"

namespace scanlab::bench {

// {"host", "device", "cpu_model", "backend", "kokkos_configuration", "git_commit",
//  "scanlab_version", "date_utc"}
nlohmann::json machine_context(const Backend& backend);

// The cache a working set must exceed to measure memory rather than cache: the device's L2 on
// CUDA, the host's last-level cache otherwise (0 when the host does not say).
std::int64_t last_level_cache_bytes(BackendKind kind);
// The host's cache of the given level (per core for private caches), 0 when unknown.
std::int64_t host_cache_bytes(int level);

std::string utc_timestamp();  // 2026-11-29T16:07:00Z

}  // namespace scanlab::bench
