#!/usr/bin/env bash
# Session 34, call17: packed_direct in the form Kokkos 3.4 allows (one warp a team, at most 40 KB of
# team scratch): z read by the output phase instead of staged (P1T32z: 24 KB a warp, 8 warps an
# SM), beside P4T32 and the others, at two shapes (speed-notes §59).
#   bash reports/results/h100/2026-12-06-s34/call17/run.sh $OUT/s34q     (bash scripts/gpu/probes/build.sh here first; carry build/probes)
set -u
O="${1:?output folder}"
mkdir -p "$O"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
for shape in "8 4096 2048" "8 2048 2048"; do
  echo "+ build/probes/warp_specialized_forward $shape" >> "$O/commands.txt"
  timeout 100 build/probes/warp_specialized_forward $shape >> "$O/probe.txt" 2>&1
  echo "exit $?" >> "$O/probe.txt"
done
grep -E 'SMs|W4P4T8 |D4T32|P[1248]T|timetiled|exit' "$O/probe.txt"
