#!/usr/bin/env bash
# Session 20's third call (build/baseline: eb7e3d2, the committed kernels): ncu of the forward, for
# the next session's leads. (1) At (2,4096,16,8192) the two kernels of direct_io in 4 segments,
# summary and walk: their durations and instruction counts (how much of the 1.141 ms the summary
# costs). (2) At the anchor, direct_io's one-thread kernel with Source Counters and warp states
# (where its 52% below the SFU ceiling goes). Run from the repository root, carrying build/carry:
#   DEADLINE=300 bash reports/results/h200/2026-12-04-s20/call3/run.sh $OUT/s20c
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/baseline/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-300} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
ceil=reports/results/h200/2026-12-04-s20/call2/ceilings.json
one() {  # SHAPE
  echo --backend cuda --ceilings $ceil --impl tiled --no-cache --direction fwd "${OPTS[@]}" --shapes $1 \
       --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json
}
run ncu --clock-control none --kernel-name-base demangled -k 'regex:ForwardDirect' --launch-count 2 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --metrics smsp__inst_executed.sum,gpu__time_duration.sum \
    $S sweep selective_scan $(one 2x4096x16x8192) > "$O/ncu-fwd-segments.txt" 2>&1
run ncu --clock-control none --kernel-name-base demangled -k 'regex:ForwardDirect' --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy --section SpeedOfLight \
    --metrics smsp__inst_executed.sum,gpu__time_duration.sum -o /tmp/ncu-fwd -f \
    $S sweep selective_scan $(one 8x4096x16x2048) > "$O/ncu-fwd-anchor.txt" 2>&1
run ncu --import /tmp/ncu-fwd.ncu-rep --page source --csv --print-source sass 2>> "$O/ncu-fwd-anchor.txt" | gzip > "$O/ncu-fwd-anchor-source-sass.csv.gz"
run ncu --import /tmp/ncu-fwd.ncu-rep --page details >> "$O/ncu-fwd-anchor.txt" 2>&1
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
echo "done at $SECONDS s"
grep -h "ForwardDirect\|Duration\|Executed Instructions  \|Registers Per\|Warp Cycles Per Issued\|Achieved Active Warps" "$O"/ncu-fwd-segments.txt "$O"/ncu-fwd-anchor.txt | cut -c1-150 | head -40
