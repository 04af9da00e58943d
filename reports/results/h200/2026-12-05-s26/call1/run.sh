#!/usr/bin/env bash
# Session 26, call 1 (not run: no device was lent in session 26). Run it after
# ../../2026-12-05-s25/call3/run.sh, whose binaries it follows: build/baseline here is that call's
# candidate, branch s25-states (§49); build/cuda is branch s26-addressing, the same plus §50 (the
# backward's bookkeeping: the state loop's destinations, blocks and rows as pointers moved each
# iteration; B and C copies of a whole chunk with compile-time quads; staged, the activations'
# slopes formed at the chunk's start and parked in the thread's own rows for the end phase).
# Both are packed in build/carry-s26 (CARRY_DIR), so call3's build/carry can wait beside it.
# Steps: the backward of both binaries, twice each, alternating (A/B of §50); the forward of both
# once (a control: §50 leaves the forward alone); GPU checks of the candidate (the heuristic;
# the staged form laid over at 32 channels a team); the CUDA kernel tests; memcheck and racecheck
# of the staged backward in three time segments.
# Predictions: backward 1.04-1.08x at the dstate-16 shapes (staged: all four parts), 1.02-1.05x
# at dstate 32 and 64 (unstaged: the loop and the copies); forward 1.00x.
#   DEADLINE=420 CARRY_DIR=build/carry-s26 bash reports/results/h200/2026-12-05-s26/call1/run.sh $OUT/s26a   # carry build/carry-s26
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s26}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
ceilings
ab "$BASE" states bwd
ab "$S" bookkeeping bwd
ab "$BASE" states-again bwd
ab "$S" bookkeeping-again bwd
ab "$BASE" states-fwd fwd
ab "$S" bookkeeping-fwd fwd
gpu_checks 34 300
staged_checks 34
call_end
for pair in "states bookkeeping" "states-again bookkeeping-again" "states-fwd bookkeeping-fwd"; do
  set -- $pair; "$S" compare --min-change 0.03 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 2
done
