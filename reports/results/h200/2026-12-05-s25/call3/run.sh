#!/usr/bin/env bash
# Session 25, call 3: what lands, beside mamba_ssm. build/cuda is branch s25-land's plain build:
# main + §47 (the backward's activations under one branch a chunk) + §48 (bwd_stage_inputs, on in
# the heuristic at dstate 16, and time segments filling one wave at dstate 16 with 16384 channels
# or fewer, from call 2); not §46, which lost in call 1. Its forward,
# backward and fwd+bwd on the six issue shapes, dstate 32 and 64, then mamba_ssm (built here from
# its sdist) on the same cases; GPU checks (the heuristic, and random configs with the staged
# inputs laid over, at 32 channels a team, wherever they can run); the CUDA kernel tests; memcheck and racecheck of the
# interleaved backward, staged and not, in three time segments.
# Prediction (calls 1 and 2): backward 1.9-2.1x mamba_ssm at the anchor (session 23: 1.67x),
# 1.3-2.1x elsewhere ((2,4096,16,8192) 1.35x, session 23's 1.17x times call 2's 4.38 / 4.10); forward as in session 23 (2.5-5.0x); fwd+bwd 2.2-2.5x at the anchor.
#   DEADLINE=570 bash reports/results/h200/2026-12-05-s25/call3/run.sh $OUT/s25c   # carry build/carry, .peers/src
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
ceilings
beside_peer mamba_ssm
gpu_checks 31 300
staged='{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"bwd_stage_inputs":1,"chunk_len":8}'
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --config "$staged" --cases 200 --seed 32 \
    > "$O/check-staged-laid-over.txt" 2>&1
echo "exit $?" >> "$O/check-staged-laid-over.txt"
staged="${staged%\}},\"bwd_time_segments\":3}"
sanitize bwd-staged "$staged"
sanitize bwd "${staged/\"bwd_stage_inputs\":1/\"bwd_stage_inputs\":0}"
call_end
