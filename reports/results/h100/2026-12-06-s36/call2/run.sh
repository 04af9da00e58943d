#!/usr/bin/env bash
# Session 36, call2: direct_io 2 with fixed pieces (a full tile of 32 steps: a thread's 8 pieces at
# one piece of 8 rows, offsets fixed a pass; speed-notes §62) against direct_io 1 as the heuristic
# configures it, one binary, alternating, each twice, on four dstate-16/32 shapes, teams of 32 (64
# no longer fit: B and C rows of 32 steps). Then one ncu of the forward at the anchor (instructions against call4's 416 M / 306 M), the
# checks against the oracle (200 cases), the CUDA kernel tests and compute-sanitizer.
#   DEADLINE=540 CARRY_DIR=build/carry-s36b bash reports/results/h100/2026-12-06-s36/call2/run.sh $OUT/s36b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
SH=8x4096x16x2048,8x2048x16x2048,2x4096x16x8192,8x4096x32x2048
for pass in "" -again; do
  ab "$S" "main$pass" fwd
  ab "$S" "rows$pass" fwd --config "$ROWS"
done
run ncu --clock-control none --kernel-name-base demangled -k regex:ForwardDirect --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
    --metrics smsp__inst_executed.sum,gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_active \
    "$S" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048 \
    --config "$ROWS" --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json \
    --direction fwd > "$O/ncu-rows.txt" 2>&1
grep -E 'Duration|inst_executed|Registers|Achieved Occ|Warp Cycles Per Issued|Issue Slots Busy|l1tex__|smsp__|Memory Throughput|DRAM Throughput|Compute \(SM\)' "$O/ncu-rows.txt" | cut -c1-120 | head -20
run "$S" check selective_scan --backend cuda --impl tiled --config "$ROWS" --cases 200 --seed 36 > "$O/check-rows.txt" 2>&1
echo "exit $?" >> "$O/check-rows.txt"; tail -3 "$O/check-rows.txt"
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"; tail -3 "$O/tests-cuda.txt"
sanitize rows "$ROWS"
sanitize rows-segments "${ROWS%\}},\"fwd_time_segments\":3}"
call_end
