#!/usr/bin/env bash
# Session 19's second call: §33's regrouped sums plus §34 (the interleaved backward's column sums
# of an iteration read and added in the next iteration, beside its recompute; build/cuda) against
# 86e5192 (build/baseline), backward only, as call1: the six issue shapes and (8,4096,32,2048),
# each sweep twice, alternating; ncu instruction counts at the anchor; GPU checks; CUDA kernel
# tests; memcheck and racecheck of two states at once (32-row teams, the form §34 changes) and of
# two threads a channel (team barriers). Prediction: 1.02-1.04x over call1's regrouped backward
# at the anchor (~3.35 ms against 3.45), nothing where one state a thread runs. Run from the
# repository root, carrying build/carry (both binaries packed):
#   DEADLINE=400 bash reports/results/h200/2026-12-04-s19/call2/run.sh $OUT/s19b
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab B=build/baseline/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-03-s18/call8/ceilings.json
left() { echo $(( ${DEADLINE:-300} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048,8x4096x32x2048
sweep() {  # BINARY NAME
  run $1 sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache --implementation "scanlab-$2" \
      --direction bwd "${OPTS[@]}" --shapes $SH --out "$O/selective_scan-$2.json" > "$O/sweep-$2.txt" 2>&1
}
sweep $B baseline
sweep $S pipelined
sweep $B baseline-again
sweep $S pipelined-again
for bin in B S; do
  run ncu --clock-control none --kernel-name-base demangled -k 'regex:BackwardTiled' --launch-count 1 \
      --metrics smsp__inst_executed.sum,gpu__time_duration.sum,launch__registers_per_thread \
      ${!bin} sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache --direction bwd "${OPTS[@]}" \
      --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu.json \
      > "$O/ncu-$bin.txt" 2>&1
done
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
check() {  # NAME OP CONFIG CASES
  run $S check $2 --backend cuda --impl tiled --config "$3" --cases $4 --seed 19 > "$O/check-$1.txt" 2>&1
  echo "exit $?" >> "$O/check-$1.txt"
}
check heuristic selective_scan '{}' 300
check interleave2 selective_scan '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8}' 150
check interleave2-v1 state_space_v1 '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8}' 150
check split2 selective_scan '{"bwd_state_split":2,"bwd_state_interleave":1,"chunk_len":8}' 150
check split4-chunk16 selective_scan '{"bwd_state_split":4,"bwd_state_interleave":1,"chunk_len":16}' 150
for tool in memcheck racecheck; do
  for form in '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8}' \
              '{"bwd_state_split":2,"bwd_channels_per_team":32,"bwd_team_size":64,"bwd_state_interleave":1,"chunk_len":8}'; do
    name=$tool-$(echo "$form" | grep -o 'split":[0-9]' | tr -d '":')
    run compute-sanitizer --tool $tool --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
        --config "$form" --cases 8 --seed 9 --max-size 6000 > "$O/sanitizer-$name.txt" 2>&1
    echo "sanitizer $tool exit $?" >> "$O/sanitizer-$name.txt"
  done
done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 1 "$O/tests-cuda.txt"; for f in "$O"/check-*.txt; do echo "$(basename $f): $(grep -h '^failures' $f) $(tail -n 1 $f)"; done
grep -h "exit" "$O"/sanitizer-*.txt; grep -h "inst_executed.sum\|duration\|registers" "$O"/ncu-*.txt; echo "done at $SECONDS s"
grep "selective_scan/" "$O"/sweep*.txt | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-110
