#!/usr/bin/env bash
# Session 40, call3: speed-notes §68 (direct_io's rare paths as one rolled step loop) against
# call2's binary, whose direct_io 1 kernels and direct_io 2 with SCANLAB_EXP_TILE=0 are b525b71's
# (its direct_io 2 segment kernels have §67's tile test: (2,4096,16,8192) laid over is not a clean
# A/B). Checks first: the heuristic 150 oracle cases, direct_io 2 laid over 100, tiles of 12 steps
# with chunks of 8 laid over 100 (short blocks and chunk starts inside blocks: the rolled loop),
# memcheck and racecheck of that, the kernel tests and the corpus. Then the forward, each twice,
# alternating; then ncu's stall reasons of both binaries' heuristic kernel at the anchor.
# Prediction: direct_io 1 at the anchor 1.00-1.04x, direct_io 2 1.02-1.06x, the other shapes
# 1.00-1.03x, none slower than 0.99x; no_instruction lower.
#   CARRY_DIR=build/carry-s40c bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s40b/scanlab.xz
#   DEADLINE=560 CARRY_DIR=build/carry-s40c bash reports/results/h100/2026-12-07-s40/call3/run.sh $OUT/s40c   # carry build/carry-s40c
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"; "$BASE" --version | head -n 1 > "$O/baseline-version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
RARE='{"time_tile":12,"chunk_len":8}'
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --cases 150 --seed 4041 > "$O/check-selective_scan.txt" 2>&1
echo "exit $?" >> "$O/check-selective_scan.txt"
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --config "$ROWS" --cases 100 --seed 4042 \
    > "$O/check-rows-laid-over.txt" 2>&1
echo "exit $?" >> "$O/check-rows-laid-over.txt"
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --config "$RARE" --cases 100 --seed 4043 \
    > "$O/check-rare-laid-over.txt" 2>&1
echo "exit $?" >> "$O/check-rare-laid-over.txt"
sanitize rare "$RARE"
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
ceilings
for pass in "" -again; do
  ab "$BASE" "base$pass" fwd
  ab "$S" "new$pass" fwd
  SH=8x4096x16x2048,8x2048x16x2048 SCANLAB_EXP_TILE=0 ab "$BASE" "base-rows$pass" fwd --config "$ROWS"
  SH=8x4096x16x2048,8x2048x16x2048 ab "$S" "new-rows$pass" fwd --config "$ROWS"
done
NCU=(ncu --clock-control none --kernel-name-base demangled --launch-count 1 --section WarpStateStats
     --metrics 'gpu__time_duration.sum,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
for b in BASE S; do
  run "${NCU[@]}" -k regex:ForwardDirect \
      "${!b}" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048 \
      --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json \
      --direction fwd > "$O/ncu-$b.txt" 2>&1
done
call_end
for b in new new-again; do
  echo "== base -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-base.json" "$O/selective_scan-$b.json" | tail -n 16
done
for b in new-rows new-rows-again; do
  echo "== base-rows -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-base-rows.json" "$O/selective_scan-$b.json" | tail -n 6
done
for f in "$O"/ncu-*.txt; do
  echo "== $(basename "$f")"
  grep -E 'gpu__time_duration|inst_executed|issue_stalled' "$f" | awk '$NF+0 >= 0.05 || /duration|inst_exec/' | cut -c1-110
done
