#!/usr/bin/env bash
# Session 42, call2: §69 as a config choice (bwd_normal_loop; the heuristic's at dstate 32 only),
# in one kernel beside the branching loop (not committed: speed-notes §70 says what it was; the
# commit that follows it makes the loop a kernel of its own), against main's kernels (ae0cc23's binary, call1's baseline): the backward
# as the heuristic sets it (new), and with bwd_normal_loop laid over as 1 (on) and 0 (off) at every
# shape, each twice, alternating with the baseline; then the heuristic's oracle checks, the
# interleaved form with the copy laid over (100 cases, memcheck, racecheck), the kernel tests (one
# compares the copy with the branching loop bit for bit on subnormal decays), and ncu (stall reasons)
# of the backward at dstate 32 and 64, on and off, for call1's 0.95x at 64.
# Prediction: new against base 1.06-1.08x at dstate 32, 0.99-1.01x elsewhere (the kernel keeps the
# branching loop beside the new copy: more code, the same path); on ≈ call1's candidate (0.95x at
# 64, 1.00x at dstate 16); off ≈ base everywhere.
# Outcome: wrong: 0.89-0.97x at dstate 16 where the new loop never ran, 0.82-0.99x at dstate 32 and
# 64 either way (speed-notes §70).
#   bash scripts/build.sh cuda   # that form (uncommitted)
#   CARRY_DIR=build/carry-s42b bash scripts/gpu/carry.sh pack build/cuda/scanlab build/carry-s41a/scanlab.xz
#   CARRY_DIR=build/carry-s42b bash reports/results/h100/2026-12-07-s42/call2/run.sh $OUT/s42b   # carry build/carry-s42b
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"; "$BASE" --version | head -n 1 > "$O/baseline-version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ceilings
for pass in "" -again; do
  ab "$BASE" "base$pass" bwd
  ab "$S" "new$pass" bwd
  ab "$S" "on$pass" bwd --config '{"bwd_normal_loop":1}'
  ab "$S" "off$pass" bwd --config '{"bwd_normal_loop":0}'
done
run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
echo "exit $?" >> "$O/tests-cuda.txt"
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --cases 60 --seed 4242 > "$O/check-selective_scan.txt" 2>&1
echo "exit $?" >> "$O/check-selective_scan.txt"
loop='{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"bwd_normal_loop":1,"chunk_len":8}'
run "$S" check selective_scan --backend "$BACKEND" --impl tiled --config "$loop" --cases 100 --seed 4243 \
    > "$O/check-normal-loop-laid-over.txt" 2>&1
echo "exit $?" >> "$O/check-normal-loop-laid-over.txt"
sanitize normal-loop "${loop%\}},\"bwd_time_segments\":3}"
NCU=(ncu --clock-control none --kernel-name-base demangled --section WarpStateStats --section LaunchStats
     --metrics 'gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio')
for shape in 8x4096x64x2048 8x4096x32x2048; do
  for v in 1 0; do
    run "${NCU[@]}" -k "regex:BackwardTiled" --launch-count 1 "$S" sweep selective_scan --backend cuda --impl tiled \
        --no-cache "${OPTS[@]}" --shapes "$shape" --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 \
        --config "{\"bwd_normal_loop\":$v}" --out /tmp/ncu-sweep.json --direction bwd > "$O/ncu-bwd-$shape-loop$v.txt" 2>&1
  done
done
call_end
for b in new new-again on on-again off off-again; do
  echo "== base -> $b"; "$S" compare --min-change 0.02 "$O/selective_scan-base.json" "$O/selective_scan-$b.json" | tail -n 9 | cut -c1-20,130-
done
for f in "$O"/ncu-bwd-*.txt; do
  echo "== $(basename "$f")"
  grep -E 'gpu__time_duration|inst_executed.sum|issue_stalled|Registers Per|Warp Cycles Per Issued' "$f" \
    | awk '$NF+0 >= 0.1 || /duration|inst_exec|Regis|Cycles/' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | cut -c1-110
done
