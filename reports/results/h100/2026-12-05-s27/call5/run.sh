#!/usr/bin/env bash
# Session 27, call 5 (not run: too little budget left): call4's A/B alone (the device refused call4's starts until too little budget
# was left for its peer sweep): main as landed (13ff482) against §49 alone (s25-states, 3d73919's
# build), the backward of each twice, alternating; then main's GPU checks and the unstaged
# interleaved backward laid over random cases, as time allows. Predictions as call4's.
#   DEADLINE=110 bash reports/results/h100/2026-12-05-s27/call5/run.sh $OUT/s27e   # carry build/carry-s27
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s27}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
ceilings
ab "$BASE" states bwd
ab "$S" landed bwd
ab "$BASE" states-again bwd
ab "$S" landed-again bwd
unstaged='{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"bwd_stage_inputs":0,"chunk_len":8}'
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --config "$unstaged" --cases 100 --seed 43 \
    > "$O/check-unstaged-laid-over.txt" 2>&1
echo "exit $?" >> "$O/check-unstaged-laid-over.txt"
gpu_checks 41 200
call_end
for pair in "states landed" "states-again landed-again"; do
  set -- $pair; "$S" compare --min-change 0.03 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 2
done
