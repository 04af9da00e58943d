#!/usr/bin/env bash
# Session 35, call3: call2's script again (it ran as a copy of it) after the swizzle fix, with the
# binary of db40f06:
#   DEADLINE=540 CARRY_DIR=build/carry-s35c bash reports/results/h100/2026-12-06-s35/call3/run.sh $OUT/s35c
exec bash "$(dirname "${BASH_SOURCE[0]}")/../call2/run.sh" "$@"
