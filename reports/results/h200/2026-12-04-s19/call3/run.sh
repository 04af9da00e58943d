#!/usr/bin/env bash
# Session 19's third call (5b31d24, build/cuda only): where the heuristic runs two or four threads
# a channel one state at a time ((16,1536,16,1024), (4,5120,16,4096)), §33-§34 sped up the
# two-states-at-once form but not those; this probes whether two (or four) states at once now win
# there, beside the heuristic in the same binary, and four states at once at the anchor; then ncu
# Source Counters of the heuristic's backward at the anchor (where its stalls are now).
# Prediction: two states at once ~1.03x the heuristic at (16,1536,16,1024) (s18's call3 had it
# 1% behind, §33-§34 gave the form 4-7%) and ~0.99x at (4,5120,16,4096) (6% behind there).
# Ceilings from session 18's call8. Run from the repository root, carrying build/carry:
#   DEADLINE=300 bash reports/results/h200/2026-12-04-s19/call3/run.sh $OUT/s19c
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-03-s18/call8/ceilings.json
left() { echo $(( ${DEADLINE:-240} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=16x1536x16x1024,4x5120x16x4096,8x4096x16x2048
one='"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_time_segments":1'
sweep() {  # NAME SHAPES CONFIG
  run $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache ${3:+--config "$3"} \
      --implementation "scanlab-$1" --direction bwd "${OPTS[@]}" --shapes "$2" \
      --out "$O/selective_scan-$1.json" > "$O/sweep-$1.txt" 2>&1
}
sweep heuristic $SH ""
sweep i2 $SH "{$one,\"bwd_state_interleave\":2}"
sweep i4 $SH "{$one,\"bwd_state_interleave\":4}"
sweep heuristic-again $SH ""
sweep i2-again 16x1536x16x1024,4x5120x16x4096 "{$one,\"bwd_state_interleave\":2}"
if [ "$(left)" -gt 60 ]; then
  run ncu --clock-control none --kernel-name-base demangled -k 'regex:BackwardTiled' --launch-count 1 \
      --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy \
      --metrics smsp__inst_executed.sum -o /tmp/ncu-bwd -f \
      $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache --direction bwd "${OPTS[@]}" \
      --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json \
      > "$O/ncu-bwd.txt" 2>&1
  run ncu --import /tmp/ncu-bwd.ncu-rep --page source --csv --print-source sass 2>> "$O/ncu-bwd.txt" | gzip > "$O/ncu-bwd-source-sass.csv.gz"
  run ncu --import /tmp/ncu-bwd.ncu-rep --page details >> "$O/ncu-bwd.txt" 2>&1
fi
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
echo "done at $SECONDS s"; grep -h "Registers Per\|Warp Cycles Per Issued\|Achieved Active Warps\|Executed Instructions  " "$O/ncu-bwd.txt" | head -6
grep "selective_scan/" "$O"/sweep*.txt | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-100
