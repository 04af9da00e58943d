#!/usr/bin/env bash
# Session 37, call3: call2's `check state_space_v1 --backend cuda --seed 372` died of a segmentation
# fault after its first case (4093ffc). The same check with a6bf228 (BASE) beside it, then the
# candidate under cuda-gdb for a backtrace, and two more seeds of each.
#   DEADLINE=300 CARRY_DIR=build/carry-s37b bash reports/results/h100/2026-12-06-s37/call3/run.sh $OUT/s37c
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
for bin in "$BASE" "$S"; do
  name=$(basename "$(dirname "$bin")")
  for seed in 372 374 375; do
    run "$bin" check state_space_v1 --backend cuda --cases 100 --seed $seed > "$O/check-$name-$seed.txt" 2>&1
    echo "exit $?" >> "$O/check-$name-$seed.txt"
    echo "$name $seed: $(tail -n 3 "$O/check-$name-$seed.txt" | tr '\n' ' ')"
  done
done
GDB=$(command -v cuda-gdb || ls /usr/local/cuda*/bin/cuda-gdb 2>/dev/null | head -1)
GDB=${GDB:-$(command -v gdb)}
echo "debugger: ${GDB:-none}"
if [ -n "$GDB" ]; then
  run "$GDB" -batch -ex run -ex bt -ex "info threads" --args "$S" check state_space_v1 --backend cuda --cases 100 --seed 372 \
      > "$O/gdb-372.txt" 2>&1
  grep -A40 "SIGSEGV" "$O/gdb-372.txt" | cut -c1-200 | head -60
fi
call_end
