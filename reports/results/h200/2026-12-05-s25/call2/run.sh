#!/usr/bin/env bash
# Session 25, call 2: where do staged chunk inputs (bwd_stage_inputs 1, speed-notes §48) win in
# time segments? Call 1 (../call1/) had them 1.11-1.13x faster at the dstate-16 shapes that run
# unsegmented, 1.05x at (2,4096,16,8192) in the heuristic's 8 segments and 0.95x at
# (8,2048,16,2048) in its 4. Here the candidate binary of call 1 (build/carry as there, d05fb2a),
# backward only, staged and unstaged at 2, 4, 8 and 16 segments laid over the heuristic, twice
# each alternating, on those two shapes and (1,2048,16,8192) (2048 channels, heuristic 16).
# Prediction: the staged form's gain grows with the segment count at a fixed shape (more,
# shorter segments, more teams to hide the chunk's loads); if the loss at (8,2048,16,2048) is
# the count, it turns into a gain at 8 or 16 there.
#   DEADLINE=300 bash reports/results/h200/2026-12-05-s25/call2/run.sh $OUT/s25b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
ceilings
SH=8x2048x16x2048,2x4096x16x8192,1x2048x16x8192
ab "$S" warmup bwd
for round in 1 2; do
  for n in 2 4 8 16; do
    ab "$S" seg$n-unstaged-$round bwd --config "{\"bwd_time_segments\":$n}"
    ab "$S" seg$n-staged-$round bwd --config "{\"bwd_time_segments\":$n,\"bwd_stage_inputs\":1}"
  done
done
call_end
