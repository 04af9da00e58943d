#!/usr/bin/env bash
# Session 40, call2: call1 found §67's direct_io 2 at the anchor 0.624 ms against direct_io 1's
# 0.571, where session 39's direct_io 2 (b525b71, another H100) ran 0.582 against 0.567: §67 looks
# ~7% slower, not the 1.05-1.15x faster predicted. This binary (585aaea with the experiment patch
# beside this script, not landed) has four forms of direct_io 2's whole-sequence dstate-16 SFU
# kernel, chosen by SCANLAB_EXP_TILE: 0 no tile test (b525b71's loop), 1 §67 as landed in 585aaea,
# 2 §67 with the tile scan taking only the top end where softplus is on (32 fewer FMNMX a tile of
# 32 steps), 3 §67 with the fast loop unrolled for tiles of 32. Each twice, alternating,
# at the anchor and (8,2048,16,2048), direct_io 1 as the control; then ncu (instructions and stall
# reasons) of forms 0 and 1 at the anchor.
# Prediction: 0 faster than 1 by 5-8% at the anchor (call1's cross-call reading); 2 between them;
# 3 no better than 1.
#   git apply reports/results/h100/2026-12-07-s40/call2/exp-tile-test.patch; bash scripts/build.sh cuda
#   CARRY_DIR=build/carry-s40b bash scripts/gpu/carry.sh pack build/cuda/scanlab
#   DEADLINE=560 CARRY_DIR=build/carry-s40b bash reports/results/h100/2026-12-07-s40/call2/run.sh $OUT/s40b   # carry build/carry-s40b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
SH=8x4096x16x2048,8x2048x16x2048
ceilings
for pass in "" -again; do
  ab "$S" "main$pass" fwd
  for e in 0 1 2 3; do SCANLAB_EXP_TILE=$e ab "$S" "exp$e$pass" fwd --config "$ROWS"; done
done
NCU=(ncu --clock-control none --kernel-name-base demangled --launch-count 1 --section WarpStateStats
     --metrics 'gpu__time_duration.sum,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
for e in 0 1; do
  SCANLAB_EXP_TILE=$e run "${NCU[@]}" -k regex:ForwardDirect \
      "$S" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048 \
      --config "$ROWS" --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json \
      --direction fwd > "$O/ncu-exp$e.txt" 2>&1
done
call_end
for f in "$O"/ncu-*.txt; do
  echo "== $(basename "$f")"
  grep -E 'gpu__time_duration|inst_executed|issue_stalled' "$f" | awk '$NF+0 >= 0.05 || /duration|inst_exec/' | cut -c1-110
done
