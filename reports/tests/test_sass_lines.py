"""Tests of reports/sass_lines.py on a small CUDA kernel compiled here with -lineinfo (needs nvcc,
cuobjdump and nvdisasm: CUDA's bin, which CI installs for the CUDA build), and a synthetic ncu
source export made from that kernel's own disassembly."""
from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent / "sass_lines.py"
sys.path.insert(0, str(HERE.parent))
import sass_lines  # noqa: E402

NVCC = shutil.which("nvcc") or shutil.which("nvcc", path="/usr/local/cuda/bin")

# Line 6 holds the loop's exp and line 7 its multiply-add: the test finds both by number. A
# template, so that its name has arguments that ncu and c++filt write differently.
KERNEL = """\
template <int kScale, bool kFma>
__global__ void probe_kernel(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) {
    float e = __expf(a[i + k] * kScale);
    acc = kFma ? fmaf(e, acc, 1.0f) : e;
  }
  out[i] = acc;
}
template __global__ void probe_kernel<3, true>(const float*, float*, int);
"""


@unittest.skipUnless(NVCC, "needs CUDA's nvcc (CI has it for the CUDA build)")
class SassLines(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        d = Path(cls.dir.name)
        (d / "probe.cu").write_text(KERNEL)
        for name, flags in (("lines.o", ["-lineinfo"]), ("plain.o", [])):
            subprocess.run([NVCC, "-c", "-arch=sm_90", *flags, "probe.cu", "-o", name], cwd=d, check=True)
        cls.binary = str(d / "lines.o")
        with tempfile.TemporaryDirectory() as work:
            kernels = sass_lines.kernels_with_lines(cls.binary, work)
        cls.sass = next(v for k, v in kernels.items() if "probe_kernel" in k)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def run_script(self, *args):
        return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)

    def export(self, rows, name="ncu.csv.gz"):
        """An ncu source export of probe_kernel: (address, source, executed, {stall: samples}) rows."""
        stalls = ["stall_wait", "stall_long_sb"]
        header = ["Address", "Source", "# Samples", "Instructions Executed", *stalls]
        lines = ['"Kernel Name","void probe_kernel<(int)3, (bool)1>(const float *, float *, int)",',
                 ",".join(f'"{h}"' for h in header)]
        for address, source, executed, samples in rows:
            cells = [f"0x{address:x}", source, str(sum(samples.values())), str(executed),
                     *(str(samples.get(s, 0)) for s in stalls)]
            lines.append(",".join(f'"{c}"' for c in cells))
        path = Path(self.dir.name) / name
        with gzip.open(path, "wt") as f:
            f.write("\n".join(lines) + "\n")
        return str(path)

    def test_static_counts_put_the_loop_on_its_lines(self):
        r = self.run_script(self.binary, "probe_kernel", "--top", "50")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = {l.split()[0]: l for l in r.stdout.splitlines() if l.startswith("probe.cu:")}
        self.assertIn("probe.cu:6", lines, r.stdout)
        self.assertIn("MUFU", lines["probe.cu:6"])  # __expf's MUFU.EX2 is on the exp's line
        self.assertIn("probe.cu:7", lines, r.stdout)
        self.assertIn("FFMA", lines["probe.cu:7"])
        total = sum(int(l.split()[1]) for l in lines.values())
        self.assertLessEqual(total, len(self.sass))

    def test_stall_samples_land_on_the_line_of_their_instruction(self):
        mufu = next(off for off, where, text in self.sass if text.split()[0].startswith("MUFU"))
        base = 0x7F0000001000
        rows = [(base + off, text, 10, {"stall_long_sb": 90} if off == mufu else {"stall_wait": 1})
                for off, where, text in self.sass]
        r = self.run_script(self.binary, "probe_kernel<3, true>", "--ncu", self.export(rows), "--top", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        top = [l for l in r.stdout.splitlines() if l.startswith("probe.cu:")]
        self.assertEqual(len(top), 1, r.stdout)
        self.assertTrue(top[0].startswith("probe.cu:6 "), r.stdout)
        self.assertIn("long_sb", top[0])

    def test_an_export_of_another_binary_is_refused(self):
        rows = [(0x1000 + off, text, 1, {}) for off, where, text in self.sass]
        r = self.run_script(self.binary, "probe_kernel", "--ncu", self.export(rows[:-1], "short.csv.gz"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not the same binary", r.stderr)
        swapped = [(a, "NOP" if i == 0 else s, n, st) for i, (a, s, n, st) in enumerate(rows)]
        r = self.run_script(self.binary, "probe_kernel", "--ncu", self.export(swapped, "swapped.csv.gz"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not the same binary", r.stderr)

    def test_missing_line_tables_and_kernel_are_clear_errors(self):
        r = self.run_script(str(Path(self.dir.name) / "plain.o"), "probe_kernel")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no line tables", r.stderr)
        r = self.run_script(self.binary, "NoSuchKernel")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no kernel matching 'NoSuchKernel'", r.stderr)


if __name__ == "__main__":
    unittest.main()
