#!/usr/bin/env bash
# Session 38, call2: the candidate with scanlab's Kokkos patch (resize_team_scratch_space records a
# level-1 size only once allocated) and call1's test fix: the kernel tests with the new
# KernelSelectiveScan.TeamScratchOutOfMemoryThrowsAndCudaCarriesOn, the
# oracle checks on fresh seeds (state_space_v1, whose fuzzing found the fault, on three), and
# direct_io 2 at time_tile 16 beside the heuristic and time_tile 32 at two shapes.
#   CARRY_DIR=build/carry-s38c bash scripts/gpu/carry.sh pack build/cuda/scanlab /nonexistent
#   DEADLINE=400 CARRY_DIR=build/carry-s38c bash reports/results/h100/2026-12-07-s38/call2/run.sh $OUT/s38c
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
gpu_checks 390 200
for seed in 372 391 392; do
  run "$S" check state_space_v1 --backend cuda --cases 100 --seed $seed > "$O/check-state_space_v1-$seed.txt" 2>&1
  echo "exit $?" >> "$O/check-state_space_v1-$seed.txt"
done
SH=8x4096x16x2048,8x2048x16x2048
for pass in "" -again; do
  ab "$S" "heuristic$pass" fwd
  ab "$S" "rows-tt32$pass" fwd --config '{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
  ab "$S" "rows-tt16$pass" fwd --config '{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":16}'
done
call_end
