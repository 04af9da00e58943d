// The selective_scan kernels' forward half instantiated for Kokkos::Cuda (selective_scan.cpp says why
// per space and half).
#include "selective_scan.hpp"

namespace scanlab::kernels {

#if defined(KOKKOS_ENABLE_CUDA)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE_FORWARD(, Kokkos::Cuda)
#endif

}  // namespace scanlab::kernels
