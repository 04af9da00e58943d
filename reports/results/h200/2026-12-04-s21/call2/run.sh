#!/usr/bin/env bash
# Session 21's second call: with direct_io in blocks of 8 steps (build/cuda = a0bc58d), do the
# heuristic's thread counts still hold? Forward only, one binary: one thread a channel against two
# on the dstate-16 issue shapes (the rule takes two below 7·32·SMs = 29568 channels, where the
# one-thread form gained most in call1: 1.21x at the anchor against 1.07-1.09x for two), and at
# (2,4096,16,8192) both in 4 and 8 segments. Also dstate 64, the one shape call1 did not A/B
# (its one-thread kernel's stack grew from 40 to 72 bytes): baseline eb7e3d2 against a0bc58d.
# Prediction: one thread a channel now ties or wins at 20480-24576 channels; at 16384 and at
# (2,4096,16,8192) two threads stay ahead; dstate 64 within ±3%.
# Run from the repository root, carrying build/carry:
#   DEADLINE=300 bash reports/results/h200/2026-12-04-s21/call2/run.sh $OUT/s21b
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab BASE=build/baseline/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-04-s20/call2/ceilings.json
left() { echo $(( ${DEADLINE:-300} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x16x2048
one='"direct_io":1,"state_split":1,"channels_per_team":128,"team_size":128,"time_tile":32'
two='"direct_io":1,"state_split":2,"channels_per_team":32,"team_size":64,"time_tile":32'
sweep() {  # BINARY NAME SHAPES CONFIG
  run $1 sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache ${4:+--config "$4"} \
      --implementation "scanlab-$2" --direction fwd "${OPTS[@]}" --shapes "$3" \
      --out "$O/selective_scan-$2.json" > "$O/sweep-$2.txt" 2>&1
}
sweep $S heuristic $SH ""
sweep $S one $SH "{$one}"
sweep $S two $SH "{$two}"
sweep $S one-again $SH "{$one}"
sweep $S two-again $SH "{$two}"
for s in 4 8; do
  sweep $S d1-s$s 2x4096x16x8192 "{$one,\"fwd_time_segments\":$s}"
  sweep $S d2-s$s 2x4096x16x8192 "{$two,\"fwd_time_segments\":$s}"
done
sweep $S d1-s4-again 2x4096x16x8192 "{$one,\"fwd_time_segments\":4}"
sweep $S d2-s4-again 2x4096x16x8192 "{$two,\"fwd_time_segments\":4}"
sweep $BASE n64-baseline 8x4096x64x2048 ""
sweep $S n64-new 8x4096x64x2048 ""
sweep $BASE n64-baseline-again 8x4096x64x2048 ""
sweep $S n64-new-again 8x4096x64x2048 ""
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
echo "done at $SECONDS s"
for f in "$O"/sweep-*.txt; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-80; done
