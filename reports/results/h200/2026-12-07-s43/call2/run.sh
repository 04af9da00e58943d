#!/usr/bin/env bash
# Session 43, call2 (not run: this session's device started no machine): main 10d1656's kernels
# (§70 and §71; later commits change no device code) beside mamba_ssm on the machine lent: the
# heuristic's checks, then forward, backward and fwd+bwd for the stand (session 42's call4, unchanged).
# Prediction, against session 41's H200 stand if an H200 comes: forward 1.05x better at
# (8,2048,16,2048), (16,1536,16,1024), (4,5120,16,4096) (§71), the rest unchanged; backward ~1.08x
# better at dstate 32 (§70), fwd+bwd ~1.05x there.
#   CARRY_DIR=build/carry-s43a bash scripts/gpu/carry.sh pack build/cuda/scanlab   # (a clean tree's build)
#   bash scripts/peers/fetch.sh
#   DEADLINE=560 CARRY_DIR=build/carry-s43a bash reports/results/h200/2026-12-07-s43/call2/run.sh $OUT/s43b   # carry build/carry-s43a .peers/src
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
"$S" --version | head -n 1 > "$O/version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
gpu_checks 4343 100
ceilings
beside_peer mamba_ssm
call_end
grep -A14 -i 'speedup\|ratio' "$O/report/report.md" | head -60
