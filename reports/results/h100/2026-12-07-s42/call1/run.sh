#!/usr/bin/env bash
# Session 42, call1: session 41's call2 (§69, never run then) with the whole device call: the
# backward's 32-row state loop with chunk_normal at compile time (branch s41-bwd-normal-form,
# d4311fd's kernels), against main's kernels (b4293f5, binary ae0cc23/decb4e6-equivalent), each
# twice, alternating, at all seven shapes; then 40 oracle cases and the staged form's 200 cases
# with memcheck and racecheck.
# Prediction (session 41): backward 1.03-1.08x at dstate 16, 1.00-1.05x at dstate 32 and 64; bits
# unchanged.
#   git checkout s41-bwd-normal-form && bash scripts/build.sh cuda
#   CARRY_DIR=build/carry-s41b bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s41a/scanlab.xz
#   CARRY_DIR=build/carry-s41b bash reports/results/h100/2026-12-07-s42/call1/run.sh $OUT/s42a   # carry build/carry-s41b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"; "$BASE" --version | head -n 1 > "$O/baseline-version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ceilings
for pass in "" -again; do
  ab "$BASE" "base$pass" bwd
  ab "$S" "new$pass" bwd
done
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --cases 40 --seed 4142 > "$O/check-selective_scan.txt" 2>&1
echo "exit $?" >> "$O/check-selective_scan.txt"
staged_checks 4243
call_end
for b in new new-again; do
  echo "== base -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-base.json" "$O/selective_scan-$b.json" | tail -n 12
done
