#!/usr/bin/env bash
# For the next device call (not run in session 23: no device lent after call1). build/cuda: branch
# s23-bwd-activations (the backward's activations under one branch a chunk, speed-notes §47; also
# next/backward-activations-hoisted-not-measured.patch over main). build/baseline: main.
# A warm-up sweep first, then the backward, each binary twice, alternating, on the six issue
# shapes, dstate 32 and 64; the forward of both once as a control (its kernels are unchanged).
# Then GPU checks, kernel tests, memcheck and racecheck of the interleaved backward in segments.
# Prediction: backward 1.05-1.12x on every shape; the forward control ~1.0x (±2%: two builds of
# one source differed that much in session 23's call1).
# Run from the repository root, carrying build/carry:
#   DEADLINE=450 bash reports/results/h200/2026-12-04-s23/next/run.sh $OUT/next
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
ceilings
ab "$BASE" warmup bwd
ab "$BASE" baseline bwd
ab "$S" hoisted bwd
ab "$BASE" baseline-again bwd
ab "$S" hoisted-again bwd
ab "$BASE" baseline-fwd fwd
ab "$S" hoisted-fwd fwd
gpu_checks 27 200
sanitize bwd '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8,"bwd_time_segments":3}'
call_end
for pair in "baseline hoisted" "baseline-again hoisted-again" "baseline-fwd hoisted-fwd"; do
  set -- $pair; "$S" compare --min-change 0.03 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 2
done
