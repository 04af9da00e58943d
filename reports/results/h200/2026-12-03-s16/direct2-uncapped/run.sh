#!/usr/bin/env bash
# Session 16's second call: direct_io with two threads per channel, its launch bound raised from
# the staged forward's (256, 2) to one-thread direct_io's (256, 1), beside the heuristic (the
# staged forward) in one call, forward only. Run on the device machine from the repository root,
# carrying build/carry:  bash reports/results/h200/2026-12-03-s16/direct2-uncapped/run.sh $OUT/s16b
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
direct2='{"direct_io":1,"state_split":2,"fwd_time_segments":1,"team_size":128,"channels_per_team":64,"time_tile":32}'
SH=8x4096x16x2048,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096
OPTS=(--z on --D on --delta-bias on --softplus on)
cuobjdump -res-usage $S 2>&1 | grep -A1 -E "ForwardDirect" | grep -v "^--" > "$O/res-usage.txt" 2>&1
$S ceilings --backend cuda --out "$O/ceilings.json" > /dev/null 2>&1
$S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache --direction fwd "${OPTS[@]}" \
   --shapes $SH --out "$O/selective_scan-tiled.json" > "$O/sweep-heuristic.txt" 2>&1; echo "exit $?" >> "$O/sweep-heuristic.txt"
$S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache --config "$direct2" \
   --implementation scanlab-direct2-uncapped --direction fwd "${OPTS[@]}" --shapes $SH \
   --out "$O/selective_scan-tiled-direct2-uncapped.json" > "$O/sweep-direct2.txt" 2>&1; echo "exit $?" >> "$O/sweep-direct2.txt"
$S check selective_scan --backend cuda --impl tiled --config "${direct2/128,\"channels_per_team\":64/64,\"channels_per_team\":32}" \
   --cases 200 --seed 51 > "$O/check-direct2.txt" 2>&1; echo "exit $?" >> "$O/check-direct2.txt"
ncu --clock-control none --kernel-name-base demangled -k regex:Direct --launch-count 1 --section LaunchStats --section Occupancy \
   --section WarpStateStats --metrics smsp__inst_executed.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,gpu__time_duration.sum \
   $S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache --direction fwd "${OPTS[@]}" \
   --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --config "$direct2" \
   --out /tmp/ncu-sweep.json > "$O/ncu.txt" 2>&1
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
grep -hoE "batch=[0-9]+,delta_bias=on,dim=[0-9]+|[0-9.]+ [mu]s \(IQR" "$O"/sweep-*.txt | paste - -
tail -n 2 "$O/check-direct2.txt"
grep -E "Registers Per|inst_executed|local_op|Duration|Theoretical Occ|Cycles Per Issued" "$O/ncu.txt"
grep -A1 "Li16ELi2E" "$O/res-usage.txt" | tail -n 1
