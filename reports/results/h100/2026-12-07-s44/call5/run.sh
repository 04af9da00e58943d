#!/usr/bin/env bash
# Session 44, call5 (not run: written after the session's device time ran out): branch
# s44-exchange-ahead (f665c47: four threads a channel exchange dt and u a block ahead, two slots a
# thread, so the scratch round trip and its sync before each walk leave the walk's path; the same
# bits on the host) against main f5a880f, each twice, alternating, forward only.
# Prediction: 1.00-1.08x at (2,4096,16,8192) and (8,2048,16,2048) (four threads a channel, 7.75 and
# 15.5 warps an SM: the fewer the warps, the more an exposed round trip costs); the anchor and
# (1,4096,16,8192) (one and two threads a channel) unchanged, as controls.
# Checks (the sync pattern is new): four threads laid over 150 random cases with and without 3
# segments, the kernel tests, memcheck and racecheck of four threads in 3 segments (the summary
# pass has its own sync).
#   git checkout s44-exchange-ahead && bash scripts/build.sh cuda
#   CARRY_DIR=build/carry-s44c bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s44a/scanlab.xz
#   DEADLINE=400 CARRY_DIR=build/carry-s44c bash reports/results/h100/2026-12-07-s44/call5/run.sh $OUT/s44e   # carry build/carry-s44c
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
versions
SH=2x4096x16x8192,8x2048x16x2048,8x4096x16x2048,1x4096x16x8192
ceilings
ab_alternating fwd
four='"direct_io":1,"state_split":4,"team_size":256,"channels_per_team":64,"time_tile":64'
for extra in "" ',"fwd_time_segments":3'; do
  echo "== {$four$extra}" >> "$O/check-four-laid-over.txt"
  run "$S" check selective_scan --backend cuda --impl tiled --config "{$four$extra}" --cases 150 --seed 4448 \
      >> "$O/check-four-laid-over.txt" 2>&1
  echo "exit $?" >> "$O/check-four-laid-over.txt"
done
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
sanitize four-ahead "{$four,\"fwd_time_segments\":3}"
call_end
