#!/usr/bin/env bash
# Session 20's first call: direct_io in time segments (new this session) against the heuristic's
# forward (staged, two threads a channel, 4 segments at (2,4096,16,8192); direct_io without segments
# elsewhere), forward only, in one binary: one thread a channel in 2, 4, 8 segments and two threads a
# channel in 1, 2, 4, on the dstate-16 issue shapes with fewer than 32768 channels and the anchor.
# Then GPU checks of direct_io in segments against the oracle, the CUDA kernel tests, and memcheck
# and racecheck of both new kernels (summary and walk). Ceilings from session 19's call4.
# Prediction (speed-notes §36): (2,4096,16,8192) one thread a channel in 4 segments ~1.05 ms
# against ~1.46 for the heuristic (a walk like the anchor's ~0.70 ms plus a summary over 3/4 of the
# steps at ~0.35); elsewhere segments cost more than they fill (within ±5% of the heuristic).
# Run from the repository root, carrying build/carry:
#   DEADLINE=330 bash reports/results/h200/2026-12-04-s20/call1/run.sh $OUT/s20a
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-04-s19/call4/ceilings.json
left() { echo $(( ${DEADLINE:-300} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=2x4096x16x8192,8x2048x16x2048,4x5120x16x4096,16x1536x16x1024,8x4096x16x2048
one='"direct_io":1,"state_split":1,"channels_per_team":128,"team_size":128,"time_tile":32'
two='"direct_io":1,"state_split":2,"channels_per_team":32,"team_size":64,"time_tile":32'
sweep() {  # NAME SHAPES CONFIG
  run $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache ${3:+--config "$3"} \
      --implementation "scanlab-$1" --direction fwd "${OPTS[@]}" --shapes "$2" \
      --out "$O/selective_scan-$1.json" > "$O/sweep-$1.txt" 2>&1
}
sweep heuristic $SH ""
for s in 2 4 8; do sweep d1-s$s $SH "{$one,\"fwd_time_segments\":$s}"; done
for s in 1 2 4; do sweep d2-s$s $SH "{$two,\"fwd_time_segments\":$s}"; done
sweep heuristic-again $SH ""
sweep d1-s4-again 2x4096x16x8192,8x2048x16x2048 "{$one,\"fwd_time_segments\":4}"
for cfg in "{$one,\"fwd_time_segments\":3}" "{$two,\"fwd_time_segments\":3}"; do
  run $S check selective_scan --backend cuda --impl tiled --config "$cfg" --cases 150 --seed 20 \
      >> "$O/check-direct-segments.txt" 2>&1; echo "exit $?" >> "$O/check-direct-segments.txt"
done
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
if [ "$(left)" -gt 40 ]; then
  for tool in memcheck racecheck; do
    run compute-sanitizer --tool $tool --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
        --config "{$two,\"fwd_time_segments\":3}" --cases 8 --seed 9 --max-size 6000 > "$O/sanitizer-direct-segments-$tool.txt" 2>&1
    echo "sanitizer $tool exit $?" >> "$O/sanitizer-direct-segments-$tool.txt"
  done
fi
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit\|fail" "$O"/check-direct-segments.txt "$O"/sanitizer-*.txt | head; echo "done at $SECONDS s"
grep "selective_scan/" "$O"/sweep*.txt | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-110
