#!/usr/bin/env bash
# Session 22's first call. build/baseline is f9adc0f (main at the session's start); build/cuda is
# the working tree: the SFU activation forms with one MUFU each (softplus: MUFU.EX2 and a degree-8
# polynomial for log1p; σ: MUFU.EX2 and 1/(1 + e) by a quadratic seed and two Newton steps), where
# each took two (MUFU.RCP besides). Nothing else differs.
# 1. Forward of both binaries on the six issue shapes and (8,4096,32,2048), twice, alternating.
# 2. fwd+bwd of both on the anchor, (2,4096,16,8192) and (8,4096,32,2048), twice, alternating.
# 3. mamba_ssm beside the new binary's fwd / bwd / fwd+bwd on the six issue shapes (ceilings first).
# 4. GPU checks of the heuristic (selective_scan 300 cases, state_space_v1 150), the CUDA kernel
#    tests; ncu instruction and pipe counts of the anchor's forward, both binaries.
# Prediction (speed-notes §42): forward 1.04-1.08x on the dstate-16 shapes, 1.02-1.04x at dstate 32;
# fwd+bwd 1.01-1.03x (the backward's activations are a small share of its work).
# Run from the repository root, carrying build/carry and .peers/src:
#   DEADLINE=540 bash reports/results/h200/2026-12-04-s22/call1/run.sh $OUT/s22a
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab BASE=build/baseline/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-540} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
(python3 scripts/peers/build_peers.py mamba_ssm > "$O/peers-build.log" 2>&1; echo "exit $? at $SECONDS s" >> "$O/peers-build.log") &
builder=$!
OPTS=(--z on --D on --delta-bias on --softplus on)
SIX=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048
run $S ceilings --backend cuda --out "$O/ceilings.json" > "$O/ceilings.txt" 2>&1
sweep() {  # BINARY NAME DIRECTION SHAPES
  run $1 sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
      --implementation "scanlab-$2" --direction $3 "${OPTS[@]}" --shapes $4 \
      --out "$O/selective_scan-$2.json" > "$O/sweep-$2.txt" 2>&1
}
FWD=$SIX,8x4096x32x2048 FB=8x4096x16x2048,2x4096x16x8192,8x4096x32x2048
sweep $BASE fwd-baseline fwd $FWD
sweep $S fwd-new fwd $FWD
sweep $BASE fwd-baseline-again fwd $FWD
sweep $S fwd-new-again fwd $FWD
sweep $BASE fwdbwd-baseline fwdbwd $FB
sweep $S fwdbwd-new fwdbwd $FB
sweep $BASE fwdbwd-baseline-again fwdbwd $FB
sweep $S fwdbwd-new-again fwdbwd $FB
sweep $S tiled fwd,bwd,fwdbwd $SIX
run $S check selective_scan --backend cuda --impl tiled --cases 300 --seed 24 > "$O/check-heuristic.txt" 2>&1; echo "exit $?" >> "$O/check-heuristic.txt"
run $S check state_space_v1 --backend cuda --cases 150 --seed 24 > "$O/check-state_space_v1.txt" 2>&1; echo "exit $?" >> "$O/check-state_space_v1.txt"
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
wait $builder
run python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$O/selective_scan-tiled.json" --scanlab $S \
    --repetitions 10 --out "$O/selective_scan-mamba_ssm.json" > "$O/peers-run.log" 2>&1
run $S report "$O/selective_scan-tiled.json" "$O/selective_scan-mamba_ssm.json" --out "$O/report" > /dev/null 2>&1
for b in baseline new; do  # instruction and pipe counts of the anchor's forward
  bin=$BASE; [ $b = new ] && bin=$S
  [ "$(left)" -gt 40 ] && run ncu --clock-control none --kernel-name-base demangled -k 'regex:ForwardDirect' --launch-count 1 \
      --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_alu.sum,sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,gpu__time_duration.sum \
      $bin sweep selective_scan --backend cuda --impl tiled --no-cache --direction fwd "${OPTS[@]}" \
      --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 \
      --out /tmp/ncu-sweep.json > "$O/ncu-fwd-anchor-$b.txt" 2>&1
done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit\|^failures" "$O"/check-*.txt; tail -n 1 "$O/peers-build.log" "$O/peers-run.log"; echo "done at $SECONDS s"
for f in "$O"/sweep-*.txt "$O/peers-run.log"; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-90; done
grep -h "inst_executed\|pipe_xu\|stalled\|duration" "$O"/ncu-*.txt
