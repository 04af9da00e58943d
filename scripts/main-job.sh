#!/usr/bin/env bash
# The README's main job on the default CPU backend (OpenMP): check the float64 oracle against
# the peers' goldens and its own finite differences, fuzz-test the kernels against the oracle,
# measure this machine's ceilings, run a short sweep of every op, and write a report.
#   bash scripts/main-job.sh [OUT_DIR]      (default out/main-job)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/out/main-job}"
mkdir -p "$out"
scanlab() { "$root/scanlab" "$@"; }
step() { echo; echo "=== $*"; }

step "1/5 oracle: peers' goldens, finite differences, error-bound mutation tests"
scanlab test --gtest_filter='ReferenceSelectiveScan.*:ReferenceStateSpaceV1.*:ReferenceS7Scan.*:ReferenceS7Inner.*' --gtest_brief=1

step "2/5 kernels against the oracle on serial and openmp (every implementation and config family)"
scanlab test --gtest_filter='KernelSelectiveScan.*:KernelS7Scan.*:KernelS7Inner.*:LargeIndexCheck.*' --gtest_brief=1

step "3/5 ceilings of this machine"
scanlab ceilings --backend openmp --out "$out/ceilings.json"

step "4/5 short sweeps (openmp)"
common=(--backend openmp --ceilings "$out/ceilings.json" --repetitions 5 --min-time 0.02)
scanlab sweep selective_scan --batch 2 --dim 64,128 --dstate 16 --seqlen 256:1024:x2 --direction fwd,bwd,fwdbwd \
  "${common[@]}" --out "$out/selective_scan.json"
scanlab sweep state_space_v1 --batch 2 --dim 128 --dstate 16 --seqlen 512 --direction fwd,fwdbwd \
  "${common[@]}" --out "$out/state_space_v1.json"
scanlab sweep s7_scan --batch 2 --dim 32 --dstate 16 --seqlen 256:1024:x2 --direction fwd,fwdbwd \
  "${common[@]}" --out "$out/s7_scan.json"
scanlab sweep s7_inner --batch 1 --seqlen 64 --dim 32 --dstate 8 --direction fwd,fwdbwd \
  "${common[@]}" --out "$out/s7_inner.json"

step "5/5 report"
scanlab report "$out/selective_scan.json" "$out/state_space_v1.json" "$out/s7_scan.json" "$out/s7_inner.json" --out "$out/report"
echo
echo "main job done: report in $out/report/"
