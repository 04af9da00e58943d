#!/usr/bin/env python3
"""One kernel's SASS put on its source lines: which source line each instruction came from, per
line the static instruction count and opcodes, and with an Nsight Compute source export
(`ncu --import R --page source --csv --print-source sass`, as speed-probe.sh and the calls'
run.sh write it) the executed instructions and stall samples per line too.

The binary needs line tables (-lineinfo: the cuda preset plus -DCMAKE_CXX_FLAGS=-lineinfo); an
object file with the kernel will do (its device code is the binary's; session 25 rebuilt only
selective_scan_cuda_backward.cpp.o with -lineinfo and read call1's export against it). The
export may come from it or from a plain build of the same commit, which is what a device call
carries (a -lineinfo build compresses to ~47 MB, a plain one to ~25): instructions are matched to
the export's rows by their offset from the kernel's first instruction, and an export whose
instruction count or any opcode differs is refused. In session 24 a -lineinfo build and a plain
one (of two commits whose backward code is the same) gave the interleaved backward the same
instructions but for one pair of compares in swapped order and the constant-bank offsets.

    python3 reports/sass_lines.py BINARY KERNEL_SUBSTRING [--ncu CSV[.gz]] [--top N] [--file SUBSTRING]

KERNEL_SUBSTRING matches the demangled name, written either way (c++filt's 'BackwardTiled<Kokkos::
Cuda, 8, 1, true, (scanlab::kernels::detail::TimeSegments)0, 2>' or ncu's '(int)8, (int)1, (bool)1');
the first kernel it matches is used, and the others are listed. Needs cuobjdump and nvdisasm: on
$PATH, in CUDA's bin, or the venv's (scripts/setup.sh python installs NVIDIA's PyPI wheels of
both: the CUDA toolkits here ship neither); c++filt (binutils) demangles.
"""
import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_counts import listings, opcode  # noqa: E402  (the export's reader, shared)


def tool(name):
    wheels = glob.glob(os.path.join(sys.prefix, "lib", "python*", "site-packages", "nvidia", "*", "bin"))
    found = shutil.which(name) or shutil.which(name, path=os.pathsep.join(["/usr/local/cuda/bin", *wheels]))
    if not found:
        sys.exit(f"sass_lines: {name} not found (on $PATH, in /usr/local/cuda/bin, or the venv's nvidia wheels: "
                 "scripts/setup.sh python)")
    return found


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"sass_lines: {' '.join(args[:3])} ... failed: {r.stderr.strip()[:400]}")
    return r.stdout


def plain(name):
    """A demangled name as c++filt writes it: ncu's exports write template arguments with their
    casts ((int)8, (bool)1), c++filt without (8, true)."""
    name = re.sub(r"\((?:unsigned )?(?:int|long)\)", "", name)
    return name.replace("(bool)1", "true").replace("(bool)0", "false")


def demangle(names):
    out = run([tool("c++filt")], input="\n".join(names) + "\n").splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


def kernels_with_lines(binary, workdir):
    """{mangled name: [(offset, source line or None, instruction text)]} of every sm_ cubin."""
    # One ELF at a time: `-xelf all` stops at the first it cannot write, and scanlab's executable
    # holds one whose file name cuobjdump makes from its sources' names, too long for the disk.
    cuobjdump, nvdisasm, path = tool("cuobjdump"), tool("nvdisasm"), os.path.abspath(binary)
    listing = run([cuobjdump, "-lelf", path])
    for name in re.findall(r"ELF file\s+\d+:\s+(\S+\.cubin)", listing):
        subprocess.run([cuobjdump, "-xelf", name, path], cwd=workdir, capture_output=True)
    cubins = sorted(f for f in os.listdir(workdir) if f.endswith(".cubin"))
    if not cubins:
        sys.exit(f"sass_lines: no cubin in {binary}")
    header = re.compile(r"^\s*\.text\.(\S+):")
    line_info = re.compile(r'//## File "([^"]+)", line (\d+)')
    instruction = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(/\*.*)?$")
    kernels = {}
    for cubin in cubins:
        text = run([nvdisasm, "-g", "-c", os.path.join(workdir, cubin)])
        current, where = None, None
        for line in text.splitlines():
            m = header.match(line)
            if m:
                current, where = m.group(1), None
                kernels[current] = []
                continue
            m = line_info.search(line)
            if m:
                where = (m.group(1), int(m.group(2)))
                continue
            m = instruction.search(line)
            if m and current is not None:
                kernels[current].append((int(m.group(1), 16), where, m.group(2).strip()))
    return kernels


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("kernel", help="a substring of the kernel's demangled name")
    ap.add_argument("--ncu", help="the ncu source export (sass) of this binary or its plain twin: adds executed "
                    "counts and stall samples")
    ap.add_argument("--top", type=int, default=40, help="lines to list (default 40)")
    ap.add_argument("--file", default="", help="only source files whose path contains this")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        kernels = kernels_with_lines(a.binary, workdir)
    names = demangle(list(kernels))
    wanted = plain(a.kernel)
    matching = [k for k in kernels if wanted in names[k]]
    if not matching:
        sys.exit(f"sass_lines: no kernel matching '{a.kernel}' in {a.binary}")
    mangled = matching[0]
    sass = kernels[mangled]
    print(names[mangled][:200])
    for other in matching[1:6]:
        print(f"  (also matched, not used: {names[other][:150]})")
    if not any(where for _, where, _ in sass):
        sys.exit("sass_lines: the kernel has no line tables (build with -lineinfo)")

    executed, stalls = {}, {}
    if a.ncu:
        found = next(((k, rows) for k, rows in listings(a.ncu) if wanted in plain(k)), None)
        if found is None:
            sys.exit(f"sass_lines: no kernel matching '{a.kernel}' in {a.ncu}")
        rows = found[1]
        if len(rows) != len(sass):
            sys.exit(f"sass_lines: the export has {len(rows)} instructions, the binary's kernel {len(sass)}: "
                     "not the same binary")
        first = int(rows[0]["Address"], 16)
        by_offset = {int(r["Address"], 16) - first: r for r in rows}
        mismatched = sum(1 for off, _, text in sass
                         if off not in by_offset or opcode(by_offset[off]["Source"]) != opcode(text))
        if mismatched:
            sys.exit(f"sass_lines: {mismatched} opcodes differ between the export and the binary: not the same binary")
        stall_columns = [c for c in rows[0] if c.startswith("stall_") and "Not Issued" not in c]
        for at, r in by_offset.items():
            executed[at] = int(r["Instructions Executed"] or 0)
            stalls[at] = collections.Counter({c: int(r[c] or 0) for c in stall_columns})

    per_line = collections.defaultdict(lambda: {"static": 0, "executed": 0, "samples": 0, "ops": collections.Counter(),
                                               "stalls": collections.Counter()})
    total_executed = sum(executed.values()) or 1
    total_samples = sum(sum(s.values()) for s in stalls.values()) or 1
    for off, where, text in sass:
        if where is None or a.file not in where[0]:
            continue
        key = (os.path.basename(where[0]), where[1])
        e = per_line[key]
        e["static"] += 1
        e["ops"][opcode(text)] += 1
        if a.ncu:
            e["executed"] += executed.get(off, 0)
            e["stalls"] += stalls.get(off, collections.Counter())
    for e in per_line.values():
        e["samples"] = sum(e["stalls"].values())
    order = (lambda kv: -kv[1]["samples"]) if a.ncu else (lambda kv: -kv[1]["static"])
    print(f"{len(sass)} SASS instructions on {len(per_line)} source lines"
          + (f"; {total_executed / 1e6:.1f} M warp instructions executed, {total_samples} stall samples" if a.ncu else ""))
    for (path, line), e in sorted(per_line.items(), key=order)[: a.top]:
        ops = " ".join(f"{op} {n}" for op, n in e["ops"].most_common(5))
        if a.ncu:
            top = ", ".join(f"{k[6:]} {100 * v / total_samples:.1f}%" for k, v in e["stalls"].most_common(3) if v)
            print(f"{path}:{line:<5} {100 * e['samples'] / total_samples:5.1f}% samples  "
                  f"{100 * e['executed'] / total_executed:5.1f}% executed  {e['static']:4d} static  [{ops}]  {top}")
        else:
            print(f"{path}:{line:<5} {e['static']:5d} static  [{ops}]")


if __name__ == "__main__":
    main()
