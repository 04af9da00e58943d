#!/usr/bin/env bash
# Session 39, call1: main b970362 (scanlab's Kokkos patch: resize_team_scratch_space records a
# level-1 size only once allocated; level 1's cap at half the GPU's memory; check's in-flight case)
# on the GPU for the first time: the kernel tests with KernelSelectiveScan.TeamScratchOutOfMemoryThrowsAndCudaCarriesOn,
# the oracle checks on fresh seeds (state_space_v1, whose fuzzing found session 37's fault, on
# three more). Then, on an H200, main beside mamba_ssm on the seven shapes (the first H200
# stand since session 32's dc0f97c; §60's row loads landed since); on an H100, direct_io 2 at
# time_tile 16 and 32 beside the heuristic (session 38's call2, which found no machine).
# Also the heuristic at dstate 4096 (chunked, level 1: 14-16 GB of team scratch, refused by
# session 38's 8 GiB cap) swept fwd and bwd, so it must run.
# Prediction: tests and checks pass, the dstate-4096 sweep runs; H200 forward at the anchor ~4.5x mamba_ssm (4.12x x §60's
# 1.095x on the H100), the other shapes and fwd+bwd within 5% of session 32's.
#   CARRY_DIR=build/carry-s39a bash scripts/gpu/carry.sh pack build/cuda/scanlab /nonexistent
#   bash scripts/peers/fetch.sh
#   DEADLINE=560 CARRY_DIR=build/carry-s39a bash reports/results/h100/2026-12-07-s39/call1/run.sh $OUT/s39a   # carry build/carry-s39a .peers/src
# (run from reports/results/h100/2026-12-07-s39/call1/, moved here once the device had lent an H200)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
h200=0; grep -q H200 "$O/gpu.txt" && h200=1
[ $h200 = 1 ] && start_peer_build mamba_ssm
ceilings
gpu_checks 393 200
if [ $h200 = 1 ]; then
  beside_peer mamba_ssm
else
  SH=8x4096x16x2048,8x2048x16x2048
  for pass in "" -again; do
    ab "$S" "heuristic$pass" fwd
    ab "$S" "rows-tt32$pass" fwd --config '{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
    ab "$S" "rows-tt16$pass" fwd --config '{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":16}'
  done
fi
SH=1x64x4096x1024,2x256x4096x2048 ab "$S" dstate4096 fwd,bwd --repetitions 3
for seed in 372 391 392; do
  run "$S" check state_space_v1 --backend cuda --cases 100 --seed $seed > "$O/check-state_space_v1-$seed.txt" 2>&1
  echo "exit $?" >> "$O/check-state_space_v1-$seed.txt"
done
call_end
[ -f "$O/report/report.md" ] && grep -E "×" "$O/report/report.md" | head -40
