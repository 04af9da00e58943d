#!/usr/bin/env bash
# Session 34, call2: where the warp-specialized probe's time goes (speed-notes §59). The probe at
# the anchor with two bounds taken out (idle prep warps; no MUFU), then ncu of the probe's
# W4P4T8 and of main's forward at the anchor, the same sections for both.
#   DEADLINE=300 CARRY_DIR=build/carry-s34a bash reports/results/h100/2026-12-06-s34/call2/run.sh $OUT/s34b
#   (carry build/carry-s34a build/probes)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
run build/probes/ws_forward 8 4096 2048 > "$O/probe.txt" 2>&1
echo "exit $?" >> "$O/probe.txt"
SECTIONS=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats
          --section LaunchStats --section Occupancy)
run ncu --clock-control none -k regex:ws_forward --launch-skip 3 --launch-count 1 "${SECTIONS[@]}" \
    build/probes/ws_forward 8 4096 2048 W4P4T8 > "$O/ncu-probe.txt" 2>&1
run ncu --clock-control none --kernel-name-base demangled -k regex:ForwardDirect --launch-count 1 "${SECTIONS[@]}" \
    "$S" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048 \
    --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json --direction fwd \
    > "$O/ncu-main.txt" 2>&1
cat "$O/probe.txt"
grep -E 'Duration|SM Frequency|Issue Slots Busy|Executed Ipc A|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Pipe|Achieved Occ|Registers' "$O/ncu-probe.txt" "$O/ncu-main.txt" | cut -c1-150
call_end
