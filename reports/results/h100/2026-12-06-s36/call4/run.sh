#!/usr/bin/env bash
# Session 36, call4: direct_io 2 with its tile store as one 16-byte store (store4_global; call3's
# SASS had four 4-byte stores a piece) against direct_io 1 as the heuristic sets it, one binary,
# alternating, each twice, at three dstate-16 shapes; ncu's STG count and time of direct_io 2 at the
# anchor; its checks against the oracle, the CUDA kernel tests and compute-sanitizer (speed-notes §62).
#   DEADLINE=420 CARRY_DIR=build/carry-s36d bash reports/results/h100/2026-12-06-s36/call4/run.sh $OUT/s36d
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
SH=8x4096x16x2048,8x2048x16x2048,2x4096x16x8192
for pass in "" -again; do
  ab "$S" "main$pass" fwd
  ab "$S" "rows$pass" fwd --config "$ROWS"
done
run ncu --clock-control none --kernel-name-base demangled -k regex:ForwardDirect --launch-count 1 \
    --metrics smsp__inst_executed.sum,gpu__time_duration.sum,sass__inst_executed_per_opcode --print-metric-instances details \
    "$S" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048 \
    --config "$ROWS" --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json \
    --direction fwd > "$O/ncu-rows.txt" 2>&1
grep -E 'gpu__time_duration|inst_executed.sum' "$O/ncu-rows.txt"; grep -o "STG: [0-9,]*" "$O/ncu-rows.txt"
run "$S" check selective_scan --backend cuda --impl tiled --config "$ROWS" --cases 100 --seed 361 > "$O/check-rows.txt" 2>&1
echo "exit $?" >> "$O/check-rows.txt"; grep -E "failures|exit" "$O/check-rows.txt"
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"; tail -2 "$O/tests-cuda.txt"
sanitize rows "$ROWS"
call_end
