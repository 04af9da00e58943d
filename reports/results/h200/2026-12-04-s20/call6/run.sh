#!/usr/bin/env bash
# Session 20's sixth call (build/baseline: eb7e3d2, the committed kernels): the backward's time
# segments where channels are few (the rule: two waves of 8 warps an SM, at most 16: 8 at 8192
# channels, 4 at 16384), in 4, 8, 16, 32 and 64 segments, backward only, on (2,4096,16,8192),
# (8,2048,16,2048) and (1,2048,16,8192); session 18 had 16 and 32 segments 4-5% ahead of 8 at
# (2,4096,16,8192) (before §33-§34). Prediction: 16-32 segments 1.03-1.05x the rule's 8 there, a tie
# at 16384 channels. Run from the repository root, carrying build/carry:
#   DEADLINE=240 bash reports/results/h200/2026-12-04-s20/call6/run.sh $OUT/s20f
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/baseline/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-04-s20/call4/ceilings.json
left() { echo $(( ${DEADLINE:-240} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=2x4096x16x8192,8x2048x16x2048,1x2048x16x8192
sweep() {  # NAME CONFIG
  run $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache ${2:+--config "$2"} \
      --implementation "scanlab-$1" --direction bwd "${OPTS[@]}" --shapes $SH \
      --out "$O/selective_scan-$1.json" > "$O/sweep-$1.txt" 2>&1
}
sweep heuristic ""
for s in 4 8 16 32 64; do sweep seg$s "{\"bwd_time_segments\":$s}"; done
sweep heuristic-again ""
for s in 16 32; do sweep seg$s-again "{\"bwd_time_segments\":$s}"; done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
echo "done at $SECONDS s"
grep "selective_scan/" "$O"/sweep*.txt | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | sed 's#.*/sweep-##' | cut -c1-90
