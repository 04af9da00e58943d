// The selective_scan kernels instantiated for Kokkos::Serial (selective_scan.cpp says why per space).
#include "selective_scan_backward.hpp"
#include "selective_scan_direct.hpp"

namespace scanlab::kernels {

#if defined(KOKKOS_ENABLE_SERIAL)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE(, Kokkos::Serial)
SCANLAB_SELECTIVE_SCAN_INSTANTIATE_DIRECT(Kokkos::Serial)
#endif

}  // namespace scanlab::kernels
