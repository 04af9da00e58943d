#!/usr/bin/env bash
# Session 30, call 2 (call1, session 29's call7 with §54 alone, was refused a machine every
# time): §54 (the summary pass behind a staged walk stages its chunk inputs a chunk ahead), §55
# (it copies no B tile and stages no u) and §56 (its blocks: bwd_summary_blocks splits each
# summarized segment into blocks of whole chunks run side by side, its teams asking only for their
# prefix of the walk's scratch) against
# main (c9be33c's kernels, §53; session 29's binary). One binary for §54-§56: bwd_summary_blocks
# laid over the heuristic (1: §54, §55 and the smaller scratch; 2, 4, 8). The backward at the
# shapes whose backward runs in time segments and the anchor (control: no segments, so no
# summary), the baseline first and last; ncu's kernel durations at (2,4096,16,8192) for blocks 1
# and 4; GPU checks of the staged form in 5 segments with blocks 3 and 1000 (one chunk each, empty
# blocks in the last segment); CUDA kernel tests.
# Predictions (speed-notes §54-§56): blocks 1 against main: the summary pass 1.23 -> ~0.75 ms at
# (2,4096,16,8192), backward ~1.1x there, 1.05-1.1x at the other segmented shapes; blocks 4: the
# summary pass ~0.5x of blocks 1's at (2,4096,16,8192) (4x the teams: ~3 warps a scheduler
# resident against 1.4), backward 1.10-1.2x there and at the B = 1 shapes, 1.05x at
# (8,2048,16,2048); the anchor 1.00x throughout.
# §57 (the forward's summary pass in fwd_summary_blocks blocks): main's forward against Qf 1 (the
# same code path: a control), 2 and 4 at the shapes whose forward runs in segments; GPU checks with
# Qf 3 and 1000. Prediction: Qf 4 at (2,4096,16,8192) the forward 1.05-1.12x (its summary pass,
# 369 of 1038 us on an H100 in session 29, ~0.65x its time), more at the B = 1 shapes; Qf 1 and the
# anchor 1.00x.
#   DEADLINE=540 bash reports/results/h100/2026-12-05-s30/call2/run.sh $OUT/s30b   # carry build/carry-s30b, timeout 600
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s30b}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
cp reports/results/h100/2026-12-05-s29/call1/ceilings.json "$O/ceilings.json"
SEG="2x4096x16x8192,8x2048x16x2048,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096,8x4096x16x2048"
SH="$SEG" ab "$BASE" main bwd --repetitions 5
for blocks in 1 2 4 8; do
  SH="$SEG" ab "$S" blocks$blocks bwd --repetitions 5 --config "{\"bwd_summary_blocks\":$blocks}"
done
SH="$SEG" ab "$BASE" main-again bwd --repetitions 5
SH="$SEG" ab "$S" blocks4-again bwd --repetitions 5 --config '{"bwd_summary_blocks":4}'
# With the summary cheaper, more walk segments may pay (the heuristic's counts were set without it).
for seg in 8 16; do
  SH="2x4096x16x8192,8x2048x16x2048" ab "$S" blocks4-seg$seg bwd --repetitions 5 \
      --config "{\"bwd_summary_blocks\":4,\"bwd_time_segments\":$seg}"
done
# The forward's summary pass in blocks (§57): the shapes whose forward runs in time segments, the
# anchor (no segments) as a control; fwd_summary_blocks 1 is main's forward code path (a control too).
FSEG="2x4096x16x8192,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096,8x4096x16x2048"
SH="$FSEG" ab "$BASE" main-fwd fwd --repetitions 5
for blocks in 1 2 4; do
  SH="$FSEG" ab "$S" fwd-blocks$blocks fwd --repetitions 5 --config "{\"fwd_summary_blocks\":$blocks}"
done
SH="$FSEG" ab "$BASE" main-fwd-again fwd --repetitions 5
for blocks in 1 4; do
  run ncu --clock-control none --metrics gpu__time_duration.sum --csv "$S" sweep selective_scan --backend cuda \
      --ceilings "$O/ceilings.json" --impl tiled --no-cache --direction bwd "${OPTS[@]}" --shapes 2x4096x16x8192 \
      --config "{\"bwd_summary_blocks\":$blocks}" --repetitions 1 --iterations 1 --warmups 0 --max-buffer-sets 1 \
      --quiet --out "$O/sweep-ncu.json" > "$O/ncu-bwd-2x8192-blocks$blocks.csv" 2> "$O/ncu-bwd-2x8192-blocks$blocks.err"
  python3 reports/results/h100/2026-12-05-s29/call4/kernel_times.py "$O/ncu-bwd-2x8192-blocks$blocks.csv" | grep Backward
done
for blocks in 3 1000; do
  run "$S" check selective_scan --backend cuda --impl tiled \
      --config "{\"bwd_state_split\":1,\"bwd_channels_per_team\":32,\"bwd_team_size\":32,\"bwd_state_interleave\":2,\"bwd_stage_inputs\":1,\"chunk_len\":8,\"bwd_time_segments\":5,\"bwd_summary_blocks\":$blocks}" \
      --cases 150 --seed $((400 + blocks)) > "$O/check-staged-blocks-$blocks.txt" 2>&1
  echo "exit $?" >> "$O/check-staged-blocks-$blocks.txt"
  grep -E "^  (dA|du) " "$O/check-staged-blocks-$blocks.txt"  # the backward was compared
done
for config in '{"fwd_time_segments":5,"fwd_summary_blocks":3}' '{"fwd_time_segments":1000,"fwd_summary_blocks":1000}'; do
  name=$(echo "$config" | tr -dc '0-9_' | cut -c1-12)
  run "$S" check selective_scan --backend cuda --impl tiled --config "$config" --cases 150 --seed 500 --max-size 40000 \
      > "$O/check-fwd-blocks-$name.txt" 2>&1
  echo "exit $?" >> "$O/check-fwd-blocks-$name.txt"
done
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
call_end
for b in blocks1 blocks2 blocks4 blocks8 blocks4-again blocks4-seg8 blocks4-seg16; do
  echo "== main -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-main.json" "$O/selective_scan-$b.json" | tail -n 8
done
for b in fwd-blocks1 fwd-blocks2 fwd-blocks4 main-fwd-again; do
  echo "== main-fwd -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-main-fwd.json" "$O/selective_scan-$b.json" | tail -n 7
done
