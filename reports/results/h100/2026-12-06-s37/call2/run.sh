#!/usr/bin/env bash
# Session 37, call2 (speed-notes §63): the exp2 range test once a block of 8 steps instead of once a
# half of 4 (both forms of direct_io), and direct_io 2's tile store with the gate's kind decided once
# a tile, against a6bf228 (BASE) in one call: direct_io 1 as the heuristic sets it and direct_io 2
# (ROWS), alternating, each twice; the candidate's checks against the oracle, kernel tests and
# compute-sanitizer; ncu's stall reasons of both forms at the anchor. The device came rarely this
# session, so call1's probe variants run here too, after the sweeps (call1/run.sh into $O/call1).
#   CARRY_DIR=build/carry-s37b bash scripts/gpu/carry.sh pack build/cuda/scanlab build/baseline/scanlab
#   (build/cuda/scanlab of 4093ffc; bash scripts/gpu/probes/build.sh; carry build/carry-s37b build/probes)
#   DEADLINE=580 CARRY_DIR=build/carry-s37b bash reports/results/h100/2026-12-06-s37/call2/run.sh $OUT/s37b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
SH=8x4096x16x2048,8x2048x16x2048,2x4096x16x8192,16x1536x16x1024,4x5120x16x4096,8x4096x32x2048
ROWS_SH=8x4096x16x2048,8x2048x16x2048,2x4096x16x8192
for pass in "" -again; do
  ab "$BASE" "base$pass" fwd
  ab "$S" "new$pass" fwd
  SH=$ROWS_SH ab "$BASE" "base-rows$pass" fwd --config "$ROWS"
  SH=$ROWS_SH ab "$S" "new-rows$pass" fwd --config "$ROWS"
done
run bash reports/results/h100/2026-12-06-s37/call1/run.sh "$O/call1" > "$O/call1.txt" 2>&1
gpu_checks 372 200
run "$S" check selective_scan --backend cuda --impl tiled --config "$ROWS" --cases 100 --seed 373 > "$O/check-rows.txt" 2>&1
echo "exit $?" >> "$O/check-rows.txt"
sanitize rows "$ROWS"
sanitize rows-segments "${ROWS%\}},\"fwd_time_segments\":3}"
NCU=(ncu --clock-control none --kernel-name-base demangled -k regex:ForwardDirect --launch-count 1 --section WarpStateStats
     --metrics 'gpu__time_duration.sum,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
for pair in "main {}" "rows $ROWS"; do
  name="${pair%% *}" config="${pair#* }"
  run "${NCU[@]}" "$S" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048 \
      --config "$config" --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json \
      --direction fwd > "$O/ncu-$name.txt" 2>&1
  grep -E 'gpu__time_duration|inst_executed.sum|issue_stalled' "$O/ncu-$name.txt" | awk '$NF+0 >= 0.05 || /duration|inst_exec/' | sed 's/smsp__average_warps_issue_stalled_//' | cut -c1-100
done
tail -n 40 "$O/call1.txt"
call_end
