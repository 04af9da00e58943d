#!/usr/bin/env bash
# Session 32, call 1: main's landed binary (dc0f97c: §54-§56 and the bwd_summary_blocks rule; never
# run on a GPU before) checked on the device, then beside mamba_ssm on the shapes.
# No baseline binary: this machine was fresh (no build/, no cache), and session 31's call1 already
# timed these kernels against c9be33c's with the block count laid over.
# Steps: GPU checks of the heuristic (selective_scan 200 cases, state_space_v1 100, the CUDA kernel
# tests); the staged form in 5 segments with Q 3 against the oracle; the binary beside mamba_ssm
# (built there) on the seven shapes, fwd, bwd and fwd+bwd; 2 and 4 backward segments laid
# over the three shapes with more than 16384 channels (the rule runs none there); memcheck and
# racecheck of the staged form with Q 3.
# Prediction (session 31's call1 and session 29's mamba_ssm times, H100): backward 1.46x -> ~1.78x
# mamba_ssm at (2,4096,16,8192), ~1.85x at (8,2048,16,2048); fwd+bwd 1.56x -> ~1.8x at
# (2,4096,16,8192); the forward and the unsegmented shapes as session 29 (forward 2.55-4.99x,
# fwd+bwd at the anchor ~2.2x); the segments on the many-channel shapes 0.95-1.05x.
#   DEADLINE=470 bash reports/results/h100/2026-12-06-s32/call1/run.sh $OUT/s32a   # carry build/carry-s32a .peers/src
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s32a}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"
start_peer_build mamba_ssm
ceilings
gpu_checks 321 200
STAGED='{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"bwd_stage_inputs":1,"chunk_len":8,"bwd_time_segments":5,"bwd_summary_blocks":3}'
run "$S" check selective_scan --backend cuda --impl tiled --config "$STAGED" --cases 150 --seed 323 > "$O/check-staged-blocks-3.txt" 2>&1
echo "exit $?" >> "$O/check-staged-blocks-3.txt"
grep -E "^backward" "$O/check-staged-blocks-3.txt"  # the backward was compared
beside_peer mamba_ssm
MANY="8x4096x16x2048,4x5120x16x4096,16x1536x16x1024"
SH="$MANY" ab "$S" many-main bwd --repetitions 5
for seg in 2 4; do
  SH="$MANY" ab "$S" many-seg$seg bwd --repetitions 5 --config "{\"bwd_time_segments\":$seg,\"bwd_summary_blocks\":8}"
done
sanitize blocks3 "$STAGED"
call_end
for b in many-seg2 many-seg4; do
  echo "== many-main -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-many-main.json" "$O/selective_scan-$b.json" | tail -n 5
done
grep -E "speedup|×" "$O/report/report.md" | grep -i "mamba_ssm" | head -30
