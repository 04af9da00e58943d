#!/usr/bin/env bash
# Session 38, call1. (1) Session 37's seed-372 segmentation fault: BASE (71eaff6, which saves the
# case it is running) repeats `check state_space_v1 --seed 372` so the crash leaves its case in
# $O/failures; the candidate, whose invalid_reason caps level-1 team scratch at 8 GiB over the
# resident teams, runs the same check. (2) direct_io 2's tile store with silu alone compiled in
# (other gates run as direct_io 1) against BASE: direct_io 1 as the heuristic sets it and direct_io
# 2 (ROWS), alternating, each twice; the candidate's checks, kernel tests and compute-sanitizer.
#   (build/base38/scanlab: 71eaff6; build/cuda/scanlab: the candidate)
#   CARRY_DIR=build/carry-s38b bash scripts/gpu/carry.sh pack build/cuda/scanlab build/base38/scanlab
#   DEADLINE=570 CARRY_DIR=build/carry-s38b bash reports/results/h100/2026-12-07-s38/call1/run.sh $OUT/s38b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
for bin in "$BASE" "$S"; do
  name=$(basename "$(dirname "$bin")")
  SCANLAB_FAILURE_DIR="$O/failures-$name" run "$bin" check state_space_v1 --backend cuda --cases 100 --seed 372 \
      > "$O/check-$name-372.txt" 2>&1
  echo "exit $?" >> "$O/check-$name-372.txt"
  echo "$name 372: $(tail -n 4 "$O/check-$name-372.txt" | tr '\n' ' ' | cut -c1-400)"
done
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
SH=8x4096x16x2048,8x2048x16x2048,2x4096x16x8192,16x1536x16x1024,4x5120x16x4096,8x4096x32x2048
CONFIG_SH=8x4096x16x2048,8x2048x16x2048,2x4096x16x8192,16x1536x16x1024,4x5120x16x4096 ab_twice "$ROWS"
gpu_checks 380 200
run "$S" check selective_scan --backend cuda --impl tiled --config "$ROWS" --cases 100 --seed 381 > "$O/check-rows.txt" 2>&1
echo "exit $?" >> "$O/check-rows.txt"
sanitize rows "$ROWS"
call_end
