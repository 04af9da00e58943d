// The selective_scan kernels instantiated for Kokkos::OpenMP (selective_scan.cpp says why per space).
#include "selective_scan.hpp"

namespace scanlab::kernels {

#if defined(KOKKOS_ENABLE_OPENMP)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE(, Kokkos::OpenMP)
#endif

}  // namespace scanlab::kernels
