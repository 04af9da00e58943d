#!/usr/bin/env bash
# Session 34, call9: does the row stride's power of two cost the warp-specialized probe's loads
# (speed-notes §59)? The probe at two shapes with rows padded by 0, 4 and 32 floats.
#   DEADLINE=300 CARRY_DIR=build/carry-s34a bash reports/results/h100/2026-12-06-s34/call9/run.sh $OUT/s34i
#   (carry build/carry-s34a build/probes)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
for shape in "8 4096 2048" "8 2048 2048"; do
  for pad in 0 4 32; do
    run build/probes/ws_forward $shape all $pad >> "$O/probe.txt" 2>&1
    echo "exit $?" >> "$O/probe.txt"
  done
done
grep -E 'SMs|W4P4T8 |W2P2T8 |nostores|tiledin|timetiled|exit' "$O/probe.txt"
call_end
