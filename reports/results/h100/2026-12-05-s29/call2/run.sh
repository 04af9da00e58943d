#!/usr/bin/env bash
# Session 29, call 2: §52's binary (branch s28-dtsum's patch, reports/results/h100/2026-12-05-s28/
# call2/dtsum-not-landed.patch, on 076f5e2, with the bitwise test's new diagnostics: the first
# differing element's values and the largest difference) against main's (call1's), on the device's
# cores. In session 28 §52's failed KernelSelectiveScan.BitwiseRepeatableAndThreadCountIndependent
# once (OpenMP against Serial, the staged backward in three segments); call1 ran main's four
# times without a failure. Here: §52's four times and main's twice, alternating, then §52's with
# 2 and 8 OpenMP threads; each a line with its exit and count of differing tensors.
#   bash reports/results/h100/2026-12-05-s29/call2/run.sh $OUT/s29b   # carry build/carry-s29b
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s29b}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
echo "cores: $(nproc)"
# bitwise_test BINARY NAME: the test once, into $O/NAME.txt, and its count of differing tensors.
bitwise_test() {
  run "$1" test --gtest_filter='KernelSelectiveScan.BitwiseRepeatableAndThreadCountIndependent' \
      --gtest_brief=1 > "$O/$2.txt" 2>&1
  echo "$2: exit $?, $(grep -c differs "$O/$2.txt") differing"
}
for i in 1 2; do
  bitwise_test "$S" dtsum-$i
  bitwise_test "$BASE" main-$i
  bitwise_test "$S" dtsum-$((i + 2))
done
OMP_NUM_THREADS=2 bitwise_test "$S" dtsum-omp2
OMP_NUM_THREADS=8 bitwise_test "$S" dtsum-omp8
grep -h "differs" "$O"/dtsum-*.txt | cut -c1-400 | head -20
call_end
