// selective_scan's direct_io forward (selective_scan_direct.hpp) instantiated for Kokkos::OpenMP: a unit
// of its own, so that editing that kernel rebuilds this unit alone (selective_scan.cpp says why
// per space and half).
#include "selective_scan_direct.hpp"

namespace scanlab::kernels {

#if defined(KOKKOS_ENABLE_OPENMP)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE_DIRECT(Kokkos::OpenMP)
#endif

}  // namespace scanlab::kernels
