#!/usr/bin/env bash
# Session 29, call 5: §53 (the backward's summary pass walks four states at a time) against main
# (call1's binary), then §53's binary beside mamba_ssm.
# Steps: the backward of both at the shapes whose backward runs in time segments and two controls
# (the anchor, (4,5120,16,4096): whole sequence), twice each, alternating; ncu's kernel durations of
# §53's backward at (2,4096,16,8192) (call4 has main's); GPU checks with the backward in 3, 5 and 8
# segments laid over random configs; CUDA kernel tests; §53 beside mamba_ssm (built there).
# Prediction (speed-notes §53): summary pass at (2,4096,16,8192) 1.35 -> 0.6-0.8 ms; backward 1.15-1.2x
# there, 1.10-1.15x at (8,2048,16,2048), more at the B = 1 shapes (8-16 segments), 1.00x on the controls.
#   DEADLINE=540 bash reports/results/h100/2026-12-05-s29/call5/run.sh $OUT/s29e   # carry build/carry-s29c .peers/src
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s29c}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
ceilings
SEG="2x4096x16x8192,8x2048x16x2048,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096,8x4096x16x2048,4x5120x16x4096"
SH="$SEG" ab "$BASE" main bwd
SH="$SEG" ab "$S" summary4 bwd
SH="$SEG" ab "$BASE" main-again bwd
SH="$SEG" ab "$S" summary4-again bwd
run ncu --clock-control none --metrics gpu__time_duration.sum --csv "$S" sweep selective_scan --backend cuda \
    --ceilings "$O/ceilings.json" --impl tiled --no-cache --direction bwd "${OPTS[@]}" --shapes 2x4096x16x8192 \
    --repetitions 1 --iterations 1 --warmups 0 --max-buffer-sets 1 --quiet --out "$O/sweep-ncu.json" \
    > "$O/ncu-bwd-2x8192.csv" 2> "$O/ncu-bwd-2x8192.err"
python3 reports/results/h100/2026-12-05-s29/call4/kernel_times.py "$O/ncu-bwd-2x8192.csv" | grep Backward
for seg in 3 5 8; do
  run "$S" check selective_scan --backend cuda --impl random --config "{\"impl\":\"tiled\",\"bwd_time_segments\":$seg}" \
      --cases 200 --seed $((290 + seg)) > "$O/check-segments-$seg.txt" 2>&1
  echo "exit $?" >> "$O/check-segments-$seg.txt"
done
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
beside_peer mamba_ssm
call_end
for pair in "main summary4" "main-again summary4-again"; do
  set -- $pair; "$S" compare --min-change 0.03 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 9
done
