#!/usr/bin/env bash
# Session 27, call 4 (not run: the device refused every start): main as landed (13ff482: §49 + §50, §50's state-loop pointer walk only in the
# staged kernel) against §49 alone (s25-states, 3d73919's build), then main beside mamba_ssm.
# Steps: ceilings; the backward of both binaries, twice each, alternating; main's forward,
# backward and fwd+bwd beside mamba_ssm (built there from its sdist); GPU checks of main; the
# staged and the unstaged interleaved backward laid over random cases, with memcheck and
# racecheck of each in three time segments.
# Predictions (against §49): backward 1.03-1.04x at the dstate-16 shapes (call2's §50 there:
# the staged kernel is §50's as measured), 1.00-1.03x at dstate 32 (the copies and strides
# only) and 0.99-1.01x at dstate 64 (no loss: its state loop is §49's again).
#   DEADLINE=520 bash reports/results/h100/2026-12-05-s27/call4/run.sh $OUT/s27d   # carry build/carry-s27, .peers/src
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s27}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
ceilings
ab "$BASE" states bwd
ab "$S" landed bwd
ab "$BASE" states-again bwd
ab "$S" landed-again bwd
beside_peer mamba_ssm
gpu_checks 41 300
staged_checks 42
laid_over_checks unstaged 0 43 200
call_end
for pair in "states landed" "states-again landed-again"; do
  set -- $pair; "$S" compare --min-change 0.03 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 2
done
