#!/usr/bin/env bash
# The kernel tests and the corpus replays again with 8 OpenMP threads, oversubscribing the 2-core
# CI machine on purpose: teams of 4 and 8 threads then run on the host, so "tiled"'s state splits
# of 4 (forward and backward) are checked against the oracle here and not only on the GPU (a change
# that broke a split of 4 over chunks of 8 was seen only by the H200: properties/corpus/README.md),
# and s7_scan's "scanned" walk composes the maps of 3 to 8 chunks across a team (with teams of
# two its scan has nothing to combine). Then backward teams of 32 channels with 32 and 64 threads,
# and direct_io's four threads a channel (below).
#   bash properties/kernels/wide_teams.sh path/to/scanlab
set -euo pipefail
scanlab="${1:?usage: wide_teams.sh path/to/scanlab}"
RC_PARAMS="${RC_PARAMS:-max_success=100}" OMP_NUM_THREADS=8 \
  "$scanlab" test --gtest_filter='KernelSelectiveScan.*:KernelS7Scan.*:KernelS7Inner.*:Corpus.*' --gtest_brief=1
# The backward's 32-row form bit for bit against one state at a time: two states at once, staged,
# unstaged and with the state loop compiled for normal chunks (bwd_normal_loop), and four; the test
# needs teams of 32 threads and skips at fewer: here a skip is a failure.
thirty_two="$(OMP_NUM_THREADS=32 "$scanlab" test \
  --gtest_filter='KernelSelectiveScan.ThirtyTwoRowBackwardIsOneStateAtATimeBitForBit' 2>&1)" || { echo "$thirty_two"; exit 1; }
echo "$thirty_two" | tail -n 2
if echo "$thirty_two" | grep -q SKIPPED; then echo "wide_teams.sh: the 32-row test skipped with 32 threads" >&2; exit 1; fi
# Backward teams of 32 channels (one warp a part on the GPU, the heuristic's) with one and two
# threads a channel, chunks of 8 and 16, one thread walking 4 states at once (64 columns a
# block: two a lane), 2 with its chunk inputs staged (bwd_stage_inputs) and 2 with its state loop
# compiled for normal chunks (bwd_normal_loop): the column sums
# unrolled for 32 rows (column_sum<32>) run only where a part is 32 channels, so these run 32
# and 64 OpenMP threads a team against the oracle.
for config in '{"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_split":1,"chunk_len":8}' \
              '{"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_split":1,"chunk_len":8,"bwd_state_interleave":4}' \
              '{"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_split":1,"chunk_len":8,"bwd_state_interleave":2,"bwd_stage_inputs":1}' \
              '{"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_split":1,"chunk_len":8,"bwd_state_interleave":2,"bwd_normal_loop":1}' \
              '{"bwd_channels_per_team":32,"bwd_team_size":64,"bwd_state_split":2,"chunk_len":8}' \
              '{"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_split":1,"chunk_len":16}'; do
  OMP_NUM_THREADS=64 "$scanlab" check selective_scan --backend openmp --impl tiled --config "$config" \
    --cases 60 --seed 9 --max-size 4000
done
# direct_io with four threads a channel exchanges dt, u and y's shares through scratch between
# syncs: teams of 32 threads on the host, in time segments (its summary pass syncs on its own).
OMP_NUM_THREADS=32 "$scanlab" check selective_scan --backend openmp --impl tiled \
  --config '{"direct_io":1,"state_split":4,"channels_per_team":8,"team_size":32,"time_tile":16,"fwd_time_segments":3}' \
  --cases 60 --seed 9 --max-size 4000
