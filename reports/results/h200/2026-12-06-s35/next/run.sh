#!/usr/bin/env bash
# Session 35, ready for the next session (not run: the device had 334 s left and no H200): main (db40f06's binary: §60's row loads, never run on an H200; direct_io 2 is
# not taken by the heuristic) beside mamba_ssm, built there, on three of the shapes, fwd,
# bwd and fwd+bwd. Prediction: the anchor's forward ~1.05-1.10x session 32's 0.567 ms (4.12x
# mamba_ssm) → ~4.3-4.5x; the other two forwards and every backward as session 32's.
#   DEADLINE=330 CARRY_DIR=build/carry-s35c bash reports/results/h200/2026-12-06-s35/next/run.sh $OUT/s36a
#   (before: bash scripts/build.sh cuda; CARRY_DIR=build/carry-s35c bash scripts/gpu/carry.sh pack build/cuda/scanlab /nonexistent;
#    bash scripts/peers/fetch.sh; carry build/carry-s35c .peers/src)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
start_peer_build mamba_ssm
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048
beside_peer mamba_ssm
call_end
