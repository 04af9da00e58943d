// The backend limits the selective_scan configs are checked against, and the host bridges. The
// kernels' explicit instantiations are one translation unit per execution space and half
// (selective_scan_serial.cpp; _openmp_forward.cpp and _openmp_backward.cpp; _cuda_forward.cpp and
// _cuda_backward.cpp), so a parallel build compiles them side by side: with the time-segment
// modes one unit for all spaces took over 30 minutes under ASan on two cores, and one unit per
// space left the -O3 build waiting ~500 s on each of the Serial and OpenMP units (Serial now
// compiles no state-split kernels: kTeamsOfOneThread).
#include "selective_scan.hpp"

#include <unistd.h>

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace scanlab::kernels {

namespace {

// A team functor that does nothing: asks a TeamPolicy for its limits.
template <class Space>
struct LimitProbe {
  KOKKOS_INLINE_FUNCTION void operator()(const typename Kokkos::TeamPolicy<Space>::member_type&) const {}
};

// The memory a space's level-1 team scratch lives in: the GPU's total, or the host's RAM. The
// GPU's is asked once: every config check reads the limits, and cudaMemGetInfo is a driver call.
template <class Space>
std::int64_t memory_bytes_of() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    static const std::int64_t bytes = [] {
      std::size_t free_bytes = 0, total_bytes = 0;
      const cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
      if (e != cudaSuccess)
        throw std::runtime_error(std::string("cuda's limits: cudaMemGetInfo: ") + cudaGetErrorName(e) + ": " +
                                 cudaGetErrorString(e));
      return std::int64_t(total_bytes);
    }();
    return bytes;
  }
#endif
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) throw std::runtime_error("host limits: sysconf cannot tell the host's memory");
  return std::int64_t(pages) * page;
}

template <class Space>
KernelBackendLimits limits_of(int team_cap) {
  KernelBackendLimits l;
  l.compiled = true;
  const Kokkos::TeamPolicy<Space> policy(1, 1);
  l.max_team_size = std::min(team_cap, policy.team_size_max(LimitProbe<Space>(), Kokkos::ParallelForTag()));
  l.max_scratch_bytes[0] = Kokkos::TeamPolicy<Space>::scratch_size_max(0);
  l.max_scratch_bytes[1] = Kokkos::TeamPolicy<Space>::scratch_size_max(1);
  l.concurrency = Space().concurrency();
  l.memory_bytes = memory_bytes_of<Space>();
  return l;
}

// CUDA's limits as Kokkos 3.4 states them (40 KiB of level-0 scratch leaves room for Kokkos' own
// team reduction space inside the 48 KiB a block gets without opt-in; 20 MiB at level 1), and a
// team cap of 256 threads: any register count up to 255 per thread still fits one block in an
// SM's 64 K registers, so a launch never fails for registers. An H200 runs 132 × 2048 threads.
[[maybe_unused]] KernelBackendLimits nominal_cuda_limits() {
  KernelBackendLimits l;
  l.compiled = false;
  l.max_team_size = 256;
  l.max_scratch_bytes[0] = 40 * 1024;
  l.max_scratch_bytes[1] = 20 * 1024 * 1024;
  l.concurrency = 132 * 2048;
  l.memory_bytes = std::int64_t(80) * 1000 * 1000 * 1000;  // an 80 GB H100, the smallest card it ran on
  return l;
}

void check_device_errors(BackendKind kind, const char* op) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (kind == BackendKind::cuda) {
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess)
      throw std::runtime_error(std::string(op) + " on cuda: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
  }
#endif
  (void)kind;
  (void)op;
}

// Kernel tensor name → case-directory name (state_space_v1 renames five of them).
using Names = std::map<std::string, std::string>;
std::string case_name(const Names& names, const std::string& kernel_name) {
  auto it = names.find(kernel_name);
  return it == names.end() ? kernel_name : it->second;
}

template <class View>
void upload(const View& view, const TensorMap& inputs, const std::string& name) {
  const Tensor& t = require(inputs, name);
  if (std::size_t(t.numel()) != view.extent(0))
    throw std::invalid_argument("tensor '" + name + "' has " + std::to_string(t.numel()) + " elements " +
                                shape_string(t.shape) + ", expected " + std::to_string(view.extent(0)));
  auto host = Kokkos::create_mirror_view(view);
  for (std::int64_t i = 0; i < t.numel(); ++i) host(i) = static_cast<float>(t[i]);
  Kokkos::deep_copy(view, host);
}

template <class View>
Tensor download(const View& view, const Shape& shape) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
  Tensor t(shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<double>(host(i));
  return t;
}

template <class Space>
TensorMap run_on(const SelectiveScanProblem& p, const TensorMap& inputs, const SelectiveScanConfig& c,
                 SequenceLayout layout, const Names& names) {
  auto t = allocate_selective_scan_tensors<Space>(p, layout);
  auto name = [&](const std::string& n) { return case_name(names, n); };
  upload(t.u, inputs, name("u"));
  upload(t.delta, inputs, name("delta"));
  upload(t.A, inputs, name("A"));
  upload(t.B, inputs, name("B"));
  upload(t.C, inputs, name("C"));
  if (p.has_D) upload(t.D, inputs, name("D"));
  if (p.has_z) upload(t.z, inputs, name("z"));
  if (p.has_delta_bias) upload(t.delta_bias, inputs, name("delta_bias"));
  if (p.has_initial_state) upload(t.initial_state, inputs, name("initial_state"));
  if (p.with_backward) upload(t.dout, inputs, name("dout"));
  if (p.has_dlast_state) upload(t.dlast_state, inputs, name("dlast_state"));

  // Every output starts as NaN, so an element a kernel fails to write cannot pass.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const auto* v : {&t.out, &t.last_state, &t.du, &t.ddelta, &t.dA, &t.dB, &t.dC, &t.dD, &t.dz, &t.ddelta_bias,
                        &t.dinitial_state})
    if (v->extent(0) > 0) Kokkos::deep_copy(*v, nan);

  auto w = allocate_selective_scan_workspace<Space>(p, c);
  Space space;
  selective_scan_forward<Space>(p, c, t, w, space);
  if (p.with_backward) selective_scan_backward<Space>(p, c, t, w, space);
  space.fence();
  check_device_errors(backend_kind_of<Space>(), "selective_scan");

  TensorMap result;
  const Shape state{p.batch, p.dim, p.dstate};
  auto shape_of = [&](const std::string& input) { return require(inputs, name(input)).shape; };
  result[name("out")] = download(t.out, shape_of("u"));
  result[name("last_state")] = download(t.last_state, state);
  if (p.with_backward) {
    auto grad = [&](const char* input, const auto& view) { result["d" + name(input)] = download(view, shape_of(input)); };
    grad("u", t.du);
    grad("delta", t.ddelta);
    grad("A", t.dA);
    grad("B", t.dB);
    grad("C", t.dC);
    if (p.has_D) grad("D", t.dD);
    if (p.has_z) grad("z", t.dz);
    if (p.has_delta_bias) grad("delta_bias", t.ddelta_bias);
    if (p.has_initial_state) grad("initial_state", t.dinitial_state);
  }
  return result;
}

TensorMap run_on_backend(const SelectiveScanProblem& p, const TensorMap& inputs, BackendKind backend,
                         const SelectiveScanConfig& c, SequenceLayout layout, const Names& names, const char* op) {
  p.validate();
  const std::string why = c.invalid_reason(p, backend);
  if (!why.empty())
    throw std::invalid_argument(std::string(op) + ": config " + c.to_json().dump() + " cannot run this problem on " +
                                to_string(backend) + ":\n" + why);
  switch (backend) {
#if defined(KOKKOS_ENABLE_SERIAL)
    case BackendKind::serial: return run_on<Kokkos::Serial>(p, inputs, c, layout, names);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    case BackendKind::openmp: return run_on<Kokkos::OpenMP>(p, inputs, c, layout, names);
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    case BackendKind::cuda: return run_on<Kokkos::Cuda>(p, inputs, c, layout, names);
#endif
    default: break;
  }
  throw std::invalid_argument(std::string(op) + ": backend " + to_string(backend) + " is not compiled into this binary");
}

}  // namespace

KernelBackendLimits selective_scan_backend_limits(BackendKind backend) {
  switch (backend) {
    case BackendKind::serial:
#if defined(KOKKOS_ENABLE_SERIAL)
      return limits_of<Kokkos::Serial>(1);
#else
      break;
#endif
    case BackendKind::openmp:
#if defined(KOKKOS_ENABLE_OPENMP)
      return limits_of<Kokkos::OpenMP>(1024);
#else
      break;
#endif
    case BackendKind::cuda: {
#if defined(KOKKOS_ENABLE_CUDA)
      KernelBackendLimits l = limits_of<Kokkos::Cuda>(256);
      l.max_team_size = 256;  // the probe's own (tiny) register count would allow 1024
      return l;
#else
      return nominal_cuda_limits();
#endif
    }
    default: break;
  }
  KernelBackendLimits none;
  none.max_team_size = 0;
  return none;
}

TensorMap run_selective_scan(const SelectiveScanProblem& p, const TensorMap& inputs, BackendKind backend,
                             const SelectiveScanConfig& config) {
  return run_on_backend(p, inputs, backend, config, SequenceLayout::batch_dim_seqlen, {}, "selective_scan");
}

TensorMap run_state_space_v1(const StateSpaceV1Problem& p, const TensorMap& inputs, BackendKind backend,
                             const SelectiveScanConfig& config) {
  p.validate();
  const Names names{{"u", "hidden_states"}, {"delta", "dt"}, {"z", "gate"},
                    {"last_state", "final_state"}, {"dlast_state", "dfinal_state"}};
  TensorMap result = run_on_backend(p.as_selective_scan(), inputs, backend, config, SequenceLayout::batch_seqlen_dim,
                                    names, "state_space_v1");
  if (p.has_conv_state) {  // passed through untouched; its gradient is zero
    const Tensor& conv = require(inputs, "conv_state");
    Tensor copy(conv.shape);
    for (std::int64_t i = 0; i < conv.numel(); ++i) copy[i] = static_cast<double>(static_cast<float>(conv[i]));
    result["conv_state"] = copy;
    if (p.with_backward) result["dconv_state"] = Tensor(conv.shape);
  }
  return result;
}

}  // namespace scanlab::kernels
