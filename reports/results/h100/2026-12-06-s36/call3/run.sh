#!/usr/bin/env bash
# Session 36, call3: where direct_io 2's instructions go beside the probe's P1T32z (the same
# structure: one warp a team, rows of u and delta staged by cp.async, z read late; 0.471 ms at the
# anchor in session 35's call1, against direct_io 2's 0.661 in call2) and direct_io 1: ncu's
# executed instructions by SASS opcode of one forward launch each at (8,4096,16,2048), one call.
#   DEADLINE=400 CARRY_DIR=build/carry-s36b bash reports/results/h100/2026-12-06-s36/call3/run.sh $OUT/s36c
#   (bash scripts/gpu/probes/build.sh first; carry build/carry-s36b build/probes)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
NCU=(ncu --clock-control none --kernel-name-base demangled --launch-count 1 --section InstructionStats --section LaunchStats
     --metrics smsp__inst_executed.sum,gpu__time_duration.sum,sass__inst_executed_per_opcode --print-metric-instances details)
run "${NCU[@]}" -k regex:packed_direct build/probes/warp_specialized_forward 8 4096 2048 P1T32z > "$O/ncu-probe-P1T32z.txt" 2>&1
for pair in "main {}" "rows $ROWS"; do
  name="${pair%% *}" config="${pair#* }"
  run "${NCU[@]}" -k regex:ForwardDirect \
      "$S" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048 \
      --config "$config" --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json \
      --direction fwd > "$O/ncu-$name.txt" 2>&1
done
for f in "$O"/ncu-*.txt; do
  echo "== $(basename "$f")"
  grep -E 'Duration|inst_executed.sum|Registers Per|sass__inst_executed_per_opcode' "$f" | cut -c1-400 | head -8
done
call_end
