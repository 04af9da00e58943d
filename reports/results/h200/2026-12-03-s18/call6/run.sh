#!/usr/bin/env bash
# Session 18's sixth call: the interleaved backward with each thread's next chunk of u, delta,
# dout, z copied into team scratch by cp.async beside B and C (build/cuda, not landed) against
# 349c84f (build/baseline), backward only, on the shapes where the heuristic walks two states at
# once; GPU checks of the staged forms (selective_scan and state_space_v1, whose (b, L, D) layout
# takes the float-at-a-time copies). Ceilings from call5. Run from the repository root, carrying
# build/carry (both binaries packed):
#   bash reports/results/h200/2026-12-03-s18/call6/run.sh $OUT/s18f
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
sweep $S staged
sweep $B baseline-again
sweep $S staged-again
i=0
for config in '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8}' \
              '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":4,"chunk_len":8,"bwd_time_segments":3}'; do
  i=$((i + 1))
  for op in selective_scan state_space_v1; do
    run $S check $op --backend cuda --impl tiled --config "$config" --cases 150 --seed $((90 + i)) > "$O/check-$op-staged$i.txt" 2>&1
    echo "exit $?" >> "$O/check-$op-staged$i.txt"
  done
done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
grep -h "PASS\|FAIL" "$O"/check-*.txt | grep -o "config.*" | cut -c1-160; echo "done at $SECONDS s"
grep "selective_scan/" "$O"/sweep*.txt | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-110
