#!/usr/bin/env bash
# Builds the CUDA binary of an earlier commit as build/baseline/scanlab, so that one device call
# can time it beside the working tree's build/cuda/scanlab (speed-probe.sh BASELINE=...): an
# A/B measured side by side, where two calls would differ by the machine's state between them.
#   bash scripts/gpu/build-baseline.sh REV
# The commit is checked out in a git worktree under build/baseline-src (ignored, reused by later
# calls) and built there with its own scripts/build.sh cuda (the Kokkos builds are shared through
# the cache prefix); build/baseline/REV names what was built.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rev="${1:?usage: build-baseline.sh REV}"
commit=$(git rev-parse --verify "$rev^{commit}") || { echo "build-baseline: no commit '$rev'" >&2; exit 2; }
src=build/baseline-src
if [ ! -e "$src/.git" ]; then
  git worktree prune
  git worktree add --detach "$src" "$commit" > /dev/null
else
  git -C "$src" checkout --quiet --detach "$commit"
fi
echo "build-baseline: building $commit in $src (a first build takes ~10 minutes on 2 cores)" >&2
bash "$src/scripts/build.sh" cuda
mkdir -p build/baseline
cp "$src/build/cuda/scanlab" build/baseline/scanlab
echo "$commit" > build/baseline/REV
echo "build-baseline: build/baseline/scanlab is $commit ($(git log -1 --format=%s "$commit" | cut -c1-60))" >&2
