#!/usr/bin/env bash
# Session 23's first call. build/cuda: e685286 + the backward's next-chunk inputs (u, delta, dout, z
# and the first group's chunk-start states) loaded at the previous chunk's end, before its end
# phase (speed-notes §45). build/baseline: 0e11f4c's kernels (e685286 changed only comments).
# A warm-up sweep first (a call's first sweep runs 2-3% slow, s22), then the backward, each binary
# twice, alternating, on the six issue shapes (the seg rule's own config at (2,4096,16,8192)),
# dstate 32 and 64; the forward of both once as a control (the change does not touch it). Then
# the new binary's forward, backward, fwd+bwd beside mamba_ssm, GPU checks, kernel tests, memcheck
# and racecheck of the interleaved backward in time segments.
# Prediction: backward 1.03-1.06x at the anchor (the chunk-start long-scoreboard row, 7% of s19's
# stall samples, mostly hidden), 1.02-1.05x on the other shapes that run two states at once,
# ~1.0x on the forward control.
# Run from the repository root, carrying build/carry and .peers/src:
#   DEADLINE=560 bash reports/results/h200/2026-12-04-s23/call1/run.sh $OUT/s23a
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab BASE=build/baseline/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-560} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
(python3 scripts/peers/build_peers.py mamba_ssm > "$O/peers-build.log" 2>&1; echo "exit $? at $SECONDS s" >> "$O/peers-build.log") &
builder=$!
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x32x2048,8x4096x64x2048
run $S ceilings --backend cuda --out "$O/ceilings.json" > "$O/ceilings.txt" 2>&1
ab() {  # BINARY NAME DIRECTION
  run $1 sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
      --implementation "scanlab-$2" --direction $3 "${OPTS[@]}" --shapes $SH \
      --out "$O/selective_scan-$2.json" > "$O/sweep-$2.txt" 2>&1
}
ab $BASE warmup bwd
ab $BASE baseline bwd
ab $S ahead bwd
ab $BASE baseline-again bwd
ab $S ahead-again bwd
ab $BASE baseline-fwd fwd
ab $S ahead-fwd fwd
# the landed candidate beside mamba_ssm (no --implementation: run_peers' --like wants "scanlab")
run $S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
    --direction fwd,bwd,fwdbwd "${OPTS[@]}" --shapes $SH --out "$O/selective_scan-tiled.json" > "$O/sweep.txt" 2>&1
wait $builder
run python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$O/selective_scan-tiled.json" --scanlab $S \
    --repetitions 10 --out "$O/selective_scan-mamba_ssm.json" > "$O/peers-run.log" 2>&1
run $S report "$O/selective_scan-tiled.json" "$O/selective_scan-mamba_ssm.json" --out "$O/report" > /dev/null 2>&1
run $S check selective_scan --backend cuda --impl tiled --cases 200 --seed 25 > "$O/check-selective_scan.txt" 2>&1; echo "exit $?" >> "$O/check-selective_scan.txt"
run $S check state_space_v1 --backend cuda --cases 100 --seed 25 > "$O/check-state_space_v1.txt" 2>&1; echo "exit $?" >> "$O/check-state_space_v1.txt"
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
for tool in memcheck racecheck; do
  [ "$(left)" -gt 40 ] || break
  run compute-sanitizer --tool $tool --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
      --config '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8,"bwd_time_segments":3}' \
      --cases 6 --seed 9 --max-size 6000 > "$O/sanitizer-bwd-$tool.txt" 2>&1
  echo "sanitizer $tool exit $?" >> "$O/sanitizer-bwd-$tool.txt"
done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; tail -n 1 "$O/peers-build.log" "$O/peers-run.log"; grep -h "exit\|^failures" "$O"/check-*.txt "$O"/sanitizer-*.txt; echo "done at $SECONDS s"
for f in "$O"/sweep-*.txt "$O/sweep.txt" "$O/peers-run.log"; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-70; done
