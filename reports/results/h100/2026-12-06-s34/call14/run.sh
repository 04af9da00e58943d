#!/usr/bin/env bash
# Session 34, call14: the warp-specialized probe with two or four channels a walker thread (B and C read
# once for all of them; speed-notes §59), at the anchor and (8,2048,16,2048).
#   DEADLINE=300 CARRY_DIR=build/carry-s34a bash reports/results/h100/2026-12-06-s34/call14/run.sh $OUT/s34n
#   (carry build/carry-s34a build/probes)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
for shape in "8 4096 2048" "8 2048 2048"; do
  run build/probes/ws_forward $shape >> "$O/probe.txt" 2>&1
  echo "exit $?" >> "$O/probe.txt"
done
cat "$O/probe.txt"
call_end
