#!/usr/bin/env bash
# Session 42, call3: §70's second form, bwd_normal_loop as a kernel of its own (BackwardTiled's
# kNormalLoop; the heuristic's at dstate 32 only), against main's kernels (ae0cc23's binary): the
# backward as the heuristic sets it, each twice, alternating, at the seven shapes; then the kernel
# tests (among them the normal-loop kernel against the branching one, bit for bit, on subnormal
# decays) and 60 oracle cases.
# Its SASS, read here before the call (/tmp/sasscmp.py in speed-notes §70): the four kNormalLoop
# kernels are instruction for instruction call1's candidate's unstaged two-state kernels, and every
# other kernel (56 backward, 531 others) is main's. Prediction: 1.07x at dstate 32 (call1), the
# same within noise elsewhere.
#   bash scripts/build.sh cuda
#   CARRY_DIR=build/carry-s42c bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s41a/scanlab.xz
#   CARRY_DIR=build/carry-s42c bash reports/results/h100/2026-12-07-s42/call3/run.sh $OUT/s42c   # carry build/carry-s42c
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
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --cases 60 --seed 4244 > "$O/check-selective_scan.txt" 2>&1
echo "exit $?" >> "$O/check-selective_scan.txt"
call_end
for b in new new-again; do
  echo "== base -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-base.json" "$O/selective_scan-$b.json" | tail -n 9 | cut -c1-20,130-
done
