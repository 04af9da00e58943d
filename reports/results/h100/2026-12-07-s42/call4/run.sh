#!/usr/bin/env bash
# Session 42, call4: main 1f4522f's kernels (§70; the binary call3 ran, whose kernels are
# instruction for instruction 1f4522f's: only comments changed after it was built) on the machine
# lent: the heuristic's checks, then beside mamba_ssm (forward, backward, fwd+bwd) for the stand.
# Prediction: the forward as session 41's stand on the same kind of card (unchanged kernels), the
# backward and fwd+bwd at dstate 32 ~1.08x and ~1.05x better than main's before §70, the rest as before.
#   CARRY_DIR=build/carry-s42c bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s41a/scanlab.xz   # (call3's pack)
#   bash scripts/peers/fetch.sh
#   DEADLINE=560 CARRY_DIR=build/carry-s42c bash reports/results/h100/2026-12-07-s42/call4/run.sh $OUT/s42d   # carry build/carry-s42c .peers/src
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
"$S" --version | head -n 1 > "$O/version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
gpu_checks 4242 100
ceilings
beside_peer mamba_ssm
call_end
grep -A14 -i 'speedup\|ratio' "$O/report/report.md" | head -60
