"""CPU tests of the peer runners (ctest: measurement_report_python runs them with the venv).

What needs a GPU (building the extensions, timing, the agreement run) is not tested here; what
does not is: the float32-only source patches (on the fetched sources when .peers/ holds them, and
on synthetic text always), case selection, the schema the runners write, case-directory
conversion for the exec protocol, the output comparison. torch-dependent parts skip without torch.
"""
from __future__ import annotations

import json
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import exec_peer  # noqa: E402
import peers  # noqa: E402
import run_peers  # noqa: E402
from peers import sr  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None


def like_sweep(op="selective_scan", options=None) -> dict:
    options = options or {"z": True, "D": True, "delta_bias": True, "softplus": True, "initial_state": False,
                          "act_fn": "silu"}
    ceilings = {"roofline": {"memory_label": "HBM", "memory_bytes_per_s": 4e12, "l2_bytes_per_s": 8e12,
                             "fp32_flops_per_s": 5e13, "sfu_ops_per_s": 4e12}}
    cases = []
    for shape in ({"batch": 2, "dim": 64, "dstate": 16, "seqlen": 128, "groups": 1},
                  {"batch": 8, "dim": 4096, "dstate": 16, "seqlen": 2048, "groups": 1}):
        for direction in ("fwd", "fwdbwd"):
            cases.append(sr.make_case(op, direction, shape, options, "scanlab", "cuda", [1e-3, 1.1e-3, 1.2e-3],
                                      {"bytes_moved": 1e9, "flops": 1e10, "sfu_ops": 1e9}, ceilings))
    return sr.make_sweep("scanlab", op, {"device": "NVIDIA H200", "backend": "cuda"}, cases, ceilings)


class PatchTest(unittest.TestCase):
    def test_pins_come_from_the_goldens_script(self):
        pins = peers.pinned_peers()
        self.assertEqual(set(pins), {"mamba-ssm", "lrnnx", "ejkernel"})
        for version, fname, sha in pins.values():
            self.assertEqual(len(sha), 64)

    def test_patches_refuse_unexpected_sources(self):
        with self.assertRaises(peers.PeerError):
            peers.patch_mamba_binding("int main() {}")
        with self.assertRaises(peers.PeerError):
            peers.patch_mamba_forward("nothing")
        with self.assertRaises(peers.PeerError):
            peers.patch_lrnnx_binding("nothing")

    def test_patches_apply_to_the_fetched_sources(self):
        try:
            peers.source_root("mamba-ssm")
            peers.source_root("lrnnx")
        except peers.PeerError as e:
            self.skipTest(f"peer sources not fetched here ({e}); scripts/peers/fetch.sh fetches them")
        stage, sources, key = peers.staged_sources("mamba_ssm")
        text = (stage / "selective_scan.cpp").read_text()
        self.assertIn("this scanlab peer build has float32 only", text)
        self.assertIn("// template void selective_scan_fwd_cuda<float, complex_t>",
                      (stage / "selective_scan_fwd_fp32.cu").read_text())
        self.assertEqual(key, peers.staged_sources("mamba_ssm")[2])  # the cache key is stable
        stage, sources, _ = peers.staged_sources("lrnnx")
        self.assertEqual(len({s.name for s in sources}), len(sources))  # object names cannot collide
        text = (stage / "selective_scan_cpu.cpp").read_text()
        self.assertEqual(text.count('AT_ERROR("this scanlab peer build has the s7 kernels only")'), 2)
        self.assertNotIn("DiscretizationMethod::RGLRU>(params", text)


class SelectionAndSchemaTest(unittest.TestCase):
    def test_cases_are_selected_by_op_options_and_size(self):
        like = like_sweep()
        chosen, skipped = run_peers.select_cases(like, "mamba_ssm", None)
        self.assertEqual(len(chosen), 4)
        chosen, skipped = run_peers.select_cases(like, "mamba_ssm_ref", run_peers.DEFAULT_REF_MAX_BDL)
        self.assertEqual([c["shape"]["dim"] for c in chosen], [64, 64])
        self.assertEqual(len(skipped), 2)
        chosen, skipped = run_peers.select_cases(like, "lrnnx", None)
        self.assertEqual(chosen, [])
        with_state = like_sweep(options={"z": True, "D": True, "delta_bias": True, "softplus": True,
                                         "initial_state": True, "act_fn": "silu"})
        chosen, skipped = run_peers.select_cases(with_state, "mamba_ssm", None)
        self.assertEqual(chosen, [])
        self.assertIn("initial state", skipped[0])
        self.assertEqual(len(run_peers.group_by_problem(like["cases"])), 2)

    def test_a_peer_file_has_the_sweep_schema_and_the_same_keys(self):
        like = like_sweep()
        ceilings = like["scanlab"]["ceilings"]
        cases = [sr.make_case(c["op"], c["direction"], c["shape"], c["options"], "mamba_ssm", "cuda (torch)",
                              [2e-3, 2.5e-3], {k: c[k] for k in ("bytes_moved", "flops", "sfu_ops")}, ceilings,
                              agreement={"pass": True, "rel_l2_error": 1e-7})
                 for c in like["cases"]]
        sweep = sr.make_sweep("mamba_ssm", "selective_scan", like["scanlab"]["machine"], cases, ceilings,
                              peer={"name": "mamba_ssm"})
        sr.check_sweep(json.loads(json.dumps(sweep)), "peer")
        self.assertEqual([c["key"] for c in sweep["cases"]], [c["key"] for c in like["cases"]])
        rows = sr.speedup_rows(sr.flatten([("like", like), ("peer", sweep)]))
        self.assertEqual(len(rows["mamba_ssm"]), 4)
        self.assertAlmostEqual(rows["mamba_ssm"][0]["speedup"], 2.25e-3 / 1.1e-3)

    def test_buffer_sets_follow_the_cpp_rule(self):
        self.assertEqual(run_peers.buffer_sets_for(1 << 20, 64 << 20), 8)
        self.assertEqual(run_peers.buffer_sets_for(64 << 20, 60 << 20), 4)
        self.assertEqual(run_peers.buffer_sets_for(4 << 30, 60 << 20), 1)

    def test_input_shapes_match_the_descriptors(self):
        s = peers.input_shapes("selective_scan", {"batch": 2, "dim": 8, "dstate": 4, "seqlen": 16, "groups": 2},
                               {"z": True, "D": False, "delta_bias": True, "initial_state": False})
        self.assertEqual(s["B"], (2, 2, 4, 16))
        self.assertNotIn("D", s)
        s = peers.input_shapes("s7_inner", {"batch": 2, "seqlen": 16, "dim": 8, "dstate": 4}, {})
        self.assertEqual(s["x_proj_weight"], (2 * 4 + 2 * 8 * 4 + 8, 8))
        self.assertEqual(run_peers.case_options_json("selective_scan", {"softplus": True}),
                         {"op": "selective_scan", "delta_softplus": True})


@unittest.skipIf(np is None, "numpy missing")
class ExecAndAgreementTest(unittest.TestCase):
    def test_case_directories_map_to_sweep_terms(self):
        t = {"u": np.zeros((2, 8, 16)), "delta": np.zeros((2, 8, 16)), "A": np.zeros((8, 4)),
             "B": np.zeros((2, 2, 4, 16)), "C": np.zeros((2, 2, 4, 16)), "z": np.zeros((2, 8, 16))}
        shape, options = exec_peer.case_to_sweep_terms("selective_scan", {"op": "selective_scan",
                                                                          "delta_softplus": True}, t)
        self.assertEqual(shape, {"batch": 2, "dim": 8, "dstate": 4, "seqlen": 16, "groups": 2})
        self.assertTrue(options["z"] and options["softplus"] and not options["D"])
        t["B"] = np.zeros((8, 4))
        with self.assertRaises(peers.Unsupported):
            exec_peer.case_to_sweep_terms("selective_scan", {"op": "selective_scan"}, t)

    def test_exec_adapter_refuses_what_the_peer_lacks(self):
        with tempfile.TemporaryDirectory() as tmp:
            case = Path(tmp) / "case"
            case.mkdir()
            (case / "case.json").write_text(json.dumps({"op": "selective_scan"}))
            for name, shape in {"u": (1, 2, 3), "delta": (1, 2, 3), "A": (2, 1), "B": (1, 1, 3), "C": (1, 1, 3),
                                "initial_state": (1, 2, 1)}.items():
                np.save(case / f"{name}.npy", np.ones(shape))
            self.assertEqual(exec_peer.main(["mamba_ssm", str(case), str(Path(tmp) / "out")]), exec_peer.UNSUPPORTED)
            (case / "case.json").write_text("{")
            self.assertEqual(exec_peer.main(["mamba_ssm", str(case), str(Path(tmp) / "out")]), 2)

    def test_agreement_needs_every_tensor_within_tolerance(self):
        a = {"out": np.ones((4, 4)), "du": np.ones(3)}
        ok = run_peers.compare_outputs(a, {"out": np.ones((4, 4)) * (1 + 1e-6), "du": np.ones(3), "dB": np.ones(2)},
                                       1e-3)
        self.assertTrue(ok["pass"])
        self.assertEqual(ok["compared"], ["du", "out"])
        self.assertEqual(ok["only_scanlab"], ["dB"])
        bad = run_peers.compare_outputs(a, {"out": np.ones((4, 4)) * 1.01, "du": np.ones(3)}, 1e-3)
        self.assertFalse(bad["pass"])
        nan = run_peers.compare_outputs({"out": np.array([np.nan])}, {"out": np.array([1.0])}, 1e-3)
        self.assertFalse(nan["pass"])
        self.assertFalse(run_peers.compare_outputs({}, {"out": np.ones(1)}, 1e-3)["pass"])


if __name__ == "__main__":
    unittest.main()
