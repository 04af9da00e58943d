#!/usr/bin/env python3
"""Generate scanlab's golden case directories from the peers' own float64 references.

Run manually (never in CI):

    python3 scripts/goldens/make_goldens.py

What it does:
  1. Bootstraps a private venv (default ~/.cache/scanlab/goldens-venv) with pinned CPU
     torch, jax (x64), numpy, einops and the ejkernel wheel, then re-executes itself in it.
  2. Downloads the peers' published artifacts with pip into an ignored cache
     (~/.cache/scanlab/peers): the mamba-ssm and lrnnx sdists and the ejkernel wheel.
     Their sha256 are checked against the pins below. No peer code enters the repo.
  3. Loads ONLY the pure reference functions:
       - mamba_ssm/ops/selective_scan_interface.py: selective_scan_ref
       - lrnnx/ops/s7_scan.py: s7_scan_ref, s7_inner_ref
     by extracting their source with `ast` (the modules themselves import CUDA extensions)
     and exec'ing it into a namespace holding torch/F/einops, after rewriting every
     `.float()` call into `.double()` and `torch.float32` into `torch.float64`, so nothing
     is silently evaluated in float32. ejkernel's XLA implementation is imported directly
     (ejkernel.kernels._xla.state_space_v1.state_space_v1) with jax_enable_x64, and is
     cross-checked against the public API with platform="xla".
  4. Builds small seeded random cases, evaluates outputs in float64 and gradients with
     torch.autograd / jax.vjp, and writes case directories under reference/goldens/<op>/<case>/.
  5. Verifies everything written loads with numpy as little-endian float64 C-order arrays
     and prints a summary table.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("SCANLAB_CACHE", str(Path.home() / ".cache" / "scanlab")))
VENV = CACHE / "goldens-venv"
PEERS = CACHE / "peers"

# Pinned environment. torch from PyPI on Linux x86_64 is the default (CUDA-enabled) wheel; it
# runs fine on a CPU-only machine. jax is installed with its CPU jaxlib.
PIP_PINS = [
    "torch==2.15.0",
    "jax[cpu]==0.10.2",
    "jaxlib==0.10.2",
    "numpy==2.4.6",
    "einops==0.8.2",
    # ejkernel's own runtime dependencies (the ejkernel wheel itself is installed from the
    # sha-checked file in the peer cache, see PEERS_PINNED).
    "beartype==0.23.1",
    "chex==0.1.92",
    "jaxtyping==0.3.11",
    "pydantic==2.14.4",
    "tqdm==4.70.1",
]

# name -> (version, artifact file name, sha256)
PEERS_PINNED = {
    "mamba-ssm": ("2.3.2.post1", "mamba_ssm-2.3.2.post1.tar.gz",
                  "104cc47e9101e5401a675fa2b784f2952b9b037f3b1dd83b5ac544394e95d028"),
    "lrnnx": ("1.0.0.post1", "lrnnx-1.0.0.post1.tar.gz",
              "11becc2b411046b14ebd54cf5455fee3ed0d96b3e1eab41ff75119607cc29555"),
    "ejkernel": ("0.0.80.3", "ejkernel-0.0.80.3-py3-none-any.whl",
                 "40292137621a094749f66492db852addd64a66e3eefecffadf61b9fe9ac2b9ce"),
}

OUT_ROOT = REPO / "reference" / "goldens"
OPS = ("selective_scan", "state_space_v1", "s7_scan", "s7_inner")


# --------------------------------------------------------------------------------------
# bootstrap (runs under any python3 >= 3.10)
# --------------------------------------------------------------------------------------
def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def _venv_python() -> Path:
    return VENV / "bin" / "python"


def _in_venv() -> bool:
    return Path(sys.prefix).resolve() == VENV.resolve()


def _fetch_peers(py: Path) -> None:
    """pip-download the peers' artifacts into PEERS and check their sha256."""
    PEERS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MAMBA_SKIP_CUDA_BUILD="TRUE", CAUSAL_CONV1D_SKIP_CUDA_BUILD="TRUE")
    for name, (ver, fname, sha) in PEERS_PINNED.items():
        dest = PEERS / fname
        if not dest.exists():
            if fname.endswith(".whl"):
                cmd = [py, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                       f"{name}=={ver}", "-d", PEERS]
            else:
                # sdist only; --no-build-isolation so pip prepares metadata with the venv's
                # torch instead of building numpy & co from source (and never compiles CUDA).
                cmd = [py, "-m", "pip", "download", "--no-deps", "--no-build-isolation",
                       "--no-binary", name, f"{name}=={ver}", "-d", PEERS]
            _run(cmd, env=env)
        got = _sha256(dest)
        if got != sha:
            raise SystemExit(f"sha256 mismatch for {dest}: {got} != {sha}")


def bootstrap() -> None:
    """Create/refresh the private venv, fetch the peers, then re-exec inside the venv."""
    py = _venv_python()
    if not py.exists():
        _run([sys.executable, "-m", "venv", VENV])
    stamp = VENV / ".scanlab-goldens-pins"
    want = "\n".join(PIP_PINS + [f"{k}=={v[0]}" for k, v in PEERS_PINNED.items()])
    if not stamp.exists() or stamp.read_text() != want:
        _run([py, "-m", "pip", "install", "-q", "--upgrade", "pip", "setuptools", "wheel"])
        _run([py, "-m", "pip", "install", "-q", *PIP_PINS])
        _fetch_peers(py)
        ej = PEERS / PEERS_PINNED["ejkernel"][1]
        _run([py, "-m", "pip", "install", "-q", ej, *PIP_PINS])
        stamp.write_text(want)
    else:
        _fetch_peers(py)
    os.execv(str(py), [str(py), str(Path(__file__).resolve()), *sys.argv[1:]])


def extract_sdists() -> dict[str, Path]:
    """Unpack the two sdists (once) and return their source roots."""
    roots = {}
    for name in ("mamba-ssm", "lrnnx"):
        ver, fname, _ = PEERS_PINNED[name]
        root = PEERS / "src" / fname[: -len(".tar.gz")]
        if not root.exists():
            (PEERS / "src").mkdir(parents=True, exist_ok=True)
            with tarfile.open(PEERS / fname) as tf:
                tf.extractall(PEERS / "src", filter="data")
        roots[name] = root
    return roots


# --------------------------------------------------------------------------------------
# everything below runs inside the venv
# --------------------------------------------------------------------------------------
class _ToFloat64(ast.NodeTransformer):
    """`.float()` -> `.double()`, `torch.float32` -> `torch.float64`."""

    def __init__(self):
        self.n_float_calls = 0
        self.n_float32 = 0

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "float" and not node.args and not node.keywords:
            f.attr = "double"
            self.n_float_calls += 1
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if (node.attr in ("float32", "float") and isinstance(node.value, ast.Name)
                and node.value.id == "torch"):
            node.attr = "float64"
            self.n_float32 += 1
        return node


def load_ref_functions(path: Path, names: list[str], ns: dict) -> dict:
    """Exec only the named top-level functions of `path` into `ns`, rewritten to float64."""
    tree = ast.parse(path.read_text(), filename=str(path))
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    missing = set(names) - {f.name for f in fns}
    if missing:
        raise SystemExit(f"{path}: functions not found: {sorted(missing)}")
    tr = _ToFloat64()
    mod = ast.fix_missing_locations(tr.visit(ast.Module(body=fns, type_ignores=[])))
    exec(compile(mod, f"{path} [float64 rewrite]", "exec"), ns)
    return {"float_calls_rewritten": tr.n_float_calls, "float32_rewritten": tr.n_float32}


def main_in_venv(args) -> None:
    import numpy as np
    import torch
    import torch.nn.functional as F
    from einops import rearrange, repeat

    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp

    import ejkernel
    from ejkernel.kernels._xla.state_space_v1 import state_space_v1 as ejk_ssm1_xla
    from ejkernel.kernels._xla.state_space_v1._xla_impl_fwd import _ssm1_fwd as ejk_ssm1_fwd
    from ejkernel.modules import state_space_v1 as ejk_ssm1_public

    torch.set_default_dtype(torch.float64)
    torch.use_deterministic_algorithms(True)

    versions = {
        "python": sys.version.split()[0], "torch": torch.__version__, "jax": jax.__version__,
        "numpy": np.__version__, "ejkernel": getattr(ejkernel, "__version__", "?"),
        **{k: v[0] for k, v in PEERS_PINNED.items()},
    }
    print("versions:", json.dumps(versions))

    roots = extract_sdists()
    ns = {"torch": torch, "F": F, "rearrange": rearrange, "repeat": repeat,
          "__name__": "scanlab_peer_refs"}
    mamba_src = roots["mamba-ssm"] / "mamba_ssm" / "ops" / "selective_scan_interface.py"
    lrnnx_src = roots["lrnnx"] / "lrnnx" / "ops" / "s7_scan.py"
    rw_m = load_ref_functions(mamba_src, ["selective_scan_ref"], ns)
    rw_l = load_ref_functions(lrnnx_src, ["s7_scan_ref", "s7_inner_ref"], ns)
    print("float64 rewrites: mamba", rw_m, "lrnnx", rw_l)
    assert rw_m["float_calls_rewritten"] > 0 and rw_l["float_calls_rewritten"] > 0
    assert rw_l["float32_rewritten"] > 0  # s7_scan_ref's torch.zeros(dtype=torch.float32)
    selective_scan_ref = ns["selective_scan_ref"]
    s7_scan_ref = ns["s7_scan_ref"]
    s7_inner_ref = ns["s7_inner_ref"]

    NOTE_MAMBA = (f"golden from mamba-ssm {versions['mamba-ssm']} "
                  "mamba_ssm.ops.selective_scan_interface.selective_scan_ref "
                  "(float64: .float() rewritten to .double()); grads by torch.autograd")
    NOTE_S7 = (f"golden from lrnnx {versions['lrnnx']} lrnnx.ops.s7_scan.s7_scan_ref "
               "(float64: .float()->.double(), torch.float32->torch.float64); grads by torch.autograd")
    NOTE_S7I = (f"golden from lrnnx {versions['lrnnx']} lrnnx.ops.s7_scan.s7_inner_ref "
                "(float64 rewrite, calls the rewritten s7_scan_ref); grads by torch.autograd")
    NOTE_EJK = (f"golden from ejkernel {versions['ejkernel']} "
                "ejkernel.kernels._xla.state_space_v1.state_space_v1 (XLA, jax_enable_x64); "
                "grads by jax.vjp (ejkernel's custom VJP)")

    F64 = np.dtype("<f8")
    summary = []
    checks = []

    def randn(rng, *shape, scale=1.0):
        x = rng.standard_normal(shape) * scale
        assert np.all(x != 0)
        return x

    def softplus_np(x):
        return np.log1p(np.exp(x))

    # ---------------------------------------------------------------- writing
    def write_case(op, name, opts, seed, note, inputs, cots, expected):
        d = OUT_ROOT / op / name
        if d.exists():
            shutil.rmtree(d)
        (d / "expected").mkdir(parents=True)
        meta = {"op": op, **opts, "seed": seed, "note": note}
        (d / "case.json").write_text(json.dumps(meta, indent=2) + "\n")
        for group, sub in ((inputs, d), (cots, d), (expected, d / "expected")):
            for k, v in group.items():
                a = np.ascontiguousarray(np.asarray(v), dtype=F64)
                assert a.dtype == F64 and np.all(np.isfinite(a)), (op, name, k)
                np.save(sub / f"{k}.npy", a)
        row = [f"{op}/{name}"]
        for k, v in expected.items():
            row.append(f"{k}={np.max(np.abs(v)):.3g}")
        summary.append(row)

    def torch_eval(call, inputs, cots):
        """Run a torch ref in float64; return (outputs dict, grads dict) via autograd."""
        tens = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in inputs.items()}
        outs = call(tens)
        for k, o in outs.items():
            assert o.dtype == torch.float64, f"output {k} is {o.dtype}, not float64"
        loss = 0
        for k, c in cots.items():
            loss = loss + (outs[k] * torch.tensor(c, dtype=torch.float64)).sum()
        grads = torch.autograd.grad(loss, list(tens.values()), allow_unused=True)
        g = {}
        for (k, t), gr in zip(tens.items(), grads):
            assert gr is not None, f"no gradient for {k}"
            assert gr.dtype == torch.float64
            g["d" + k] = gr.detach().numpy().copy()
        return {k: o.detach().numpy().copy() for k, o in outs.items()}, g, tens

    def gradcheck(call, tens, outnames):
        if args.no_gradcheck:
            return
        keys = list(tens)
        def f(*xs):
            outs = call(dict(zip(keys, xs)))
            return tuple(outs[k] for k in outnames)
        xs = tuple(t.detach().clone().requires_grad_(True) for t in tens.values())
        assert torch.autograd.gradcheck(f, xs, eps=1e-6, atol=1e-6, rtol=1e-5)

    # ---------------------------------------------------------------- selective_scan
    def ss_call(tens, softplus):
        out, last = selective_scan_ref(
            tens["u"], tens["delta"], tens["A"], tens["B"], tens["C"],
            D=tens.get("D"), z=tens.get("z"), delta_bias=tens.get("delta_bias"),
            delta_softplus=softplus, return_last_state=True)
        return {"out": out, "last_state": last}

    def make_ss(name, seed, b=2, d=4, n=3, L=7, Bk="var", Ck="var", G=2, D=False, z=False,
                bias=False, softplus=False, dlast=True, threshold=False):
        rng = np.random.default_rng(seed)
        inp = {"u": randn(rng, b, d, L)}
        if softplus:
            delta = randn(rng, b, d, L, scale=0.8) - 0.3
        else:
            delta = softplus_np(randn(rng, b, d, L, scale=0.8))
        inp["delta"] = delta
        inp["A"] = -np.exp(randn(rng, d, n, scale=0.5))

        def bc(kind):
            if kind == "var":
                return randn(rng, b, n, L)
            if kind == "group":
                assert d % G == 0
                return randn(rng, b, G, n, L)
            if kind == "tiv":
                return randn(rng, d, n)
            raise ValueError(kind)
        inp["B"] = bc(Bk)
        inp["C"] = bc(Ck)
        if D:
            inp["D"] = randn(rng, d)
        if z:
            inp["z"] = randn(rng, b, d, L)
        if bias:
            inp["delta_bias"] = randn(rng, d, scale=0.5)
        if threshold:
            # delta(+bias) with entries above mamba's softplus threshold (x > 20 keeps x),
            # some just below it, all at least 0.5 away from 20.
            bv = inp["delta_bias"][None, :, None] if bias else 0.0
            pre = inp["delta"] + bv
            r = rng.random((b, d, L))
            above = rng.uniform(20.5, 24.0, size=(b, d, L))
            below = rng.uniform(16.0, 19.5, size=(b, d, L))
            pre = np.where(r < 0.35, above, np.where(r < 0.55, below, pre))
            assert np.all(np.abs(pre - 20.0) >= 0.5)
            inp["delta"] = pre - bv
            inp["u"] = inp["u"] * 0.25
        cots = {"out": randn(rng, b, d, L)}
        if dlast:
            cots["last_state"] = randn(rng, b, d, n)
        call = lambda t: ss_call(t, softplus)
        outs, grads, tens = torch_eval(call, inp, cots)
        gradcheck(call, tens, ["out", "last_state"])
        cot_files = {"dout": cots["out"]}
        if dlast:
            cot_files["dlast_state"] = cots["last_state"]
        write_case("selective_scan", name, {"delta_softplus": bool(softplus)}, seed, NOTE_MAMBA,
                   inp, cot_files, {**outs, **grads})

    ss_cases = [
        dict(name="var_bc_plain", seed=101, d=4, n=3, L=7),
        dict(name="var_bc_full_softplus", seed=102, d=5, n=4, L=9, D=True, z=True, bias=True,
             softplus=True),
        dict(name="var_bc_D_z_nosoftplus", seed=103, d=6, n=3, L=5, D=True, z=True),
        dict(name="var_bc_bias_nosoftplus", seed=104, d=5, n=3, L=6, bias=True),
        dict(name="grouped_g2_full", seed=105, d=6, n=4, L=7, Bk="group", Ck="group", D=True,
             z=True, bias=True, softplus=True),
        dict(name="grouped_g2_plain", seed=106, d=4, n=3, L=9, Bk="group", Ck="group"),
        dict(name="tiv_bc_D_z_softplus", seed=107, d=5, n=3, L=7, Bk="tiv", Ck="tiv", D=True,
             z=True, softplus=True),
        dict(name="tiv_b_var_c", seed=108, d=4, n=4, L=6, Bk="tiv", Ck="var", D=True,
             bias=True, softplus=True),
        dict(name="var_b_tiv_c", seed=109, d=6, n=3, L=5, Bk="var", Ck="tiv", z=True),
        dict(name="grouped_b_tiv_c", seed=110, d=4, n=3, L=7, Bk="group", Ck="tiv", D=True,
             softplus=True),
        dict(name="softplus_threshold", seed=111, d=5, n=3, L=9, D=True, z=True, bias=True,
             softplus=True, threshold=True),
        dict(name="softplus_threshold_nobias", seed=112, d=4, n=4, L=7, Bk="tiv", Ck="var",
             softplus=True, threshold=True),
        dict(name="no_dlast_state", seed=113, d=5, n=3, L=7, D=True, z=True, bias=True,
             softplus=True, dlast=False),
        dict(name="seqlen1", seed=114, b=2, d=3, n=2, L=1, D=True, z=True, softplus=True),
        dict(name="batch1_dstate1", seed=115, b=1, d=3, n=1, L=5, D=True),
    ]

    # ---------------------------------------------------------------- state_space_v1
    ACT = {
        "silu": jax.nn.silu,
        "identity": lambda x: x,
        "gelu_tanh": lambda x: jax.nn.gelu(x, approximate=True),
        "gelu_erf": lambda x: jax.nn.gelu(x, approximate=False),
    }

    def make_ssv1(name, seed, b=2, L=7, d=4, n=3, gate=False, init=False, conv=False,
                  act="silu", dfinal=True, d_conv=4):
        rng = np.random.default_rng(seed)
        inp = {
            "hidden_states": randn(rng, b, L, d),
            "A": -np.exp(randn(rng, d, n, scale=0.5)),
            "B": randn(rng, b, L, n),
            "C": randn(rng, b, L, n),
            "D": randn(rng, d),
            "dt": softplus_np(randn(rng, b, L, d, scale=0.8)),
        }
        if gate:
            inp["gate"] = randn(rng, b, L, d)
        if init:
            inp["initial_state"] = randn(rng, b, d, n)
        if conv:
            inp["conv_state"] = randn(rng, b, d, d_conv)
        dout = randn(rng, b, L, d)
        dfs = randn(rng, b, d, n) if dfinal else np.zeros((b, d, n))
        keys = list(inp)
        act_fn = ACT[act]

        def f(*xs):
            kw = dict(zip(keys, xs))
            out, fs, cs = ejk_ssm1_xla(
                kw["hidden_states"], kw["A"], kw["B"], kw["C"], kw["D"], kw["dt"],
                gate=kw.get("gate"), initial_state=kw.get("initial_state"),
                conv_state=kw.get("conv_state"), act_fn=act_fn)
            return (out, fs) + ((cs,) if conv else ())

        def f_plain(*xs):
            # ejkernel's own forward (_ssm1_fwd) differentiated by plain JAX autodiff, i.e.
            # without ejkernel's hand-written custom VJP: cross-check of that VJP.
            kw = dict(zip(keys, xs))
            out, _, fs = ejk_ssm1_fwd(kw["hidden_states"], kw["A"], kw["B"], kw["C"], kw["D"],
                                      kw["dt"], kw.get("initial_state"))
            if "gate" in kw:
                out = out * act_fn(kw["gate"])
            return (out, fs) + ((kw["conv_state"],) if conv else ())

        xs = [jnp.asarray(inp[k], dtype=jnp.float64) for k in keys]
        prim, vjp = jax.vjp(f, *xs)
        cot = (jnp.asarray(dout), jnp.asarray(dfs)) + ((jnp.zeros_like(prim[2]),) if conv else ())
        grads = vjp(cot)
        for p in list(prim) + list(grads):
            assert p.dtype == jnp.float64, p.dtype
        # public API, platform="xla", must give the same forward
        pub = ejk_ssm1_public(*xs[:6], gate=xs[keys.index("gate")] if gate else None,
                              initial_state=xs[keys.index("initial_state")] if init else None,
                              conv_state=xs[keys.index("conv_state")] if conv else None,
                              act_fn=act_fn, platform="xla")
        assert float(jnp.max(jnp.abs(pub[0] - prim[0]))) == 0.0
        assert float(jnp.max(jnp.abs(pub[1] - prim[1]))) == 0.0
        prim2, vjp2 = jax.vjp(f_plain, *xs)
        grads2 = vjp2(cot)
        err = max(float(jnp.max(jnp.abs(a - b_)) / (1 + jnp.max(jnp.abs(b_))))
                  for a, b_ in zip(list(prim) + list(grads), list(prim2) + list(grads2)))
        checks.append((f"state_space_v1/{name}: ejkernel custom VJP vs plain autodiff of _ssm1_fwd",
                       err))
        assert err < 1e-12, err
        expected = {"out": np.asarray(prim[0]), "final_state": np.asarray(prim[1])}
        if conv:
            expected["conv_state"] = np.asarray(prim[2])
            assert np.array_equal(expected["conv_state"], inp["conv_state"])
        for k, g in zip(keys, grads):
            expected["d" + k] = np.asarray(g)
        if conv:
            assert not np.any(expected["dconv_state"])
        cot_files = {"dout": dout}
        if dfinal:
            cot_files["dfinal_state"] = dfs
        # act_fn only matters (and scanlab only accepts it) when there is a gate tensor
        opts = {"act_fn": act} if gate else {}
        write_case("state_space_v1", name, opts, seed, NOTE_EJK, inp, cot_files, expected)

    ssv1_cases = [
        dict(name="plain", seed=201, d=4, n=3, L=7),
        dict(name="gate_silu_init", seed=202, d=5, n=4, L=9, gate=True, init=True, act="silu"),
        dict(name="gate_identity", seed=203, d=4, n=3, L=6, gate=True, act="identity"),
        dict(name="gate_gelu_tanh_init_conv", seed=204, d=6, n=3, L=7, gate=True, init=True,
             conv=True, act="gelu_tanh"),
        dict(name="gate_gelu_erf_conv", seed=205, d=5, n=3, L=5, gate=True, conv=True,
             act="gelu_erf"),
        dict(name="gate_identity_init", seed=206, d=4, n=4, L=5, gate=True, init=True,
             act="identity"),
        dict(name="gate_gelu_erf_init", seed=207, d=6, n=3, L=8, gate=True, init=True,
             act="gelu_erf"),
        dict(name="gate_gelu_tanh", seed=208, d=4, n=3, L=9, gate=True, act="gelu_tanh"),
        dict(name="init_nogate_conv", seed=209, d=5, n=3, L=7, init=True, conv=True),
        dict(name="seqlen1_init_gate", seed=210, d=4, n=3, L=1, gate=True, init=True,
             act="silu"),
        dict(name="seqlen1_noinit", seed=211, d=3, n=2, L=1),
        dict(name="no_dfinal_state", seed=212, d=5, n=3, L=7, gate=True, init=True,
             act="gelu_erf", dfinal=False),
    ]

    # ---------------------------------------------------------------- s7_scan
    CRIT = 1.0 / np.sqrt(2.0)

    def s7_A(rng, shape, regime):
        sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
        if regime == "normal":
            return randn(rng, *shape)
        if regime == "crit":  # A^2 + 0.5 ~= 1  ->  A_bar ~= 0
            eps = rng.uniform(1e-3, 2e-2, size=shape) * np.where(rng.random(shape) < 0.5, -1, 1)
            return sign * (CRIT + eps)
        if regime == "large":  # A_bar -> 1
            return sign * rng.uniform(5.0, 50.0, size=shape)
        if regime == "small":  # A_bar -> -1
            return sign * rng.uniform(1e-3, 5e-2, size=shape)
        if regime == "mixed":
            parts = [s7_A(rng, shape, r) for r in ("normal", "crit", "large", "small")]
            pick = rng.integers(0, 4, size=shape)
            return np.choose(pick, parts)
        raise ValueError(regime)

    def s7_call(tens):
        out, last = s7_scan_ref(tens["u"], tens["A"], tens["B"], tens["C"],
                                bias=tens.get("bias"), return_last_state=True)
        return {"out": out, "last_state": last}

    def make_s7(name, seed, b=2, H=4, n=3, L=7, bias=False, regime="normal", dlast=True):
        rng = np.random.default_rng(seed)
        inp = {
            "u": randn(rng, b, H, L),
            "A": s7_A(rng, (b, n, L), regime),
            "B": randn(rng, b, n, H, L),
            "C": randn(rng, b, H, n, L),
        }
        if bias:
            inp["bias"] = randn(rng, b, n, L)
        cots = {"out": randn(rng, b, H, L)}
        if dlast:
            cots["last_state"] = randn(rng, b, n)
        outs, grads, tens = torch_eval(s7_call, inp, cots)
        gradcheck(s7_call, tens, ["out", "last_state"])
        cot_files = {"dout": cots["out"]}
        if dlast:
            cot_files["dlast_state"] = cots["last_state"]
        write_case("s7_scan", name, {}, seed, NOTE_S7, inp, cot_files, {**outs, **grads})

    s7_cases = [
        dict(name="plain", seed=301, H=4, n=3, L=7),
        dict(name="bias", seed=302, H=5, n=4, L=9, bias=True),
        dict(name="A_near_crit", seed=303, H=3, n=4, L=7, bias=True, regime="crit"),
        dict(name="A_large", seed=304, H=4, n=3, L=9, regime="large"),
        dict(name="A_small", seed=305, H=5, n=3, L=6, bias=True, regime="small"),
        dict(name="A_mixed", seed=306, H=5, n=4, L=9, bias=True, regime="mixed"),
        dict(name="H1", seed=307, H=1, n=3, L=7, bias=True, regime="mixed"),
        dict(name="N1", seed=308, H=4, n=1, L=8, bias=True),
        dict(name="L1", seed=309, H=3, n=3, L=1, bias=True),
        dict(name="no_dlast_state", seed=310, H=4, n=3, L=7, bias=True, dlast=False),
        dict(name="batch1_H1_N1", seed=311, b=1, H=1, n=1, L=5, bias=True, regime="mixed"),
    ]

    # ---------------------------------------------------------------- s7_inner
    def s7_inner_spec(inp):
        """Independent numpy version of the task-spec wording, to check the ref against it."""
        from math import erf
        h = inp["hidden_states"]; Win = inp["in_proj_weight"]; Wx = inp["x_proj_weight"]
        Wg = inp["gate_proj_weight"]; bp = inp["base_params"]
        b, L, Dm = h.shape; N = bp.shape[0]
        x = h @ Win.T                              # (b,L,Dm)
        xd = x @ Wx.T                              # (b,L,N+2DmN+Dm+N)
        o = np.cumsum([0, N, Dm * N, Dm * N, Dm, N])
        A = xd[..., o[0]:o[1]] + bp                # (b,L,N)
        Bf = xd[..., o[1]:o[2]].reshape(b, L, Dm, N)   # flat index h*N + n
        Cf = xd[..., o[2]:o[3]].reshape(b, L, Dm, N)
        Dtv = xd[..., o[3]:o[4]]                   # (b,L,Dm)
        bias = xd[..., o[4]:o[5]]                  # (b,L,N)
        Abar = 1.0 - 1.0 / (A * A + 0.5)
        s = np.zeros((b, N)); y = np.zeros((b, L, Dm))
        for t in range(L):
            s = Abar[:, t] * s + np.einsum("bhn,bh->bn", Bf[:, t], x[:, t]) + bias[:, t]
            y[:, t] = np.einsum("bhn,bn->bh", Cf[:, t], s)
        y = y + Dtv * x
        gelu = np.vectorize(lambda v: 0.5 * v * (1.0 + erf(v / np.sqrt(2.0))))(y)
        g = 1.0 / (1.0 + np.exp(-(gelu @ Wg.T)))
        return g * y + h

    def make_s7i(name, seed, b=2, L=7, Dm=4, n=3):
        rng = np.random.default_rng(seed)
        P = n + 2 * Dm * n + Dm + n
        inp = {
            "hidden_states": randn(rng, b, L, Dm),
            "in_proj_weight": randn(rng, Dm, Dm, scale=1.0 / np.sqrt(Dm)),
            "x_proj_weight": randn(rng, P, Dm, scale=0.5 / np.sqrt(Dm)),
            "gate_proj_weight": randn(rng, Dm, Dm, scale=1.0 / np.sqrt(Dm)),
            "base_params": randn(rng, n),
        }
        cots = {"out": randn(rng, b, L, Dm)}

        def call(t):
            return {"out": s7_inner_ref(t["hidden_states"], t["in_proj_weight"],
                                        t["x_proj_weight"], t["gate_proj_weight"], n,
                                        t["base_params"])}
        outs, grads, tens = torch_eval(call, inp, cots)
        gradcheck(call, tens, ["out"])
        spec = s7_inner_spec(inp)
        err = float(np.max(np.abs(spec - outs["out"])))
        checks.append((f"s7_inner/{name}: lrnnx s7_inner_ref vs task-spec wording (numpy)", err))
        assert err < 1e-12, err
        write_case("s7_inner", name, {}, seed, NOTE_S7I, inp, {"dout": cots["out"]},
                   {**outs, **grads})

    s7i_cases = [
        dict(name="basic", seed=401, b=2, L=7, Dm=4, n=3),
        dict(name="odd", seed=402, b=2, L=5, Dm=5, n=2),
        dict(name="dm3_n4", seed=403, b=2, L=6, Dm=3, n=4),
        dict(name="dm1", seed=408, b=2, L=7, Dm=1, n=3),
        dict(name="seqlen1_n1", seed=405, b=1, L=1, Dm=3, n=1),
    ]

    # ---------------------------------------------------------------- cross-peer check
    def cross_check_mamba_ejkernel(seed=901, b=2, L=7, d=5, n=3):
        """mamba selective_scan_ref (per-step B/C, D, z, no softplus) == ejkernel SSM1 with
        gate + silu, after transposing layouts; forwards and gradients."""
        rng = np.random.default_rng(seed)
        hs = randn(rng, b, L, d); A = -np.exp(randn(rng, d, n, scale=0.5))
        B = randn(rng, b, L, n); C = randn(rng, b, L, n); Dv = randn(rng, d)
        dt = softplus_np(randn(rng, b, L, d)); gate = randn(rng, b, L, d)
        dout = randn(rng, b, L, d); dfs = randn(rng, b, d, n)
        tr = lambda x: np.ascontiguousarray(np.swapaxes(x, 1, 2))
        inp_m = {"u": tr(hs), "delta": tr(dt), "A": A, "B": tr(B), "C": tr(C), "D": Dv,
                 "z": tr(gate)}
        outs_m, g_m, _ = torch_eval(lambda t: ss_call(t, False), inp_m,
                                    {"out": tr(dout), "last_state": dfs})
        xs = [jnp.asarray(v) for v in (hs, A, B, C, Dv, dt, gate)]
        def f(h, A_, B_, C_, D_, dt_, g_):
            o, s, _ = ejk_ssm1_xla(h, A_, B_, C_, D_, dt_, gate=g_, act_fn=jax.nn.silu)
            return o, s
        (o, s), vjp = jax.vjp(f, *xs)
        gj = vjp((jnp.asarray(dout), jnp.asarray(dfs)))
        pairs = [(tr(outs_m["out"]), o), (outs_m["last_state"], s),
                 (tr(g_m["du"]), gj[0]), (g_m["dA"], gj[1]), (tr(g_m["dB"]), gj[2]),
                 (tr(g_m["dC"]), gj[3]), (g_m["dD"], gj[4]), (tr(g_m["ddelta"]), gj[5]),
                 (tr(g_m["dz"]), gj[6])]
        err = max(float(np.max(np.abs(np.asarray(a) - np.asarray(c))) / (1 + np.max(np.abs(a))))
                  for a, c in pairs)
        checks.append(("cross-peer: mamba selective_scan_ref vs ejkernel SSM1 (fwd+grads)", err))
        assert err < 1e-12, err

    # ---------------------------------------------------------------- run
    ops = args.ops or list(OPS)
    for op in ops:
        if (OUT_ROOT / op).exists():
            shutil.rmtree(OUT_ROOT / op)
    makers = {"selective_scan": (make_ss, ss_cases), "state_space_v1": (make_ssv1, ssv1_cases),
              "s7_scan": (make_s7, s7_cases), "s7_inner": (make_s7i, s7i_cases)}
    for op in ops:
        mk, cases = makers[op]
        for c in cases:
            mk(**c)
    cross_check_mamba_ejkernel()

    # ---------------------------------------------------------------- verify + summary
    n_files = 0
    total = 0
    for p in sorted(OUT_ROOT.rglob("*")):
        if p.is_file():
            total += p.stat().st_size
        if p.suffix == ".npy":
            a = np.load(p, allow_pickle=False)
            assert a.dtype == F64 and a.flags.c_contiguous, p
            n_files += 1
        elif p.name == "case.json":
            meta = json.loads(p.read_text())
            assert meta["op"] == p.parent.parent.name
    print()
    print(f"{'case':44s} max|value| of each output / gradient")
    for row in summary:
        print(f"{row[0]:44s} " + " ".join(row[1:]))
    print()
    for what, err in checks:
        print(f"check {err:9.2e}  {what}")
    print(f"\n{len(summary)} cases, {n_files} .npy files (all <f8, C order), "
          f"{total / 1024:.1f} KiB under {OUT_ROOT.relative_to(REPO)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", nargs="*", choices=OPS, help="only these ops (default: all)")
    ap.add_argument("--no-gradcheck", action="store_true",
                    help="skip torch.autograd.gradcheck of the torch refs")
    ap.add_argument("--no-bootstrap", action="store_true",
                    help="run in the current interpreter (it must already have the deps)")
    args = ap.parse_args()
    if not args.no_bootstrap and not _in_venv():
        bootstrap()  # re-execs; does not return
    main_in_venv(args)


if __name__ == "__main__":
    main()
