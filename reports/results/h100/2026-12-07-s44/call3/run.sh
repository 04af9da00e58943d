#!/usr/bin/env bash
# Session 44, call3: main f5a880f (the forward at dstate 16 without time segments from 6336
# channels: four threads a channel, teams of 64 channels, tiles of 64 at (2,4096,16,8192)) against
# 10d1656's kernels and rule (build/carry-s43a's scanlab.xz, the binary of call2's stand), then
# the candidate beside mamba_ssm for the stand.
# Prediction: forward at (2,4096,16,8192) 1.10-1.11x (s44a: 895-904 against 995-1004 us on an
# H100); the other six shapes the same within 1% (their configs are unchanged); the backward
# unchanged (its rule is unchanged; bwd is in the stand only).
#   CARRY_DIR=build/carry-s44a bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s43a/scanlab.xz
#   DEADLINE=560 CARRY_DIR=build/carry-s44a bash reports/results/h100/2026-12-07-s44/call3/run.sh $OUT/s44c   # carry build/carry-s44a .peers/src
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
"$S" --version | head -n 1 > "$O/version.txt"
"$BASE" --version | head -n 1 > "$O/version-base.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ceilings
for pass in "" -again; do
  ab "$BASE" "base$pass" fwd
  ab "$S" "new$pass" fwd
done
gpu_checks 4444 100
beside_peer mamba_ssm
call_end
grep -A14 -i 'speedup\|ratio' "$O/report/report.md" | head -60
