#!/usr/bin/env bash
# Session 35, call3 (call2 again after the swizzle fix): direct_io 2 (the team's rows of u and delta staged through scratch, one warp a
# team; speed-notes §61) against direct_io 1 as the heuristic configures it, one binary, one call:
# the forward on the six dstate-16/32 shapes at tiles of 32 and dstate 64 at 16 (32 steps of B
# and C at dstate 64 pass Kokkos 3.4's 40 KB), alternating and each twice; then direct_io 2's
# checks against the oracle (200 cases), the CUDA kernel tests and compute-sanitizer.
#   DEADLINE=540 CARRY_DIR=build/carry-s35c bash reports/results/h100/2026-12-06-s35/call3/run.sh $OUT/s35c
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
ROWS64='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":16}'
SH16=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x32x2048
for pass in "" -again; do
  SH=$SH16 ab "$S" "main$pass" fwd
  SH=$SH16 ab "$S" "rows$pass" fwd --config "$ROWS"
  SH=8x4096x64x2048 ab "$S" "main64$pass" fwd
  SH=8x4096x64x2048 ab "$S" "rows64$pass" fwd --config "$ROWS64"
done
run "$S" check selective_scan --backend cuda --impl tiled --config "$ROWS" --cases 200 --seed 35 > "$O/check-rows.txt" 2>&1
echo "exit $?" >> "$O/check-rows.txt"
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
sanitize rows "$ROWS"
sanitize rows-segments "${ROWS%\}},\"fwd_time_segments\":3}"
call_end
