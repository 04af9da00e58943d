// The selective_scan kernels instantiated for Kokkos::Cuda (selective_scan.cpp says why per space).
#include "selective_scan.hpp"

namespace scanlab::kernels {

#if defined(KOKKOS_ENABLE_CUDA)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE(, Kokkos::Cuda)
#endif

}  // namespace scanlab::kernels
