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
gpu_checks 41 200
laid_over_checks unstaged 0 43 100  # its sanitizers only if 40 s are left
call_end
for pair in "states landed" "states-again landed-again"; do
  set -- $pair; "$S" compare --min-change 0.03 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 2
done
