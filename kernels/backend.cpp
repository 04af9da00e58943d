#include "backend.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace scanlab {

std::string to_string(BackendKind kind) {
  switch (kind) {
    case BackendKind::reference: return "reference";
    case BackendKind::serial: return "serial";
    case BackendKind::openmp: return "openmp";
    case BackendKind::cuda: return "cuda";
    case BackendKind::exec: return "exec";
  }
  return "?";
}

std::string Backend::name() const { return kind == BackendKind::exec ? "exec:" + command : to_string(kind); }

std::vector<BackendKind> compiled_kokkos_backends() {
  std::vector<BackendKind> kinds;
#ifdef KOKKOS_ENABLE_SERIAL
  kinds.push_back(BackendKind::serial);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  kinds.push_back(BackendKind::openmp);
#endif
#ifdef KOKKOS_ENABLE_CUDA
  kinds.push_back(BackendKind::cuda);
#endif
  return kinds;
}

Backend parse_backend(const std::string& text) {
  Backend b;
  if (text.rfind("exec:", 0) == 0) {
    b.kind = BackendKind::exec;
    b.command = text.substr(5);
    if (b.command.empty()) throw std::invalid_argument("--backend exec: needs a command, e.g. exec:'python3 impl.py'");
    return b;
  }
  const auto compiled = compiled_kokkos_backends();
  if (text == "auto") {
    if (compiled.empty()) throw std::invalid_argument("no Kokkos backend is compiled into this binary");
    b.kind = compiled.back();
    return b;
  }
  for (auto k : {BackendKind::reference, BackendKind::serial, BackendKind::openmp, BackendKind::cuda}) {
    if (text != to_string(k)) continue;
    b.kind = k;
    if (k != BackendKind::reference) {
      bool have = false;
      for (auto c : compiled) have = have || c == k;
      if (!have)
        throw std::invalid_argument("backend '" + text + "' is not compiled into this binary" +
                                    (k == BackendKind::cuda ? " (build the cuda preset: SCANLAB_PRESET=cuda ./scanlab ...)" : ""));
    }
    return b;
  }
  throw std::invalid_argument("unknown backend '" + text + "' (expected reference, serial, openmp, cuda, auto or exec:CMD)");
}

std::string kokkos_configuration() {
  std::ostringstream s;
  s << "Kokkos " << KOKKOS_VERSION / 10000 << "." << (KOKKOS_VERSION / 100) % 100 << "." << KOKKOS_VERSION % 100;
  s << "; spaces:";
  for (auto k : compiled_kokkos_backends()) s << " " << to_string(k);
#ifdef KOKKOS_ENABLE_OPENMP
  s << "; openmp threads " << Kokkos::OpenMP::impl_thread_pool_size();
#endif
#ifdef KOKKOS_ARCH_HOPPER90
  s << "; arch sm_90";
#endif
  return s.str();
}

std::string device_name(BackendKind kind) {
#ifdef KOKKOS_ENABLE_CUDA
  if (kind == BackendKind::cuda) {
    cudaDeviceProp prop;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess)
      return "cuda (device query failed)";
    std::ostringstream s;
    s << prop.name << " (sm_" << prop.major << prop.minor << ", " << prop.multiProcessorCount << " SMs, "
      << prop.l2CacheSize / (1 << 20) << " MiB L2)";
    return s.str();
  }
#endif
  (void)kind;
  std::ostringstream s;
  s << "host CPU (" << Kokkos::DefaultHostExecutionSpace::concurrency() << " threads)";
  return s.str();
}

template <class Space>
static std::string smoke_on(long n) {
  Kokkos::View<double*, typename Space::memory_space> x("smoke_x", n), y("smoke_y", n);
  const double a = 0.5;
  Kokkos::parallel_for(
      "scanlab_smoke_fill", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(long i) {
        x(i) = 1.0 + (i % 7);
        y(i) = 2.0 - (i % 3);
      });
  Kokkos::parallel_for(
      "scanlab_smoke_axpy", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(long i) { y(i) = a * x(i) + y(i); });
  double sum = 0;
  Kokkos::parallel_reduce(
      "scanlab_smoke_sum", Kokkos::RangePolicy<Space>(0, n), KOKKOS_LAMBDA(long i, double& acc) { acc += y(i); }, sum);
  Kokkos::fence();
  double expected = 0;
  for (long i = 0; i < n; ++i) expected += a * (1.0 + (i % 7)) + (2.0 - (i % 3));
  if (std::fabs(sum - expected) > 1e-9 * std::fabs(expected)) {
    std::ostringstream s;
    s.precision(17);
    s << "smoke kernel on " << Space::name() << ": sum " << sum << ", expected " << expected;
    return s.str();
  }
  return "";
}

std::string smoke_check(BackendKind kind, long n) {
  switch (kind) {
#ifdef KOKKOS_ENABLE_SERIAL
    case BackendKind::serial: return smoke_on<Kokkos::Serial>(n);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    case BackendKind::openmp: return smoke_on<Kokkos::OpenMP>(n);
#endif
#ifdef KOKKOS_ENABLE_CUDA
    case BackendKind::cuda: return smoke_on<Kokkos::Cuda>(n);
#endif
    default: return "backend " + to_string(kind) + " has no Kokkos space in this binary";
  }
}

}  // namespace scanlab
