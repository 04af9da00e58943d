#!/usr/bin/env bash
# Session 36, call5: why the probe's P1T32z runs 1.39x direct_io 2 at the same instruction mix
# (call3, call4): ncu's stall reasons per issued instruction and the source counters' top stall
# locations of one forward launch each at (8,4096,16,2048): the probe, direct_io 1, direct_io 2.
#   DEADLINE=300 CARRY_DIR=build/carry-s36d bash reports/results/h100/2026-12-06-s36/call5/run.sh $OUT/s36e
#   (bash scripts/gpu/probes/build.sh first; carry build/carry-s36d build/probes)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
NCU=(ncu --clock-control none --kernel-name-base demangled --launch-count 1 --section WarpStateStats --section SourceCounters
     --metrics 'gpu__time_duration.sum,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
run "${NCU[@]}" -k regex:packed_direct build/probes/warp_specialized_forward 8 4096 2048 P1T32z > "$O/ncu-probe-P1T32z.txt" 2>&1
for pair in "main {}" "rows $ROWS"; do
  name="${pair%% *}" config="${pair#* }"
  run "${NCU[@]}" -k regex:ForwardDirect \
      "$S" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048 \
      --config "$config" --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json \
      --direction fwd > "$O/ncu-$name.txt" 2>&1
done
for f in "$O"/ncu-*.txt; do
  echo "== $(basename "$f")"
  grep -E 'gpu__time_duration|issue_stalled' "$f" | awk '$NF+0 >= 0.05 || /duration/' | cut -c1-110
done
call_end
