#!/usr/bin/env bash
# Session 18's seventh call: the interleaved backward with its contribution rows of compile-time
# length (36 floats where a team is 32 rows; build/cuda) against 349c84f (build/baseline),
# backward only, on the shapes where the heuristic walks two states at once, each sweep twice;
# warp instructions of both at the anchor (ncu); GPU checks. Ceilings from call5. Run from the
# repository root, carrying build/carry (both binaries packed):
#   bash reports/results/h200/2026-12-03-s18/call7/run.sh $OUT/s18g
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab B=build/baseline/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-03-s18/call5/ceilings.json
left() { echo $(( ${DEADLINE:-240} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,8x2048x16x2048,2x4096x16x8192,8x4096x32x2048,8x4096x64x2048
sweep() {  # BINARY NAME
  run $1 sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache --implementation "scanlab-$2" \
      --direction bwd "${OPTS[@]}" --shapes $SH --out "$O/selective_scan-$2.json" > "$O/sweep-$2.txt" 2>&1
}
sweep $B baseline
sweep $S fixed-rows
sweep $B baseline-again
sweep $S fixed-rows-again
for bin in B S; do
  run ncu --clock-control none --kernel-name-base demangled -k 'regex:BackwardTiled' --launch-count 1 \
      --metrics smsp__inst_executed.sum,gpu__time_duration.sum,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio \
      ${!bin} sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache --direction bwd "${OPTS[@]}" \
      --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu.json \
      > "$O/ncu-$bin.txt" 2>&1
done
for op in selective_scan state_space_v1; do
  run $S check $op --backend cuda --impl tiled \
      --config '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8}' \
      --cases 150 --seed 95 > "$O/check-$op.txt" 2>&1
  echo "exit $?" >> "$O/check-$op.txt"
done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
grep -h "PASS\|FAIL" "$O"/check-*.txt | grep -o "PASS$\|FAIL$"; grep -h "inst_executed.sum\|duration" "$O"/ncu-*.txt; echo "done at $SECONDS s"
grep "selective_scan/" "$O"/sweep*.txt | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-110
