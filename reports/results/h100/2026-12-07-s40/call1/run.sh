#!/usr/bin/env bash
# Session 40, call1: speed-notes §67 (direct_io 2's whole tiles walked with one range test a tile)
# timed against direct_io 1 in the same binary, and session 39's open A/B on the machine lent
# (dc0f97c's forward against main's direct_io 1, which §67 does not touch), each twice, alternating.
# Checks first: direct_io 2 laid over 150 oracle cases, its memcheck and racecheck (whole and in 3
# segments), the kernel tests and the corpus.
# Prediction: direct_io 2 1.05-1.15x faster than direct_io 1 at the anchor, 1.0-1.1x at
# (8,2048,16,2048); dc0f97c and main's forward within 2% of each other except the anchor (main
# 1.08x on an H100) and dstate 32 (main 0.97x on an H100).
#   bash scripts/gpu/build-baseline.sh dc0f97c
#   CARRY_DIR=build/carry-s40a bash scripts/gpu/carry.sh pack build/cuda/scanlab build/baseline/scanlab
#   DEADLINE=560 CARRY_DIR=build/carry-s40a bash reports/results/h100/2026-12-07-s40/call1/run.sh $OUT/s40a   # carry build/carry-s40a
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"; "$BASE" --version | head -n 1 > "$O/baseline-version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --config "$ROWS" --cases 150 --seed 4040 \
    > "$O/check-rows-laid-over.txt" 2>&1
echo "exit $?" >> "$O/check-rows-laid-over.txt"
sanitize rows "$ROWS"
sanitize rows-segments "${ROWS%\}},\"fwd_time_segments\":3}"
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
ceilings
SH16=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096
for pass in "" -again; do
  ab "$BASE" "dc0f97c$pass" fwd
  ab "$S" "main$pass" fwd
  SH=$SH16 ab "$S" "rows$pass" fwd --config "$ROWS"
done
call_end
for b in main main-again; do
  echo "== dc0f97c -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-dc0f97c.json" "$O/selective_scan-$b.json" | tail -n 16
done
for b in rows rows-again; do
  echo "== main -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-main.json" "$O/selective_scan-$b.json" | tail -n 8
done
