#!/usr/bin/env python3
"""A small external selective_scan (forward and backward) speaking scanlab's exec protocol.

    python3 selective_scan_numpy.py [--float32] CASE_DIR OUT_DIR

scanlab writes CASE_DIR (case.json and one NAME.npy per input, float64) and runs this script with
the case directory and an empty output directory; the script writes OUT_DIR/out.npy and
OUT_DIR/last_state.npy and, when the case holds dout, the gradient d<input> of every input, plus
OUT_DIR/timing.json with the time spent computing (not starting Python). Semantics are scanlab's
selective_scan (kernels/problem/selective_scan.hpp): mamba_ssm's selective_scan_fn plus an initial
state. Plain NumPy, written for clarity: a loop over time, vectorised over (batch, dim, dstate).

--float32 computes in float32 (the precision a GPU kernel would use); the default is float64.
SCANLAB_EXAMPLE_PERTURB=x multiplies `out` by (1 + x): a deliberately wrong implementation, which
`scanlab check` must catch (CI does this).
"""
import json
import os
import sys
import time

import numpy as np

SOFTPLUS_THRESHOLD = 20.0


def load(case_dir, name):
    path = os.path.join(case_dir, name + ".npy")
    return np.load(path) if os.path.exists(path) else None


def per_channel(m, batch, dim, seqlen):
    """B or C as (batch, dim, dstate, seqlen): per-step (b,N,L) or (b,G,N,L), time-invariant (D,N)."""
    if m.ndim == 2:  # time-invariant (dim, dstate)
        return np.broadcast_to(m[None, :, :, None], (batch, dim, m.shape[1], seqlen))
    if m.ndim == 3:  # one group
        m = m[:, None]
    groups = m.shape[1]
    return np.repeat(m, dim // groups, axis=1)  # channel d belongs to group d // (dim / groups)


def reduce_like(grad, m):
    """Sums a (batch, dim, dstate, seqlen) gradient back to the layout of m."""
    if m.ndim == 2:
        return grad.sum(axis=(0, 3))
    batch, dim = grad.shape[:2]
    groups = 1 if m.ndim == 3 else m.shape[1]
    g = grad.reshape(batch, groups, dim // groups, *grad.shape[2:]).sum(axis=2)
    return g[:, 0] if m.ndim == 3 else g


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def main(argv):
    dtype = np.float64
    if argv and argv[0] == "--float32":
        dtype, argv = np.float32, argv[1:]
    if len(argv) != 2:
        sys.exit("usage: selective_scan_numpy.py [--float32] CASE_DIR OUT_DIR")
    case_dir, out_dir = argv
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    if case.get("op") != "selective_scan":
        sys.exit("this example implements selective_scan only, not %r" % case.get("op"))
    cast = lambda t: None if t is None else t.astype(dtype)
    u, delta, A, Bm, Cm = (cast(load(case_dir, n)) for n in ("u", "delta", "A", "B", "C"))
    D, z, delta_bias, h0 = (cast(load(case_dir, n)) for n in ("D", "z", "delta_bias", "initial_state"))
    dout, dlast = cast(load(case_dir, "dout")), cast(load(case_dir, "dlast_state"))
    softplus = bool(case.get("delta_softplus", False))

    start = time.perf_counter()
    batch, dim, seqlen = u.shape
    dstate = A.shape[1]
    Bc, Cc = per_channel(Bm, batch, dim, seqlen), per_channel(Cm, batch, dim, seqlen)

    # Forward: dt, then h_t = exp(dt·A)·h_{t−1} + dt·B_t·u_t and y_t = Σ_n C_t·h_t (+ D·u).
    raw = delta + (delta_bias[None, :, None] if delta_bias is not None else 0)
    if softplus:
        dt = np.where(raw <= SOFTPLUS_THRESHOLD, np.log1p(np.exp(np.minimum(raw, SOFTPLUS_THRESHOLD))), raw)
    else:
        dt = raw
    h = np.zeros((batch, dim, dstate, seqlen + 1), dtype)  # h[..., t + 1] is h_t; h[..., 0] the initial state
    if h0 is not None:
        h[..., 0] = h0
    decay = np.exp(dt[:, :, None, :] * A[None, :, :, None])  # (b, D, N, L)
    for t in range(seqlen):
        h[..., t + 1] = decay[..., t] * h[..., t] + (dt[:, :, None, t] * u[:, :, None, t]) * Bc[..., t]
    y = np.einsum("bdnl,bdnl->bdl", Cc, h[..., 1:])
    if D is not None:
        y = y + D[None, :, None] * u
    out = y * (z * sigmoid(z)) if z is not None else y
    forward_seconds = time.perf_counter() - start

    outputs = {"out": out, "last_state": h[..., seqlen]}
    backward_seconds = 0.0
    if dout is not None:
        start = time.perf_counter()
        if z is not None:
            s = sigmoid(z)
            dy = dout * z * s
            outputs["dz"] = dout * y * s * (1 + z * (1 - s))
        else:
            dy = dout
        # Adjoint of the state: g_t = C_t·dy_t + exp(dt_{t+1}·A)·g_{t+1}, from dlast_state.
        g = np.zeros((batch, dim, dstate, seqlen), dtype)
        carry = dlast.copy() if dlast is not None else np.zeros((batch, dim, dstate), dtype)
        for t in range(seqlen - 1, -1, -1):
            carry = carry + Cc[..., t] * dy[:, :, None, t]
            g[..., t] = carry
            carry = decay[..., t] * carry
        h_prev, h_now = h[..., :-1], h[..., 1:]
        dBc = g * (dt * u)[:, :, None, :]
        dCc = h_now * dy[:, :, None, :]
        ddecay_arg = g * h_prev * decay  # ∂loss/∂(dt·A)
        outputs["dA"] = np.einsum("bdnl,bdl->dn", ddecay_arg, dt)
        ddt = np.einsum("bdnl,dn->bdl", ddecay_arg, A) + np.einsum("bdnl,bdnl->bdl", g, Bc) * u
        outputs["du"] = np.einsum("bdnl,bdnl->bdl", g, Bc) * dt + (D[None, :, None] * dy if D is not None else 0)
        outputs["dB"], outputs["dC"] = reduce_like(dBc, Bm), reduce_like(dCc, Cm)
        if softplus:
            ddt = ddt * np.where(raw <= SOFTPLUS_THRESHOLD, sigmoid(np.minimum(raw, SOFTPLUS_THRESHOLD)), 1)
        outputs["ddelta"] = ddt
        if delta_bias is not None:
            outputs["ddelta_bias"] = ddt.sum(axis=(0, 2))
        if D is not None:
            outputs["dD"] = (dy * u).sum(axis=(0, 2))
        if h0 is not None:
            outputs["dinitial_state"] = decay[..., 0] * g[..., 0]
        backward_seconds = time.perf_counter() - start

    perturb = float(os.environ.get("SCANLAB_EXAMPLE_PERTURB", "0"))
    if perturb:
        outputs["out"] = outputs["out"] * (1 + perturb)
    for name, value in outputs.items():
        np.save(os.path.join(out_dir, name + ".npy"), np.ascontiguousarray(value, dtype=dtype))
    with open(os.path.join(out_dir, "timing.json"), "w") as f:
        json.dump({"seconds": forward_seconds + backward_seconds, "forward_seconds": forward_seconds,
                   "backward_seconds": backward_seconds}, f)


if __name__ == "__main__":
    main(sys.argv[1:])
