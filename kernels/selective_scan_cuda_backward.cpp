// The selective_scan kernels' backward half instantiated for Kokkos::Cuda (selective_scan.cpp says why
// per space and half).
#include "selective_scan_backward.hpp"

namespace scanlab::kernels {

#if defined(KOKKOS_ENABLE_CUDA)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE_BACKWARD(, Kokkos::Cuda)
#endif

}  // namespace scanlab::kernels
