#!/usr/bin/env bash
# Runs on the GPU machine (device tool), over the carried, cross-compiled build/cuda/scanlab:
# the test suite with CUDA compiled in (so the properties' backend agreement includes CUDA vs
# host), `scanlab check` for every op on CUDA, and the 64-bit indexing check. Logs and
# summaries go to $OUT (or ./out/h200 when run elsewhere).
#   bash scripts/gpu/h200-checks.sh [CASES_SCALE]   (1 = the issues' counts: 5000/5000/5000/1000)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-out/h200}"; mkdir -p "$out"
bin=build/cuda/scanlab
scale="${1:-1}"
status=0
step() {  # step NAME COMMAND...: runs, tees the log to $out/NAME.log, records the exit code
  local name="$1"; shift
  echo "=== $name: $*" | tee "$out/$name.log"
  local start=$SECONDS
  "$@" 2>&1 | tee -a "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc after $((SECONDS - start)) s" | tee -a "$out/$name.log"
  [ "$rc" = 0 ] || status=1
}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv | tee "$out/device.txt"
export RC_PARAMS="max_success=100"
[ "${CHECKS_TESTS:-1}" = 1 ] && step tests "$bin" test --gtest_brief=1
[ "${CHECKS_ONLY_TESTS:-0}" = 1 ] && exit $status
step check_selective_scan "$bin" check selective_scan --cases $((5000 * scale)) --seed 1 --backend cuda
step check_state_space_v1 "$bin" check state_space_v1 --cases $((5000 * scale)) --seed 2 --backend cuda
step check_s7_scan "$bin" check s7_scan --cases $((5000 * scale)) --seed 3 --backend cuda
step check_s7_inner "$bin" check s7_inner --cases $((1000 * scale)) --seed 4 --backend cuda
step large_index "$bin" large-index selective_scan --backend cuda
exit $status
