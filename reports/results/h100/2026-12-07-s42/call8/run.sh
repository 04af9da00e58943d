#!/usr/bin/env bash
# Session 42, call8: data for the segment rule with §71's teams (not a change): the forward at 8192,
# 4096 and 2048 channels of dstate 16 ((2,4096,16,8192), (1,4096,16,8192), (1,2048,16,8192)) as the
# heuristic runs it (two threads a channel in time segments), and four threads a channel in teams of
# 256 (64 channels), tiles of 64, in 1, 2 and 4 segments, each twice, alternating.
# Prediction: at 8192 channels no segments wins (call6: 1.107x); at 4096 and 2048 segments still
# win, with 2 (4096) and 4 (2048) beating the heuristic's two-thread teams.
# Not run: session 42 had too little device time left to start a machine. Ready as written.
#   CARRY_DIR=build/carry-s42g bash reports/results/h100/2026-12-07-s42/call8/run.sh $OUT/s42h   # carry build/carry-s42g
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ceilings
SH=2x4096x16x8192,1x4096x16x8192,1x2048x16x8192
four='"direct_io":1,"state_split":4,"team_size":256,"channels_per_team":64,"time_tile":64'
for pass in "" -again; do
  ab "$S" "heuristic$pass" fwd
  for seg in 1 2 4; do ab "$S" "four-seg$seg$pass" fwd --config "{$four,\"fwd_time_segments\":$seg}"; done
done
call_end
