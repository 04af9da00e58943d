#!/usr/bin/env bash
# Session 32, call 3: state_space_v1 beside ejkernel (XLA) with main's binary (dc0f97c, call1's pack),
# through measure_h200.sh's stage; last measured in session 9 (2026-12-01-s9/state_space_v1-ejkernel/).
# Prediction: scanlab ahead by about what session 9 saw; ejkernel agrees with the oracle.
#   DEADLINE=150 bash reports/results/h200/2026-12-06-s32/call3/run.sh $OUT/s32c   # carry build/carry-s32a .peers
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s32a}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"
ceilings
mkdir -p "$O/measure" && cp "$O/ceilings.json" "$O/measure/ceilings.json"
run bash scripts/peers/measure_h200.sh "$O/measure" state_space_v1 > "$O/measure.log" 2>&1
echo "measure exit $?" >> "$O/measure.log"
call_end
grep -h "^\[" "$O/measure.log" | cut -c1-160
