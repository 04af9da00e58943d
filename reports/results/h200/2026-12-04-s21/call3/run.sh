#!/usr/bin/env bash
# Session 21's third call. build/cuda: a0bc58d + direct_io with four threads a channel (state_split
# 4: each owns 2 steps of a block of 8 and 4 of the 16 states; dt, u and y's shares exchanged
# through team scratch between warp syncs) + blocks of 4 steps again at dstate 64 (call2: 8-step
# blocks spilled more there, 1.90 against 1.65 ms). build/baseline: eb7e3d2.
# 1. Forward, one binary: four threads a channel (32 channels a team of 128), with and without
#    time segments, against the rule's form (two threads a channel, in segments where channels
#    are few) and one thread a channel, on the dstate-16 shapes with 32768 channels or fewer.
# 2. dstate 64 forward A/B, baseline against build/cuda, twice each.
# Then GPU checks of four threads a channel (with and without segments, tiles of 16 and 32) and of
# dstate 64's blocks, the CUDA kernel tests, memcheck and racecheck of four threads a channel.
# Prediction (speed-notes §40): four threads a channel without segments at (2,4096,16,8192) (32768
# threads, the anchor's count, no summary pass) ~0.75 ms against ~1.03 for the rule's 4 segments of
# two; at 16384 channels ~1.1x faster than the rule's two; at the anchor slower than one (~0.65).
# dstate 64: a tie with the baseline (the same code there).
# Run from the repository root, carrying build/carry:
#   DEADLINE=420 bash reports/results/h200/2026-12-04-s21/call3/run.sh $OUT/s21c
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab BASE=build/baseline/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-04-s20/call2/ceilings.json
left() { echo $(( ${DEADLINE:-400} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
one='"direct_io":1,"state_split":1,"channels_per_team":128,"team_size":128,"time_tile":32'
two='"direct_io":1,"state_split":2,"channels_per_team":32,"team_size":64,"time_tile":32'
four='"direct_io":1,"state_split":4,"channels_per_team":32,"team_size":128,"time_tile":32'
sweep() {  # BINARY NAME SHAPES CONFIG
  run $1 sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache ${4:+--config "$4"} \
      --implementation "scanlab-$2" --direction fwd "${OPTS[@]}" --shapes "$3" \
      --out "$O/selective_scan-$2.json" > "$O/sweep-$2.txt" 2>&1
}
MID=8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x16x2048
FEW=2x4096x16x8192,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096
sweep $S heuristic "$MID,$FEW" ""
sweep $S four "$MID,$FEW" "{$four}"
sweep $S four-s2 "$FEW" "{$four,\"fwd_time_segments\":2}"
sweep $S four-s4 "$FEW" "{$four,\"fwd_time_segments\":4}"
sweep $S four-t16 "$MID,2x4096x16x8192" "{$four,\"time_tile\":16}"
sweep $S four-c16 "$MID,2x4096x16x8192" "{$four,\"channels_per_team\":16,\"team_size\":64}"
sweep $S heuristic-again "$MID,$FEW" ""
sweep $S four-again "$MID,$FEW" "{$four}"
sweep $BASE n64-baseline 8x4096x64x2048 ""
sweep $S n64-new 8x4096x64x2048 ""
sweep $BASE n64-baseline-again 8x4096x64x2048 ""
sweep $S n64-new-again 8x4096x64x2048 ""
for cfg in "{$four}" "{$four,\"fwd_time_segments\":3}" "{$four,\"time_tile\":16,\"channels_per_team\":8,\"team_size\":32}" \
           "{$one,\"dstate_static\":64}"; do
  echo "== $cfg" >> "$O/check-direct.txt"
  run $S check selective_scan --backend cuda --impl tiled --config "$cfg" --cases 120 --seed 22 \
      >> "$O/check-direct.txt" 2>&1; echo "exit $?" >> "$O/check-direct.txt"
done
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
if [ "$(left)" -gt 40 ]; then
  for tool in memcheck racecheck; do
    run compute-sanitizer --tool $tool --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
        --config "{$four,\"fwd_time_segments\":3}" --cases 8 --seed 9 --max-size 6000 > "$O/sanitizer-four-$tool.txt" 2>&1
    echo "sanitizer $tool exit $?" >> "$O/sanitizer-four-$tool.txt"
  done
fi
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit\|fail" "$O"/check-direct.txt "$O"/sanitizer-*.txt | head -20; echo "done at $SECONDS s"
for f in "$O"/sweep-*.txt; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-62; done
