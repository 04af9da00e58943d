#!/usr/bin/env bash
# Session 28, not run (too little budget left): does main's binary, like §52's (branch s28-dtsum),
# fail KernelSelectiveScan.BitwiseRepeatableAndThreadCountIndependent on the device's cores?
# call2 saw §52's fail it once (OpenMP against Serial, the staged backward in three segments) and
# call1 saw main's pass it once. Three runs of each binary, alternating, then one of each with two
# OpenMP threads; each run's output into $O, a line each with its count of differing tensors.
#   bash reports/results/h100/2026-12-05-s28/flaky/run.sh $OUT/s28c   # carry build/carry-s28
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s28}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
# bitwise_test BINARY NAME: the test once, into $O/NAME.txt, and its count of differing tensors.
bitwise_test() {
  timeout 60 "$1" test --gtest_filter='KernelSelectiveScan.BitwiseRepeatableAndThreadCountIndependent' \
      --gtest_brief=1 > "$O/$2.txt" 2>&1
  echo "$2: $(grep -c differs "$O/$2.txt") differing"
}
for i in 1 2 3; do
  bitwise_test "$BASE" main-$i
  bitwise_test "$S" dtsum-$i
done
OMP_NUM_THREADS=2 bitwise_test "$BASE" main-omp2
OMP_NUM_THREADS=2 bitwise_test "$S" dtsum-omp2
echo "cores: $(nproc)"
