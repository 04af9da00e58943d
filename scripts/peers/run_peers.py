#!/usr/bin/env python3
"""Times a peer on the cases of a scanlab sweep and writes the same JSON schema (reports/README.md).

    python3 scripts/peers/run_peers.py --peer mamba_ssm --like sweep.json --out mamba_ssm.json \\
        [--scanlab build/cuda/scanlab] [--repetitions 10] [--min-time 0.05] [--max-bdl N] [--agreement off]

For every case of the scanlab sweep (--like) whose op the peer has: inputs in the ranges scanlab's
sweep uses (random, never zeros), rotated among buffer sets until they exceed 4x the L2; warm-up,
then --repetitions repetitions, each the mean of k calls timed one by one with CUDA events (the
method of scanlab's sweeps; JAX: a host clock around each call with block_until_ready). Costs
(bytes, flops, SFU ops) and ceilings come from the --like sweep, so fractions are comparable.

Agreement: per shape, the peer's outputs and gradients on one input set are compared with
`scanlab run OP --case DIR --backend cuda` on the same float32 inputs (a case directory written
here): relative L2 error of every tensor both produce, pass when all are <= --tolerance. A peer
whose result does not agree (or was not checked) is shown without a speedup in reports.
Exit status 0 when every case ran; 1 when some failed (the file then holds the cases done).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import peers  # noqa: E402
from peers import sr  # noqa: E402

REF_PEERS = ("mamba_ssm_ref", "lrnnx_ref")
DEFAULT_REF_MAX_BDL = 2 * 1024 * 1024  # mamba's PyTorch loop is ~600x slower than its kernel


def select_cases(like: dict, peer: str, max_bdl: int | None) -> tuple[list[dict], list[str]]:
    """The --like sweep's cases this peer can run, and a note for each one it skips."""
    chosen, skipped = [], []
    for c in like["cases"]:
        try:
            peers.check_supported(peer, c["op"], c["options"])
        except peers.Unsupported as e:
            skipped.append(f"{c['key']}: {e}")
            continue
        bdl = c["shape"].get("batch", 1) * c["shape"].get("dim", 1) * c["shape"].get("seqlen", 1)
        if max_bdl is not None and bdl > max_bdl:
            skipped.append(f"{c['key']}: batch*dim*seqlen = {bdl} > --max-bdl {max_bdl}")
            continue
        chosen.append(c)
    return chosen, skipped


def group_by_problem(cases: list[dict]) -> list[list[dict]]:
    """Cases sharing op, shape and options (they differ in direction only) share inputs and one
    agreement check."""
    groups: dict[str, list[dict]] = {}
    for c in cases:
        groups.setdefault(json.dumps([c["op"], c["shape"], c["options"]], sort_keys=True), []).append(c)
    return list(groups.values())


def buffer_sets_for(set_bytes: int, cache_bytes: int, max_sets: int = 8) -> int:
    """benchmarks/sweep.cpp's rule: together the sets exceed 4x the cache."""
    if set_bytes <= 0 or cache_bytes <= 0:
        return 1
    return int(max(1, min(max_sets, math.ceil(4.0 * cache_bytes / set_bytes))))


def time_calls(calls: list, repetitions: int, min_time_s: float, warmups: int, device: str) -> tuple[list[float], int]:
    """Per-repetition mean seconds of k calls (k from --min-time), each call timed alone, calls
    rotating over the buffer sets."""
    if device == "cuda":
        import torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def one(i: int) -> float:
            start.record()
            calls[i % len(calls)]()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1e-3
    else:  # host clock: CPU tensors, or JAX calls that block until their result is ready
        def one(i: int) -> float:
            t0 = time.perf_counter()
            calls[i % len(calls)]()
            return time.perf_counter() - t0
    for w in range(warmups):
        one(w)
    first = one(0)
    k = int(min(100000, max(1, math.ceil(min_time_s / max(first, 1e-9)))))
    samples, n = [], 0
    for _ in range(repetitions):
        total = 0.0
        for _ in range(k):
            total += one(n)
            n += 1
        samples.append(total / k)
    return samples, k


# ------------------------------------------------------------------------------------- agreement
def case_options_json(op: str, options: dict) -> dict:
    """case.json's object for a scanlab case directory (kernels/problem/<op>.cpp options_json)."""
    j = {"op": op}
    if op == "selective_scan" and options.get("softplus"):
        j["delta_softplus"] = True
    if op == "state_space_v1" and options.get("gate"):
        j["act_fn"] = options.get("act_fn", "silu")
    return j


def write_case_dir(path: Path, op: str, options: dict, tensors: dict) -> None:
    import numpy as np
    path.mkdir(parents=True, exist_ok=True)
    (path / "case.json").write_text(json.dumps(case_options_json(op, options)))
    for name, t in tensors.items():
        arr = t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)
        np.save(path / f"{name}.npy", np.ascontiguousarray(arr.astype("<f4")))


def compare_outputs(peer_out: dict, scanlab_out: dict, tolerance: float) -> dict:
    import numpy as np
    errors, max_abs = {}, 0.0
    for name in sorted(set(peer_out) & set(scanlab_out)):
        a = np.asarray(peer_out[name], dtype=np.float64)
        b = np.asarray(scanlab_out[name], dtype=np.float64)
        if a.shape != b.shape:
            if a.size == b.size:
                a = a.reshape(b.shape)  # e.g. (b,1,n,l) against (b,n,l)
            else:
                errors[name] = float("inf")
                continue
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            errors[name] = float("nan")
            continue
        denom = float(np.linalg.norm(b)) or 1.0
        errors[name] = float(np.linalg.norm(a - b)) / denom
        max_abs = max(max_abs, float(np.max(np.abs(a - b))) if a.size else 0.0)
    compared = sorted(errors)
    worst = max(errors.values()) if errors else float("nan")
    return {"compared": compared, "rel_l2_errors": errors, "rel_l2_error": worst, "max_abs_error": max_abs,
            "tolerance": tolerance,
            "pass": bool(compared) and all(math.isfinite(e) and e <= tolerance for e in errors.values()),
            "only_peer": sorted(set(peer_out) - set(scanlab_out)), "only_scanlab": sorted(set(scanlab_out) - set(peer_out))}


def agreement(call, inputs: dict, scanlab: str, backend: str, tolerance: float, workdir: Path) -> dict:
    import numpy as np
    against = f"scanlab:{backend}"
    try:
        peer_out = peers.jax_outputs(call, inputs) if call.peer == "ejkernel_xla" else peers.torch_outputs(call, inputs)
    except Exception as e:  # a peer that fails on the case disagrees
        return {"against": against, "pass": False, "error": f"the peer failed: {type(e).__name__}: {e}"}
    case_dir, out_dir = workdir / "case", workdir / f"out-{backend}"
    write_case_dir(case_dir, call.op, call.options, inputs)
    cmd = [scanlab, "run", call.op, "--case", str(case_dir), "--backend", backend, "--out", str(out_dir)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"against": against, "error": f"could not run {' '.join(cmd)}: {e}"}
    if proc.returncode != 0:
        return {"against": against, "error": f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-800:]}"}
    scanlab_out = {p.stem: np.load(p) for p in out_dir.glob("*.npy")}
    result = compare_outputs(peer_out, scanlab_out, tolerance)
    result["against"] = against
    return result


def agreement_text(verdict: dict) -> str:
    if verdict.get("pass"):
        return f"agrees (rel L2 {verdict['rel_l2_error']:.1e})"
    if verdict.get("error"):
        return "not checked: " + verdict["error"]
    if verdict.get("checked") is False:
        return "not checked (" + verdict.get("note", "") + ")"
    return f"DISAGREES: {verdict.get('rel_l2_errors')}"


# ------------------------------------------------------------------------------------- main
def machine_block(like: dict, peer: str, device: str, force: bool) -> dict:
    m = dict(like["scanlab"]["machine"])
    info = {"host": socket.gethostname()}
    if device == "cuda":
        import torch
        name = torch.cuda.get_device_name(0)
        if name not in m.get("device", "") and not force:
            raise peers.PeerError(f"this GPU is {name!r}, the --like sweep ran on {m.get('device')!r}: peers are "
                                  "compared on the machine scanlab ran on (--force-device to override)")
        info.update({"gpu": name, "torch": torch.__version__, "torch_cuda": torch.version.cuda})
    m.update(info)
    m["backend"] = "xla" if peer == "ejkernel_xla" else ("cuda (torch)" if device == "cuda" else "cpu (torch)")
    return m


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer", required=True, choices=sorted(peers.PEER_OPS))
    ap.add_argument("--like", required=True, help="the scanlab sweep JSON whose cases (and costs, ceilings) to run")
    ap.add_argument("--out", required=True)
    ap.add_argument("--repetitions", type=int, default=10)
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds per repetition")
    ap.add_argument("--warmups", type=int, default=3)
    ap.add_argument("--max-bdl", type=int, default=None,
                    help=f"skip cases with batch*dim*seqlen above this (default for *_ref peers: {DEFAULT_REF_MAX_BDL})")
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="cpu: torch on the host (tests only)")
    ap.add_argument("--scanlab", default=str(peers.REPO / "build" / "cuda" / "scanlab"),
                    help="the scanlab binary for the agreement check")
    ap.add_argument("--scanlab-backend", default=None, help="backend of the agreement run (default: cuda, or serial)")
    ap.add_argument("--agreement", choices=("on", "off"), default="on")
    ap.add_argument("--tolerance", type=float, default=1e-3, help="largest relative L2 error that agrees")
    ap.add_argument("--force-device", action="store_true")
    args = ap.parse_args(argv)

    like = sr.load_sweep(args.like)
    if like["scanlab"]["implementation"] != sr.SCANLAB:
        raise SystemExit("--like must be a scanlab sweep (scanlab sweep / scanlab merge), not a peer's file")
    max_bdl = args.max_bdl if args.max_bdl is not None else (DEFAULT_REF_MAX_BDL if args.peer in REF_PEERS else None)
    chosen, skipped = select_cases(like, args.peer, max_bdl)
    for note in skipped:
        print(f"skip {note}", file=sys.stderr)
    if not chosen:
        print(f"run_peers: {args.peer} can run none of the {len(like['cases'])} cases of {args.like}", file=sys.stderr)
        return 1
    ceilings = like["scanlab"].get("ceilings")
    machine = machine_block(like, args.peer, args.device, args.force_device)
    backend = args.scanlab_backend or ("cuda" if args.device == "cuda" else "serial")
    cache = 32 << 20
    if args.device == "cuda":
        import torch
        cache = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or cache
    timer = "host clock around each call (JAX: block_until_ready)" if (args.peer == "ejkernel_xla" or
                                                                      args.device == "cpu") else \
        "CUDA events around each call (torch)"

    cases, error = [], None
    started = time.time()
    done = 0
    for group in group_by_problem(chosen):
        first = group[0]
        op, shape, options = first["op"], first["shape"], first["options"]
        try:
            call = peers.PeerCall(args.peer, op, shape, options)
            sets = buffer_sets_for(peers.tensor_bytes(op, shape, options), cache)
            inputs = [peers.random_inputs(op, shape, options, args.seed + s, args.device) for s in range(sets)]
            verdict = {"checked": False, "note": "--agreement off"}
            if args.agreement == "on":
                if not Path(args.scanlab).is_file():
                    verdict = {"against": f"scanlab:{backend}", "error": f"no scanlab binary at {args.scanlab} (--scanlab)"}
                else:
                    with tempfile.TemporaryDirectory(prefix="scanlab-peer-") as tmp:
                        verdict = agreement(call, inputs[0], args.scanlab, backend, args.tolerance, Path(tmp))
            for c in group:
                make = peers.jax_case if args.peer == "ejkernel_xla" else peers.torch_case
                calls = []
                for x in inputs:
                    closure = make(call, x, c["direction"])
                    calls.append(closure[0] if isinstance(closure, tuple) else closure)
                samples, k = time_calls(calls, args.repetitions, args.min_time, args.warmups,
                                        "cpu" if args.peer == "ejkernel_xla" else args.device)
                costs = {key: c[key] for key in ("bytes_moved", "flops", "sfu_ops")}
                cases.append(sr.make_case(op, c["direction"], shape, options, args.peer, machine["backend"], samples,
                                          costs, ceilings, iterations=k, agreement=verdict,
                                          memory={"buffer_sets": sets,
                                                  "input_bytes": peers.tensor_bytes(op, shape, options)}))
                done += 1
                t = cases[-1]["time_s"]
                print(f"[{done}/{len(chosen)}] {args.peer} {c['key']}  {t['median'] * 1e3:.4g} ms "
                      f"(IQR {100 * (t['q3'] - t['q1']) / t['median']:.0f}%)  agreement: {agreement_text(verdict)}"
                      f"  [{time.time() - started:.0f} s]", file=sys.stderr)
        except Exception as e:
            error = f"{first['key']}: {type(e).__name__}: {e}"
            print(f"run_peers: {error}", file=sys.stderr)
            break
    if not cases:
        return 1
    info = dict(peers.PEER_INFO[args.peer])
    try:
        info["version"] = peers.pinned_peers()[info["package"]][0]
    except (KeyError, peers.PeerError):
        pass
    info.update({"name": args.peer, "timing": timer})
    sweep = sr.make_sweep(args.peer, like["scanlab"]["op"], machine, cases, ceilings, peer=info,
                          like=args.like, skipped=skipped, repetitions=args.repetitions, min_time_s=args.min_time,
                          warmups=args.warmups, seed=args.seed, timer=timer,
                          command=" ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
                          ceilings_source=f"from {args.like}")
    sweep["scanlab"]["complete"] = error is None and len(cases) == len(chosen)
    if error:
        sweep["scanlab"]["error"] = error
    Path(args.out).write_text(json.dumps(sweep, indent=1))
    print(f"wrote {len(cases)} cases to {args.out}", file=sys.stderr)
    return 0 if sweep["scanlab"]["complete"] else 1


if __name__ == "__main__":
    sys.exit(main())
