#!/usr/bin/env bash
# Session 21's first call. build/baseline is eb7e3d2 (the forward of main; its backward's time
# segments are the rule before this session). build/cuda is this session's working tree:
#  - direct_io in blocks of 8 steps (32 bytes a channel and tensor, a whole sector), two threads a
#    channel owning 4 consecutive steps each (the partners' 16-byte reads are one sector's halves);
#  - the backward's time segments where channels are few: at least one per 512 steps.
# 1. The forward of both binaries on the six issue shapes and (8,4096,32,2048), twice, alternating.
# 2. The backward at (2,4096,16,8192) (the only issue shape whose rule changed), twice, alternating.
# Then GPU checks of direct_io (one and two threads a channel, with and without segments) against
# the oracle, the CUDA kernel tests, and memcheck and racecheck of the new forward.
# Prediction (speed-notes §39): forward 1.03-1.08x where two threads a channel run
# ((2,4096,16,8192), (8,2048,16,2048), (4,5120,16,4096), (16,1536,16,1024)), 0.98-1.05x where one does
# (the anchor, dstate 32); backward at (2,4096,16,8192) ~1.05x (4.88 against 5.12 ms in s20/call6).
# Run from the repository root, carrying build/carry:
#   DEADLINE=400 bash reports/results/h200/2026-12-04-s21/call1/run.sh $OUT/s21a
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab BASE=build/baseline/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-04-s20/call2/ceilings.json
left() { echo $(( ${DEADLINE:-400} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x32x2048
sweep() {  # BINARY NAME DIRECTION SHAPES
  run $1 sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache \
      --implementation "scanlab-$2" --direction $3 "${OPTS[@]}" --shapes $4 \
      --out "$O/selective_scan-$2.json" > "$O/sweep-$2.txt" 2>&1
}
sweep $BASE fwd-baseline fwd $SH
sweep $S fwd-blocks8 fwd $SH
sweep $BASE fwd-baseline-again fwd $SH
sweep $S fwd-blocks8-again fwd $SH
sweep $BASE bwd-baseline bwd 2x4096x16x8192
sweep $S bwd-new bwd 2x4096x16x8192
sweep $BASE bwd-baseline-again bwd 2x4096x16x8192
sweep $S bwd-new-again bwd 2x4096x16x8192
one='"direct_io":1,"state_split":1,"channels_per_team":128,"team_size":128,"time_tile":32'
two='"direct_io":1,"state_split":2,"channels_per_team":32,"team_size":64,"time_tile":32'
for cfg in "{$one}" "{$two}" "{$one,\"fwd_time_segments\":3}" "{$two,\"fwd_time_segments\":3}" "{$two,\"time_tile\":12}"; do
  echo "== $cfg" >> "$O/check-direct.txt"
  run $S check selective_scan --backend cuda --impl tiled --config "$cfg" --cases 120 --seed 21 \
      >> "$O/check-direct.txt" 2>&1; echo "exit $?" >> "$O/check-direct.txt"
done
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
if [ "$(left)" -gt 40 ]; then
  for tool in memcheck racecheck; do
    run compute-sanitizer --tool $tool --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
        --config "{$two,\"fwd_time_segments\":3}" --cases 8 --seed 9 --max-size 6000 > "$O/sanitizer-direct-$tool.txt" 2>&1
    echo "sanitizer $tool exit $?" >> "$O/sanitizer-direct-$tool.txt"
  done
  run compute-sanitizer --tool memcheck --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
      --config "{$one}" --cases 8 --seed 9 --max-size 6000 > "$O/sanitizer-direct1-memcheck.txt" 2>&1
  echo "sanitizer memcheck exit $?" >> "$O/sanitizer-direct1-memcheck.txt"
fi
if [ "$(left)" -gt 60 ]; then  # the new forward at the anchor: where its time goes now (§38 has the old one's)
  run ncu --clock-control none --kernel-name-base demangled -k 'regex:ForwardDirect' --launch-count 1 \
      --section SourceCounters --section WarpStateStats --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --metrics smsp__inst_executed.sum,gpu__time_duration.sum -o /tmp/ncu-fwd -f \
      $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache --direction fwd "${OPTS[@]}" \
      --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 \
      --out /tmp/ncu-sweep.json > "$O/ncu-fwd-anchor.txt" 2>&1
  run ncu --import /tmp/ncu-fwd.ncu-rep --page source --csv --print-source sass 2>> "$O/ncu-fwd-anchor.txt" | gzip > "$O/ncu-fwd-anchor-source-sass.csv.gz"
  run ncu --import /tmp/ncu-fwd.ncu-rep --page details >> "$O/ncu-fwd-anchor.txt" 2>&1
fi
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit\|fail" "$O"/check-direct.txt "$O"/sanitizer-*.txt | head -20; echo "done at $SECONDS s"
for f in "$O"/sweep-*.txt; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-90; done
