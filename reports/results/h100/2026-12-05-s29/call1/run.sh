#!/usr/bin/env bash
# Session 29, call 1: main (984105d's kernels; the CUDA build with session 29's floating-point-mode
# test) on the device's cores and GPU.
# 1. Does main fail KernelSelectiveScan.BitwiseRepeatableAndThreadCountIndependent there, as §52's
#    binary did once in session 28's call2 (OpenMP against Serial, the staged backward in three
#    segments)? Three runs of the CUDA build's test and one with two OpenMP threads, each a line
#    with its count of differing tensors. (The host build would need the device to have Debian's
#    OpenBLAS: not carried.)
# 2. Smoke.HostThreadsShareTheIeeeFloatingPointMode: MXCSR (flush-to-zero, denormals-are-zero) on
#    the main thread, which runs Serial, against every OpenMP worker, after CUDA's start-up.
# 3. main beside mamba_ssm (built there from its sdist): forward, backward, fwd+bwd, the issue's shapes.
#   DEADLINE=540 bash reports/results/h200/2026-12-05-s29/call1/run.sh $OUT/s29a   # carry build/carry-s29, .peers/src
# (build/carry-s29: CARRY_DIR=build/carry-s29 bash scripts/gpu/carry.sh pack build/cuda/scanlab)
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s29}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
echo "cores: $(nproc)"
# bitwise_test BINARY NAME: the test once, into $O/NAME.txt, and its count of differing tensors.
bitwise_test() {
  run "$1" test --gtest_filter='KernelSelectiveScan.BitwiseRepeatableAndThreadCountIndependent' \
      --gtest_brief=1 > "$O/$2.txt" 2>&1
  echo "$2: exit $?, $(grep -c differs "$O/$2.txt") differing"
}
run "$S" test --gtest_filter='Smoke.*' > "$O/smoke.txt" 2>&1
echo "smoke: exit $?"; grep -A3 "Failure" "$O/smoke.txt" | head -20
for i in 1 2 3; do bitwise_test "$S" cuda-$i; done
OMP_NUM_THREADS=2 bitwise_test "$S" cuda-omp2

beside_peer mamba_ssm
call_end
