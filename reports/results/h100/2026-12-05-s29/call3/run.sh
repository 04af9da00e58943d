#!/usr/bin/env bash
# Session 29, call 3: call2's binaries (§52's and main's), the whole kernel-test set that failed for
# §52 in session 28's call2 (Corpus.* and KernelSelectiveScan.*, as gpu_checks runs it), where the
# bitwise test runs after the others; call2 ran it alone and §52 passed six times. §52's twice and
# main's once, alternating; each a line with its exit and its failure lines.
#   bash reports/results/h100/2026-12-05-s29/call3/run.sh $OUT/s29c   # carry build/carry-s29b
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s29b}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
suite() {
  run "$1" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/$2.txt" 2>&1
  echo "$2: exit $?, $(grep -c differs "$O/$2.txt") differing, at $SECONDS s"
  grep -h "differs\|FAILED" "$O/$2.txt" | cut -c1-300 | head -8
}
suite "$S" dtsum-suite-1
suite "$BASE" main-suite-1
suite "$S" dtsum-suite-2
call_end
