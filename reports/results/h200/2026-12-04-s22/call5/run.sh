#!/usr/bin/env bash
# Session 22's fifth call: the landed binary (0e11f4c's kernels) alone, configs only. call4 had
# tiles of 64 steps beat the rule's 32 at the anchor (0.556 against 0.569-0.584 ms for the rule's
# config in that call) and at dstate 32 (0.892 against 0.902-0.917). Here the rule against
# time_tile 64 and 128 laid over it, on the six issue shapes and dstate 32, alternating, twice.
# Prediction: tiles of 64 1.02-1.04x at the anchor and dstate 32 (half the tile barriers); on the
# two- and four-thread shapes within +-2%.
# Run from the repository root, carrying build/carry:
#   DEADLINE=300 bash reports/results/h200/2026-12-04-s22/call5/run.sh $OUT/s22e
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-300} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048,8x4096x32x2048
sweep() {  # NAME [CONFIG]
  local cfg=(); [ -n "${2:-}" ] && cfg=(--config "$2")
  run $S sweep selective_scan --backend cuda --impl tiled --no-cache "${cfg[@]}" \
      --implementation "scanlab-$1" --direction fwd "${OPTS[@]}" --shapes $SH \
      --out "$O/selective_scan-$1.json" > "$O/sweep-$1.txt" 2>&1
}
sweep warmup
for round in 1 2; do
  sweep "rule-$round"
  sweep "tile64-$round" '{"time_tile":64}'
  sweep "tile128-$round" '{"time_tile":128}'
done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
echo "done at $SECONDS s"
for f in "$O"/sweep-*.txt; do echo "== $(basename $f .txt)"
  grep "selective_scan/\|rror" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-60; done
