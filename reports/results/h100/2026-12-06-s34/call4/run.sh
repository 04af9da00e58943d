#!/usr/bin/env bash
# Session 34, call4: the warp-specialized probe with its inputs through a cp.async ring of S tiles (speed-notes §59) beside main's forward, one
# call: main's sweep (fwd) of the three shapes, the probe at each, main's sweep again.
#   DEADLINE=300 CARRY_DIR=build/carry-s34a bash reports/results/h100/2026-12-06-s34/call4/run.sh $OUT/s34d
#   (carry build/carry-s34a build/probes)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ab "$S" main fwd
for shape in "8 4096 2048" "2 4096 8192" "8 2048 2048"; do
  run build/probes/ws_forward $shape >> "$O/probe.txt" 2>&1
  echo "exit $?" >> "$O/probe.txt"
done
ab "$S" main-again fwd
cat "$O/probe.txt"
call_end
