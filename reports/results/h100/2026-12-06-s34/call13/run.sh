#!/usr/bin/env bash
# Session 34, call13: ncu's memory tables in full (--print-details all) for the warp-specialized
# probe at the anchor: rows one a lane (W4P4T8), rows across lanes (W4P4T8co), the time-tiled
# layout (W4P4T8-timetiled) (speed-notes §59).
#   DEADLINE=300 CARRY_DIR=build/carry-s34a bash reports/results/h100/2026-12-06-s34/call13/run.sh $OUT/s34m
#   (carry build/carry-s34a build/probes)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
for config in W4P4T8 W4P4T8co W4P4T8-timetiled; do
  run ncu --clock-control none -k regex:ws_forward --launch-skip 3 --launch-count 1 --print-details all \
      --section MemoryWorkloadAnalysis_Tables --section MemoryWorkloadAnalysis --section SpeedOfLight \
      --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,l1tex__m_xbar2l1tex_read_sectors.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__lsuin_requests.sum,l1tex__f_wavefronts.sum \
      build/probes/ws_forward 8 4096 2048 $config > "$O/ncu-$config.txt" 2>&1
done
for f in "$O"/ncu-*.txt; do
  echo "== $(basename "$f")"
  grep -E 'Duration|l1tex__|Shared|Global|Local|L1/TEX|Wavefront|Bank' "$f" | cut -c1-130 | head -60
done
call_end
