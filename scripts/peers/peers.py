"""The peers scanlab is measured against, in one place: where their sources live (.peers/, fetched
by scripts/peers/fetch.sh and never committed), how the float32 parts of their CUDA extensions are
built and cached, how their Python entry points are imported without their package __init__ (which
pulls in half of each project), and how each op is called on scanlab's case conventions.

Peers (name: op(s), entry point):
  mamba_ssm       selective_scan   mamba_ssm.ops.selective_scan_interface.selective_scan_fn (CUDA)
  mamba_ssm_ref   selective_scan   ...selective_scan_ref (PyTorch loop; small shapes only)
  lrnnx           s7_scan, s7_inner  lrnnx.ops.s7_scan.s7_scan_fn / s7_inner_fn (CUDA)
  lrnnx_ref       s7_scan, s7_inner  lrnnx.ops.s7_scan.s7_scan_ref / s7_inner_ref (PyTorch)
  ejkernel_xla    state_space_v1   ejkernel.kernels._xla.state_space_v1.state_space_v1 (JAX/XLA)

torch, jax and the peers are imported lazily, inside the functions that need them, so this module
(and its tests) import on a machine with neither.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PEERS_DIR = Path(os.environ.get("SCANLAB_PEERS_DIR", REPO / ".peers"))
SRC_DIR = PEERS_DIR / "src"
BUILT_DIR = PEERS_DIR / "built"
WHEELS_DIR = PEERS_DIR / "wheels"

sys.path.insert(0, str(REPO / "reports"))
import scanlab_report as sr  # noqa: E402


class PeerError(RuntimeError):
    """A peer cannot run here or cannot run this case; the message says why and what to do."""


class Unsupported(PeerError):
    """The peer has no equivalent of this case (an option it lacks); the case is skipped."""


# ------------------------------------------------------------------------------------- pins
def pinned_peers() -> dict[str, tuple[str, str, str]]:
    """name -> (version, file name, sha256), read from scripts/goldens/make_goldens.py's
    PEERS_PINNED so the goldens and the runners use the same peer releases."""
    tree = ast.parse((REPO / "scripts" / "goldens" / "make_goldens.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "PEERS_PINNED" for t in node.targets):
            return ast.literal_eval(node.value)
    raise PeerError("scripts/goldens/make_goldens.py has no PEERS_PINNED")


def source_root(name: str) -> Path:
    version, fname, _ = pinned_peers()[name]
    root = SRC_DIR / fname[: -len(".tar.gz")]
    if not root.is_dir():
        raise PeerError(f"{root} is missing: run scripts/peers/fetch.sh here and carry .peers to the GPU machine")
    return root


# ------------------------------------------------------------------------------------- float32-only builds
MAMBA_FP32_MACROS = r'''
// scanlab peer build: float32 inputs and real float32 weights only (the instantiations timed).
#undef DISPATCH_ITYPE_FLOAT_AND_HALF_AND_BF16
#define DISPATCH_ITYPE_FLOAT_AND_HALF_AND_BF16(ITYPE, NAME, ...)                                  \
    if (ITYPE == at::ScalarType::Float) { using input_t = float; __VA_ARGS__(); }                 \
    else { AT_ERROR(#NAME, ": this scanlab peer build has float32 only, not '", toString(ITYPE), "'"); }
#undef DISPATCH_WTYPE_FLOAT_AND_COMPLEX
#define DISPATCH_WTYPE_FLOAT_AND_COMPLEX(WTYPE, NAME, ...)                                        \
    if (WTYPE == at::ScalarType::Float) { using weight_t = float; __VA_ARGS__(); }                \
    else { AT_ERROR(#NAME, ": this scanlab peer build has real float32 weights only, not '", toString(WTYPE), "'"); }
'''


def patch_mamba_binding(text: str) -> str:
    """selective_scan.cpp dispatching to the float32 real instantiations only."""
    anchor = "template<typename input_t, typename weight_t>\nvoid selective_scan_fwd_cuda"
    if anchor not in text or text.count("DISPATCH_WTYPE_FLOAT_AND_COMPLEX(A.scalar_type()") != 2:
        raise PeerError("mamba_ssm's selective_scan.cpp is not the layout this patch expects (upstream changed?)")
    return text.replace(anchor, MAMBA_FP32_MACROS + "\n" + anchor, 1)


def patch_mamba_forward(text: str) -> str:
    """selective_scan_fwd_fp32.cu without the complex instantiation (half the compile time)."""
    line = "template void selective_scan_fwd_cuda<float, complex_t>(SSMParamsBase &params, cudaStream_t stream);"
    if line not in text:
        raise PeerError("mamba_ssm's selective_scan_fwd_fp32.cu is not the layout this patch expects")
    return text.replace(line, "// " + line + "  (not built: scanlab times real float32 only)")


_LRNNX_OTHER_METHODS = re.compile(
    r"\} else if \(params\.d_method == DiscretizationMethod::RGLRU\) \{\n"
    r"\s*selective_scan_(fwd|bwd)_cuda<float, float, DiscretizationMethod::RGLRU>\(params, stream\);\n"
    r"\s*\} else \{\n\s*DISPATCH_WTYPE_FLOAT_AND_COMPLEX.*?\}\);\n\s*\}\);\n\s*\}", re.S)


def patch_lrnnx_binding(text: str) -> str:
    """selective_scan_cpu.cpp calling the S7 instantiations only."""
    patched, count = _LRNNX_OTHER_METHODS.subn(
        '} else {\n        AT_ERROR("this scanlab peer build has the s7 kernels only");\n    }', text)
    if count != 2:
        raise PeerError(f"lrnnx's selective_scan_cpu.cpp is not the layout this patch expects ({count} of 2 "
                        "dispatch blocks found; upstream changed?)")
    left = set(re.findall(r"selective_scan_(?:fwd|bwd)_cuda<[^>]*>\(params", patched))
    if not left or any("S7" not in t for t in left):
        raise PeerError(f"lrnnx patch left other instantiations referenced: {sorted(left)}")
    return patched


def extension_specs() -> dict[str, dict]:
    """Per peer extension: module name, sources (with their patches), flags (the peer's own
    setup.py flags, less -lineinfo and ptxas -v, for sm_90 only)."""
    mamba = "mamba-ssm"
    return {
        "mamba_ssm": {
            "module": "scanlab_peer_mamba_selective_scan",
            "package": mamba,
            "dir": "csrc/selective_scan",
            "sources": {"selective_scan.cpp": patch_mamba_binding, "selective_scan_fwd_fp32.cu": patch_mamba_forward,
                        "selective_scan_bwd_fp32_real.cu": None},
            "cflags": ["-O3", "-std=c++17"],
            "cuda_cflags": ["-O3", "-std=c++17", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
                            "-U__CUDA_NO_BFLOAT16_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
                            "-U__CUDA_NO_BFLOAT162_OPERATORS__", "-U__CUDA_NO_BFLOAT162_CONVERSIONS__",
                            "--expt-relaxed-constexpr", "--expt-extended-lambda", "--use_fast_math"],
        },
        "lrnnx": {
            "module": "scanlab_peer_lrnnx_s7",
            "package": "lrnnx",
            "dir": "csrc/selective_scan",
            "sources": {"bindings.cpp": None, "selective_scan_cpu.cpp": patch_lrnnx_binding,
                        "forward_kernels/selective_scan_fp32_real_s7.cu": None,
                        "backward_kernels/selective_scan_fp32_real_s7.cu": None},
            "parent_files": ["common.h", "reverse_scan.cuh"],
            "cflags": ["-O3", "-std=c++17", "-funroll-loops"],
            "cuda_cflags": ["-O2", "-std=c++17", "--use_fast_math"],
        },
    }


def staged_sources(peer: str) -> tuple[Path, list[Path], str]:
    """Copies the extension's source directory to .peers/stage/<peer>, applies the patches, and
    returns (stage dir, sources to compile, key = hash of every staged file and the flags)."""
    spec = extension_specs()[peer]
    root = source_root(spec["package"]) / spec["dir"]
    # .peers/stage/<peer>/<dir's last part>/: the files the sources include from the directory above
    # theirs ("../common.h" in lrnnx) go to .peers/stage/<peer>/, where those includes find them.
    stage_root = PEERS_DIR / "stage" / peer
    stage = stage_root / Path(spec["dir"]).name
    if stage_root.exists():
        shutil.rmtree(stage_root)
    shutil.copytree(root, stage)
    for name in spec.get("parent_files", []):
        shutil.copy2(root.parent / name, stage_root / name)
    h = hashlib.sha256(json.dumps([spec["cflags"], spec["cuda_cflags"], spec["module"]]).encode())
    sources = []
    for rel, patch in spec["sources"].items():
        path = stage / rel
        if patch is not None:
            path.write_text(patch(path.read_text()))
        if "/" in rel:
            # torch names each object after its source's base name, and lrnnx's forward and backward
            # kernels share one: compile each through a uniquely named wrapper at the top, whose
            # include keeps the kernel's own relative includes working.
            wrapper = stage / rel.replace("/", "__")
            wrapper.write_text(f'#include "{rel}"\n')
            path = wrapper
        sources.append(path)
    for path in sorted(stage_root.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(stage_root)).encode())
            h.update(path.read_bytes())
    return stage, sources, h.hexdigest()[:16]


def toolchain_key() -> str:
    import torch
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    try:
        version = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise PeerError(f"nvcc not usable ({e}): the peer extensions are built on the GPU machine") from None
    return hashlib.sha256(f"{torch.__version__} {torch.version.cuda} {version}".encode()).hexdigest()[:8]


def built_path(peer: str) -> Path:
    _, _, key = staged_sources(peer)
    return BUILT_DIR / f"{extension_specs()[peer]['module']}-{key}-{toolchain_key()}.so"


def build_extension(peer: str, verbose: bool = True) -> Path:
    """Builds the float32 extension once; later calls (and later machines, when .peers/built is
    carried) find it by its key."""
    target = built_path(peer)
    if target.is_file():
        return target
    import torch.utils.cpp_extension as ext
    spec = extension_specs()[peer]
    stage, sources, _ = staged_sources(peer)
    build_dir = PEERS_DIR / "build" / peer
    build_dir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 4))
    module = ext.load(name=spec["module"], sources=[str(s) for s in sources], extra_cflags=spec["cflags"],
                      extra_cuda_cflags=spec["cuda_cflags"], extra_include_paths=[str(stage)],
                      build_directory=str(build_dir), verbose=verbose)
    BUILT_DIR.mkdir(parents=True, exist_ok=True)
    shutil.copy2(module.__file__, target)
    return target


def load_extension(peer: str) -> types.ModuleType:
    path = built_path(peer)
    if not path.is_file():
        raise PeerError(f"{path.name} is not built: run python3 scripts/peers/build_peers.py {peer} on the GPU "
                        "machine (and carry .peers/built afterwards)")
    import torch  # noqa: F401  (the extension links against torch's libraries)
    name = extension_specs()[peer]["module"]
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def import_without_init(package: str, root: Path, module: str, extension: types.ModuleType | None = None):
    """Imports package.module from the peer's source tree with stub packages for the package and
    every parent of the module (their __init__.py files import models, layers, other extensions
    and optional dependencies that scanlab never calls). The module's `import selective_scan_cuda`
    gets the float32 extension built above."""
    parts = [package] + module.split(".")[:-1]
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        existing = sys.modules.get(name)
        if existing is not None and getattr(existing, "__scanlab_stub__", False):
            continue
        stub = types.ModuleType(name)
        stub.__path__ = [str(root.joinpath(*parts[:depth]))]
        stub.__scanlab_stub__ = True
        sys.modules[name] = stub
    if extension is not None:
        sys.modules["selective_scan_cuda"] = extension
    return importlib.import_module(f"{package}.{module}")


# ------------------------------------------------------------------------------------- ops
PEER_OPS = {"mamba_ssm": ("selective_scan",), "mamba_ssm_ref": ("selective_scan",),
            "lrnnx": ("s7_scan", "s7_inner"), "lrnnx_ref": ("s7_scan", "s7_inner"),
            "ejkernel_xla": ("state_space_v1",)}
PEER_INFO = {
    "mamba_ssm": {"package": "mamba-ssm", "entry_point": "mamba_ssm.ops.selective_scan_interface.selective_scan_fn",
                  "build": "float32 real instantiations only, sm_90, the package's own nvcc flags"},
    "mamba_ssm_ref": {"package": "mamba-ssm", "entry_point": "mamba_ssm.ops.selective_scan_interface.selective_scan_ref"},
    "lrnnx": {"package": "lrnnx", "entry_point": "lrnnx.ops.s7_scan.s7_scan_fn / s7_inner_fn",
              "build": "S7 float32 instantiations only, sm_90, the package's own nvcc flags"},
    "lrnnx_ref": {"package": "lrnnx", "entry_point": "lrnnx.ops.s7_scan.s7_scan_ref / s7_inner_ref"},
    "ejkernel_xla": {"package": "ejkernel", "entry_point": "ejkernel.kernels._xla.state_space_v1.state_space_v1"},
}


def check_supported(peer: str, op: str, options: dict) -> None:
    """Raises Unsupported when the peer has no equivalent of the case's options."""
    if op not in PEER_OPS.get(peer, ()):
        raise Unsupported(f"{peer} has no {op}")
    if peer.startswith("mamba_ssm"):
        if options.get("initial_state"):
            raise Unsupported("mamba_ssm's selective_scan_fn takes no initial state")
        if options.get("act_fn", "silu") != "silu":
            raise Unsupported("mamba_ssm gates with silu only")
    if peer.startswith("lrnnx") and op == "s7_scan" and options.get("initial_state"):
        raise Unsupported("lrnnx's s7_scan_fn takes no initial state")


# Input names per op, in the peer's call order, and which get gradients.
def _ranges(op: str, shape: dict, options: dict) -> dict[str, tuple[float, float]]:
    """The value ranges of benchmarks/<op>_bench.cpp, so peers are timed on the same kind of data."""
    if op == "selective_scan":
        soft = options.get("softplus", False)
        return {"u": (-1, 1), "delta": (-1, 1) if soft else (1e-3, 0.1), "delta_bias": (-6, -2) if soft else (0, 0.01),
                "A": (-16, -1), "B": (-1, 1), "C": (-1, 1), "D": (-1, 1), "z": (-3, 3), "initial_state": (-1, 1),
                "dout": (-1, 1)}
    if op == "state_space_v1":
        return {"hidden_states": (-1, 1), "dt": (1e-3, 0.1), "A": (-16, -1), "B": (-1, 1), "C": (-1, 1),
                "D": (-1, 1), "gate": (-3, 3), "initial_state": (-1, 1), "dout": (-1, 1)}
    if op == "s7_scan":
        return {"u": (-1, 1), "A": (-2, 2), "bias": (-0.1, 0.1), "B": (-1, 1), "C": (-1, 1), "initial_state": (-1, 1),
                "dout": (-1, 1)}
    if op == "s7_inner":
        w = 1.0 / shape["dim"] ** 0.5
        return {"hidden_states": (-1, 1), "in_proj_weight": (-w, w), "x_proj_weight": (-w, w),
                "gate_proj_weight": (-w, w), "base_params": (-1, 1), "dout": (-1, 1)}
    raise PeerError(f"unknown op {op}")


def input_shapes(op: str, shape: dict, options: dict) -> dict[str, tuple[int, ...]]:
    """The op's input tensors (names and shapes as in kernels/problem/<op>.hpp) for a case."""
    s = shape
    if op == "selective_scan":
        b, d, n, l, g = s["batch"], s["dim"], s["dstate"], s["seqlen"], s.get("groups", 1)
        bc = (b, n, l) if g == 1 else (b, g, n, l)
        out = {"u": (b, d, l), "delta": (b, d, l), "A": (d, n), "B": bc, "C": bc}
        if options.get("D"):
            out["D"] = (d,)
        if options.get("z"):
            out["z"] = (b, d, l)
        if options.get("delta_bias"):
            out["delta_bias"] = (d,)
        if options.get("initial_state"):
            out["initial_state"] = (b, d, n)
        out["dout"] = (b, d, l)
        return out
    if op == "state_space_v1":
        b, d, n, l = s["batch"], s["dim"], s["dstate"], s["seqlen"]
        out = {"hidden_states": (b, l, d), "A": (d, n), "B": (b, l, n), "C": (b, l, n), "D": (d,), "dt": (b, l, d)}
        if options.get("gate"):
            out["gate"] = (b, l, d)
        if options.get("initial_state"):
            out["initial_state"] = (b, d, n)
        out["dout"] = (b, l, d)
        return out
    if op == "s7_scan":
        b, h, n, l = s["batch"], s["dim"], s["dstate"], s["seqlen"]
        out = {"u": (b, h, l), "A": (b, n, l), "B": (b, n, h, l), "C": (b, h, n, l)}
        if options.get("bias"):
            out["bias"] = (b, n, l)
        if options.get("initial_state"):
            out["initial_state"] = (b, n)
        out["dout"] = (b, h, l)
        return out
    if op == "s7_inner":
        b, l, dm, n = s["batch"], s["seqlen"], s["dim"], s["dstate"]
        r = 2 * n + 2 * dm * n + dm
        return {"hidden_states": (b, l, dm), "in_proj_weight": (dm, dm), "x_proj_weight": (r, dm),
                "gate_proj_weight": (dm, dm), "base_params": (n,), "dout": (b, l, dm)}
    raise PeerError(f"unknown op {op}")


def tensor_bytes(op: str, shape: dict, options: dict) -> int:
    total = 0
    for dims in input_shapes(op, shape, options).values():
        n = 1
        for d in dims:
            n *= d
        total += 4 * n
    return total


def random_inputs(op: str, shape: dict, options: dict, seed: int, device: str = "cuda") -> dict:
    """float32 torch tensors in the op's ranges (never zeros), on the device."""
    import torch
    g = torch.Generator(device="cpu").manual_seed(seed)
    ranges = _ranges(op, shape, options)
    out = {}
    for name, dims in input_shapes(op, shape, options).items():
        lo, hi = ranges[name]
        t = torch.rand(dims, generator=g, dtype=torch.float32) * (hi - lo) + lo
        out[name] = t.to(device)
    return out


class PeerCall:
    """One case on one peer: forward(inputs) -> outputs; forward_backward(inputs) -> outputs and
    gradients, named as scanlab names them (out, last_state, du, ddelta, ...)."""

    def __init__(self, peer: str, op: str, shape: dict, options: dict):
        check_supported(peer, op, options)
        self.peer, self.op, self.shape, self.options = peer, op, shape, options
        self.fn = _entry_point(peer, op)

    def grad_names(self, inputs: dict) -> list[str]:
        return [k for k in inputs if k != "dout"]


_ENTRY_CACHE: dict = {}


def _entry_point(peer: str, op: str):
    key = (peer, op)
    if key in _ENTRY_CACHE:
        return _ENTRY_CACHE[key]
    if peer in ("mamba_ssm", "mamba_ssm_ref"):
        ext = load_extension("mamba_ssm") if peer == "mamba_ssm" else types.ModuleType("selective_scan_cuda")
        mod = import_without_init("mamba_ssm", source_root("mamba-ssm"), "ops.selective_scan_interface", ext)
        fn = mod.selective_scan_fn if peer == "mamba_ssm" else mod.selective_scan_ref
    elif peer in ("lrnnx", "lrnnx_ref"):
        ext = load_extension("lrnnx") if peer == "lrnnx" else types.ModuleType("selective_scan_cuda")
        mod = import_without_init("lrnnx", source_root("lrnnx"), "ops.s7_scan", ext)
        fn = {("lrnnx", "s7_scan"): getattr(mod, "s7_scan_fn"), ("lrnnx", "s7_inner"): getattr(mod, "s7_inner_fn"),
              ("lrnnx_ref", "s7_scan"): getattr(mod, "s7_scan_ref"),
              ("lrnnx_ref", "s7_inner"): getattr(mod, "s7_inner_ref")}[(peer, op)]
    elif peer == "ejkernel_xla":
        fn = _ejkernel_entry()
    else:
        raise PeerError(f"unknown peer {peer} (known: {', '.join(PEER_OPS)})")
    _ENTRY_CACHE[key] = fn
    return fn


def _ejkernel_entry():
    try:
        from ejkernel.kernels._xla.state_space_v1 import state_space_v1
    except ImportError as e:
        raise PeerError(f"ejkernel does not import ({e}): install the carried wheels first "
                        "(scripts/peers/README.md: pip install --no-deps --target /tmp/site .peers/wheels/*.whl)") from None
    return state_space_v1


# ------------------------------------------------------------------------------------- torch calls
def torch_forward(call: PeerCall, x: dict, need_grad: bool):
    """Runs the peer's forward on torch tensors x; returns {name: tensor} of outputs."""
    import torch
    op, o = call.op, call.options
    if op == "selective_scan":
        out, last = call.fn(x["u"], x["delta"], x["A"], x["B"], x["C"], D=x.get("D"), z=x.get("z"),
                            delta_bias=x.get("delta_bias"), delta_softplus=bool(o.get("softplus")),
                            return_last_state=True)
        return {"out": out, "last_state": last}
    if op == "s7_scan":
        if need_grad:
            # lrnnx's S7ScanFn.backward(ctx, dout) takes one gradient: with return_last_state=True
            # autograd hands it two and it raises TypeError, so the graph is built without it.
            return {"out": call.fn(x["u"], x["A"], x["B"], x["C"], bias=x.get("bias"), return_last_state=False)}
        out, last = call.fn(x["u"], x["A"], x["B"], x["C"], bias=x.get("bias"), return_last_state=True)
        return {"out": out, "last_state": last}
    if op == "s7_inner":
        out = call.fn(x["hidden_states"], x["in_proj_weight"], x["x_proj_weight"], x["gate_proj_weight"],
                      call.shape["dstate"], x["base_params"])
        return {"out": out}
    raise PeerError(f"{call.peer}: {op} is not a torch op")


def torch_case(call: PeerCall, x: dict, direction: str):
    """A closure running one call of the direction: fwd (no autograd), bwd (autograd.grad on a
    graph kept alive: the backward alone), fwdbwd (both)."""
    import torch
    grads = [k for k in x if k != "dout"]
    if direction == "fwd":
        def run():
            with torch.no_grad():
                torch_forward(call, x, False)
        return run
    leaves = {k: (v.detach().requires_grad_(True) if k in grads else v) for k, v in x.items()}
    if direction == "bwd":
        out = torch_forward(call, leaves, True)["out"]

        def run():
            torch.autograd.grad(out, [leaves[k] for k in grads], x["dout"], retain_graph=True)
        return run

    def run():
        out = torch_forward(call, leaves, True)["out"]
        torch.autograd.grad(out, [leaves[k] for k in grads], x["dout"])
    return run


def torch_outputs(call: PeerCall, x: dict) -> dict:
    """Outputs and gradients (d + input name) as numpy float64, for agreement checks. The
    gradient of last_state is not propagated (mamba_ssm's selective_scan_fn does not)."""
    import torch
    grads = [k for k in x if k != "dout"]
    leaves = {k: (v.detach().clone().requires_grad_(True) if k in grads else v) for k, v in x.items()}
    outs = torch_forward(call, leaves, True)
    gs = torch.autograd.grad(outs["out"], [leaves[k] for k in grads], x["dout"], allow_unused=True)
    if "last_state" not in outs and call.op in ("selective_scan", "s7_scan"):
        with torch.no_grad():
            outs["last_state"] = torch_forward(call, x, False)["last_state"]
    result = {k: v.detach().double().cpu().numpy() for k, v in outs.items()}
    for k, g in zip(grads, gs):
        if g is not None:
            result["d" + k] = g.detach().double().cpu().numpy()
    return result


# ------------------------------------------------------------------------------------- jax calls
_ACT = {"silu": "silu", "identity": None, "gelu_tanh": "gelu_tanh", "gelu_erf": "gelu_erf"}


def jax_case(call: PeerCall, x: dict, direction: str):
    """state_space_v1 on ejkernel's XLA implementation: a jitted closure for the direction."""
    import jax
    import jax.numpy as jnp
    act = {"silu": jax.nn.silu, "identity": lambda v: v, "gelu_tanh": lambda v: jax.nn.gelu(v, approximate=True),
           "gelu_erf": lambda v: jax.nn.gelu(v, approximate=False)}[call.options.get("act_fn", "silu")]
    names = [k for k in x if k != "dout"]
    args = {k: jnp.asarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v) for k, v in x.items()}

    def forward(*vals):
        kw = dict(zip(names, vals))
        out, final_state, _ = call.fn(kw["hidden_states"], kw["A"], kw["B"], kw["C"], kw["D"], kw["dt"],
                                      gate=kw.get("gate"), initial_state=kw.get("initial_state"), act_fn=act)
        return out, final_state

    vals = [args[k] for k in names]
    if direction == "fwd":
        f = jax.jit(forward)
        return lambda: jax.block_until_ready(f(*vals)), (forward, vals, args)
    if direction == "bwd":
        _, vjp = jax.vjp(lambda *v: forward(*v)[0], *vals)
        g = jax.jit(lambda fn, ct: fn(ct))
        return lambda: jax.block_until_ready(g(vjp, args["dout"])), (forward, vals, args)
    both = jax.jit(lambda ct, *v: jax.vjp(lambda *w: forward(*w)[0], *v)[1](ct))
    return lambda: jax.block_until_ready(both(args["dout"], *vals)), (forward, vals, args)


def jax_outputs(call: PeerCall, x: dict) -> dict:
    import jax
    import numpy as np
    _, (forward, vals, args) = jax_case(call, x, "fwd")
    names = [k for k in x if k != "dout"]
    (out, final_state), vjp = jax.vjp(forward, *vals)
    grads = vjp((args["dout"], jax.numpy.zeros_like(final_state)))
    result = {"out": np.asarray(out, dtype=np.float64), "final_state": np.asarray(final_state, dtype=np.float64)}
    for k, g in zip(names, grads):
        result["d" + k] = np.asarray(g, dtype=np.float64)
    return result
