#!/usr/bin/env bash
# The README's test command: sets up what is missing, builds, runs every test through ctest.
#   scripts/test.sh [cpu|cpu-sanitize]   (default cpu)
# Extra arguments after the preset go to ctest (e.g. -R properties_selective_scan).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
preset="${1:-cpu}"; shift || true
case "$preset" in cpu|cpu-sanitize) ;; *) echo "test.sh: preset must be cpu or cpu-sanitize" >&2; exit 2 ;; esac
bash "$SCANLAB_ROOT/scripts/setup.sh" cpu python
echo "[test] building preset $preset"
bash "$SCANLAB_ROOT/scripts/build.sh" "$preset"
cd "$SCANLAB_ROOT"
ctest --test-dir "build/$preset" --output-on-failure -j "$(nproc)" "$@"
