#!/usr/bin/env bash
# Session 41, call1: main b4293f5's kernels (§68; HEAD ae0cc23 changes no code) on the machine lent:
# the heuristic's checks, then beside mamba_ssm (forward, backward, fwd+bwd) for the stand, then
# ncu (instructions, pipes, stall reasons) of the heuristic's backward at the anchor and of the
# forward's two kernels at (2,4096,16,8192), the two leads of session 40's note (the backward's with
# per-SASS source counters, to split its time between the state loop and the chunk's end).
# Prediction (on an H200): the anchor's forward 4.1-4.3x mamba_ssm (§66's 4.01x times §68's
# 1.03-1.04x), dstate 32/64 5.1-5.3x, fwd+bwd as §66 (1.80-2.42x; the backward is unchanged).
#   bash scripts/build.sh cuda; CARRY_DIR=build/carry-s41a bash scripts/gpu/carry.sh pack build/cuda/scanlab
#   bash scripts/peers/fetch.sh
#   DEADLINE=560 CARRY_DIR=build/carry-s41a bash reports/results/h200/2026-12-07-s41/call1/run.sh $OUT/s41a   # carry build/carry-s41a .peers/src
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
"$S" --version | head -n 1 > "$O/version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
gpu_checks 4141 100
ceilings
beside_peer mamba_ssm
NCU=(ncu --clock-control none --kernel-name-base demangled --section WarpStateStats --section LaunchStats
     --metrics 'gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_lsu.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
ncu_sweep() {  # NAME KERNEL_REGEX LAUNCHES SHAPE DIRECTION
  run "${NCU[@]}" -k "regex:$2" --launch-count "$3" "$S" sweep selective_scan --backend cuda --impl tiled --no-cache \
      "${OPTS[@]}" --shapes "$4" --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 \
      --out /tmp/ncu-sweep.json --direction "$5" > "$O/ncu-$1.txt" 2>&1
}
NCU_PLAIN=("${NCU[@]}")
NCU+=(--section SourceCounters -o /tmp/ncu-bwd -f)
ncu_sweep bwd-anchor BackwardTiled 1 8x4096x16x2048 bwd
run ncu --import /tmp/ncu-bwd.ncu-rep --page details > "$O/ncu-bwd-anchor-details.txt" 2>&1
run ncu --import /tmp/ncu-bwd.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > "$O/ncu-bwd-anchor-source-sass.csv.gz"
NCU=("${NCU_PLAIN[@]}")
ncu_sweep fwd-2x8192 ForwardDirect 2 2x4096x16x8192 fwd
call_end
grep -A14 -i 'speedup\|ratio' "$O/report/report.md" | head -60
for f in "$O"/ncu-bwd-anchor-details.txt "$O"/ncu-fwd-*.txt; do
  echo "== $(basename "$f")"
  grep -E 'BackwardTiled|ForwardDirect|gpu__time_duration|inst_executed|issue_stalled|Registers Per|Block Size|Grid Size|Shared Memory Config' "$f" \
    | awk '$NF+0 >= 0.05 || /Tiled|Direct|duration|inst_exec|Regis|Size|Config/' | cut -c1-130
done
