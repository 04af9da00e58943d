#!/usr/bin/env bash
# Session 22's fourth call: the landed binary (0e11f4c's kernels) alone, configs only. §43's reading
# is that the anchor's forward loses because a scheduler's two warps are too often in the same
# phase (both in the XU-bound state walk, or both in the FMA-pipe activations and I/O). A team's
# warps are tied together by the tile barrier; smaller teams tie fewer warps, longer tiles meet the
# barrier less often. Forward at (8,4096,16,2048) and (8,4096,32,2048) under team sizes 32, 64, 128
# (the rule's) and 256 (one channel a thread, a channel a pass), and tiles of 16, 32 (the rule's)
# and 64 steps; the rule's config first and last.
# Prediction: if the phase coupling matters, teams of 32 or 64 beat 128 by a few percent at the
# anchor despite more B and C copying; if not, 128 stays best (it was the tuned choice).
# Run from the repository root, carrying build/carry:
#   DEADLINE=300 bash reports/results/h200/2026-12-04-s22/call4/run.sh $OUT/s22d
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-300} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,8x4096x32x2048
sweep() {  # NAME [CONFIG]
  local cfg=(); [ -n "${2:-}" ] && cfg=(--config "$2")
  run $S sweep selective_scan --backend cuda --impl tiled --no-cache "${cfg[@]}" \
      --implementation "scanlab-$1" --direction fwd "${OPTS[@]}" --shapes $SH \
      --out "$O/selective_scan-$1.json" > "$O/sweep-$1.txt" 2>&1
}
sweep warmup
sweep rule
for ts in 32 64 128 256; do
  for tile in 16 32 64; do
    sweep "team$ts-tile$tile" "{\"team_size\":$ts,\"channels_per_team\":$ts,\"time_tile\":$tile}"
  done
done
sweep rule-again
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
echo "done at $SECONDS s"
for f in "$O"/sweep-*.txt; do echo "== $(basename $f .txt)"
  grep "selective_scan/\|rror" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-60; done
