#!/usr/bin/env bash
# Session 20's fourth call. build/baseline is eb7e3d2; build/cuda adds direct_io's loads two blocks
# ahead with one thread a channel (speed-notes §38) and one store_walk_end for both forwards' walk
# ends (no change in what they compute).
# 1. Forward A/B on the six issue shapes and (8,4096,32,2048), each binary twice, alternating.
# 2. build/cuda on the same shapes, forward, backward and forward+backward, beside mamba_ssm.
# 3. GPU checks of the heuristic (300 cases) and of one-thread direct_io (150), CUDA kernel tests,
#    memcheck and racecheck of one-thread direct_io.
# Prediction (§38): the anchor's forward 1.05-1.10x; the same at dstate 32/64 (one thread a
# channel there too); unchanged where two threads a channel run.
# Run from the repository root, carrying build/carry and .peers/src:
#   DEADLINE=430 bash reports/results/h200/2026-12-04-s20/call4/run.sh $OUT/s20d
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab BASE=build/baseline/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-400} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
(python3 scripts/peers/build_peers.py mamba_ssm > "$O/peers-build.log" 2>&1; echo "exit $? at $SECONDS s" >> "$O/peers-build.log") &
builder=$!
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048,8x4096x32x2048
run $S ceilings --backend cuda --out "$O/ceilings.json" > "$O/ceilings.txt" 2>&1
fwd() {  # BINARY NAME
  run $1 sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
      --implementation "scanlab-$2" --direction fwd "${OPTS[@]}" --shapes $SH \
      --out "$O/selective_scan-fwd-$2.json" > "$O/sweep-fwd-$2.txt" 2>&1
}
fwd $BASE baseline; fwd $S ahead2; fwd $BASE baseline-again; fwd $S ahead2-again
run $S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
    --direction fwd,bwd,fwdbwd "${OPTS[@]}" --shapes $SH --out "$O/selective_scan-tiled.json" > "$O/sweep.txt" 2>&1
run $S check selective_scan --backend cuda --impl tiled --cases 300 --seed 21 > "$O/check-heuristic.txt" 2>&1; echo "exit $?" >> "$O/check-heuristic.txt"
one='{"direct_io":1,"state_split":1,"channels_per_team":128,"team_size":128,"time_tile":32}'
run $S check selective_scan --backend cuda --impl tiled --config "$one" --cases 150 --seed 22 > "$O/check-direct1.txt" 2>&1; echo "exit $?" >> "$O/check-direct1.txt"
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
wait $builder
run python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$O/selective_scan-tiled.json" --scanlab $S \
    --repetitions 10 --out "$O/selective_scan-mamba_ssm.json" > "$O/peers-run.log" 2>&1
run $S report "$O/selective_scan-tiled.json" "$O/selective_scan-mamba_ssm.json" --out "$O/report" > /dev/null 2>&1
if [ "$(left)" -gt 40 ]; then
  for tool in memcheck racecheck; do
    run compute-sanitizer --tool $tool --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
        --config "$one" --cases 8 --seed 9 --max-size 6000 > "$O/sanitizer-direct1-$tool.txt" 2>&1
    echo "sanitizer $tool exit $?" >> "$O/sanitizer-direct1-$tool.txt"
  done
fi
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit\|^failures" "$O"/check-*.txt "$O"/sanitizer-*.txt; tail -n 1 "$O/peers-build.log" "$O/peers-run.log"; echo "done at $SECONDS s"
for f in "$O"/sweep-fwd-*.txt "$O/sweep.txt" "$O/peers-run.log"; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-90; done
