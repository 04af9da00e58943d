#!/usr/bin/env bash
# Session 42, call6 (the machine call5 left warm): call5's tune winners checked as sweeps: the
# heuristic's forward at the five dstate-16 shapes, then each shape with its tune winner laid over,
# twice, alternating. Winners (call5/s42e/tune-fwd.json): larger teams and 64-step tiles:
# (2,4096,16,8192) four threads a channel in teams of 256 (64 channels), tiles of 64, no time
# segments (1.12x in tune); (8,2048,16,2048) the same shape of team (1.04x); (16,1536,16,1024) and
# (4,5120,16,4096) two threads a channel in teams of 128 (64 channels), tiles of 64 (1.06x,
# 1.05x); the anchor tiles of 64 (1.02x).
# Prediction: the sweeps agree with tune within 2%.
#   CARRY_DIR=build/carry-s42c bash reports/results/h100/2026-12-07-s42/call6/run.sh $OUT/s42f   # carry build/carry-s42c
set -u
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
ceilings
SH=2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x16x2048
for pass in "" -again; do
  ab "$S" "heuristic$pass" fwd
  SH=2x4096x16x8192,8x2048x16x2048 ab "$S" "split4-team256$pass" fwd \
    --config '{"direct_io":1,"state_split":4,"team_size":256,"channels_per_team":64,"time_tile":64,"fwd_time_segments":1}'
  SH=16x1536x16x1024,4x5120x16x4096 ab "$S" "split2-team128$pass" fwd \
    --config '{"direct_io":1,"state_split":2,"team_size":128,"channels_per_team":64,"time_tile":64,"fwd_time_segments":1}'
  SH=8x4096x16x2048 ab "$S" "tile64$pass" fwd --config '{"time_tile":64}'
done
call_end
