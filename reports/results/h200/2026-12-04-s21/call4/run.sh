#!/usr/bin/env bash
# Session 21's fourth call: the session's kernels and rule (build/cuda: direct_io in blocks of 8
# steps, 4 at dstate 64; four threads a channel where four fill the resident threads without
# segments, i.e. (8,2048,16,2048) among the issue shapes; the backward at least one time segment per
# 512 steps where channels are few) beside mamba_ssm on the six issue shapes, (8,4096,32,2048) and
# (8,4096,64,2048): forward, backward, forward+backward; ceilings first. Then GPU checks of the
# heuristic (selective_scan 300 cases, state_space_v1 150, whose time-major layout takes direct_io's
# per-step path) and the CUDA kernel tests.
# Prediction: forward ratios 1.07-1.21x call2-of-s20's (anchor ~4.0x mamba_ssm, (8,2048,16,2048)
# ~3.3x); fwd+bwd ~1.05x s20's (the backward unchanged but at (2,4096,16,8192)).
# Run from the repository root, carrying build/carry and .peers/src:
#   DEADLINE=500 bash reports/results/h200/2026-12-04-s21/call4/run.sh $OUT/s21d
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-500} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
(python3 scripts/peers/build_peers.py mamba_ssm > "$O/peers-build.log" 2>&1; echo "exit $? at $SECONDS s" >> "$O/peers-build.log") &
builder=$!
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048,8x4096x32x2048
run $S ceilings --backend cuda --out "$O/ceilings.json" > "$O/ceilings.txt" 2>&1
run $S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
    --direction fwd,bwd,fwdbwd "${OPTS[@]}" --shapes $SH --out "$O/selective_scan-tiled.json" > "$O/sweep.txt" 2>&1
run $S check selective_scan --backend cuda --impl tiled --cases 300 --seed 23 > "$O/check-heuristic.txt" 2>&1; echo "exit $?" >> "$O/check-heuristic.txt"
run $S check state_space_v1 --backend cuda --cases 150 --seed 23 > "$O/check-state_space_v1.txt" 2>&1; echo "exit $?" >> "$O/check-state_space_v1.txt"
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
wait $builder
run python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$O/selective_scan-tiled.json" --scanlab $S \
    --repetitions 10 --out "$O/selective_scan-mamba_ssm.json" > "$O/peers-run.log" 2>&1
run $S report "$O/selective_scan-tiled.json" "$O/selective_scan-mamba_ssm.json" --out "$O/report" > /dev/null 2>&1
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit\|^failures" "$O"/check-*.txt; tail -n 1 "$O/peers-build.log" "$O/peers-run.log"; echo "done at $SECONDS s"
for f in "$O/sweep.txt" "$O/peers-run.log"; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-70; done
