#!/usr/bin/env bash
# Session 34, call10: ncu's memory sections for the warp-specialized probe at the anchor, rows
# (W4P4T8) against the time-tiled layout (W4P4T8-timetiled) and main's forward (speed-notes §59):
# which level pays for the 32-byte row loads.
#   DEADLINE=300 CARRY_DIR=build/carry-s34a bash reports/results/h100/2026-12-06-s34/call10/run.sh $OUT/s34j
#   (carry build/carry-s34a build/probes)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
SECTIONS=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
          --section WarpStateStats --section SchedulerStats
          --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum)
for config in W4P4T8 W4P4T8-timetiled W4P4T8-nostores; do
  run ncu --clock-control none -k regex:ws_forward --launch-skip 3 --launch-count 1 "${SECTIONS[@]}" \
      build/probes/ws_forward 8 4096 2048 $config > "$O/ncu-probe-$config.txt" 2>&1
done
run ncu --clock-control none --kernel-name-base demangled -k regex:ForwardDirect --launch-count 1 "${SECTIONS[@]}" \
    "$S" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048 \
    --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json --direction fwd \
    > "$O/ncu-main.txt" 2>&1
for f in "$O"/ncu-*.txt; do
  echo "== $(basename "$f")"
  grep -E 'Duration|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|L1/TEX Cache Throughput|L2 Cache Throughput|l1tex__t|lts__t|dram__bytes|No Eligible|Warp Cycles Per Issued' "$f" | cut -c1-120
done
call_end
