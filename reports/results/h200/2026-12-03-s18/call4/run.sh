#!/usr/bin/env bash
# Session 18's fourth call: the interleaved backward (two states at once, one thread a channel)
# in time segments where channels are few (2048, 8192 and 16384), 4 to 32 segments, beside the
# heuristic's backward (four or two threads a channel, segments below 16384 channels) in the same
# binary. Ceilings from call2. Run from the repository root, carrying build/carry:
#   bash reports/results/h200/2026-12-03-s18/call4/run.sh $OUT/s18d
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-03-s18/call2/ceilings.json
left() { echo $(( ${DEADLINE:-240} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
one='"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2'
sweep() {  # NAME SHAPES CONFIG
  run $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache ${3:+--config "$3"} \
      --implementation "scanlab-$1" --direction bwd "${OPTS[@]}" --shapes "$2" \
      --out "$O/selective_scan-$1.json" > "$O/sweep-$1.txt" 2>&1
}
sweep heuristic 2x4096x16x8192,8x2048x16x2048,1x2048x16x8192 ""
for seg in 4 8 16 32; do
  sweep i2-seg$seg 2x4096x16x8192,8x2048x16x2048,1x2048x16x8192 "{$one,\"bwd_time_segments\":$seg}"
done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
echo "done at $SECONDS s"
grep "selective_scan/" "$O"/sweep*.txt | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-100
