#!/usr/bin/env bash
# Session 39, call2 (asks for the H200 again): call1 found main's forward 2-3% slower than session
# 32's dc0f97c on the H200 at four shapes (anchor 0.585 against 0.567 ms, in different calls),
# though §60's row loads (3d296b5, since dc0f97c) measured 1.095x at the anchor on an H100. Here
# both binaries side by side, forward and backward, alternating twice. Also: call1's test fix
# (Kokkos 3.4 reports a failed team-scratch allocation as a runtime_error, not bad_alloc), the
# heuristic at dstate 4096 (call1's sweep asked --impl tiled, which cannot run it), and
# direct_io 2 laid over the dstate-16 shapes on the H200 (measured on H100s only).
# Prediction: dc0f97c and main within 2% of each other everywhere (the difference in call1 is the
# two calls' machines; mamba_ssm moved -3% to +4% between them); direct_io 2 0.95-1.0x direct_io 1.
#   bash scripts/gpu/build-baseline.sh dc0f97c
#   CARRY_DIR=build/carry-s39b bash scripts/gpu/carry.sh pack build/cuda/scanlab build/baseline/scanlab
#   DEADLINE=560 CARRY_DIR=build/carry-s39b bash reports/results/h100/2026-12-07-s39/call2/run.sh $OUT/s39b   # carry build/carry-s39b
#   (AB_DIRS=fwd: the A/B forward only, for a short call)
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"; "$BASE" --version | head -n 1 > "$O/baseline-version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
run "$S" test --gtest_filter='KernelSelectiveScan.TeamScratch*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
ceilings
run "$S" sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl auto --no-cache --implementation scanlab-dstate4096 \
    --direction fwd,bwd "${OPTS[@]}" --shapes 1x64x4096x1024,2x256x4096x2048 --repetitions 3 \
    --out "$O/selective_scan-dstate4096.json" > "$O/sweep-dstate4096.txt" 2>&1
echo "exit $?" >> "$O/sweep-dstate4096.txt"
for pass in "" -again; do
  ab "$BASE" "dc0f97c$pass" "${AB_DIRS:-fwd,bwd}"
  ab "$S" "main$pass" "${AB_DIRS:-fwd,bwd}"
done
ROWS='{"direct_io":2,"state_split":1,"team_size":32,"channels_per_team":32,"time_tile":32}'
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096
for pass in "" -again; do
  ab "$S" "rows$pass" fwd --config "$ROWS"
done
call_end
for b in main main-again; do
  echo "== dc0f97c -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-dc0f97c.json" "$O/selective_scan-$b.json" | tail -n 16
done
for b in rows rows-again; do
  echo "== main -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-main.json" "$O/selective_scan-$b.json" | tail -n 8
done
