#!/usr/bin/env bash
# Session 18's third call: the interleaved backward (two states at once, one thread a channel, its
# carve-out fitted) where the heuristic still runs two or four threads a channel or time segments:
# the five dstate-16 issue shapes without segments, and in 2 or 4 time segments at 8192 and 16384
# channels, beside the heuristic's backward in the same binary. Ceilings from call2. Run from the
# repository root, carrying build/carry:
#   bash reports/results/h200/2026-12-03-s18/call3/run.sh $OUT/s18c
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-03-s18/call2/ceilings.json
left() { echo $(( ${DEADLINE:-240} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096
one='"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2'
sweep() {  # NAME SHAPES CONFIG
  run $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache ${3:+--config "$3"} \
      --implementation "scanlab-$1" --direction bwd "${OPTS[@]}" --shapes "$2" \
      --out "$O/selective_scan-$1.json" > "$O/sweep-$1.txt" 2>&1
}
sweep heuristic $SH ""
sweep i2 $SH "{$one,\"bwd_time_segments\":1}"
sweep i2-seg2 2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096 "{$one,\"bwd_time_segments\":2}"
sweep i2-seg4 2x4096x16x8192,8x2048x16x2048 "{$one,\"bwd_time_segments\":4}"
sweep heuristic-again $SH ""
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
echo "done at $SECONDS s"
grep "selective_scan/" "$O"/sweep*.txt | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-100
