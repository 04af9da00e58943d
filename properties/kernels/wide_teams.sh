#!/usr/bin/env bash
# The kernel tests and the corpus replays again with 8 OpenMP threads, oversubscribing the 2-core
# CI machine on purpose: teams of 4 and 8 threads then run on the host, so "tiled"'s state splits
# of 4 (forward and backward) are checked against the oracle here and not only on the GPU (a change
# that broke a split of 4 over chunks of 8 was seen only by the H200: properties/corpus/README.md),
# and s7_scan's "scanned" walk composes the maps of 3 to 8 chunks across a team (with teams of
# two its scan has nothing to combine).
#   bash properties/kernels/wide_teams.sh path/to/scanlab
set -euo pipefail
scanlab="${1:?usage: wide_teams.sh path/to/scanlab}"
RC_PARAMS="${RC_PARAMS:-max_success=100}" OMP_NUM_THREADS=8 \
  "$scanlab" test --gtest_filter='KernelSelectiveScan.*:KernelS7Scan.*:KernelS7Inner.*:Corpus.*' --gtest_brief=1
