#!/usr/bin/env bash
# Session 23's second call. build/cuda: e685286 + one decay in eight on the FMA pipe
# (fma_exp2_normal in state_steps, speed-notes §46). build/baseline: 0e11f4c's kernels.
# A warm-up sweep first, then the forward, each binary twice, alternating, on the six issue shapes,
# dstate 32 and 64; the backward of both once as a control (its kernels are unchanged). ncu of the
# anchor's forward, one launch each (instructions, XU-pipe instructions, time). Then the new
# binary's forward, backward, fwd+bwd beside mamba_ssm, GPU checks, kernel tests, memcheck and
# racecheck of the direct forward in time segments.
# Prediction: forward 1.04-1.08x at the anchor and the other dstate-16 shapes, 1.03-1.06x at
# dstate 32 and 64; the backward control ~1.0x.
# Run from the repository root, carrying build/carry and .peers/src:
#   DEADLINE=570 bash reports/results/h200/2026-12-04-s23/call2/run.sh $OUT/s23b
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab BASE=build/baseline/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-570} - SECONDS )); }
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
ab $BASE warmup fwd
ab $BASE baseline fwd
ab $S fma-exp fwd
ab $BASE baseline-again fwd
ab $S fma-exp-again fwd
ab $BASE baseline-bwd bwd
ab $S fma-exp-bwd bwd
for b in baseline fma-exp; do
  bin=$S; [ $b = baseline ] && bin=$BASE
  run ncu --clock-control none --kernel-name-base demangled -k 'regex:ForwardDirect' --launch-count 1 \
      --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_fma.sum,gpu__time_duration.sum \
      $bin sweep selective_scan --backend cuda --impl tiled --no-cache --direction fwd "${OPTS[@]}" \
      --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 \
      --out /tmp/ncu-sweep.json > "$O/ncu-fwd-anchor-$b.txt" 2>&1
done
# the candidate beside mamba_ssm (no --implementation: run_peers' --like wants "scanlab")
run $S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
    --direction fwd,bwd,fwdbwd "${OPTS[@]}" --shapes $SH --out "$O/selective_scan-tiled.json" > "$O/sweep.txt" 2>&1
wait $builder
run python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$O/selective_scan-tiled.json" --scanlab $S \
    --repetitions 10 --out "$O/selective_scan-mamba_ssm.json" > "$O/peers-run.log" 2>&1
run $S report "$O/selective_scan-tiled.json" "$O/selective_scan-mamba_ssm.json" --out "$O/report" > /dev/null 2>&1
run $S check selective_scan --backend cuda --impl tiled --cases 300 --seed 26 > "$O/check-selective_scan.txt" 2>&1; echo "exit $?" >> "$O/check-selective_scan.txt"
run $S check state_space_v1 --backend cuda --cases 150 --seed 26 > "$O/check-state_space_v1.txt" 2>&1; echo "exit $?" >> "$O/check-state_space_v1.txt"
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
for tool in memcheck racecheck; do
  [ "$(left)" -gt 40 ] || break
  run compute-sanitizer --tool $tool --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
      --config '{"direct_io":1,"state_split":1,"channels_per_team":128,"team_size":128,"time_tile":32,"fwd_time_segments":3}' \
      --cases 6 --seed 9 --max-size 6000 > "$O/sanitizer-fwd-$tool.txt" 2>&1
  echo "sanitizer $tool exit $?" >> "$O/sanitizer-fwd-$tool.txt"
done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; tail -n 1 "$O/peers-build.log" "$O/peers-run.log"; grep -h "exit\|^failures" "$O"/check-*.txt "$O"/sanitizer-*.txt; echo "done at $SECONDS s"
grep -h "inst_executed\|duration" "$O"/ncu-fwd-anchor-*.txt
for f in "$O"/sweep-*.txt "$O/sweep.txt" "$O/peers-run.log"; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-70; done
