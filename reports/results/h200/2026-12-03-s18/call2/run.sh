#!/usr/bin/env bash
# Session 18's second call: the heuristic with the backward walking two states at once
# (bwd_state_interleave 2, one thread a channel, at dstate 32/64 and at the anchor) and the
# interleaved backward's fitted carve-out, on the six issue shapes and (8,4096,32,2048), forward,
# backward and forward+backward, beside mamba_ssm; in the same binary the carve-out off
# (SCANLAB_BWD_CARVEOUT=0) and session 17's backward (split 2 at dstate 16, one state at a time);
# ceilings measured first; the CUDA kernel tests; memcheck and racecheck of the interleaved
# backward; Source Counters of the new backward at the anchor if time is left. Run from the
# repository root, carrying build/carry and .peers/src:
#   bash reports/results/h200/2026-12-03-s18/call2/run.sh $OUT/s18b
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-480} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
(python3 scripts/peers/build_peers.py mamba_ssm > "$O/peers-build.log" 2>&1; echo "exit $? at $SECONDS s" >> "$O/peers-build.log") &
builder=$!
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048,8x4096x32x2048
ONE=8x4096x16x2048,8x4096x64x2048,8x4096x32x2048  # where the heuristic's backward changed
run $S ceilings --backend cuda --out "$O/ceilings.json" > "$O/ceilings.txt" 2>&1
sweep() {  # NAME DIRECTIONS SHAPES CONFIG [ENV...]
  local name="$1" dirs="$2" shapes="$3" config="$4"; shift 4
  run env "$@" $S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
      ${config:+--config "$config"} --implementation "scanlab-$name" --direction "$dirs" "${OPTS[@]}" --shapes "$shapes" \
      --out "$O/selective_scan-$name.json" > "$O/sweep-$name.txt" 2>&1
}
run $S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
    --direction fwd,bwd,fwdbwd "${OPTS[@]}" --shapes $SH --out "$O/selective_scan-tiled.json" > "$O/sweep.txt" 2>&1
sweep no-carveout bwd $ONE "" SCANLAB_BWD_CARVEOUT=0
sweep s17-backward bwd 8x4096x16x2048 '{"bwd_state_split":2,"bwd_team_size":64,"bwd_state_interleave":1}'
sweep s17-backward-n bwd 8x4096x64x2048,8x4096x32x2048 '{"bwd_state_interleave":1}'
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
for tool in memcheck racecheck; do
  run compute-sanitizer --tool $tool --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
      --config '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8}' \
      --cases 12 --seed 7 --max-size 6000 > "$O/sanitizer-interleave2-$tool.txt" 2>&1
  echo "sanitizer $tool exit $?" >> "$O/sanitizer-interleave2-$tool.txt"
done
wait $builder
run python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$O/selective_scan-tiled.json" --scanlab $S \
    --repetitions 10 --out "$O/selective_scan-mamba_ssm.json" > "$O/peers-run.log" 2>&1
run $S report "$O/selective_scan-tiled.json" "$O/selective_scan-mamba_ssm.json" --out "$O/report" > /dev/null 2>&1
if [ "$(left)" -gt 90 ]; then
  run ncu --clock-control none --kernel-name-base demangled -k 'regex:BackwardTiled' --launch-count 1 \
      --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy \
      --metrics smsp__inst_executed.sum -o /tmp/ncu-bwd -f \
      $S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache --direction bwd "${OPTS[@]}" \
      --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json \
      > "$O/ncu-bwd.txt" 2>&1
  run ncu --import /tmp/ncu-bwd.ncu-rep --page source --csv --print-source sass 2>> "$O/ncu-bwd.txt" | gzip > "$O/ncu-bwd-source-sass.csv.gz"
  run ncu --import /tmp/ncu-bwd.ncu-rep --page details >> "$O/ncu-bwd.txt" 2>&1
fi
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit" "$O"/sanitizer-*.txt; tail -n 1 "$O/peers-build.log" "$O/peers-run.log"; echo "done at $SECONDS s"
grep "selective_scan/" "$O"/sweep*.txt | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-100
grep "selective_scan/" "$O/peers-run.log" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-100
