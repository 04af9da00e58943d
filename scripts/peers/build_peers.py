#!/usr/bin/env python3
"""Builds the float32 parts of the peers' CUDA extensions on the GPU machine, once.

    python3 scripts/peers/build_peers.py [mamba_ssm] [lrnnx]      (default: both)

Only the instantiations scanlab times are compiled (mamba_ssm: float32 inputs, real float32
weights, forward and backward; lrnnx: the S7 kernels), for sm_90, with each package's own nvcc
flags; the binding's dispatch is patched to refuse the rest with a clear error. The shared
library lands in .peers/built/<module>-<source hash>-<toolchain hash>.so: copy that folder to $OUT
once and carry .peers on later calls, and the build is skipped (scripts/peers/README.md).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402


def main(argv: list[str]) -> int:
    names = argv or sorted(peers.extension_specs())
    for name in names:
        if name not in peers.extension_specs():
            print(f"build_peers: unknown extension {name!r} (known: {', '.join(sorted(peers.extension_specs()))})",
                  file=sys.stderr)
            return 2
    for name in names:
        started = time.time()
        path = peers.build_extension(name)
        module = peers.load_extension(name)
        for fn in ("fwd", "bwd"):
            if not hasattr(module, fn):
                print(f"build_peers: {path} has no {fn}()", file=sys.stderr)
                return 1
        print(f"{name}: {path} ({path.stat().st_size >> 20} MiB, {time.time() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
