#!/usr/bin/env bash
# Session 23's second call (not run in session 23: no device lent after call1). build/cuda: branch
# s23-fma-exp (one decay in eight on the FMA pipe: fma_exp2_normal in state_steps, speed-notes §46;
# also call2/fma-exp-not-measured.patch over main). build/baseline: main's kernels (0e11f4c's).
# A warm-up sweep first, then the forward, each binary twice, alternating, on the six issue
# shapes, dstate 32 and 64; the backward of both once as a control (its kernels are unchanged).
# ncu of the anchor's forward, one launch each (instructions, XU- and FMA-pipe instructions, time).
# Then the new binary's forward, backward, fwd+bwd beside mamba_ssm, GPU checks, kernel tests,
# memcheck and racecheck of the direct forward in time segments.
# Prediction: forward 1.04-1.08x at the anchor and the other dstate-16 shapes, 1.03-1.06x at
# dstate 32 and 64; the backward control ~1.0x.
# Run from the repository root, carrying build/carry and .peers/src:
#   DEADLINE=570 bash reports/results/h200/2026-12-04-s23/call2/run.sh $OUT/s23b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
ceilings
ab "$BASE" warmup fwd
ab "$BASE" baseline fwd
ab "$S" fma-exp fwd
ab "$BASE" baseline-again fwd
ab "$S" fma-exp-again fwd
ab "$BASE" baseline-bwd bwd
ab "$S" fma-exp-bwd bwd
for name in baseline fma-exp; do
  bin=$S; [ $name = baseline ] && bin=$BASE
  run ncu --clock-control none --kernel-name-base demangled -k 'regex:ForwardDirect' --launch-count 1 \
      --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_fma.sum,gpu__time_duration.sum \
      $bin sweep selective_scan --backend cuda --impl tiled --no-cache --direction fwd "${OPTS[@]}" \
      --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 \
      --out /tmp/ncu-sweep.json > "$O/ncu-fwd-anchor-$name.txt" 2>&1
done
beside_peer mamba_ssm
gpu_checks 26 300
sanitize fwd '{"direct_io":1,"state_split":1,"channels_per_team":128,"team_size":128,"time_tile":32,"fwd_time_segments":3}'
call_end
grep -h "inst_executed\|duration" "$O"/ncu-fwd-anchor-*.txt
