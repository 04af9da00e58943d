#!/usr/bin/env bash
# Session 43, call1 (not run: in ten requests this session's device started no machine): main
# 10d1656 (§70 and §71) on the machine lent: the heuristic's checks and
# the segment rule's data with §71's teams (session 42's call8, unchanged).
# Prediction: at 8192 channels no segments wins (~1.1x); at 4096 and 2048 segments still win,
# 2 (4096) and 4 (2048) beating the heuristic's two-thread teams. Also two threads a channel in
# §71's teams of 64 channels (128 threads), tiles of 64, in 2 and 4 segments.
# Last, a test of the tests: the 32-row backward test (its GPU half compares the normal-loop kernel
# with the branching one bit for bit on inputs whose step-0 sums are subnormal) run on a mutant whose
# vote always answers "normal" (selective_scan_backward.hpp: group_all(team, true || chunk_normal)).
# On the host this mutant passed until d8c7f45 (the host's exp2 kept subnormals in both forms) and
# fails since; on the GPU the test must fail. Prediction: it fails, on the subnormal-start set only.
# (build/mutant-vote/scanlab-cuda: 10d1656 with that one line changed.)
#   CARRY_DIR=build/carry-s43a bash scripts/gpu/carry.sh pack build/cuda/scanlab   # (main 10d1656, clean tree)
#   cp -r build/carry-s43a build/carry-s43b && xz -T2 -6 -c build/mutant-vote/scanlab-cuda > build/carry-s43b/baseline.xz   # the mutant as the baseline
#   DEADLINE=580 CARRY_DIR=build/carry-s43b bash reports/results/h200/2026-12-07-s43/call1/run.sh $OUT/s43a   # carry build/carry-s43b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ceilings
SH=2x4096x16x8192,1x4096x16x8192,1x2048x16x8192
two='"direct_io":1,"state_split":2,"team_size":128,"channels_per_team":64,"time_tile":64'
four='"direct_io":1,"state_split":4,"team_size":256,"channels_per_team":64,"time_tile":64'
for pass in "" -again; do
  ab "$S" "heuristic$pass" fwd
  for seg in 1 2 4; do ab "$S" "four-seg$seg$pass" fwd --config "{$four,\"fwd_time_segments\":$seg}"; done
  [ "$(left)" -gt 150 ] || continue  # (the device time left this session is short: these last)
  for seg in 2 4; do ab "$S" "two-seg$seg$pass" fwd --config "{$two,\"fwd_time_segments\":$seg}"; done
done
run "$BASE" test --gtest_filter=KernelSelectiveScan.ThirtyTwoRowBackwardIsOneStateAtATimeBitForBit > "$O/mutant-vote-test.txt" 2>&1
echo "exit $? (the mutant: must fail)" >> "$O/mutant-vote-test.txt"
gpu_checks 4343 100
call_end
grep -c 'subnormal start' "$O/mutant-vote-test.txt"; grep -m3 'Failure\|cuda ' "$O/mutant-vote-test.txt" | cut -c1-200; tail -n 1 "$O/mutant-vote-test.txt"
