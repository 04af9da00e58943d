#!/usr/bin/env bash
# Session 44, call4: branch s44-one-team (e39cc42: four threads a channel at dstate 16 without
# segments under one team's launch bound, every register, where the league is at most one team an
# SM) against main f5a880f, each twice, alternating, forward only.
# Prediction: (2,4096,16,8192) (128 teams of 256 on 132 SMs: the new form) 1.00-1.05x (the kernel
# had no spill at 128 registers, so only the scheduler's freedom changes); (8,2048,16,2048) (256
# teams: the old form) and (1,4096,16,8192) (segments) unchanged (controls).
# Checks: the four-thread wide config laid over 80 random cases (small shapes: the new form), the
# kernel tests; then ncu, and memcheck and racecheck of the laid-over config while time is left
# (the session's device time was short: 319 s left before this call).
#   CARRY_DIR=build/carry-s44b bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s44a/scanlab.xz
#   DEADLINE=200 CARRY_DIR=build/carry-s44b bash reports/results/h100/2026-12-07-s44/call4/run.sh $OUT/s44d   # carry build/carry-s44b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
versions
SH=2x4096x16x8192,8x2048x16x2048,1x4096x16x8192
ceilings
ab_alternating fwd
four='{"direct_io":1,"state_split":4,"team_size":256,"channels_per_team":64,"time_tile":64}'
run "$S" check selective_scan --backend cuda --impl tiled --config "$four" --cases 80 --seed 4447 > "$O/check-four-laid-over.txt" 2>&1
echo "exit $?" >> "$O/check-four-laid-over.txt"
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
# ncu of the forward kernel: four threads a channel at 8192 channels (both bounds) against the
# anchor's one thread a channel, the same state-steps (why four run at about 0.6x the anchor's
# speed a state-step: stalls, pipes, registers)
ncu_kernel ForwardDirect "$S" new-8192 2x4096x16x8192 fwd
ncu_kernel ForwardDirect "$BASE" base-8192 2x4096x16x8192 fwd
ncu_kernel ForwardDirect "$BASE" base-anchor 8x4096x16x2048 fwd
sanitize four-one-team "$four"
call_end
