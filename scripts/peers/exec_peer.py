#!/usr/bin/env python3
"""A peer behind scanlab's exec protocol (DESIGN.md): `exec_peer.py PEER CASE_DIR OUT_DIR`.

    scanlab check selective_scan --backend exec:'python3 scripts/peers/exec_peer.py mamba_ssm'
    scanlab check s7_scan --backend exec:'python3 scripts/peers/exec_peer.py lrnnx'
    scanlab check state_space_v1 --backend exec:'python3 scripts/peers/exec_peer.py ejkernel_xla'

Reads CASE_DIR/case.json and its NAME.npy inputs, runs the peer in float32 on the GPU (forward;
with dout also the gradients of every input), and writes OUT_DIR/NAME.npy (out, last_state or
final_state, d<input>) as float32, plus OUT_DIR/timing.json with the peer's own time for what
was asked (the protocol of cli/case_runner.hpp): {"seconds": median of the passes run,
"forward_seconds": the forward alone, "backward_seconds": their difference (with dout),
"samples_s", "passes", "timer", "implementation"}, so process start-up is not counted.

Exit status: 0 done; 2 bad case directory; 3 the peer has no equivalent of the case (the message
says which option; e.g. mamba_ssm takes no initial_state and propagates no dlast_state).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402

UNSUPPORTED = 3


def case_to_sweep_terms(op: str, options_json: dict, tensors: dict) -> tuple[dict, dict]:
    """(shape, options) in the sweep's terms from a case directory's case.json and tensors."""
    if op == "selective_scan":
        b, d, l = tensors["u"].shape
        n = tensors["A"].shape[1]
        B = tensors["B"]
        if B.ndim == 2 or tensors["C"].ndim == 2:
            raise peers.Unsupported("time-invariant B or C (D, N): the sweeps and peers use per-step B and C")
        groups = B.shape[1] if B.ndim == 4 else 1
        shape = {"batch": b, "dim": d, "dstate": n, "seqlen": l, "groups": groups}
        options = {"z": "z" in tensors, "D": "D" in tensors, "delta_bias": "delta_bias" in tensors,
                   "softplus": bool(options_json.get("delta_softplus", False)),
                   "initial_state": "initial_state" in tensors, "act_fn": options_json.get("act_fn", "silu")}
        return shape, options
    if op == "state_space_v1":
        b, l, d = tensors["hidden_states"].shape
        shape = {"batch": b, "dim": d, "dstate": tensors["A"].shape[1], "seqlen": l}
        if "conv_state" in tensors:
            raise peers.Unsupported("conv_state passthrough is not wired in the exec adapter")
        return shape, {"gate": "gate" in tensors, "act_fn": options_json.get("act_fn", "silu"),
                       "initial_state": "initial_state" in tensors}
    if op == "s7_scan":
        b, h, l = tensors["u"].shape
        return ({"batch": b, "dim": h, "dstate": tensors["A"].shape[1], "seqlen": l},
                {"bias": "bias" in tensors, "initial_state": "initial_state" in tensors})
    if op == "s7_inner":
        b, l, dm = tensors["hidden_states"].shape
        return {"batch": b, "seqlen": l, "dim": dm, "dstate": tensors["base_params"].shape[0]}, {}
    raise ValueError(f"unknown op {op!r}")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    peer, case_dir, out_dir = argv[0], Path(argv[1]), Path(argv[2])
    import numpy as np
    try:
        options_json = json.loads((case_dir / "case.json").read_text())
        op = options_json["op"]
        tensors = {p.stem: np.load(p) for p in sorted(case_dir.glob("*.npy"))}
        shape, options = case_to_sweep_terms(op, options_json, tensors)
    except peers.Unsupported as e:
        print(f"unsupported: {e}", file=sys.stderr)
        return UNSUPPORTED
    except (OSError, KeyError, ValueError) as e:
        print(f"exec_peer: bad case directory {case_dir}: {e}", file=sys.stderr)
        return 2
    for cotangent in ("dlast_state", "dfinal_state"):
        if cotangent in tensors:
            print(f"unsupported: {peer} does not propagate a gradient of the final state ({cotangent})", file=sys.stderr)
            return UNSUPPORTED
    try:
        call = peers.PeerCall(peer, op, shape, options)
    except peers.Unsupported as e:
        print(f"unsupported: {e}", file=sys.stderr)
        return UNSUPPORTED
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = {k: torch.from_numpy(v.astype(np.float32)).to(device) for k, v in tensors.items()}
    backward = "dout" in x
    if peer == "ejkernel_xla":
        if backward:
            outputs = peers.jax_outputs(call, x)
        else:
            _, (forward, vals, _) = peers.jax_case(call, x, "fwd")
            out, final_state = forward(*vals)
            outputs = {"out": np.asarray(out), "final_state": np.asarray(final_state)}
        run = peers.jax_case(call, x, "fwdbwd" if backward else "fwd")[0]
    else:
        if backward:
            outputs = peers.torch_outputs(call, x)
        else:
            with torch.no_grad():
                outputs = {k: v.double().cpu().numpy() for k, v in peers.torch_forward(call, x, False).items()}
        run = peers.torch_case(call, x, "fwdbwd" if backward else "fwd")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, value in outputs.items():
        np.save(out_dir / f"{name}.npy", np.ascontiguousarray(np.asarray(value).astype("<f4")))
    # The peer's own time for what was asked (and for the forward alone), after one warm-up call.
    forward = run if not backward else (peers.jax_case(call, x, "fwd")[0] if peer == "ejkernel_xla"
                                        else peers.torch_case(call, x, "fwd"))

    def median_time(fn) -> tuple[float, list[float]]:
        samples = []
        for i in range(6):
            if device == "cuda" and peer != "ejkernel_xla":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                t = start.elapsed_time(end) * 1e-3
            else:
                t0 = time.perf_counter()
                fn()
                t = time.perf_counter() - t0
            if i > 0:
                samples.append(t)
        samples.sort()
        return samples[len(samples) // 2], samples

    seconds, samples = median_time(run)
    timing = {"seconds": seconds, "samples_s": samples, "passes": "forward+backward" if backward else "forward",
              "timer": "CUDA events" if device == "cuda" and peer != "ejkernel_xla" else "host clock",
              "implementation": peer}
    if backward:
        timing["forward_seconds"] = median_time(forward)[0]
        timing["backward_seconds"] = max(0.0, seconds - timing["forward_seconds"])
    else:
        timing["forward_seconds"] = seconds
    (out_dir / "timing.json").write_text(json.dumps(timing))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
