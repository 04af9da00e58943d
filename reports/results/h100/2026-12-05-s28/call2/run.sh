#!/usr/bin/env bash
# Session 28: §52 (the forward's and the backward's segment summaries take each state's decay
# product from one exp2 of the segment's dt sum, not a multiply a state-step) against main
# (13ff482's build).
# Both binaries packed in build/carry-s28 (CARRY_DIR): build/cuda is s28-dtsum, build/baseline main.
# Steps: the forward of both, twice each, alternating, on the shapes whose forward runs in time
# segments (the heuristic: (2,4096,16,8192) in 4, (1,4096,16,8192) in 8, (1,2048,16,8192) and
# (1,1024,16,4096) in 16) and the anchor (no segments: a control); the backward of both the
# same way (the backward runs those four in segments too); fwd+bwd of both once at
# (2,4096,16,8192); GPU checks of the candidate: the heuristic, and random configs with 2, 4 and
# 7 forward segments and 3, 5 and 8 backward ones laid over (400 cases each, the summaries' path on
# every case that runs a backward); memcheck and racecheck of the direct_io forward in 4 segments
# and the backward in 3.
# Predictions: forward 1.04-1.07x at the segmented shapes (the summary: 16 FMUL a step fewer of
# ~60 a step a thread with two threads a channel, and a third or more of the forward's time);
# 1.00x at the anchor; backward 1.02-1.03x where segmented, 1.00x at the anchor; fwd+bwd
# ~1.02x at (2,4096,16,8192).
#   DEADLINE=420 bash reports/results/h200/2026-12-05-s28/dtsum/run.sh $OUT/s28b   # carry build/carry-s28
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s28}"
source scripts/gpu/call-helpers.sh
SH="2x4096x16x8192,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096,8x4096x16x2048"
call_begin "$1"
ceilings
ab "$BASE" main fwd
ab "$S" dtsum fwd
ab "$BASE" main-again fwd
ab "$S" dtsum-again fwd
ab "$BASE" main-bwd bwd
ab "$S" dtsum-bwd bwd
ab "$BASE" main-bwd-again bwd
ab "$S" dtsum-bwd-again bwd
SH="2x4096x16x8192" ab "$BASE" main-fwdbwd fwdbwd
SH="2x4096x16x8192" ab "$S" dtsum-fwdbwd fwdbwd
for seg in 2 4 7; do
  run "$S" check selective_scan --backend "$BACKEND" --impl random \
      --config "{\"impl\":\"tiled\",\"fwd_time_segments\":$seg,\"bwd_time_segments\":$(( seg + 1 ))}" \
      --cases 400 --seed 28$seg > "$O/check-segments-$seg.txt" 2>&1
  echo "exit $?" >> "$O/check-segments-$seg.txt"
done
gpu_checks 52 200
sanitize fwd-segments '{"fwd_time_segments":4,"direct_io":1,"bwd_time_segments":3}'
call_end
for pair in "main dtsum" "main-again dtsum-again" "main-bwd dtsum-bwd" "main-bwd-again dtsum-bwd-again" "main-fwdbwd dtsum-fwdbwd"; do
  set -- $pair; "$S" compare --min-change 0.03 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 2
done
