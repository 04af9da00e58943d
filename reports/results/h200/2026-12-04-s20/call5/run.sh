#!/usr/bin/env bash
# Session 20's fifth call (build/baseline: eb7e3d2, the committed kernels): the rule's direct_io in
# time segments where it now runs without having been measured (dstate 16 below 8192 channels:
# 4096, 2048 and 1024 channels in 8 or 16 segments), against the staged forward in the same
# segments (its earlier rule), forward only; and at (2,4096,16,8192) two threads a channel in 2, 4,
# 8 segments with tiles of 16, 32 and 64 steps. Prediction: direct_io ahead of the staged forward
# by ~1.2x at all three (as at 8192 channels); 4 segments and tiles of 32 best at 8192 channels.
# Run from the repository root, carrying build/carry:
#   DEADLINE=200 bash reports/results/h200/2026-12-04-s20/call5/run.sh $OUT/s20e
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/baseline/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-04-s20/call4/ceilings.json
left() { echo $(( ${DEADLINE:-200} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
sweep() {  # NAME SHAPES CONFIG
  run $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache ${3:+--config "$3"} \
      --implementation "scanlab-$1" --direction fwd "${OPTS[@]}" --shapes "$2" \
      --out "$O/selective_scan-$1.json" > "$O/sweep-$1.txt" 2>&1
}
FEW=1x4096x16x8192,1x2048x16x8192,1x1024x16x4096
staged='"direct_io":0,"state_split":2,"channels_per_team":32,"team_size":64,"time_tile":16'
sweep heuristic $FEW ""
sweep staged $FEW "{$staged}"
sweep heuristic-again $FEW ""
two='"direct_io":1,"state_split":2,"channels_per_team":32,"team_size":64'
for s in 2 4 8; do for tt in 16 32 64; do sweep d2-s$s-t$tt 2x4096x16x8192 "{$two,\"fwd_time_segments\":$s,\"time_tile\":$tt}"; done; done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
echo "done at $SECONDS s"
grep "selective_scan/" "$O"/sweep*.txt | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | sed 's#.*/sweep-##' | cut -c1-90
