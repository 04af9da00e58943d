#!/usr/bin/env bash
# Session 27, call 3: why §50 lost at dstate 64 (call2: 12.40 / 12.44 ms against 11.64 / 11.60)
# while the same kernel (unstaged, two states at once) gained 1.045x at dstate 32. ncu of one
# backward launch of each binary at dstate 64 and 32 (instructions, stall reasons, memory
# tables, occupancy), then the dstate-64 backward A/B in the other order (candidate first).
# Prediction: the candidate executes fewer instructions at dstate 64 too (static SASS: state loop
# 490 -> 460); the loss shows as a stall or memory difference, not the count.
#   DEADLINE=400 CARRY_DIR=build/carry-s26 bash reports/results/h100/2026-12-05-s27/call3/run.sh $OUT/s27c   # carry build/carry-s26
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s26}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
for shape in 8x4096x64x2048 8x4096x32x2048; do
  for pair in "$BASE states" "$S bookkeeping"; do
    set -- $pair
    run ncu --clock-control none --kernel-name-base demangled -k regex:BackwardTiled --launch-count 1 \
        --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis_Tables --section Occupancy \
        --section LaunchStats --metrics smsp__inst_executed.sum,gpu__time_duration.sum,smsp__inst_executed_op_local_ld.sum,smsp__inst_executed_op_local_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
        "$1" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes "$shape" \
        --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json --direction bwd \
        > "$O/ncu-$2-$shape.txt" 2>&1
  done
done
SH=8x4096x64x2048,8x4096x32x2048
ab "$S" bookkeeping-d64 bwd
ab "$BASE" states-d64 bwd
ab "$S" bookkeeping-d64-again bwd
ab "$BASE" states-d64-again bwd
call_end
for f in "$O"/ncu-*.txt; do echo "== $(basename $f)"; grep -E "inst_executed.sum|gpu__time_duration|local_(ld|st)|bank_conflicts|Achieved Occupancy|Warp Cycles Per Issued|Issued Warp Per Scheduler|Registers Per|Block Limit" "$f" | sed 's/  */ /g' | head -14; done
