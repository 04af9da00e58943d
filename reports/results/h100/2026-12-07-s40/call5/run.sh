#!/usr/bin/env bash
# Session 40, call5: call4's script again, as it was (asked for the H200 once more; lent another H100):
#   DEADLINE=500 CARRY_DIR=build/carry-s40d bash reports/results/h100/2026-12-07-s40/call4/run.sh $OUT/s40e   # carry build/carry-s40d .peers/src
exec bash reports/results/h100/2026-12-07-s40/call4/run.sh "$@"
