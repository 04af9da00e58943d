"""Tests of the report (run by ctest with the venv's python: reports/tests/run.sh).

Synthetic sweeps of scanlab and two peers (one that agrees, one that does not) go through
report.py; check_report.py then recomputes every plotted point and table cell from the JSON.
properties/measurement/sweep_to_report.sh runs the same check on a real CPU sweep.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
import unittest
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import check_report  # noqa: E402
import report  # noqa: E402
import scanlab_report as sr  # noqa: E402

CEILINGS = {"schema": "scanlab.ceilings/1",
            "machine": {"device": "NVIDIA H200 (test)", "backend": "cuda"},
            "copy_native": {"bytes_per_s": 4.27e12, "how": "cudaMemcpyAsync"},
            "copy_variants": [{"name": "range_float_int64", "vector_bytes": 4, "bytes_per_s": 0.85e12,
                               "fraction_of_native": 0.85 / 4.27, "how": "RangePolicy"},
                              {"name": "team_float4_256x1024", "vector_bytes": 16, "bytes_per_s": 3.94e12,
                               "fraction_of_native": 3.94 / 4.27, "how": "streaming"}],
            "streaming_pattern": {"header": "kernels/streaming.hpp", "variant": "team_float4_256x1024",
                                  "bytes_per_s": 3.94e12, "fraction_of_native": 3.94 / 4.27},
            "sfu": {"exp2": {"ops_per_s": 4.13e12, "how": "chains"}},
            "roofline": {"memory_label": "HBM", "memory_bytes_per_s": 4.27e12, "l2_bytes_per_s": 8.26e12,
                         "fp32_flops_per_s": 55.2e12, "sfu_ops_per_s": 4.13e12}}
MACHINE = {"device": "NVIDIA H200 (test)", "backend": "cuda", "git_commit": "abc123", "host": "gpu"}
OPTIONS = {"z": True, "D": True, "delta_bias": True, "softplus": True, "initial_state": False, "act_fn": "silu"}


def costs(b, d, n, l):
    bdl = b * d * l
    return {"bytes_moved": 16.0 * bdl, "flops": bdl * (7.0 * n + 7), "sfu_ops": bdl * (n + 4.0)}


def make_sweeps(tmp: Path) -> list[str]:
    shapes = [(8, 4096, 16, 2048), (2, 4096, 16, 8192), (8, 2048, 16, 2048), (8, 4096, 16, 4096),
              (8, 4096, 64, 2048), (8, 1024, 16, 2048)]
    ours, mamba, lrnnx = [], [], []
    for i, (b, d, n, l) in enumerate(shapes):
        shape = {"batch": b, "dim": d, "dstate": n, "seqlen": l, "groups": 1}
        for direction, scale in (("fwd", 1.0), ("fwdbwd", 3.2)):
            t = 1e-3 * scale * (b * d * l) / (8 * 4096 * 2048) * (1 + 0.1 * (n // 16 - 1))
            c = costs(b, d, n, l)
            if direction == "fwdbwd":
                c = {k: 3 * v for k, v in c.items()}
            ours.append(sr.make_case("selective_scan", direction, shape, OPTIONS, "scanlab", "cuda",
                                     [t * (1 + 0.01 * k) for k in range(10)], c, CEILINGS,
                                     impl="sequential", config={"impl": "sequential"}))
            mamba.append(sr.make_case("selective_scan", direction, shape, OPTIONS, "mamba_ssm", "cuda (torch)",
                                      [3 * t * (1 + 0.01 * k) for k in range(10)], c, CEILINGS,
                                      agreement={"against": "scanlab:cuda", "rel_l2_error": 2e-7, "pass": True}))
            if i < 2:  # a peer that disagrees: no speedup may be shown
                lrnnx.append(sr.make_case("selective_scan", direction, shape, OPTIONS, "broken_peer", "cuda",
                                          [0.5 * t] * 5, c, CEILINGS,
                                          agreement={"against": "scanlab:cuda", "rel_l2_error": 0.3, "pass": False}))
    files = []
    for impl, cases, peer in (("scanlab", ours, None), ("mamba_ssm", mamba, {"name": "mamba_ssm"}),
                              ("broken_peer", lrnnx, {"name": "broken_peer"})):
        sweep = sr.make_sweep(impl, "selective_scan", MACHINE, cases, CEILINGS, peer=peer)
        path = tmp / f"{impl}.json"
        path.write_text(json.dumps(sweep))
        files.append(str(path))
    return files


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # matplotlib 3.8's mathtext calls pyparsing names that newer pyparsing deprecates.
        warnings.simplefilter("ignore", DeprecationWarning)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)
        cls.files = make_sweeps(cls.dir)
        cls.out = cls.dir / "report"  # rendered once: rendering is most of the test's time
        cls.status = report.main(cls.files + ["--out", str(cls.out)])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_number_and_point_matches_the_json(self):
        files, out = self.files, self.out
        self.assertEqual(self.status, 0)
        errors = check_report.check(files, str(out))
        self.assertEqual(errors, [])
        md = (out / "report.md").read_text()
        self.assertIn("scanlab against mamba_ssm", md)
        self.assertIn("3.00×", md)  # mamba takes three times as long in the synthetic data
        self.assertIn("DISAGREES", md)
        for name in ("roofline_NVIDIA_H200_test", "scaling_seqlen", "scaling_dim", "scaling_dstate"):
            for ext in ("png", "svg"):
                self.assertTrue((out / "figures" / f"{name}.{ext}").is_file(), f"{name}.{ext}")
        html = (out / "report.html").read_text()
        self.assertIn("<table>", html)
        self.assertIn("figures/roofline_NVIDIA_H200_test.svg", html)

    def test_the_check_has_teeth(self):
        files, out = self.files, self.dir / "tampered"
        shutil.copytree(self.out, out)
        points = json.loads((out / "points.json").read_text())
        machine = "NVIDIA H200 (test)"
        points["roofline"][machine]["flop"][0]["y"] *= 1.001
        points["scaling"][0]["y_s"][0] *= 1.5
        (out / "points.json").write_text(json.dumps(points))
        md = (out / "report.md").read_text()
        (out / "report.md").write_text(md.replace("3.00×", "3.10×", 1))
        errors = check_report.check(files, str(out))
        self.assertTrue(any("flop point" in e for e in errors), errors)
        self.assertTrue(any("scaling" in e for e in errors), errors)
        self.assertTrue(any("speedup against mamba_ssm" in e for e in errors), errors)

    def test_inconsistent_or_broken_files_are_refused(self):
        files = self.files
        sweep = json.loads(Path(files[0]).read_text())
        sweep["cases"][0]["achieved"]["bytes_per_s"] *= 2
        bad = self.dir / "bad.json"
        bad.write_text(json.dumps(sweep))
        with self.assertRaises(sr.SchemaError):
            sr.flatten([(str(bad), sr.load_sweep(bad))])
        sweep = json.loads(Path(files[0]).read_text())
        sweep["cases"][1]["key"] = sweep["cases"][0]["key"]
        del sweep["cases"][2]["time_s"]
        bad.write_text(json.dumps(sweep))
        with self.assertRaises(sr.SchemaError) as ctx:
            sr.load_sweep(bad)
        self.assertIn("duplicate case", str(ctx.exception))
        self.assertIn("cases[2].time_s", str(ctx.exception))
        self.assertEqual(report.main([str(bad), "--out", str(self.dir / "r")]), 2)

    def test_a_python_without_matplotlib_gets_a_clear_error(self):
        import contextlib
        import io
        from unittest import mock
        err = io.StringIO()
        with mock.patch.dict(sys.modules, {"matplotlib": None}), contextlib.redirect_stderr(err):
            status = report.main([*self.files, "--out", str(self.dir / "no-matplotlib")])
        self.assertEqual(status, 2)
        self.assertIn("cannot import matplotlib", err.getvalue())
        self.assertIn("SCANLAB_PYTHON", err.getvalue())

    def test_keys_and_statistics_match_the_cpp_definitions(self):
        key = sr.case_key("selective_scan", "fwd", {"seqlen": 2048, "batch": 8},
                          {"z": True, "act_fn": "silu", "D": False})
        self.assertEqual(key, "selective_scan/fwd/D=off,act_fn=silu,batch=8,seqlen=2048,z=on")
        s = sr.spread_of([10, 1, 3, 2, 4])
        self.assertEqual((s["q1"], s["median"], s["q3"]), (2, 3, 4))
        a = {"median": 1.0, "q1": 0.98, "q3": 1.02}
        self.assertEqual(sr.verdict(a, {"median": 1.03, "q1": 1.01, "q3": 1.05}), "same within noise")
        self.assertEqual(sr.verdict(a, {"median": 0.9, "q1": 0.88, "q3": 0.92}), "faster")
        self.assertEqual(sr.verdict(a, {"median": 1.1, "q1": 1.08, "q3": 1.12}), "slower")




class AgreementTextTest(unittest.TestCase):
    def test_a_peer_that_failed_is_not_checked_rather_than_disagreeing(self):
        text = report.agreement_text({"against": "scanlab:cuda", "pass": False, "error": "the peer failed: TypeError"})
        self.assertTrue(text.startswith("not checked: the peer failed"), text)
        self.assertNotIn("DISAGREES", text)

    def test_a_measured_disagreement_says_so(self):
        text = report.agreement_text({"against": "scanlab:cuda", "pass": False, "rel_l2_error": 0.5})
        self.assertIn("DISAGREES", text)
        self.assertIn("rel err 5.00e-01", text)


class TuneTableTest(unittest.TestCase):
    def test_rows_carry_the_tune_json_numbers(self):
        tune = {"schema": "scanlab.tune/1", "op": "s7_scan", "machine": {"device": "NVIDIA H200 test"},
                "cases": [{"case": "s7_scan/fwdbwd/x", "heuristic_median_s": 0.006, "winner_median_s": 0.005,
                           "winner": {"impl": "chunked", "chunk_len": 32},
                           "candidates": [{"status": "timed"}, {"status": "timed"}, {"status": "wrong"},
                                          {"status": "unverified"}]}]}
        t = report.tune_table("tune.json", tune)
        self.assertEqual(t.rows, [["s7_scan/fwdbwd/x", "6", "5", "1.20×", "2", "1", "1",
                                   '{"chunk_len":32,"impl":"chunked"}']])


if __name__ == "__main__":
    unittest.main()
