#!/usr/bin/env python3
"""scanlab report: roofline, speedup tables against each peer, scaling plots, from sweep JSON files.

    python3 reports/report.py SWEEP.json [MORE.json ...] [--ceilings CEILINGS.json] --out DIR

Writes DIR/report.md, DIR/report.html, DIR/figures/*.png and *.svg, and DIR/points.json: every
plotted point and every table cell, machine-readable, so tests (reports/tests/) can check them
against the sweep files. `scanlab report` runs this with the venv's python (SCANLAB_PYTHON).
reports/README.md documents the input schema and what each figure shows.
"""
from __future__ import annotations

import argparse
import html
import json
import math
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scanlab_report as sr  # noqa: E402

DIRECTION_MARKERS = {"fwd": "o", "bwd": "s", "fwdbwd": "^"}
POINTS_SCHEMA = "scanlab.report-points/1"


# ----------------------------------------------------------------------------- formatting
def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4g}"


def fmt_rate(value: float, scale: float = 1e9) -> str:
    return f"{value / scale:.4g}"


def fmt_pct(fraction: float | None) -> str:
    return "—" if fraction is None else f"{100 * fraction:.1f}%"


def fmt_x(speedup: float | None) -> str:
    return "—" if speedup is None else f"{speedup:.2f}×"


def shape_text(shape: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in shape.items())


def options_text(options: dict) -> str:
    on = [k for k, v in options.items() if v is True]
    other = [f"{k}={v}" for k, v in options.items() if not isinstance(v, bool)]
    return " ".join(on + other) if (on or other) else "—"


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")[:60] or "machine"


class Table:
    def __init__(self, title: str, headers: list[str], note: str = ""):
        self.title, self.headers, self.note, self.rows = title, headers, note, []

    def add(self, cells: list[str]):
        assert len(cells) == len(self.headers)
        self.rows.append([str(c) for c in cells])

    def markdown(self) -> str:
        def esc(s):
            return s.replace("|", "\\|")
        lines = [f"### {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        lines.append("| " + " | ".join(esc(h) for h in self.headers) + " |")
        lines.append("|" + "|".join("---" for _ in self.headers) + "|")
        lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in self.rows]
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.headers)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self.rows)
        note = f"<p>{html.escape(self.note)}</p>" if self.note else ""
        return f"<h3>{html.escape(self.title)}</h3>{note}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def as_json(self) -> dict:
        return {"title": self.title, "headers": self.headers, "rows": self.rows}


# ----------------------------------------------------------------------------- tables
def case_table(machine: str, op: str, implementation: str, records: list[dict]) -> Table:
    t = Table(f"{op} — {implementation} on {machine}",
              ["direction", "shape", "options", "impl", "time ms (median)", "IQR ms", "GB/s", "GFLOP/s",
               "SFU Gop/s", "% memory", "% FP32", "% SFU", "binds", "% of binding"],
              "Time: median of repetitions; rates: the descriptor's compulsory bytes, flops and SFU ops over "
              "the median time; % of each measured ceiling; binds: the ceiling with the largest floor time.")
    for r in records:
        c, f = r["case"], r.get("fraction_of_ceiling", {})
        t.add([c["direction"], shape_text(c["shape"]), options_text(c["options"]), c.get("impl") or "—",
               fmt_ms(c["time_s"]["median"]), fmt_ms(c["time_s"]["q3"] - c["time_s"]["q1"]),
               fmt_rate(r["achieved"]["bytes_per_s"]), fmt_rate(r["achieved"]["flops_per_s"]),
               fmt_rate(r["achieved"]["sfu_ops_per_s"]), fmt_pct(f.get("memory")), fmt_pct(f.get("fp32")),
               fmt_pct(f.get("sfu")), r["binding_ceiling"] or "—", fmt_pct(r.get("fraction_of_binding"))])
    return t


def agreement_text(agreement) -> str:
    if not isinstance(agreement, dict):
        return "not checked"
    measured = agreement.get("rel_l2_error") is not None or agreement.get("max_error_over_bound") is not None
    if "pass" not in agreement or (agreement.get("error") and not measured):
        # No comparison was made (e.g. the peer raised): say why, never "DISAGREES".
        return "not checked" + (f": {agreement['error']}" if agreement.get("error") else "")
    parts = []
    if agreement.get("rel_l2_error") is not None:
        parts.append(f"rel err {agreement['rel_l2_error']:.2e}")
    if agreement.get("max_error_over_bound") is not None:
        parts.append(f"err/bound {agreement['max_error_over_bound']:.3g}")
    parts.append("agrees" if agreement.get("pass") else "DISAGREES")
    if agreement.get("against"):
        parts.append(f"vs {agreement['against']}")
    return ", ".join(parts)


def speedup_table(peer: str, rows: list[dict]) -> Table:
    t = Table(f"scanlab against {peer}",
              ["machine", "op", "direction", "shape", "options", f"{peer} ms", "scanlab ms", "speedup",
               "verdict", f"{peer} agreement"],
              "speedup = peer time / scanlab time (above 1: scanlab is faster); verdict accounts for the spread "
              "(interquartile ranges); no speedup is shown where the peer's result does not agree or was not checked.")
    for r in rows:
        t.add([r["machine"], r["op"], r["direction"], shape_text(r["shape"]), options_text(r["options"]),
               fmt_ms(r["peer_time_s"]), fmt_ms(r["scanlab_time_s"]), fmt_x(r["speedup"]),
               r["verdict"] or "—", agreement_text(r["agreement"])])
    return t


def ceilings_table(machine: str, roofline: dict, ceilings: dict) -> Table:
    t = Table(f"Measured ceilings on {machine}", ["ceiling", "value", "how"],
              "Measured on the machine in the same run (scanlab ceilings), never from a datasheet.")
    source = (ceilings.get("roofline") or {}).get("memory_source", "copy_native")
    how = ceilings.get("copy_native", {}).get("how", "") if source == "copy_native" else \
        f"fastest copy measured: {source.split('.', 1)[-1]} (faster than the native copy here)"
    t.add([f"{roofline['memory_label']} copy (read + write)", f"{fmt_rate(roofline['memory_bytes_per_s'])} GB/s", how])
    if source != "copy_native" and "copy_native" in ceilings:
        t.add(["native copy", f"{fmt_rate(ceilings['copy_native']['bytes_per_s'])} GB/s", ceilings["copy_native"]["how"]])
    if "memory_read" in ceilings:
        t.add([f"{roofline['memory_label']} read", f"{fmt_rate(ceilings['memory_read']['bytes_per_s'])} GB/s",
               ceilings["memory_read"].get("how", "")])
    t.add(["L2 read", f"{fmt_rate(roofline['l2_bytes_per_s'])} GB/s", ceilings.get("l2_read", {}).get("how", "")])
    t.add(["FP32 (2 per FMA)", f"{fmt_rate(roofline['fp32_flops_per_s'])} GFLOP/s",
           ceilings.get("fp32_fma", {}).get("how", "")])
    for fn in ("exp2", "log2", "rcp"):
        entry = ceilings.get("sfu", {}).get(fn)
        if entry:
            t.add([f"SFU {fn}", f"{fmt_rate(entry['ops_per_s'])} Gop/s", entry.get("how", "")])
    sp = ceilings.get("streaming_pattern")
    if sp:
        t.add(["Kokkos streaming pattern copy", f"{fmt_rate(sp['bytes_per_s'])} GB/s",
               f"{sp['header']} ({sp['variant']}): {fmt_pct(sp['fraction_of_native'])} of native copy"])
    return t


def copy_variants_table(machine: str, ceilings: dict) -> Table:
    t = Table(f"Copy written in Kokkos on {machine}", ["variant", "vector bytes", "GB/s", "of native", "how"],
              "Bytes read + written over the median time; native = cudaMemcpyAsync (GPU) or std::memcpy (host).")
    for v in ceilings.get("copy_variants", []):
        t.add([v["name"], str(v.get("vector_bytes", "")), fmt_rate(v["bytes_per_s"]),
               fmt_pct(v.get("fraction_of_native")), v.get("how", "")])
    return t


# ----------------------------------------------------------------------------- figures
def save(fig, figdir: Path, name: str) -> list[str]:
    out = []
    for ext in ("png", "svg"):
        path = figdir / f"{name}.{ext}"
        fig.savefig(path, dpi=150 if ext == "png" else None, bbox_inches="tight")
        out.append(f"figures/{name}.{ext}")
    return out


def series_label(r: dict) -> str:
    c = r["case"]
    return f"{r['implementation']} {c['op']}"


def roofline_figure(plt, machine: str, roof: dict, records: list[dict], figdir: Path, points: dict) -> list[str]:
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.4))
    labels = sorted({series_label(r) for r in records})
    cmap = plt.get_cmap("tab10")
    colors = {label: cmap(i % 10) for i, label in enumerate(labels)}
    panels = [
        ("flop", "arithmetic intensity (FLOP / byte)", "FP32 FLOP/s", "flops", "fp32_flops_per_s", "FP32"),
        ("sfu", "SFU intensity (SFU ops / byte)", "SFU ops/s", "sfu_ops", "sfu_ops_per_s", "SFU exp2"),
    ]
    for ax, (panel, xlabel, ylabel, work_key, roof_key, roof_name) in zip(axes, panels):
        xs, pts = [], []
        for r in records:
            c = r["case"]
            if c[work_key] <= 0 or c["bytes_moved"] <= 0:
                continue
            x = c[work_key] / c["bytes_moved"]
            y = c[work_key] / c["time_s"]["median"]
            # Filled: the ceiling of this panel (or memory, shared by both) binds this case.
            binds = r["binding_ceiling"]
            filled = binds == "memory" or (panel == "flop" and binds == "fp32") or (panel == "sfu" and binds == "sfu")
            color = colors[series_label(r)]
            ax.scatter([x], [y], s=46, marker=DIRECTION_MARKERS.get(c["direction"], "o"),
                       facecolors=color if filled else "none", edgecolors=color, linewidths=1.4, zorder=3)
            xs.append(x)
            pts.append({"key": c["key"], "implementation": r["implementation"], "file": r["file"],
                        "x": x, "y": y, "binding_ceiling": binds, "filled": filled})
        points["roofline"].setdefault(machine, {})[panel] = pts
        if not xs:
            ax.set_visible(False)
            continue
        lo, hi = min(xs) / 4, max(xs) * 4
        grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        mem, l2, top = roof["memory_bytes_per_s"], roof["l2_bytes_per_s"], roof[roof_key]
        ax.plot(grid, [min(mem * g, top) for g in grid], color="black", lw=1.8,
                label=f"{roof['memory_label']} copy {fmt_rate(mem)} GB/s")
        ax.plot(grid, [min(l2 * g, top) for g in grid], color="gray", lw=1.2, ls="--",
                label=f"L2 read {fmt_rate(l2)} GB/s")
        unit = "GFLOP/s" if panel == "flop" else "Gop/s"
        ax.axhline(top, color="tab:red", lw=1.2, ls=":", label=f"{roof_name} {fmt_rate(top)} {unit}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{'FP32' if panel == 'flop' else 'SFU'} roofline — {machine}", fontsize=10)
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(loc="lower right", fontsize=8)
    # One legend for the points: colour = implementation and op, marker = direction.
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], marker="o", ls="", color=colors[l], label=l) for l in labels]
    handles += [Line2D([], [], marker=m, ls="", color="black", markerfacecolor="none", label=d)
                for d, m in DIRECTION_MARKERS.items()]
    handles.append(Line2D([], [], marker="o", ls="", color="black", label="filled: this panel's ceiling "
                          "(or memory) binds"))
    # The legend gets its own band below the axes (rows of 4), so it never covers the x labels.
    rows = -(-len(handles) // 4)
    band = (0.02 + 0.032 * rows) * 6.0 / fig.get_figheight()
    fig.legend(handles=handles, loc="lower center", ncol=min(4, len(handles)), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, band, 1, 1))
    files = save(fig, figdir, f"roofline_{slug(machine)}")
    plt.close(fig)
    return files


def scaling_figure(plt, axis: str, axis_text: str, series: list[dict], figdir: Path) -> list[str]:
    from matplotlib.ticker import NullLocator
    groups: dict[tuple, list[dict]] = {}
    for s in series:
        groups.setdefault((s["machine"], s["op"], s["direction"]), []).append(s)
    n = len(groups)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.0 * rows), squeeze=False)
    for ax, ((machine, op, direction), group) in zip(axes.flat, sorted(groups.items())):
        varying = set()
        for key in {k for s in group for k in s["fixed"]}:
            if len({json.dumps(s["fixed"].get(key)) for s in group}) > 1:
                varying.add(key)
        for s in group:
            extra = ", ".join(f"{k}={sr._value_text(k, s['fixed'][k])}" for k in sorted(varying) if k in s["fixed"])
            ax.plot(s["x"], [y * 1e3 for y in s["y_s"]], marker=DIRECTION_MARKERS.get(direction, "o"),
                    label=s["implementation"] + (f" ({extra})" if extra else ""))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = sorted({x for s in group for x in s["x"]})
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(t) for t in ticks], rotation=45 if len(ticks) > 6 else 0, fontsize=8)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel(f"{axis_text} ({axis})")
        ax.set_ylabel("median time (ms)")
        ax.set_title(f"{op} {direction} — {machine}", fontsize=9)
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.tight_layout()
    files = save(fig, figdir, f"scaling_{axis}")
    plt.close(fig)
    return files


def copy_figure(plt, machine: str, ceilings: dict, figdir: Path) -> list[str]:
    variants = ceilings.get("copy_variants", [])
    if not variants:
        return []
    header = (ceilings.get("streaming_pattern") or {}).get("variant")
    names = [v["name"] + ("  [streaming.hpp]" if v["name"] == header else "") for v in variants]
    fractions = [100 * v["fraction_of_native"] for v in variants]
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(names) + 1.4))
    bars = ax.barh(names, fractions, color=["tab:blue" if f >= 90 else "tab:gray" for f in fractions])
    ax.axvline(100, color="black", lw=1)
    ax.axvline(90, color="tab:red", lw=1, ls=":", label="90% of native")
    ax.set_xlabel("copy bandwidth, % of the native copy")
    ax.set_title(f"Kokkos copy variants — {machine}", fontsize=10)
    ax.invert_yaxis()
    for bar, f in zip(bars, fractions):
        ax.text(bar.get_width() + 1, bar.get_y() + bar.get_height() / 2, f"{f:.0f}%", va="center", fontsize=7)
    ax.set_xlim(0, max(110, max(fractions) + 12))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    files = save(fig, figdir, f"copy_{slug(machine)}")
    plt.close(fig)
    return files


TUNE_SCHEMA = "scanlab.tune/1"


def load_input(path: str) -> tuple[str, dict]:
    """Reads a report input once: ("tune", JSON) for a `scanlab tune` file, else ("sweep", JSON)
    checked against the sweep schema (SchemaError names what is wrong)."""
    try:
        j = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise sr.SchemaError(f"{path}: not valid JSON ({e})") from None
    if isinstance(j, dict) and j.get("schema") == TUNE_SCHEMA:
        return "tune", j
    sr.check_sweep(j, str(path))
    return "sweep", j


def tune_table(name: str, tune: dict) -> Table:
    """One row per tuned case of a `scanlab tune` JSON: the heuristic config's time against the
    tuned one's, and how many candidates were timed, failed the oracle check, or were not run."""
    machine = (tune.get("machine") or {}).get("device", "?")
    t = Table(f"tuning {tune.get('op', '?')} on {machine} ({Path(name).name})",
              ["case", "heuristic ms", "tuned ms", "speedup", "timed", "wrong", "other", "tuned config"],
              "median times of each case's direction; speedup = heuristic / tuned; wrong = failed the oracle check "
              "(discarded); other = could not be checked or run on this case.")
    for c in tune.get("cases", []):
        h, w = c.get("heuristic_median_s"), c.get("winner_median_s")
        statuses = [x.get("status") for x in c.get("candidates", [])]
        timed, wrong = statuses.count("timed"), statuses.count("wrong")
        t.add([c.get("case", "?"), f"{h * 1e3:.4g}" if h else "—", f"{w * 1e3:.4g}" if w else "—",
               f"{h / w:.2f}×" if h and w else "—", timed, wrong, len(statuses) - timed - wrong,
               json.dumps(c["winner"], sort_keys=True, separators=(",", ":")) if c.get("winner") else "—"])
    return t


# ----------------------------------------------------------------------------- main
def build(files: list[str], out: Path, extra_ceilings: list[str]) -> dict:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tunes, sweeps = [], []
    for f in files:
        kind, j = load_input(f)
        (tunes if kind == "tune" else sweeps).append((f, j))
    records = sr.flatten(sweeps)
    if not records:
        raise sr.SchemaError("the sweep files hold no cases")
    figdir = out / "figures"
    figdir.mkdir(parents=True, exist_ok=True)

    # Ceilings per machine: from the sweeps' context blocks, or from --ceilings files.
    ceilings_by_machine: dict[str, dict] = {}
    for f in extra_ceilings:
        c = json.loads(Path(f).read_text())
        sr.roofline_of(c)
        ceilings_by_machine[c.get("machine", {}).get("device", f)] = c
    for _, sweep in sweeps:
        block = sweep["scanlab"]
        if block.get("ceilings"):
            ceilings_by_machine.setdefault(sr.machine_label(block), block["ceilings"])

    points = {"schema": POINTS_SCHEMA, "inputs": files, "roofline": {}, "scaling": [], "tables": []}
    sections_md, sections_html = [], []
    tables: list[Table] = []

    def add_text(md: str, htm: str):
        sections_md.append(md)
        sections_html.append(htm)

    def add_table(t: Table):
        tables.append(t)
        add_text(t.markdown(), t.html())

    def add_figure(paths: list[str], caption: str):
        png = next(p for p in paths if p.endswith(".png"))
        svg = next(p for p in paths if p.endswith(".svg"))
        add_text(f"![{caption}]({png})\n\n*{caption}* ([SVG]({svg}))\n",
                 f'<figure><img src="{html.escape(svg)}" alt="{html.escape(caption)}">'
                 f"<figcaption>{html.escape(caption)} (<a href=\"{html.escape(png)}\">PNG</a>)</figcaption></figure>")

    machines = sorted({r["machine"] for r in records})
    add_text("## Inputs\n\n" + "\n".join(f"- `{f}`: {s['scanlab']['implementation']} {s['scanlab']['op']} on "
                                          f"{sr.machine_label(s['scanlab'])} ({len(s['cases'])} cases, commit "
                                          f"{s['scanlab'].get('machine', {}).get('git_commit', '?')})"
                                          for f, s in sweeps) + "\n",
             "<h2>Inputs</h2><ul>" + "".join(f"<li><code>{html.escape(f)}</code>: "
                                             f"{html.escape(s['scanlab']['implementation'])} {html.escape(s['scanlab']['op'])}"
                                             f" on {html.escape(sr.machine_label(s['scanlab']))} ({len(s['cases'])} cases)</li>"
                                             for f, s in sweeps) + "</ul>")
    add_text("## Ceilings and roofline\n", "<h2>Ceilings and roofline</h2>")
    for machine in machines:
        ceilings = ceilings_by_machine.get(machine)
        mine = [r for r in records if r["machine"] == machine]
        if ceilings is None:
            add_text(f"No ceilings for {machine}: no roofline.\n", f"<p>No ceilings for {html.escape(machine)}.</p>")
            continue
        roof = sr.roofline_of(ceilings)
        if (ceilings.get("method") or {}).get("quick"):
            add_text(f"**{machine}: quick ceilings (small buffers, few repetitions): not for publishing.**\n",
                     f"<p><b>{html.escape(machine)}: quick ceilings, not for publishing.</b></p>")
        add_table(ceilings_table(machine, roof, ceilings))
        if ceilings.get("copy_variants"):
            add_table(copy_variants_table(machine, ceilings))
            add_figure(copy_figure(plt, machine, ceilings, figdir),
                       f"Copy bandwidth of each Kokkos launch shape and vector width on {machine}, "
                       "as a share of the native copy")
        points["roofline"].setdefault(machine, {})["ceilings"] = roof
        add_figure(roofline_figure(plt, machine, roof, mine, figdir, points),
                   f"Roofline on {machine}: one dot per op, shape and implementation; left FP32 work, right SFU "
                   "work (exp, log, reciprocal); lines are the measured ceilings; a filled dot marks the ceiling "
                   "that binds the case")

    add_text("## Results per op\n", "<h2>Results per op</h2>")
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["machine"], r["case"]["op"], r["implementation"]), []).append(r)
    for (machine, op, implementation), rs in sorted(groups.items()):
        add_table(case_table(machine, op, implementation, rs))

    add_text("## Speedup against the peers\n", "<h2>Speedup against the peers</h2>")
    speedups = sr.speedup_rows(records)
    if not speedups:
        add_text("No peer measured on the same machine and shapes in these files.\n",
                 "<p>No peer measured on the same machine and shapes in these files.</p>")
    for peer, rows in sorted(speedups.items()):
        add_table(speedup_table(peer, rows))
    points["speedups"] = speedups

    add_text("## Scaling\n", "<h2>Scaling</h2>")
    series = sr.scaling_series(records)
    points["scaling"] = series
    for axis, axis_text in sr.SCALING_AXES:
        mine = [s for s in series if s["axis"] == axis]
        if not mine:
            add_text(f"No sweep varies {axis} with everything else fixed.\n",
                     f"<p>No sweep varies {html.escape(axis)} with everything else fixed.</p>")
            continue
        add_figure(scaling_figure(plt, axis, axis_text, mine, figdir),
                   f"Median time against {axis_text}, all other axes fixed (log-log)")

    if tunes:
        add_text("## Tuning\n", "<h2>Tuning</h2>")
        for name, tune in tunes:
            add_table(tune_table(name, tune))

    points["tables"] = [t.as_json() for t in tables]
    title = "scanlab report"
    md = f"# {title}\n\n" + "\n".join(sections_md)
    (out / "report.md").write_text(md)
    style = ("body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}table{border-collapse:collapse;"
             "font-size:13px;margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}"
             "th{background:#f0f0f0}img{max-width:100%}figcaption{font-size:13px;color:#444}")
    (out / "report.html").write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>"
                                     f"<style>{style}</style></head><body><h1>{title}</h1>"
                                     + "\n".join(sections_html) + "</body></html>\n")
    (out / "points.json").write_text(json.dumps(points, indent=1))
    return points


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scanlab report", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="sweep JSON files (scanlab sweep, scanlab merge, peer runners) and "
                    "tune JSON files (scanlab tune --out: a table of heuristic against tuned times)")
    ap.add_argument("--out", required=True, help="directory for report.md, report.html, figures/, points.json")
    ap.add_argument("--ceilings", action="append", default=[], help="ceilings JSON for a machine whose sweeps lack them")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        build(args.files, out, args.ceilings)
    except (sr.SchemaError, OSError) as e:
        print(f"scanlab report: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:  # a bare python3 (binary run without ./scanlab) has no matplotlib
        if not (e.name or "").startswith("matplotlib"):
            raise  # any other import failure is a bug, not a missing venv
        print(f"scanlab report: error: {sys.executable} cannot import {e.name} (the report needs "
              "matplotlib): run ./scanlab report, which uses the venv that scripts/setup.sh python makes, or set "
              "SCANLAB_PYTHON to a python that has it", file=sys.stderr)
        return 2
    print(f"wrote {out / 'report.md'}, {out / 'report.html'}, {out / 'figures'}/, {out / 'points.json'}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
