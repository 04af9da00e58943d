#!/usr/bin/env bash
# Session 42, call5: `scanlab tune` of the forward at the five dstate-16 issue shapes (main
# 1f4522f's kernels, call3's binary), up to 48 candidates a shape, report only: does any registry
# config beat the heuristic's forward where it reaches 34-49% of the SFU ceiling (the anchor: 60%)?
# Prediction: the heuristic within 3% of the best at each shape (tuned in sessions 22-40).
#   DEADLINE=300 CARRY_DIR=build/carry-s42c bash reports/results/h100/2026-12-07-s42/call5/run.sh $OUT/s42e   # carry build/carry-s42c
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
run "$S" tune selective_scan --backend cuda --direction fwd --no-cache --max-candidates 48 --repetitions 5 \
    --shapes 2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x16x2048 \
    --out "$O/tune-fwd.json" > "$O/tune-fwd.txt" 2>&1
echo "exit $?" >> "$O/tune-fwd.txt"
call_end
tail -n 40 "$O/tune-fwd.txt" | cut -c1-200
