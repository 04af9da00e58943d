#!/usr/bin/env bash
# Session 40, call5 (call4 again, asked for the H200, lent another H100; run as DEADLINE=500 ... $OUT/s40e):
# Session 40, call4: §68 with kRollRarePaths (the two-thread kernels in time segments keep the
# unrolled rare paths, whose rolled form spilled and ran (2,4096,16,8192) 0.96x in call3) against
# call2's binary (b525b71's direct_io 1 kernels), forward, each twice, alternating; the heuristic's
# checks; then the candidate beside mamba_ssm (forward, backward, fwd+bwd) for the stand.
# Prediction: (2,4096,16,8192) back to 1.00x (±1%), the other shapes as call3 (1.01-1.07x).
#   CARRY_DIR=build/carry-s40d bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s40b/scanlab.xz
#   bash scripts/peers/fetch.sh
#   DEADLINE=560 CARRY_DIR=build/carry-s40d bash reports/results/h100/2026-12-07-s40/call4/run.sh $OUT/s40d   # carry build/carry-s40d .peers/src
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
"$S" --version | head -n 1 > "$O/version.txt"; "$BASE" --version | head -n 1 > "$O/baseline-version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --cases 100 --seed 4044 > "$O/check-selective_scan.txt" 2>&1
echo "exit $?" >> "$O/check-selective_scan.txt"
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --config '{"time_tile":12,"chunk_len":8,"fwd_time_segments":3}' \
    --cases 60 --seed 4045 > "$O/check-rare-segments-laid-over.txt" 2>&1
echo "exit $?" >> "$O/check-rare-segments-laid-over.txt"
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
ceilings
for pass in "" -again; do
  ab "$BASE" "base$pass" fwd
  ab "$S" "new$pass" fwd
done
beside_peer mamba_ssm
call_end
for b in new new-again; do
  echo "== base -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-base.json" "$O/selective_scan-$b.json" | tail -n 12
done
grep -A12 -i 'speedup\|ratio' "$O/report/report.md" | head -60
