#!/usr/bin/env bash
# The README's main job on the default CPU backend (OpenMP): check the float64 oracle against
# the peers' goldens and its own finite differences, test the kernels and fuzz every op against
# the oracle (`scanlab check`),
# measure this machine's ceilings, run a short sweep of every op, and write a report.
#   bash scripts/main-job.sh [OUT_DIR]      (default out/main-job)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/out/main-job}"
mkdir -p "$out"
scanlab() { "$root/scanlab" "$@"; }
step() { echo; echo "=== $*"; }

step "1/6 oracle: peers' goldens, finite differences, error-bound mutation tests"
scanlab test --gtest_filter='ReferenceSelectiveScan.*:ReferenceStateSpaceV1.*:ReferenceS7Scan.*:ReferenceS7Inner.*' --gtest_brief=1

step "2/6 kernels against the oracle on serial and openmp (every implementation and config family)"
scanlab test --gtest_filter='KernelSelectiveScan.*:KernelS7Scan.*:KernelS7Inner.*:LargeIndexCheck.*' --gtest_brief=1

# A failing fuzz case is shrunk and saved under $out/failures; the job goes on to measure and
# report, and exits non-zero at the end, so nothing already computed is lost.
step "3/6 fuzz every op against the oracle on openmp (random sizes, options, value regimes and configs)"
export SCANLAB_FAILURE_DIR="$out/failures"
fuzz_status=0
for spec in selective_scan:2000 state_space_v1:500 s7_scan:2000 s7_inner:200; do
  scanlab check "${spec%%:*}" --cases "${spec##*:}" --backend openmp | tee "$out/check-${spec%%:*}.txt" || fuzz_status=1
done

step "4/6 ceilings of this machine"
scanlab ceilings --backend openmp --out "$out/ceilings.json"

step "5/6 short sweeps (openmp)"
common=(--backend openmp --ceilings "$out/ceilings.json" --repetitions 5 --min-time 0.02)
scanlab sweep selective_scan --batch 2 --dim 64,128 --dstate 16 --seqlen 256:1024:x2 --direction fwd,bwd,fwdbwd \
  "${common[@]}" --out "$out/selective_scan.json"
scanlab sweep state_space_v1 --batch 2 --dim 128 --dstate 16 --seqlen 512 --direction fwd,fwdbwd \
  "${common[@]}" --out "$out/state_space_v1.json"
scanlab sweep s7_scan --batch 2 --dim 32 --dstate 16 --seqlen 256:1024:x2 --direction fwd,fwdbwd \
  "${common[@]}" --out "$out/s7_scan.json"
scanlab sweep s7_inner --batch 1 --seqlen 64 --dim 32 --dstate 8 --direction fwd,fwdbwd \
  "${common[@]}" --out "$out/s7_inner.json"

step "6/6 report"
scanlab report "$out/selective_scan.json" "$out/state_space_v1.json" "$out/s7_scan.json" "$out/s7_inner.json" --out "$out/report"
echo
if [ "$fuzz_status" != 0 ]; then
  echo "main job: a fuzz check FAILED; shrunk cases in $out/failures (report in $out/report/)" >&2
  exit 1
fi
echo "main job done: fuzz summaries $out/check-*.txt, report in $out/report/"
