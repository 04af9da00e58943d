#!/usr/bin/env python3
"""Where a kernel's time goes, by loop: reads ncu's per-SASS source page
(`ncu --import R.ncu-rep --page source --csv --print-source sass`, optionally gzipped) and sums the
executed warp instructions and the warp-stall samples over each loop of the SASS (a loop: the
instructions from a backward branch's target to the branch), each instruction counted in the
innermost loop that holds it, the rest as "outside any loop". Per region it prints the share of
instructions and of samples, cycles per issue implied (samples / instructions, relative), the
largest stall reasons, and the opcode mix, so that a change can be aimed at the region that holds
the time rather than at the one that holds the instructions.

  python3 scripts/gpu/ncu_sass_regions.py OUT/ncu-bwd-anchor-source-sass.csv.gz [--top 8]
"""
import argparse
import collections
import csv
import gzip
import io
import re
import sys


def read_rows(path):
    raw = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    text = raw.read()
    lines = text.splitlines()
    # ncu prints the kernel's name on a line of its own before the header
    start = next((i for i, line in enumerate(lines) if line.startswith('"Address"')), None)
    if start is None:
        sys.exit(f"{path}: no \"Address\" header: not ncu's --page source --csv output")
    reader = csv.DictReader(io.StringIO("\n".join(lines[start:])))
    rows = []
    for r in reader:
        try:
            address = int(r["Address"], 16)
        except (ValueError, KeyError):
            continue
        rows.append(r | {"address": address})
    if not rows:
        sys.exit(f"{path}: no instruction rows")
    return lines[:start], rows


def number(r, key):
    try:
        return float(r.get(key, "0") or 0)
    except ValueError:
        return 0.0


def opcode(sass):
    toks = sass.strip().rstrip(";").split()
    if toks and toks[0].startswith("@"):
        toks = toks[1:]
    return toks[0].split(".")[0] if toks else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output (.csv or .csv.gz)")
    ap.add_argument("--top", type=int, default=8, help="regions to print, largest sample share first")
    args = ap.parse_args()
    preamble, rows = read_rows(args.csv)
    base = rows[0]["address"]
    index = {r["address"]: i for i, r in enumerate(rows)}
    loops = []  # (first index, last index)
    for i, r in enumerate(rows):
        sass = r.get("Source", "")
        if opcode(sass) != "BRA":
            continue
        m = re.search(r"0x([0-9a-f]+)", sass)
        if not m:
            continue
        target = int(m.group(1), 16)
        # ncu prints branch targets as absolute addresses or as offsets from the kernel's start
        for t in (target, base + target):
            if t <= r["address"] and t in index:
                loops.append((index[t], i))
                break
    owner = [None] * len(rows)
    for first, last in sorted(loops, key=lambda l: l[1] - l[0], reverse=True):  # innermost last wins
        for i in range(first, last + 1):
            owner[i] = (first, last)
    stall_keys = [k for k in rows[0] if k.startswith("stall_") and "Not Issued" not in k]
    regions = collections.defaultdict(lambda: {"inst": 0.0, "samples": 0.0, "static": 0,
                                                "stalls": collections.Counter(), "ops": collections.Counter()})
    for i, r in enumerate(rows):
        reg = regions[owner[i]]
        executed = number(r, "Instructions Executed")
        reg["inst"] += executed
        reg["samples"] += number(r, "Warp Stall Sampling (All Samples)")
        reg["static"] += 1
        for k in stall_keys:
            reg["stalls"][k[len("stall_"):]] += number(r, k)
        reg["ops"][opcode(r.get("Source", ""))] += executed
    total_inst = sum(g["inst"] for g in regions.values()) or 1.0
    total_samples = sum(g["samples"] for g in regions.values()) or 1.0
    for line in preamble:
        if line.strip():
            print(line.strip().strip('"')[:160])
    print(f"{len(rows)} SASS instructions, {total_inst / 1e6:.1f} M warp instructions executed, "
          f"{total_samples:.0f} stall samples; {len(set(loops))} loops")
    for key, g in sorted(regions.items(), key=lambda kv: -kv[1]["samples"])[: args.top]:
        where = "outside any loop" if key is None else \
            f"loop +{rows[key[0]]['address'] - base:#x}..+{rows[key[1]]['address'] - base:#x}"
        share_i, share_s = g["inst"] / total_inst, g["samples"] / total_samples
        stalls = ", ".join(f"{k} {v / total_samples:.1%}" for k, v in g["stalls"].most_common(4) if v)
        ops = " ".join(f"{k} {v / max(g['inst'], 1):.0%}" for k, v in g["ops"].most_common(6))
        print(f"{where}: {g['static']} static, {share_i:.1%} of instructions, {share_s:.1%} of samples "
              f"(samples/instruction {share_s / share_i if share_i else float('inf'):.2f}x the kernel's)")
        print(f"    stalls: {stalls}")
        print(f"    executed mix: {ops}")


if __name__ == "__main__":
    main()
