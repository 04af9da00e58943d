// The selective_scan kernels' forward half instantiated for Kokkos::OpenMP (selective_scan.cpp says why
// per space and half).
#include "selective_scan.hpp"

namespace scanlab::kernels {

#if defined(KOKKOS_ENABLE_OPENMP)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE_FORWARD(, Kokkos::OpenMP)
#endif

}  // namespace scanlab::kernels
