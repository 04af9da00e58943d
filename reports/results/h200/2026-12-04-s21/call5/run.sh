#!/usr/bin/env bash
# Session 21's fifth call. build/cuda: 7ab4b70 + the backward's raw delta loaded one chunk ahead
# into registers (8 a thread; speed-notes §41). build/baseline: eb7e3d2 (the same backward code
# before this change; at (2,4096,16,8192) both run with bwd_time_segments 16, 7ab4b70's rule).
# Backward only, each binary twice, alternating, on the dstate-16 issue shapes, (8,4096,32,2048)
# and (8,4096,64,2048). Then GPU checks of the heuristic's backward (selective_scan 200 cases,
# state_space_v1 100), the CUDA kernel tests, memcheck of the interleaved backward.
# Prediction: backward 1.02-1.05x at the anchor (the top long-scoreboard row, the chunk's first
# use of raw delta, was ~1/3 of §35's 18.5%); the same or less elsewhere.
# Run from the repository root, carrying build/carry:
#   DEADLINE=420 bash reports/results/h200/2026-12-04-s21/call5/run.sh $OUT/s21e
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab BASE=build/baseline/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-04-s21/call4/ceilings.json
left() { echo $(( ${DEADLINE:-400} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x32x2048,8x4096x64x2048
bwd() {  # BINARY NAME
  run $1 sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache \
      --implementation "scanlab-$2" --direction bwd "${OPTS[@]}" --shapes $SH \
      --out "$O/selective_scan-$2.json" > "$O/sweep-$2.txt" 2>&1
  run $1 sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache --config '{"bwd_time_segments":16}' \
      --implementation "scanlab-$2" --direction bwd "${OPTS[@]}" --shapes 2x4096x16x8192 \
      --out "$O/selective_scan-$2-seg16.json" > "$O/sweep-$2-seg16.txt" 2>&1
}
bwd $BASE baseline
bwd $S prefetch
bwd $BASE baseline-again
bwd $S prefetch-again
run $S check selective_scan --backend cuda --impl tiled --cases 200 --seed 24 > "$O/check-selective_scan.txt" 2>&1; echo "exit $?" >> "$O/check-selective_scan.txt"
run $S check state_space_v1 --backend cuda --cases 100 --seed 24 > "$O/check-state_space_v1.txt" 2>&1; echo "exit $?" >> "$O/check-state_space_v1.txt"
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
if [ "$(left)" -gt 40 ]; then
  run compute-sanitizer --tool memcheck --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
      --config '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8,"bwd_time_segments":3}' \
      --cases 8 --seed 9 --max-size 6000 > "$O/sanitizer-bwd-memcheck.txt" 2>&1
  echo "sanitizer memcheck exit $?" >> "$O/sanitizer-bwd-memcheck.txt"
fi
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit\|^failures" "$O"/check-*.txt "$O"/sanitizer-*.txt; echo "done at $SECONDS s"
for f in "$O"/sweep-*.txt; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-62; done
