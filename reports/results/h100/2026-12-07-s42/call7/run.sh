#!/usr/bin/env bash
# Session 42, call7: the heuristic's new forward team shapes (two and four threads a channel without
# segments: teams of 64 channels, tiles of 64; call5's tune and call6's sweeps) against main 1f4522f
# (call3's binary), forward and fwd+bwd at the seven shapes, each twice, alternating; then the
# heuristic's checks (selective_scan 100 cases, state_space_v1 50, kernel tests).
# Prediction: forward 1.05x at (8,2048,16,2048), (16,1536,16,1024) and (4,5120,16,4096) (call6),
# the other four the same (unchanged configs); fwd+bwd ~1.01x there (the forward is ~1/5 of it).
#   bash scripts/build.sh cuda
#   CARRY_DIR=build/carry-s42g bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s42c/scanlab.xz
#   CARRY_DIR=build/carry-s42g bash reports/results/h100/2026-12-07-s42/call7/run.sh $OUT/s42g   # carry build/carry-s42g
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"; "$BASE" --version | head -n 1 > "$O/baseline-version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ceilings
for pass in "" -again; do
  ab "$BASE" "base$pass" fwd,fwdbwd
  ab "$S" "new$pass" fwd,fwdbwd
done
gpu_checks 4343 100
call_end
for b in new new-again; do
  echo "== base -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-base.json" "$O/selective_scan-$b.json" | tail -n 17 | cut -c1-24,130-
done
