"""Tests of reports/sass_counts.py on a synthetic Nsight Compute source export."""
from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "sass_counts.py"
HEADER = '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"\n'


def listing(name, rows):
    return f'"Kernel Name","{name}",\n' + HEADER + "".join(f'"0x{i:x}","{src}","1","{n}"\n' for i, (src, n) in enumerate(rows))


class SassCounts(unittest.TestCase):
    def run_script(self, text, *args):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "ncu.csv.gz"
            with gzip.open(path, "wt") as f:
                f.write(text)
            return subprocess.run([sys.executable, str(SCRIPT), str(path), *args], capture_output=True, text=True)

    def test_totals_groups_and_opcodes_of_the_first_listing(self):
        rows = [("FMUL R1, R2, R3", 100), ("@!P0 MUFU.EX2 R1, R1", 100), ("IMAD R4, R5, R6, RZ", 7), ("BRA 0x10", 0)]
        text = listing("void ForwardTiled<16>", rows) + listing("void ForwardTiled<16>", [("FMUL R1, R2, R3", 999)])
        text += listing("void BackwardTiled<8>", [("FADD R1, R1, R2", 5)])
        r = self.run_script(text, "ForwardTiled")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0.0 M warp instructions, 4 SASS instructions", r.stdout)
        lines = r.stdout.splitlines()
        self.assertTrue(any(l.split()[:2] == ["100", "2"] for l in lines), r.stdout)  # the 100-times group: 2 instructions
        self.assertIn("FMUL 0.0, MUFU 0.0, IMAD 0.0", r.stdout)  # the predicate is not the opcode
        self.assertNotIn("999", r.stdout)

    def test_missing_kernel_and_file_are_clear_errors(self):
        r = self.run_script(listing("void ForwardTiled<16>", [("FMUL R1, R2, R3", 1)]), "NoSuchKernel")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no kernel matching 'NoSuchKernel'", r.stderr)
        r = subprocess.run([sys.executable, str(SCRIPT), "/nonexistent/x.csv", "K"], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot read /nonexistent/x.csv", r.stderr)


if __name__ == "__main__":
    unittest.main()
