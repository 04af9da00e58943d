#!/usr/bin/env bash
# The CUDA binaries of a device call, compressed: the working tree travels too (~41 MB of tracked
# files, most of them results), and two ~50 MB binaries would pass the call's 64 MiB limit. xz
# makes each ~25 MB (a -lineinfo build ~47: carry a plain one, and map ncu's rows to source lines
# here with reports/sass_lines.py and the -lineinfo twin), so a call with two moves the results
# of earlier sessions out of the tree first (each call's README says which).
#   bash scripts/gpu/carry.sh pack      # here: build/cuda/scanlab [and build/baseline/scanlab] → build/carry/
#   bash scripts/gpu/carry.sh unpack    # there, first in the call's command (carry ["build/carry", ...])
# unpack uses Python's lzma, so the device machine needs no xz.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
case "${1:-}" in
  pack)
    rm -rf build/carry && mkdir -p build/carry
    [ -x build/cuda/scanlab ] || { echo "carry: no build/cuda/scanlab (bash scripts/build.sh cuda)" >&2; exit 2; }
    xz -T2 -6 -c build/cuda/scanlab > build/carry/scanlab.xz
    if [ -x build/baseline/scanlab ]; then
      xz -T2 -6 -c build/baseline/scanlab > build/carry/baseline.xz
      cp build/baseline/REV build/carry/baseline-REV
    fi
    du -ch build/carry/* | tail -n 1 | sed 's/total/in build\/carry/' >&2 ;;
  unpack)
    [ -f build/carry/scanlab.xz ] || { echo "carry: no build/carry/scanlab.xz (carry build/carry)" >&2; exit 2; }
    unxz() { mkdir -p "$(dirname "$2")"; python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"; chmod +x "$2"; }
    unxz build/carry/scanlab.xz build/cuda/scanlab
    if [ -f build/carry/baseline.xz ]; then
      unxz build/carry/baseline.xz build/baseline/scanlab
      cp build/carry/baseline-REV build/baseline/REV
    fi ;;
  *) echo "usage: carry.sh pack|unpack" >&2; exit 2 ;;
esac
