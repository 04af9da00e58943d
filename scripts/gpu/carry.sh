#!/usr/bin/env bash
# The CUDA binaries of a device call, compressed: the working tree travels too (~41 MB of tracked
# files, most of them results), and two ~50 MB binaries would pass the call's 64 MiB limit. xz
# makes each ~25 MB (a -lineinfo build ~47: carry a plain one, and map ncu's rows to source lines
# here with reports/sass_lines.py and the -lineinfo twin), so a call with two moves the results
# of earlier sessions out of the tree first (each call's README says which).
#   bash scripts/gpu/carry.sh pack [CANDIDATE [BASELINE]]
#       here: CANDIDATE (build/cuda/scanlab) [and BASELINE (build/baseline/scanlab), if there] → build/carry/,
#       with each binary's REV, if any; a BASELINE ending in .xz (an earlier pack's scanlab.xz) is
#       copied as it is, with that pack's candidate-REV
#   bash scripts/gpu/carry.sh unpack    # there, first in the call's command (carry ["build/carry", ...])
# CARRY_DIR (default build/carry) names the folder for both, so that packs for two calls can wait
# side by side (each call carries its own). unpack uses Python's lzma: the device needs no xz.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dir="${CARRY_DIR:-build/carry}"
# rev_of BINARY: the REV file that names BINARY's commit: REV beside a build's binary, or
# candidate-REV beside an earlier pack's scanlab.xz (printed only if it exists).
rev_of() {
  local rev="$(dirname "$1")/REV"
  case "$1" in *.xz) rev="$(dirname "$1")/candidate-REV" ;; esac
  if [ -f "$rev" ]; then echo "$rev"; fi
}
case "${1:-}" in
  pack)
    candidate="${2:-build/cuda/scanlab}" baseline="${3:-build/baseline/scanlab}"
    [ -x "$candidate" ] || { echo "carry: no $candidate (bash scripts/build.sh cuda)" >&2; exit 2; }
    rm -rf "$dir" && mkdir -p "$dir"
    xz -T2 -6 -c "$candidate" > "$dir/scanlab.xz"
    rev="$(rev_of "$candidate")"; if [ -n "$rev" ]; then cp "$rev" "$dir/candidate-REV"; fi
    if [ -f "$baseline" ]; then
      case "$baseline" in
        *.xz) cp "$baseline" "$dir/baseline.xz" ;;
        *) xz -T2 -6 -c "$baseline" > "$dir/baseline.xz" ;;
      esac
      rev="$(rev_of "$baseline")"; if [ -n "$rev" ]; then cp "$rev" "$dir/baseline-REV"; fi
    fi
    du -ch "$dir"/* | tail -n 1 | sed "s|total|in $dir|" >&2 ;;
  unpack)
    [ -f "$dir/scanlab.xz" ] || { echo "carry: no $dir/scanlab.xz (carry $dir)" >&2; exit 2; }
    unxz() { mkdir -p "$(dirname "$2")"; python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"; chmod +x "$2"; }
    unxz "$dir/scanlab.xz" build/cuda/scanlab
    if [ -f "$dir/baseline.xz" ]; then
      unxz "$dir/baseline.xz" build/baseline/scanlab
      if [ -f "$dir/baseline-REV" ]; then cp "$dir/baseline-REV" build/baseline/REV; fi
    fi ;;
  *) echo "usage: carry.sh pack [CANDIDATE [BASELINE]] | unpack (CARRY_DIR: the folder, default build/carry)" >&2; exit 2 ;;
esac
