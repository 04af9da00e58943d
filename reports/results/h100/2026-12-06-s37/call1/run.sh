#!/usr/bin/env bash
# Session 37, call1: which of the kernel's features costs direct_io 2 its 1.39x against the probe
# (speed-notes §62's call5 reading): the probe's P1T32z with each added alone and together, at the
# anchor (8,4096,16,2048) and (8,2048,16,2048), each twice, alternating; then ncu's stall reasons
# for the baseline and the variant with every feature.
#   bash scripts/gpu/probes/build.sh   (here; carry build/probes)
#   bash reports/results/h100/2026-12-06-s37/call1/run.sh $OUT/s37a
set -u
O="${1:?output folder}"
mkdir -p "$O"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
P=build/probes/warp_specialized_forward
V="P1T32z P1T32z-range P1T32z-eight P1T32z-gate P1T32z-range-eight P1T32z-all"
for shape in "8 4096 2048" "8 2048 2048"; do
  for rep in 1 2; do
    for v in $V; do
      echo "+ $P $shape $v" >> "$O/commands.txt"
      timeout 60 $P $shape $v | tail -n +2 >> "$O/probe-${shape// /x}.txt" 2>&1
    done
  done
done
NCU=(ncu --clock-control none --launch-count 1 --section WarpStateStats
     --metrics 'gpu__time_duration.sum,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
for v in P1T32z P1T32z-range-eight P1T32z-all; do
  echo "+ ${NCU[*]} -k regex:packed_direct $P 8 4096 2048 $v" >> "$O/commands.txt"
  timeout 120 "${NCU[@]}" -k regex:packed_direct $P 8 4096 2048 $v > "$O/ncu-$v.txt" 2>&1
done
for f in "$O"/probe-*.txt; do echo "== $(basename "$f")"; cut -c1-75 "$f"; done
for f in "$O"/ncu-*.txt; do
  echo "== $(basename "$f")"
  grep -E 'gpu__time_duration|inst_executed|issue_stalled' "$f" | awk '$NF+0 >= 0.05 || /duration|inst_exec/' | sed 's/smsp__average_warps_issue_stalled_//' | cut -c1-110
done
