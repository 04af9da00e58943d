#!/usr/bin/env bash
# Session 35, call4: why direct_io 2 (call3: correct, but 0.67x direct_io 1 at the anchor, where
# the probe's P1T32z ran 1.29x its baseline) is slow. ncu of one forward launch at the anchor for
# direct_io 1 (the heuristic: teams of 128) and direct_io 2 (teams of 32, tiles of 32); then the
# controls, at the anchor and (8,2048,16,2048): direct_io 1 with teams of 32 (is it the team
# size, i.e. B and C copied for 32 channels instead of 128?), direct_io 2 with tiles of 16 at
# teams of 32 and 64.
#   DEADLINE=330 CARRY_DIR=build/carry-s35c bash reports/results/h100/2026-12-06-s35/call4/run.sh $OUT/s35d
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
for pair in "main {}" "rows $ROWS"; do
  name="${pair%% *}" config="${pair#* }"
  run ncu --clock-control none --kernel-name-base demangled -k regex:ForwardDirect --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
      --section MemoryWorkloadAnalysis_Tables \
      --metrics smsp__inst_executed.sum,gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,smsp__inst_executed_op_ldgsts.sum \
      "$S" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048 \
      --config "$config" --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json \
      --direction fwd > "$O/ncu-$name.txt" 2>&1
done
SH=8x4096x16x2048,8x2048x16x2048
ab "$S" main fwd
ab "$S" direct1-team32 fwd --config '{"direct_io":1,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
ab "$S" rows-team32-tile16 fwd --config '{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":16}'
ab "$S" rows-team64-tile16 fwd --config '{"direct_io":2,"state_split":1,"team_size":64,"channels_per_team":64,"time_tile":16}'
ab "$S" rows fwd --config "$ROWS"
for f in "$O"/ncu-*.txt; do
  echo "== $(basename "$f")"
  grep -E 'Duration|inst_executed|Registers|Achieved Occ|Theoretical Occ|Block Limit|Shared Memory Config|Dynamic Shared|Warp Cycles Per Issued|Issue Slots Busy|l1tex__|smsp__|Memory Throughput|DRAM Throughput|Compute \(SM\)' "$f" | cut -c1-120 | head -40
done
call_end
