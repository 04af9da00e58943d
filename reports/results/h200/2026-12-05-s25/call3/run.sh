#!/usr/bin/env bash
# Session 25, call 3: what lands, beside mamba_ssm, and one more candidate against it.
# build/baseline: branch s25-land (39daffd's kernels): main + §47 (the backward's activations under
# one branch a chunk) + §48 (bwd_stage_inputs, on in the heuristic at dstate 16, time segments
# filling one wave at dstate 16 with 16384 channels or fewer, from call 2); not §46, which lost in
# call 1. build/cuda: branch s25-states, the same plus §49: with bwd_stage_inputs the chunk-start
# states too go through scratch (each thread copies its next chunk's column during the chunk's end
# phase), so the state loop's groups read them from scratch, not global memory.
# Steps: the backward of both binaries, twice each, alternating (A/B of §49; dstate 32 and 64
# run unstaged: controls); then both binaries' forward, backward and fwd+bwd swept in full, and
# mamba_ssm (built here from its sdist) on the same cases, so both have peer ratios from this one
# run; GPU checks of the candidate (the heuristic; random configs with the staged inputs laid
# over at 32 channels a team); the CUDA kernel tests; memcheck and racecheck of the staged
# backward in three time segments.
# Predictions: §49 backward 1.04-1.08x at the dstate-16 shapes (s25 call1's source counters of the
# unstaged form: 10.4% of the stall samples wait on these loads), 1.00x at dstate 32 and 64.
# Baseline beside mamba_ssm: backward 1.9-2.1x at the anchor (session 23: 1.67x), 1.3-2.1x
# elsewhere; forward as in session 23 (2.5-5.0x); fwd+bwd 2.2-2.5x at the anchor.
#   DEADLINE=500 bash reports/results/h200/2026-12-05-s25/call3/run.sh $OUT/s25c   # carry build/carry, .peers/src
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
start_peer_build mamba_ssm
ceilings
ab "$BASE" land bwd
ab "$S" states bwd
ab "$BASE" land-again bwd
ab "$S" states-again bwd
run "$BASE" sweep selective_scan --backend "$BACKEND" --ceilings "$O/ceilings.json" --impl tiled --no-cache \
    --implementation scanlab-land --direction fwd,bwd,fwdbwd "${OPTS[@]}" --shapes "$SH" \
    --out "$O/selective_scan-land-all.json" > "$O/sweep-land-all.txt" 2>&1
beside_peer mamba_ssm
run "$S" report "$O/selective_scan-tiled.json" "$O/selective_scan-land-all.json" "$O/selective_scan-mamba_ssm.json" \
    --out "$O/report-both" > /dev/null 2>&1
gpu_checks 31 300
staged_checks 32
call_end
for pair in "land states" "land-again states-again"; do
  set -- $pair; "$S" compare --min-change 0.03 "$O/selective_scan-$1.json" "$O/selective_scan-$2.json" | tail -n 2
done
