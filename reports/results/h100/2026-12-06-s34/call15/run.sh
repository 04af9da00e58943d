#!/usr/bin/env bash
# Session 34, call15: §60, direct_io's row loads through the read-only path with the 128-byte L2
# fetch, against main (dc0f97c) in one call: the forward on the seven shapes, baseline first and
# each twice, alternating; the backward once each (a control: untouched); the candidate's GPU
# checks (selective_scan 200 cases, state_space_v1 100, the CUDA kernel tests). Then §59's probe
# with packed_direct (staged_direct fitted to 8 warps an SM) at two shapes.
#   DEADLINE=400 CARRY_DIR=build/carry-s34b bash reports/results/h100/2026-12-06-s34/call15/run.sh $OUT/s34o
#   (carry build/carry-s34b build/probes)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ab "$BASE" main fwd
ab "$S" l2line fwd
ab "$BASE" main-again fwd
ab "$S" l2line-again fwd
SH=8x4096x16x2048,2x4096x16x8192 ab "$BASE" main-bwd bwd
SH=8x4096x16x2048,2x4096x16x8192 ab "$S" l2line-bwd bwd
gpu_checks 34 200
for shape in "8 4096 2048" "8 2048 2048"; do
  run build/probes/ws_forward $shape >> "$O/probe.txt" 2>&1
  echo "exit $?" >> "$O/probe.txt"
done
grep -E 'SMs|W4P4T8 |D4T|P[248]T|exit' "$O/probe.txt"
call_end
