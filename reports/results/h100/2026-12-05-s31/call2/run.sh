#!/usr/bin/env bash
# Session 31, call 2: §54-§56 with the heuristic's new bwd_summary_blocks rule (the backward's
# summary pass in blocks of 16 chunks, at most 8 a segment; branch s31-summary-blocks, without §57)
# against main's kernels (c9be33c; build/carry-s29d's binary), then beside mamba_ssm.
# Steps: the backward of both at the shapes whose backward runs in time segments and two controls
# without segments (the anchor, (4,5120,16,4096)), twice each, alternating; the forward of both at
# the forward-segmented shapes (the branch leaves the forward as main's: a control); the GPU checks
# of the heuristic (selective_scan, state_space_v1, CUDA kernel tests); the staged form in 5
# segments with Q 3 against the oracle, and its memcheck and racecheck; the branch beside mamba_ssm
# on the shapes (built there); 2 and 4 backward segments laid over the shapes with more
# than 16384 channels (the rule runs none there).
# Prediction (from call1's Q sweep): backward 1.22x at (2,4096,16,8192), 1.19x at (8,2048,16,2048),
# 1.18x at (1,4096,16,8192), 1.14x at (1,2048,16,8192), 1.19x at (1,1024,16,4096); the anchor 1.02x
# (call1 saw it with every Q, though no summary runs there), (4,5120,16,4096) 1.00x; the forward
# 1.00x; the segments laid over the many-channel shapes 0.95-1.05x (a guess: a summary of half the
# sequence at 12-14 teams an SM against a walk of half the length). Beside mamba_ssm: backward at
# (2,4096,16,8192) 1.46x -> ~1.78x, fwd+bwd 1.56x -> ~1.8x.
#   DEADLINE=420 bash reports/results/h100/2026-12-05-s31/call2/run.sh $OUT/s31b   # carry build/carry-s31b .peers/src
# The peer comparison runs before the many-channel segments and the sanitizer: the session's device
# time was short (refused starts), and whatever the deadline leaves out is skipped.
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s31b}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
ceilings
SEG="2x4096x16x8192,8x2048x16x2048,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096,8x4096x16x2048,4x5120x16x4096"
SH="$SEG" ab "$BASE" main bwd --repetitions 5
SH="$SEG" ab "$S" rule bwd --repetitions 5
SH="$SEG" ab "$BASE" main-again bwd --repetitions 5
SH="$SEG" ab "$S" rule-again bwd --repetitions 5
FSEG="2x4096x16x8192,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096,8x4096x16x2048"
SH="$FSEG" ab "$BASE" main-fwd fwd --repetitions 5
SH="$FSEG" ab "$S" rule-fwd fwd --repetitions 5
SH="$FSEG" ab "$BASE" main-fwd-again fwd --repetitions 5
SH="$FSEG" ab "$S" rule-fwd-again fwd --repetitions 5
gpu_checks 311 200
STAGED='{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"bwd_stage_inputs":1,"chunk_len":8,"bwd_time_segments":5,"bwd_summary_blocks":3}'
run "$S" check selective_scan --backend cuda --impl tiled --config "$STAGED" --cases 150 --seed 313 > "$O/check-staged-blocks-3.txt" 2>&1
echo "exit $?" >> "$O/check-staged-blocks-3.txt"
grep -E "^  (dA|du) |^backward" "$O/check-staged-blocks-3.txt"  # the backward was compared
beside_peer mamba_ssm
# With the summary cheaper, segments where the rule runs none (more than 16384 channels; they lost
# 1.07-1.6x before §54-§56 in the forward, and the backward's were not tried with the staged walk):
# 2 and 4 backward segments, the rule's blocks (16 chunks, at most 8), on the three such issue shapes.
MANY="8x4096x16x2048,4x5120x16x4096,16x1536x16x1024"
SH="$MANY" ab "$S" many-main bwd --repetitions 5
for seg in 2 4; do
  SH="$MANY" ab "$S" many-seg$seg bwd --repetitions 5 --config "{\"bwd_time_segments\":$seg,\"bwd_summary_blocks\":8}"
done
sanitize blocks3 "$STAGED"
call_end
for pair in "main rule" "main-again rule-again" "main-fwd rule-fwd" "main-fwd-again rule-fwd-again"; do
  set -- $pair; echo "== $1 -> $2"; "$S" compare --min-change 0.02 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 10
done
for b in many-seg2 many-seg4; do
  echo "== many-main -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-many-main.json" "$O/selective_scan-$b.json" | tail -n 5
done
