#!/usr/bin/env bash
# For the next device call (session 24 was lent none). build/cuda: branch s24-candidates (main +
# §46, one decay in eight on the FMA pipe in the forward's state walk, + §47, the backward's
# activations under one branch a chunk, + §48's config field bwd_stage_inputs, 0 in its heuristic).
# build/baseline: main's kernels (0e11f4c's). Back here,
# the backward's stall rows go on source lines with the same commit's -lineinfo build (too big to
# carry beside two binaries: `cmake --preset cuda -B build/cuda-lineinfo -DCMAKE_CXX_FLAGS=-lineinfo`
# after sourcing scripts/env.sh, then `cmake --build build/cuda-lineinfo --target scanlab`):
#   "$SCANLAB_VENV/bin/python" reports/sass_lines.py build/cuda-lineinfo/scanlab 'BackwardTiled<Kokkos::Cuda, 8, 1, true,
#     (scanlab::kernels::detail::TimeSegments)0, 2, false>' --ncu OUT/ncu-bwd-source-sass.csv.gz
# A warm-up sweep, then forward and backward of both binaries, each twice, alternating, on the
# six issue shapes, dstate 32 and 64. §46 touches only the forward's walk (and adds an upper bound
# to exp2_stays_normal, which the backward shares and the sweeps' negative A never reach), §47
# only the backward's once-a-chunk code, so each direction's A/B measures one change and the other
# direction's is its control. Then §48 inside the candidate binary: its backward with and without
# bwd_stage_inputs laid over the heuristic, twice each, on the shapes that can run it (dstate 64
# cannot: 45 KB of team scratch). Then ncu at the anchor: the forward's instruction, XU- and
# FMA-pipe counts of both binaries, and the candidate's backward source counters (stall samples
# per SASS row; sessions 19-23 read an older backward's).
# Predictions: forward 1.04-1.08x at the dstate-16 shapes, 1.03-1.06x at dstate 32 and 64;
# backward 1.05-1.12x on every shape (speed-notes §46, §47); staged inputs 1.03-1.06x at the
# anchor and (2,4096,16,8192), 0.9-1.0x at (8,2048,16,2048) and dstate 32 (§48).
# Run from the repository root, carrying build/carry (packed from build/cuda and build/baseline by
# scripts/gpu/carry.sh; the peers are run-peer.sh's):
#   DEADLINE=570 bash reports/results/h200/2026-12-05-s24/next/run-ab.sh $OUT/s24a
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
ceilings
ab "$BASE" warmup fwd,bwd
ab "$BASE" baseline fwd,bwd
ab "$S" candidates fwd,bwd
ab "$BASE" baseline-again fwd,bwd
ab "$S" candidates-again fwd,bwd
staged=(--config '{"bwd_stage_inputs":1}')
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x32x2048
ab "$S" unstaged bwd
ab "$S" staged bwd "${staged[@]}"
ab "$S" unstaged-again bwd
ab "$S" staged-again bwd "${staged[@]}"
anchor=(sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes 8x4096x16x2048
        --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json)
for name in baseline candidates; do
  bin=$S; [ $name = baseline ] && bin=$BASE
  run ncu --clock-control none --kernel-name-base demangled -k 'regex:ForwardDirect' --launch-count 1 \
      --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_fma.sum,gpu__time_duration.sum \
      "$bin" "${anchor[@]}" --direction fwd > "$O/ncu-fwd-anchor-$name.txt" 2>&1
done
run ncu --clock-control none --kernel-name-base demangled -k 'regex:BackwardTiled' --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy \
    --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum -o /tmp/ncu-bwd -f \
    "$S" "${anchor[@]}" --direction bwd > "$O/ncu-bwd-run.txt" 2>&1
run ncu --import /tmp/ncu-bwd.ncu-rep --page details > "$O/ncu-bwd.txt" 2>&1
run ncu --import /tmp/ncu-bwd.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > "$O/ncu-bwd-source-sass.csv.gz"
call_end
for pair in "baseline candidates" "baseline-again candidates-again" "unstaged staged" "unstaged-again staged-again"; do
  set -- $pair; "$S" compare --min-change 0.03 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 2
done
grep -h "inst_executed\|duration" "$O"/ncu-fwd-anchor-*.txt
