#!/usr/bin/env bash
# Session 30, call 1 (session 29's call7, not run there): §54 (branch s29-summary-staged, b88aa37: the backward's summary pass behind a
# staged walk stages its chunk inputs a chunk ahead) against main (c9be33c, §53; call6's binary).
# The backward of both at the shapes whose backward runs in time segments and the anchor (control),
# twice each, alternating; ncu's kernel durations of §54's backward at (2,4096,16,8192); GPU checks
# with 3 and 8 backward segments of the staged form; CUDA kernel tests.
# Prediction (speed-notes §54): the summary pass at (2,4096,16,8192) 1.23 -> ~0.8 ms, backward ~1.1x
# there, 1.05-1.1x at the other segmented shapes, 1.00x at the anchor.
#   DEADLINE=330 bash reports/results/h100/2026-12-05-s30/call1/run.sh $OUT/s30a   # carry build/carry-s30a
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s30a}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
cp reports/results/h100/2026-12-05-s29/call1/ceilings.json "$O/ceilings.json"
SEG="2x4096x16x8192,8x2048x16x2048,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096,8x4096x16x2048"
SH="$SEG" ab "$BASE" main bwd --repetitions 5
SH="$SEG" ab "$S" staged-summary bwd --repetitions 5
SH="$SEG" ab "$BASE" main-again bwd --repetitions 5
SH="$SEG" ab "$S" staged-summary-again bwd --repetitions 5
run ncu --clock-control none --metrics gpu__time_duration.sum --csv "$S" sweep selective_scan --backend cuda \
    --ceilings "$O/ceilings.json" --impl tiled --no-cache --direction bwd "${OPTS[@]}" --shapes 2x4096x16x8192 \
    --repetitions 1 --iterations 1 --warmups 0 --max-buffer-sets 1 --quiet --out "$O/sweep-ncu.json" \
    > "$O/ncu-bwd-2x8192.csv" 2> "$O/ncu-bwd-2x8192.err"
python3 reports/results/h100/2026-12-05-s29/call4/kernel_times.py "$O/ncu-bwd-2x8192.csv" | grep Backward
for seg in 3 8; do
  run "$S" check selective_scan --backend cuda --impl tiled \
      --config "{\"bwd_state_split\":1,\"bwd_channels_per_team\":32,\"bwd_team_size\":32,\"bwd_state_interleave\":2,\"bwd_stage_inputs\":1,\"chunk_len\":8,\"bwd_time_segments\":$seg}" \
      --cases 150 --seed $((300 + seg)) > "$O/check-staged-segments-$seg.txt" 2>&1
  echo "exit $?" >> "$O/check-staged-segments-$seg.txt"
done
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
call_end
for pair in "main staged-summary" "main-again staged-summary-again"; do
  set -- $pair; "$S" compare --min-change 0.03 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 8
done
