# Sourced by every scanlab script: where the dependencies live and how their builds are keyed.
# A build's key hashes everything that changes its output (version, patch, flags), so a changed
# patch gets a fresh prefix and a second run finds the old one in seconds.
scanlab_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export SCANLAB_ROOT="$scanlab_root"
export SCANLAB_DEPS="${SCANLAB_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/scanlab}"

SCANLAB_KOKKOS_VERSION=3.4.01
SCANLAB_KOKKOS_PATCH="$scanlab_root/scripts/kokkos-3.4.01-cuda13.patch"
SCANLAB_KOKKOS_FLAGS_COMMON="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_LIBDIR=lib -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON"
SCANLAB_KOKKOS_FLAGS_CUDA="-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_HOPPER90=ON"
SCANLAB_BENCHMARK_VERSION=1.7.1
SCANLAB_BENCHMARK_FLAGS="-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBENCHMARK_ENABLE_TESTING=OFF -DBENCHMARK_ENABLE_GTEST_TESTS=OFF -DBENCHMARK_ENABLE_WERROR=OFF -DGIT_VERSION=1.7.1"

scanlab_key() { printf '%s' "$*" | sha256sum | cut -c1-12; }
_patch_hash=$(sha256sum "$SCANLAB_KOKKOS_PATCH" | cut -c1-12)
export SCANLAB_KOKKOS_OPENMP="$SCANLAB_DEPS/kokkos-$SCANLAB_KOKKOS_VERSION-openmp-$(scanlab_key "$_patch_hash $SCANLAB_KOKKOS_FLAGS_COMMON")"
export SCANLAB_KOKKOS_CUDA="$SCANLAB_DEPS/kokkos-$SCANLAB_KOKKOS_VERSION-cuda-$(scanlab_key "$_patch_hash $SCANLAB_KOKKOS_FLAGS_COMMON $SCANLAB_KOKKOS_FLAGS_CUDA")"
export SCANLAB_BENCHMARK="$SCANLAB_DEPS/benchmark-$SCANLAB_BENCHMARK_VERSION-$(scanlab_key "$SCANLAB_BENCHMARK_FLAGS")"
export SCANLAB_VENV="$SCANLAB_DEPS/venv-$(scanlab_key "$(python3 --version 2>&1) $(cat "$scanlab_root/scripts/requirements.txt")")"
unset _patch_hash
