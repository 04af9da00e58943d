"""Reading scanlab sweep JSON files (scanlab's own and the peer runners') and deriving every number
a report shows, in one place, so that report.py, the peer runners and the tests compute them the
same way. reports/README.md documents the schema; benchmarks/sweep.cpp (case_entry) is the C++
twin of derive_case() and a test checks that they agree.

No matplotlib here: the peer runners import this module on the GPU machine, where only the
standard library and numpy are certain.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable

SWEEP_SCHEMA = "scanlab.sweep/1"
CEILINGS_SCHEMA = "scanlab.ceilings/1"
CEILING_NAMES = ("memory", "fp32", "sfu")  # the ones that can bind; l2 is reported, never binds
SCANLAB = "scanlab"


class SchemaError(ValueError):
    pass


# ----------------------------------------------------------------------------- keys and statistics
def _value_text(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    raise SchemaError(f"case axis {name!r} has a value that is not an integer, switch or name: {value!r}")


def case_key(op: str, direction: str, shape: dict, options: dict) -> str:
    """The same string as benchmarks/axes.cpp's case_key(): names of shape and options together,
    in byte order; booleans on/off."""
    merged: dict[str, str] = {}
    for part in (shape, options):
        for name, value in part.items():
            if name in merged:
                raise SchemaError(f"case axis {name!r} is both a shape and an option")
            merged[name] = _value_text(name, value)
    names = sorted(merged, key=lambda n: n.encode())
    return f"{op}/{direction}/" + ",".join(f"{n}={merged[n]}" for n in names)


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between order statistics (NumPy's default; benchmarks/statistics.cpp)."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (pos - lo) * (sorted_values[hi] - sorted_values[lo])


def spread_of(samples: Iterable[float]) -> dict:
    values = sorted(float(s) for s in samples)
    if not values:
        raise ValueError("spread_of: no samples")
    q1, med, q3 = quantile(values, 0.25), quantile(values, 0.5), quantile(values, 0.75)
    return {"median": med, "q1": q1, "q3": q3, "iqr": q3 - q1, "min": values[0], "max": values[-1],
            "count": len(values)}


def verdict(a: dict, b: dict, min_change: float = 0.01) -> str:
    """B against A, as benchmarks/statistics.cpp's compare_times()."""
    if not (a["median"] > 0 and b["median"] > 0):
        raise ValueError("verdict: medians must be positive")
    overlap = b["q1"] <= a["q3"] and a["q1"] <= b["q3"]
    if overlap or abs(b["median"] / a["median"] - 1.0) < min_change:
        return "same within noise"
    return "faster" if b["median"] < a["median"] else "slower"


# ----------------------------------------------------------------------------- ceilings and cases
def roofline_of(ceilings: dict | None) -> dict | None:
    """The four positive numbers of a ceilings JSON's "roofline" object (None for None)."""
    if ceilings is None:
        return None
    r = ceilings.get("roofline") if isinstance(ceilings, dict) else None
    if not isinstance(r, dict):
        raise SchemaError("ceilings JSON has no 'roofline' object")
    out = {}
    for key in ("memory_bytes_per_s", "l2_bytes_per_s", "fp32_flops_per_s", "sfu_ops_per_s"):
        v = r.get(key)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
            raise SchemaError(f"ceilings JSON: roofline.{key} is missing or not positive")
        out[key] = float(v)
    out["memory_label"] = r.get("memory_label", "memory")
    return out


def derive_case(case: dict, ceilings: dict | None) -> dict:
    """Achieved rates, floors, fractions and the binding ceiling from a case's raw fields
    (time_s.median, bytes_moved, flops, sfu_ops) and the ceilings: benchmarks/sweep.cpp's
    case_entry() in Python."""
    t = float(case["time_s"]["median"])
    b, f, s = float(case["bytes_moved"]), float(case["flops"]), float(case["sfu_ops"])
    out = {"achieved": {"bytes_per_s": b / t, "flops_per_s": f / t, "sfu_ops_per_s": s / t}}
    r = roofline_of(ceilings)
    if r is None:
        out["binding_ceiling"] = None
        return out
    floors = {"memory": b / r["memory_bytes_per_s"], "fp32": f / r["fp32_flops_per_s"], "sfu": s / r["sfu_ops_per_s"]}
    out["floor_s"] = floors
    out["fraction_of_ceiling"] = {"memory": floors["memory"] / t, "l2": b / r["l2_bytes_per_s"] / t,
                                  "fp32": floors["fp32"] / t, "sfu": floors["sfu"] / t}
    binding = "memory"
    for name in ("fp32", "sfu"):  # ties go to the first, as in C++
        if floors[name] > floors[binding]:
            binding = name
    out["binding_ceiling"] = binding
    out["fraction_of_binding"] = floors[binding] / t
    return out


def check_sweep(sweep: Any, what: str) -> None:
    """Raises SchemaError listing the problems (benchmarks/sweep_files.cpp's check_sweep_schema)."""
    problems = []
    if not isinstance(sweep, dict):
        raise SchemaError(f"{what}: not a JSON object")
    block = sweep.get("scanlab")
    if not isinstance(block, dict):
        problems.append('no "scanlab" context block')
    else:
        if block.get("schema") != SWEEP_SCHEMA:
            problems.append(f'scanlab.schema is not "{SWEEP_SCHEMA}"')
        for key in ("implementation", "op"):
            if not isinstance(block.get(key), str):
                problems.append(f"scanlab.{key} is missing or not a string")
        if not isinstance(block.get("machine"), dict):
            problems.append("scanlab.machine is missing")
    cases = sweep.get("cases")
    if not isinstance(cases, list):
        problems.append('no "cases" array')
        cases = []
    keys = set()
    for i, c in enumerate(cases):
        where = f"cases[{i}]"
        if not isinstance(c, dict):
            problems.append(f"{where} is not an object")
            continue
        for key in ("key", "op", "direction", "implementation"):
            if not isinstance(c.get(key), str):
                problems.append(f"{where}.{key} is missing or not a string")
        for key in ("shape", "options"):
            if not isinstance(c.get(key), dict):
                problems.append(f"{where}.{key} is missing or not an object")
        for key in ("bytes_moved", "flops", "sfu_ops"):
            v = c.get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                problems.append(f"{where}.{key} is missing or negative")
        ts = c.get("time_s")
        if not isinstance(ts, dict) or not all(isinstance(ts.get(k), (int, float)) for k in
                                               ("median", "q1", "q3", "min", "max")):
            problems.append(f"{where}.time_s is missing or incomplete")
        elif not (0 < ts["min"] <= ts["q1"] <= ts["median"] <= ts["q3"] <= ts["max"]):
            problems.append(f"{where}.time_s is not 0 < min <= q1 <= median <= q3 <= max")
        if isinstance(c.get("key"), str):
            if c["key"] in keys:
                problems.append(f"{where}: duplicate case {c['key']!r}")
            keys.add(c["key"])
            if all(isinstance(c.get(k), (str, dict)) for k in ("op", "direction", "shape", "options")):
                try:
                    expected = case_key(c["op"], c["direction"], c["shape"], c["options"])
                    if expected != c["key"]:
                        problems.append(f"{where}.key {c['key']!r} is not the case's key {expected!r}")
                except SchemaError as e:
                    problems.append(f"{where}: {e}")
    if problems:
        shown = "\n  - ".join(problems[:20])
        more = f"\n  - ... ({len(problems) - 20} more)" if len(problems) > 20 else ""
        raise SchemaError(f"{what}: not a scanlab sweep JSON:\n  - {shown}{more}")


def load_sweep(path: str | Path) -> dict:
    path = Path(path)
    try:
        sweep = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise SchemaError(f"{path}: not valid JSON ({e})") from None
    check_sweep(sweep, str(path))
    return sweep


def machine_label(block: dict) -> str:
    m = block.get("machine", {})
    return m.get("device") or m.get("host") or "unknown machine"


# ----------------------------------------------------------------------------- what a report shows
def flatten(sweeps: list[tuple[str, dict]], tolerance: float = 1e-9) -> list[dict]:
    """Every case of every file as one record with its file's context and the derived numbers,
    recomputed here and checked against the numbers the file carries."""
    records = []
    for name, sweep in sweeps:
        block = sweep["scanlab"]
        ceilings = block.get("ceilings")
        if ceilings is not None and not isinstance(ceilings, dict):
            raise SchemaError(f"{name}: scanlab.ceilings is neither an object nor null")
        for c in sweep["cases"]:
            derived = derive_case(c, ceilings)
            for group in ("achieved", "fraction_of_ceiling", "floor_s"):
                for k, v in derived.get(group, {}).items():
                    stored = c.get(group, {}).get(k)
                    if stored is not None and not math.isclose(stored, v, rel_tol=tolerance, abs_tol=0.0):
                        raise SchemaError(f"{name}: case {c['key']}: {group}.{k} is {stored}, but its time, "
                                          f"costs and the file's ceilings give {v}")
            if "binding_ceiling" in c and c["binding_ceiling"] != derived["binding_ceiling"]:
                raise SchemaError(f"{name}: case {c['key']}: binding_ceiling {c['binding_ceiling']} "
                                  f"but the numbers give {derived['binding_ceiling']}")
            records.append({"file": name, "machine": machine_label(block), "case": c, **derived,
                            "implementation": c["implementation"], "ceilings": roofline_of(ceilings)})
    return records


def speedup_rows(records: list[dict], min_change: float = 0.01) -> dict[str, list[dict]]:
    """For each peer implementation: one row per case that scanlab measured on the same machine.
    speedup = peer time / scanlab time (above 1: scanlab is faster). A peer whose result disagrees
    (agreement.pass false) or was not checked gets no speedup: speed is only compared between
    results that agree."""
    ours = {(r["machine"], r["case"]["key"]): r for r in records if r["implementation"] == SCANLAB}
    tables: dict[str, list[dict]] = {}
    for r in records:
        peer = r["implementation"]
        if peer == SCANLAB:
            continue
        mine = ours.get((r["machine"], r["case"]["key"]))
        if mine is None:
            continue
        agreement = r["case"].get("agreement")
        agrees = isinstance(agreement, dict) and agreement.get("pass") is True
        t_peer, t_ours = r["case"]["time_s"], mine["case"]["time_s"]
        row = {"key": r["case"]["key"], "op": r["case"]["op"], "direction": r["case"]["direction"],
               "shape": r["case"]["shape"], "options": r["case"]["options"], "machine": r["machine"],
               "scanlab_time_s": t_ours["median"], "scanlab_iqr_s": t_ours["q3"] - t_ours["q1"],
               "peer_time_s": t_peer["median"], "peer_iqr_s": t_peer["q3"] - t_peer["q1"],
               "agreement": agreement, "agrees": agrees,
               "speedup": (t_peer["median"] / t_ours["median"]) if agrees else None,
               "verdict": verdict(t_peer, t_ours, min_change) if agrees else None}
        tables.setdefault(peer, []).append(row)
    return tables


SCALING_AXES = (("seqlen", "sequence length L"), ("dim", "channels D"), ("dstate", "states N"))


def scaling_series(records: list[dict]) -> list[dict]:
    """Time against one size axis with everything else fixed: one series per (machine,
    implementation, op, direction, other axes) that has at least two values of the axis."""
    series: dict[tuple, dict] = {}
    for r in records:
        c = r["case"]
        for axis, _ in SCALING_AXES:
            if axis not in c["shape"]:
                continue
            fixed = {k: v for k, v in c["shape"].items() if k != axis}
            fixed.update(c["options"])
            ident = (r["machine"], r["implementation"], c["op"], c["direction"], axis,
                     json.dumps(fixed, sort_keys=True))
            s = series.setdefault(ident, {"machine": r["machine"], "implementation": r["implementation"],
                                          "op": c["op"], "direction": c["direction"], "axis": axis,
                                          "fixed": fixed, "points": []})
            s["points"].append((c["shape"][axis], c["time_s"]["median"], c["key"]))
    out = []
    for s in series.values():
        if len({p[0] for p in s["points"]}) < 2:
            continue
        pts = sorted(s["points"])
        out.append({k: v for k, v in s.items() if k != "points"} |
                   {"x": [p[0] for p in pts], "y_s": [p[1] for p in pts], "keys": [p[2] for p in pts]})
    def fixed_order(fixed: dict) -> tuple:  # numbers in numeric order, then the rest as text
        return tuple((k, (0, v, "") if isinstance(v, int) else (1, 0, str(v))) for k, v in sorted(fixed.items()))
    out.sort(key=lambda s: (s["axis"], s["machine"], s["op"], s["direction"], s["implementation"],
                            fixed_order(s["fixed"])))
    return out


# ----------------------------------------------------------------------------- writing (peer runners)
def make_case(op: str, direction: str, shape: dict, options: dict, implementation: str, backend: str,
              samples_s: list[float], costs: dict, ceilings: dict | None, **extra) -> dict:
    """A case entry in the sweep schema from raw timings, as a peer runner writes it."""
    if not samples_s or min(samples_s) <= 0:
        raise ValueError(f"{op} {direction} {shape}: no positive timing samples")
    case = {"key": case_key(op, direction, shape, options), "op": op, "direction": direction, "shape": shape,
            "options": options, "implementation": implementation, "backend": backend,
            "time_s": spread_of(samples_s), "samples_s": [float(s) for s in samples_s],
            "bytes_moved": float(costs["bytes_moved"]), "flops": float(costs["flops"]),
            "sfu_ops": float(costs["sfu_ops"])}
    case.update(derive_case(case, ceilings))
    case.update(extra)
    return case


def make_sweep(implementation: str, op: str, machine: dict, cases: list[dict], ceilings: dict | None,
               peer: dict | None = None, **extra) -> dict:
    block = {"schema": SWEEP_SCHEMA, "implementation": implementation, "op": op, "machine": machine,
             "ceilings": ceilings, "case_count": len(cases), "complete": True}
    if peer is not None:
        block["peer"] = peer
    block.update(extra)
    sweep = {"context": {}, "benchmarks": [], "scanlab": block, "cases": cases}
    check_sweep(sweep, f"{implementation} sweep")
    return sweep
