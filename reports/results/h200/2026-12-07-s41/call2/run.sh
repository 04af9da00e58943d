#!/usr/bin/env bash
# Session 41, call2: §69, the backward's 32-row state loop with chunk_normal at compile time (its
# 16 exps an iteration in the iteration's one basic block, beside the previous block's column sums
# and the B and C reads, instead of in two arms of eight), against call1's binary (ae0cc23, main's
# kernels): the backward, each binary twice, alternating, at four shapes (the device time left,
# ~240 s after the failed starts, fits no more); then 40 oracle cases with the heuristic.
# Prediction: backward 1.03-1.08x at the dstate-16 shapes (the form the heuristic runs there),
# 1.00-1.05x at dstate 32 and 64 (the unstaged 32-row form, also changed); bits unchanged.
# Not run: the device lent no machine for it (session 41). The candidate is branch
# s41-bwd-normal-form, or main with bwd-normal-form-not-measured.patch (beside this script) applied.
#   git apply reports/results/h200/2026-12-07-s41/call2/bwd-normal-form-not-measured.patch
#   bash scripts/build.sh cuda   # the candidate
#   CARRY_DIR=build/carry-s41b bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s41a/scanlab.xz
#   SH=8x4096x16x2048,8x2048x16x2048,4x5120x16x4096,8x4096x32x2048 DEADLINE=170 CARRY_DIR=build/carry-s41b \
#     bash reports/results/h200/2026-12-07-s41/call2/run.sh $OUT/s41b   # carry build/carry-s41b
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
call_end
for b in new new-again; do
  echo "== base -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-base.json" "$O/selective_scan-$b.json" | tail -n 12
done
