#!/usr/bin/env bash
# Builds every probe here with nvcc alone (no Kokkos, no CMake) into build/probes/: plain-CUDA
# experiments that decide what goes into the kernels (README, "GPU runs"). CI compiles them too,
# so that a change to a kernel header they include (kernels/sfu.hpp) cannot leave them broken.
#   bash scripts/gpu/probes/build.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
if ! command -v nvcc >/dev/null; then export PATH="/usr/local/cuda/bin:$PATH"; fi
command -v nvcc >/dev/null || { echo "probes: no nvcc (CUDA 13 at /usr/local/cuda)" >&2; exit 2; }
mkdir -p build/probes
for source in scripts/gpu/probes/*.cu; do
  name=$(basename "$source" .cu)
  nvcc -O3 -std=c++17 -arch=sm_90 -I scripts/gpu/probes/stub -I kernels "$source" -o "build/probes/$name"
  echo "probe built: build/probes/$name"
done
