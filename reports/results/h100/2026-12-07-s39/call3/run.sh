#!/usr/bin/env bash
# Session 39, call3: the same warm H100 as call2, seconds after it: the backward A/B call2 left out
# for time (AB_DIRS=fwd), dc0f97c against main at three shapes, alternating, each twice. Run as one
# command line on the device (carry build/carry-s39b, packed as call2's):
#   set -u; export CARRY_DIR=build/carry-s39b DEADLINE=200; source scripts/gpu/call-helpers.sh; call_begin $OUT/s39c
#   SH=8x4096x16x2048,2x4096x16x8192,8x4096x32x2048; for p in "" -again; do ab "$BASE" "dc0f97c$p" bwd; ab "$S" "main$p" bwd; done; call_end
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s39b}" DEADLINE="${DEADLINE:-200}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
SH=8x4096x16x2048,2x4096x16x8192,8x4096x32x2048
for p in "" -again; do ab "$BASE" "dc0f97c$p" bwd; ab "$S" "main$p" bwd; done
call_end
