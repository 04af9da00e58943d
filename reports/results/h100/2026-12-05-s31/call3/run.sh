#!/usr/bin/env bash
# Session 31, call 3: call2 cut to what ~100 s of device time holds (refused starts spent the
# rest): the heuristic's new bwd_summary_blocks rule (main 8f2c3af's kernels, build/carry-s31b)
# against c9be33c's kernels, the backward at the segmented shapes and two controls, the forward at
# the forward-segmented shapes (a control: the forward is main's), then the GPU checks of the
# heuristic. No peer: mamba_ssm's build alone takes ~90 s there.
# Prediction: as call2's (backward 1.14-1.22x at the segmented shapes, the controls 1.00-1.02x, the
# forward 1.00x).
#   DEADLINE=100 bash reports/results/h100/2026-12-05-s31/call3/run.sh $OUT/s31c   # carry build/carry-s31b
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s31b}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
ceilings
SEG="2x4096x16x8192,8x2048x16x2048,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096,8x4096x16x2048,4x5120x16x4096"
SH="$SEG" ab "$BASE" main bwd --repetitions 3
SH="$SEG" ab "$S" rule bwd --repetitions 3
FSEG="2x4096x16x8192,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096"
SH="$FSEG" ab "$BASE" main-fwd fwd --repetitions 3
SH="$FSEG" ab "$S" rule-fwd fwd --repetitions 3
gpu_checks 311 100
call_end
for pair in "main rule" "main-fwd rule-fwd"; do
  set -- $pair; echo "== $1 -> $2"; "$S" compare --min-change 0.02 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 10
done
