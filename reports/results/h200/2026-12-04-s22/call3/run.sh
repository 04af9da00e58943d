#!/usr/bin/env bash
# Session 22's third call. build/baseline is the session's landed tree (§42's activation forms and
# the shared exchange size); build/cuda adds overlapped_block (speed-notes §43): with one thread a
# channel, a whole block's activations of steps 4-7 placed inside half 0's branch arms and the
# outputs of steps 0-3 inside half 1's, so that FMA-pipe work shares a basic block with the
# MUFU-bound state walk.
# 1. Forward of both binaries on the one-thread shapes ((8,4096,16,2048), dstate 32 and 64) and
#    two two-thread ones (unchanged code there: a control), twice, alternating, the baseline first
#    and a warm-up sweep before.
# 2. fwd+bwd at the anchor, twice, alternating (the forward saves chunk states there).
# 3. GPU checks of the heuristic (selective_scan 200 cases, state_space_v1 100), CUDA kernel tests;
#    ncu counts of the anchor's forward (the new binary), its SASS of the whole form.
# Prediction (§43): forward 1.05-1.10x at the anchor, 1.03-1.08x at dstate 32, ~1.0x at dstate 64
# (blocks of 4 there: unchanged) and on the two-thread shapes.
# Run from the repository root, carrying build/carry:
#   DEADLINE=400 bash reports/results/h200/2026-12-04-s22/call3/run.sh $OUT/s22c
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab BASE=build/baseline/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-400} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
OPTS=(--z on --D on --delta-bias on --softplus on)
run $S ceilings --backend cuda --out "$O/ceilings.json" > "$O/ceilings.txt" 2>&1
sweep() {  # BINARY NAME DIRECTION SHAPES
  run $1 sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
      --implementation "scanlab-$2" --direction $3 "${OPTS[@]}" --shapes $4 \
      --out "$O/selective_scan-$2.json" > "$O/sweep-$2.txt" 2>&1
}
FWD=8x4096x16x2048,8x4096x32x2048,8x4096x64x2048,4x5120x16x4096,16x1536x16x1024
sweep $BASE warmup fwd 8x4096x16x2048
sweep $BASE fwd-baseline fwd $FWD
sweep $S fwd-overlap fwd $FWD
sweep $BASE fwd-baseline-again fwd $FWD
sweep $S fwd-overlap-again fwd $FWD
sweep $BASE fwdbwd-baseline fwdbwd 8x4096x16x2048
sweep $S fwdbwd-overlap fwdbwd 8x4096x16x2048
sweep $BASE fwdbwd-baseline-again fwdbwd 8x4096x16x2048
sweep $S fwdbwd-overlap-again fwdbwd 8x4096x16x2048
run $S check selective_scan --backend cuda --impl tiled --cases 200 --seed 25 > "$O/check-heuristic.txt" 2>&1; echo "exit $?" >> "$O/check-heuristic.txt"
run $S check state_space_v1 --backend cuda --cases 100 --seed 25 > "$O/check-state_space_v1.txt" 2>&1; echo "exit $?" >> "$O/check-state_space_v1.txt"
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
for b in baseline overlap; do
  bin=$BASE; [ $b = overlap ] && bin=$S
  [ "$(left)" -gt 40 ] && run ncu --clock-control none --kernel-name-base demangled -k 'regex:ForwardDirect' --launch-count 1 \
      --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warp_latency_per_inst_issued.ratio,gpu__time_duration.sum \
      $bin sweep selective_scan --backend cuda --impl tiled --no-cache --direction fwd "${OPTS[@]}" \
      --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 \
      --out /tmp/ncu-sweep.json > "$O/ncu-fwd-anchor-$b.txt" 2>&1
done
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit\|^failures" "$O"/check-*.txt; echo "done at $SECONDS s"
for f in "$O"/sweep-*.txt; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-70; done
grep -h "inst_executed\|stalled\|latency\|duration" "$O"/ncu-*.txt
