#!/usr/bin/env bash
# Session 40, call6: call4's script again, as it was (asked for the H200 a third time; lent another H100):
#   DEADLINE=270 CARRY_DIR=build/carry-s40d bash reports/results/h100/2026-12-07-s40/call4/run.sh $OUT/s40f   # carry build/carry-s40d .peers/src
exec bash reports/results/h100/2026-12-07-s40/call4/run.sh "$@"
