#!/usr/bin/env bash
# Session 34, call16: §59's last form, staged_direct (one thread a channel as direct_io, its warp's
# rows moved through shared memory by cp.async T/4 lanes a row), beside the warp-specialized forms,
# at three shapes; main's forward swept before and after.
#   DEADLINE=300 CARRY_DIR=build/carry-s34a bash reports/results/h100/2026-12-06-s34/call16/run.sh $OUT/s34p
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
grep -E 'SMs|W4P4T8 |W2P2T8 |D[24]T|timetiled|exit' "$O/probe.txt"
call_end
