// Times one region of device work. Device work is asynchronous, so a host clock alone would time
// the launch: on CUDA the interval is between two events recorded on the space's own stream
// (no host round trip inside the region); on host spaces the space is fenced at both ends and a
// steady clock read. Every timing in benchmarks/ goes through this one class.
#pragma once

#include <Kokkos_Core.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace scanlab::bench {

#if defined(KOKKOS_ENABLE_CUDA)
// Throws with the call's text and CUDA's message; exit code 0 proves nothing (METHOD.md).
inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}
#endif

template <class Space>
class IntervalTimer {
 public:
  explicit IntervalTimer(const Space& space) : space_(space) {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
      cuda_check(cudaEventCreate(&start_event_), "cudaEventCreate");
      cuda_check(cudaEventCreate(&stop_event_), "cudaEventCreate");
    }
#endif
  }
  ~IntervalTimer() {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
      cudaEventDestroy(start_event_);
      cudaEventDestroy(stop_event_);
    }
#endif
  }
  IntervalTimer(const IntervalTimer&) = delete;
  IntervalTimer& operator=(const IntervalTimer&) = delete;

  void start() {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
      cuda_check(cudaEventRecord(start_event_, space_.cuda_stream()), "cudaEventRecord");
      return;
    }
#endif
    space_.fence();
    start_time_ = std::chrono::steady_clock::now();
  }

  // Seconds since start(); waits for the region's work to finish.
  double stop() {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
      cuda_check(cudaEventRecord(stop_event_, space_.cuda_stream()), "cudaEventRecord");
      cuda_check(cudaEventSynchronize(stop_event_), "cudaEventSynchronize (a kernel in the timed region failed?)");
      cuda_check(cudaGetLastError(), "kernel launch in the timed region");
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, start_event_, stop_event_), "cudaEventElapsedTime");
      return double(ms) * 1e-3;
    }
#endif
    space_.fence();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count();
  }

 private:
  Space space_;
  std::chrono::steady_clock::time_point start_time_{};
#if defined(KOKKOS_ENABLE_CUDA)
  cudaEvent_t start_event_ = nullptr, stop_event_ = nullptr;
#endif
};

}  // namespace scanlab::bench
