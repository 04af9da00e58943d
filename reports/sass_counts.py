#!/usr/bin/env python3
"""Per-SASS execution counts from an Nsight Compute source export (speed-probe's
ncu-source-sass.csv.gz: `ncu --import R --page source --csv --print-source sass`), summarised
for one kernel: its total warp instructions, the instructions grouped by how often each ran
(a loop body runs a multiple of its trip count: the groups are the loops), and the totals by
opcode. The export lists each profiled kernel twice; the first listing is used.

    python3 reports/sass_counts.py CSV[.gz] KERNEL_SUBSTRING [--classes N] [--dump]
"""
import argparse
import collections
import csv
import gzip
import sys


def listings(path):
    """(kernel name, [row dict]) per listing in the file's order."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        kernel, header, rows = None, None, []
        for r in csv.reader(f):
            if r and r[0] == "Kernel Name":
                if kernel is not None:
                    yield kernel, rows
                kernel, header, rows = r[1], None, []
            elif r and r[0] == "Address":
                header = r
            elif header and len(r) == len(header):
                rows.append(dict(zip(header, r)))
        if kernel is not None:
            yield kernel, rows


def opcode(source):
    words = [w for w in source.split() if not w.startswith("@")]
    return words[0].split(".")[0] if words else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("kernel", help="a substring of the kernel's demangled name, e.g. ForwardTiled")
    ap.add_argument("--classes", type=int, default=12, help="execution-count groups to list (default 12)")
    ap.add_argument("--dump", action="store_true", help="also print every instruction with its count and stall samples")
    a = ap.parse_args()
    try:
        found = next(((k, rows) for k, rows in listings(a.csv) if a.kernel in k), None)
    except OSError as e:
        sys.exit(f"sass_counts: cannot read {a.csv}: {e.strerror}")
    if found is None:
        sys.exit(f"sass_counts: no kernel matching '{a.kernel}' in {a.csv}")
    kernel, rows = found
    counts = [int(r["Instructions Executed"] or 0) for r in rows]
    total = sum(counts)
    print(f"{kernel[:160]}\n{total / 1e6:.1f} M warp instructions, {len(rows)} SASS instructions")
    groups = collections.defaultdict(lambda: [0, 0])
    for n in counts:
        groups[n][0] += 1
        groups[n][1] += n
    print(f"{'executed':>12} {'instructions':>12} {'M total':>9} {'share':>6}")
    for n, (k, s) in sorted(groups.items(), key=lambda g: -g[1][1])[: a.classes]:
        print(f"{n:>12} {k:>12} {s / 1e6:>9.1f} {100 * s / max(total, 1):>5.1f}%")
    ops = collections.Counter()
    for r, n in zip(rows, counts):
        ops[opcode(r["Source"])] += n
    print("by opcode (M):", ", ".join(f"{o} {v / 1e6:.1f}" for o, v in ops.most_common(24)))
    if a.dump:
        for r, n in zip(rows, counts):
            print(f"{r['Address'][-6:]} {n:>10} {r.get('Warp Stall Sampling (All Samples)', ''):>6} {r['Source'].strip()}")


if __name__ == "__main__":
    main()
