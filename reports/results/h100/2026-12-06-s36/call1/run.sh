#!/usr/bin/env bash
# Session 36, call 1: session 35's H200 call (main db40f06 beside mamba_ssm, 3 shapes, fwd/bwd/fwdbwd),
# asked for as nvidia-h200 and given an H100. Ran as:
#   DEADLINE=420 CARRY_DIR=build/carry-s35c bash reports/results/h100/2026-12-06-s36/call1/run.sh $OUT/s36a
exec bash reports/results/h200/2026-12-06-s35/next/run.sh "$@"
