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
    failed = []
    for name in names:  # one peer's failure does not stop the others
        started = time.time()
        try:
            path = peers.build_extension(name)
            module = peers.load_extension(name)
        except Exception as e:  # noqa: BLE001 (the build's own message is what the user needs)
            print(f"build_peers: {name} FAILED after {time.time() - started:.0f} s: {e}", file=sys.stderr)
            failed.append(name)
            continue
        missing = [fn for fn in ("fwd", "bwd") if not hasattr(module, fn)]
        if missing:
            print(f"build_peers: {path} has no {', '.join(missing)}()", file=sys.stderr)
            failed.append(name)
            continue
        print(f"{name}: {path} ({path.stat().st_size >> 20} MiB, {time.time() - started:.0f} s)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
