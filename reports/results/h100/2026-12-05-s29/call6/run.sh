#!/usr/bin/env bash
# Session 29, call 6: what the backward's summary pass waits on (§53 measured it 1.35 -> 1.23 ms
# with four states at a time, so its chains were not most of it). ncu's warp-state, scheduler,
# occupancy and memory sections of the first BackwardTiled launch (the summary pass) of one
# backward call at (2,4096,16,8192), §53's binary (c9be33c's kernels), and of the second (the walk)
# for comparison; clocks not locked.
#   DEADLINE=400 bash reports/results/h100/2026-12-05-s29/call6/run.sh $OUT/s29f   # carry build/carry-s29d
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s29d}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
cp reports/results/h100/2026-12-05-s29/call1/ceilings.json "$O/ceilings.json"
STALLS=""
for r in long_scoreboard short_scoreboard barrier wait math_pipe_throttle mio_throttle lg_throttle no_instruction \
         not_selected selected dispatch_stall drain membar sleeping branch_resolving tex_throttle imc_miss; do
  STALLS="$STALLS${STALLS:+,}smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
for skip in 0 1; do
  run ncu --clock-control none --kernel-name-base demangled --kernel-name regex:BackwardTiled \
      --launch-skip $skip --launch-count 1 --section WarpStateStats --section SchedulerStats \
      --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section SpeedOfLight \
      --metrics "$STALLS" \
      "$S" sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
      --direction bwd "${OPTS[@]}" --shapes 2x4096x16x8192 --repetitions 1 --iterations 1 --warmups 0 \
      --max-buffer-sets 1 --quiet --out "$O/sweep-$skip.json" > "$O/ncu-launch-$skip.txt" 2>&1
  echo "launch $skip: exit $?"
  grep -E "Duration|Warp Cycles Per Issued|Issued Warp|Achieved Occupancy|Theoretical Occupancy|Registers Per|Stall|No Eligible|Memory Throughput|L1/TEX Hit|DRAM Throughput|Block Limit|stalled" "$O/ncu-launch-$skip.txt" | head -40
done
call_end
