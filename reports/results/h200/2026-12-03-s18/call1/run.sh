#!/usr/bin/env bash
# Session 18's first call: tiled's backward with one thread a channel walking 1, 2 or 4 states at
# once (bwd_state_interleave; 2 and 4 under a 255-register bound), beside the heuristic's backward
# (two threads a channel at dstate 16) in the same binary, backward only, on the six issue shapes;
# the 4-state form also in two time segments; GPU checks of both interleaves (selective_scan and
# state_space_v1, forward and backward); the CUDA kernel tests; ncu of the 4-state backward at the
# anchor. Ceilings from session 17's first call. Run from the repository root, carrying
# build/carry:
#   bash reports/results/h200/2026-12-03-s18/call1/run.sh $OUT/s18a
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-03-s17/call2/ceilings-call1.json
left() { echo $(( ${DEADLINE:-300} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048
one='"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32'
sweep() {  # NAME CONFIG
  run $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache ${2:+--config "$2"} \
      --implementation "scanlab-$1" --direction bwd "${OPTS[@]}" --shapes $SH \
      --out "$O/selective_scan-$1.json" > "$O/sweep-$1.txt" 2>&1
}
sweep heuristic ""
sweep i1 "{$one,\"bwd_state_interleave\":1}"
sweep i2 "{$one,\"bwd_state_interleave\":2}"
sweep i4 "{$one,\"bwd_state_interleave\":4}"
sweep i4-seg2 "{$one,\"bwd_state_interleave\":4,\"bwd_time_segments\":2}"
sweep heuristic-again ""
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
for i in 2 4; do
  for op in selective_scan state_space_v1; do
    run $S check $op --backend cuda --impl tiled --config "{$one,\"bwd_state_interleave\":$i,\"chunk_len\":8}" \
        --cases 200 --seed $((70 + i)) > "$O/check-$op-i$i.txt" 2>&1
    echo "exit $?" >> "$O/check-$op-i$i.txt"
  done
done
run ncu --clock-control none --kernel-name-base demangled -k 'regex:BackwardTiled' --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --metrics l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,smsp__inst_executed.sum \
    $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache --direction bwd "${OPTS[@]}" \
    --config "{$one,\"bwd_state_interleave\":4}" --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 \
    --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json > "$O/ncu-i4.txt" 2>&1
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "failures\|^exit" "$O"/check-*.txt | paste - - ; echo "done at $SECONDS s"
grep "selective_scan/bwd" "$O"/sweep-*.txt | sed 's/D=on.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1 \2 \3/' | cut -c1-90
