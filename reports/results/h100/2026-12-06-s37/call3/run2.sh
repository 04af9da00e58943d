#!/usr/bin/env bash
# Session 37, call3 (second part): call3's segmentation fault (a6bf228 and 4093ffc alike, seed 372,
# the second case) under cuda-gdb with 347ade5's binary linked without -s, for the function names.
#   (build/cuda's link command without -s, as scanlab-syms; CARRY_DIR=build/carry-s37d bash scripts/gpu/carry.sh pack build/cuda/scanlab-syms /nonexistent)
#   DEADLINE=200 CARRY_DIR=build/carry-s37d bash reports/results/h100/2026-12-06-s37/call3/run2.sh $OUT/s37d
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
run /usr/local/cuda/bin/cuda-gdb -batch -ex run -ex bt -ex "info registers rip" --args "$S" check state_space_v1 --backend cuda --cases 100 --seed 372 \
    > "$O/gdb-372.txt" 2>&1
grep -A30 "SIGSEGV" "$O/gdb-372.txt" | cut -c1-400
call_end
