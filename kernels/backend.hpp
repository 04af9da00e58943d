// Backends a user can name (--backend): the float64 oracle, the Kokkos execution spaces compiled
// into this binary, or an external implementation speaking the case-directory protocol.
// Nothing here includes Kokkos, so the CLI and the properties can name backends cheaply.
#pragma once

#include <string>
#include <vector>

namespace scanlab {

enum class BackendKind { reference, serial, openmp, cuda, exec };

struct Backend {
  BackendKind kind = BackendKind::reference;
  std::string command;  // exec:CMD only

  bool is_kokkos() const {
    return kind == BackendKind::serial || kind == BackendKind::openmp || kind == BackendKind::cuda;
  }
  std::string name() const;  // "openmp", "exec:python3 x.py", ...
};

// Parses reference|serial|openmp|cuda|auto|exec:CMD. "auto" picks the fastest compiled-in Kokkos
// space (cuda, then openmp, then serial). A space not compiled in is an error naming the preset.
Backend parse_backend(const std::string& text);
std::vector<BackendKind> compiled_kokkos_backends();
std::string to_string(BackendKind kind);

// A description of the Kokkos configuration and device, for context blocks and `scanlab info`.
std::string kokkos_configuration();
std::string device_name(BackendKind kind);

// Runs a small kernel (y = a·x + y, then a sum) on the given space and checks the result
// against the host; returns a message, empty when correct. The H200 smoke test calls this.
std::string smoke_check(BackendKind kind, long n);

}  // namespace scanlab
