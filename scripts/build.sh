#!/usr/bin/env bash
# Configures (once) and builds one CMake preset: scripts/build.sh [cpu|cpu-sanitize|cuda].
# Quiet when there is nothing to do, so ./scanlab starts fast.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
preset="${1:-cpu}"
cd "$SCANLAB_ROOT"
if [ "$preset" = cuda ] && ! command -v nvcc >/dev/null; then export PATH="/usr/local/cuda/bin:$PATH"; fi
# The dependency prefixes the build was configured with: a changed Kokkos patch or flags gives a
# new prefix (scripts/env.sh), and a build left on the old one would keep the old Kokkos silently.
if [ "$preset" = cuda ]; then deps="$SCANLAB_KOKKOS_CUDA $SCANLAB_BENCHMARK"; else deps="$SCANLAB_KOKKOS_OPENMP $SCANLAB_BENCHMARK"; fi
if [ ! -f "build/$preset/build.ninja" ]; then
  cmake --preset "$preset" > /dev/null
elif [ "$(cat "build/$preset/.scanlab-deps" 2>/dev/null)" != "$deps" ]; then
  echo "build.sh: build/$preset was configured with other dependency builds (a changed Kokkos patch or flags):" \
       "configuring it afresh, a full rebuild" >&2
  cmake --preset "$preset" --fresh > /dev/null
fi
echo "$deps" > "build/$preset/.scanlab-deps"
# Ninja prints one line when it is up to date; show the build log only when it built something.
log=$(mktemp)
if ! cmake --build --preset "$preset" > "$log" 2>&1; then
  cat "$log" >&2; rm -f "$log"; exit 1
fi
grep -q "no work to do" "$log" || grep -E "warning|Linking" "$log" | tail -20 >&2 || true
rm -f "$log"
