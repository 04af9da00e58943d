#!/usr/bin/env python3
"""Checks a rendered report against the sweep JSON files it was made from, recomputing every
number from the raw fields (median time, bytes_moved, flops, sfu_ops, ceilings) without going
through report.py's own code paths:

    python3 reports/tests/check_report.py SWEEP.json [...] --report DIR

- every case of every file is a point of the roofline of its machine (both panels), at
  x = work / bytes_moved and y = work / median time;
- every per-op table row shows the case's median time, IQR, rates, ceiling fractions and binding
  ceiling, formatted as the report promises (4 significant digits, percentages to 0.1);
- every speedup cell is peer median / scanlab median for a peer that agrees, and absent otherwise;
- every scaling series point is the median time of the case it names;
- points.json's tables are the markdown's tables, cell for cell; the figures exist as PNG and SVG.
Exit status 0 when everything holds; otherwise every mismatch is printed.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def _close(a: float, b: float, rel: float = 1e-12) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=0.0)


def markdown_tables(text: str) -> list[dict]:
    """Tables of a markdown file: title (the ### line above), headers and rows of cells."""
    tables, title, lines = [], None, text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("### "):
            title = line[4:].strip()
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            def cells(row):
                parts, cur, esc = [], "", False
                for ch in row.strip()[1:-1]:
                    if esc:
                        cur += ch
                        esc = False
                    elif ch == "\\":
                        esc = True
                    elif ch == "|":
                        parts.append(cur.strip())
                        cur = ""
                    else:
                        cur += ch
                parts.append(cur.strip())
                return parts
            headers = cells(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            tables.append({"title": title, "headers": headers, "rows": rows})
            continue
        i += 1
    return tables


def check(files: list[str], report_dir: str) -> list[str]:
    errors: list[str] = []
    report = Path(report_dir)
    points = json.loads((report / "points.json").read_text())
    md = (report / "report.md").read_text()
    sweeps = [(f, json.loads(Path(f).read_text())) for f in files]

    # ---- roofline points
    for name, sweep in sweeps:
        block = sweep["scanlab"]
        machine = block["machine"].get("device") or block["machine"].get("host")
        roof = points["roofline"].get(machine)
        if block.get("ceilings") is None:
            continue
        if roof is None:
            errors.append(f"{name}: no roofline for machine {machine!r}")
            continue
        for panel, work in (("flop", "flops"), ("sfu", "sfu_ops")):
            plotted = {(p["key"], p["implementation"]): p for p in roof.get(panel, [])}
            for c in sweep["cases"]:
                if c[work] <= 0:
                    continue
                p = plotted.get((c["key"], c["implementation"]))
                if p is None:
                    errors.append(f"{name}: {c['key']} ({c['implementation']}) is not plotted in the {panel} roofline")
                    continue
                x, y = c[work] / c["bytes_moved"], c[work] / c["time_s"]["median"]
                if not (_close(p["x"], x) and _close(p["y"], y)):
                    errors.append(f"{name}: {c['key']}: {panel} point ({p['x']}, {p['y']}) != ({x}, {y})")
        ceil = roof.get("ceilings", {})
        for key, value in block["ceilings"]["roofline"].items():
            if isinstance(value, (int, float)) and key in ceil and not _close(ceil[key], value):
                errors.append(f"{name}: plotted ceiling {key} = {ceil[key]}, file says {value}")

    # ---- per-op tables
    tables = markdown_tables(md)
    if [{"title": t["title"], "headers": t["headers"], "rows": t["rows"]} for t in tables] != points["tables"]:
        errors.append("points.json's tables differ from report.md's tables")
    for name, sweep in sweeps:
        block = sweep["scanlab"]
        machine = block["machine"].get("device") or block["machine"].get("host")
        roof = block.get("ceilings", {}) and block["ceilings"]["roofline"]
        for c in sweep["cases"]:
            title = f"{c['op']} — {c['implementation']} on {machine}"
            table = next((t for t in tables if t["title"] == title), None)
            if table is None:
                errors.append(f"{name}: no table titled {title!r}")
                continue
            shape = " ".join(f"{k}={v}" for k, v in c["shape"].items())
            rows = [r for r in table["rows"] if r[0] == c["direction"] and r[1] == shape]
            matching = []
            for r in rows:
                row = dict(zip(table["headers"], r))
                if row["time ms (median)"] == f"{c['time_s']['median'] * 1e3:.4g}":
                    matching.append(row)
            if not matching:
                errors.append(f"{name}: {c['key']}: no table row shows its median {c['time_s']['median'] * 1e3:.4g} ms")
                continue
            t = c["time_s"]["median"]
            expected = {"IQR ms": f"{(c['time_s']['q3'] - c['time_s']['q1']) * 1e3:.4g}",
                        "GB/s": f"{c['bytes_moved'] / t / 1e9:.4g}",
                        "GFLOP/s": f"{c['flops'] / t / 1e9:.4g}",
                        "SFU Gop/s": f"{c['sfu_ops'] / t / 1e9:.4g}"}
            if roof:
                floors = {"memory": c["bytes_moved"] / roof["memory_bytes_per_s"],
                          "fp32": c["flops"] / roof["fp32_flops_per_s"],
                          "sfu": c["sfu_ops"] / roof["sfu_ops_per_s"]}
                binding = max(("memory", "fp32", "sfu"), key=lambda k: (floors[k], -("memory", "fp32", "sfu").index(k)))
                expected.update({"% memory": f"{100 * floors['memory'] / t:.1f}%", "% FP32": f"{100 * floors['fp32'] / t:.1f}%",
                                 "% SFU": f"{100 * floors['sfu'] / t:.1f}%", "binds": binding,
                                 "% of binding": f"{100 * floors[binding] / t:.1f}%"})
            if not any(all(row[k] == v for k, v in expected.items()) for row in matching):
                errors.append(f"{name}: {c['key']}: row {matching[0]} does not show {expected}")

    # ---- speedups
    ours = {}
    for name, sweep in sweeps:
        if sweep["scanlab"]["implementation"] == "scanlab":
            m = sweep["scanlab"]["machine"].get("device")
            for c in sweep["cases"]:
                ours[(m, c["key"])] = c
    for name, sweep in sweeps:
        peer = sweep["scanlab"]["implementation"]
        if peer == "scanlab":
            continue
        m = sweep["scanlab"]["machine"].get("device")
        table = next((t for t in tables if t["title"] == f"scanlab against {peer}"), None)
        for c in sweep["cases"]:
            mine = ours.get((m, c["key"]))
            if mine is None:
                continue
            if table is None:
                errors.append(f"{name}: no speedup table for {peer}")
                break
            shape = " ".join(f"{k}={v}" for k, v in c["shape"].items())
            rows = [dict(zip(table["headers"], r)) for r in table["rows"]
                    if r[2] == c["direction"] and r[3] == shape and r[1] == c["op"]]
            agrees = isinstance(c.get("agreement"), dict) and c["agreement"].get("pass") is True
            want = f"{c['time_s']['median'] / mine['time_s']['median']:.2f}×" if agrees else "—"
            if not any(r["speedup"] == want and r[f"{peer} ms"] == f"{c['time_s']['median'] * 1e3:.4g}"
                       and r["scanlab ms"] == f"{mine['time_s']['median'] * 1e3:.4g}" for r in rows):
                errors.append(f"{name}: {c['key']}: speedup against {peer} should read {want}; rows: {rows}")

    # ---- scaling series
    medians = {(c["implementation"], c["key"]): c["time_s"]["median"] for _, s in sweeps for c in s["cases"]}
    for s in points["scaling"]:
        for x, y, key in zip(s["x"], s["y_s"], s["keys"]):
            if not _close(medians.get((s["implementation"], key), float("nan")), y):
                errors.append(f"scaling {s['axis']}: point {key} plots {y}, the file says "
                              f"{medians.get((s['implementation'], key))}")

    # ---- figures
    for ref in set(__import__("re").findall(r"\((figures/[^)]+\.(?:png|svg))\)", md)):
        path = report / ref
        if not path.is_file() or path.stat().st_size < 1000:
            errors.append(f"figure {ref} is missing or nearly empty")
        elif ref.endswith(".png") and path.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
            errors.append(f"figure {ref} is not a PNG")
    return errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--report", required=True)
    args = ap.parse_args()
    errors = check(args.files, args.report)
    for e in errors:
        print("MISMATCH:", e, file=sys.stderr)
    print(f"check_report: {len(errors)} mismatches", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
