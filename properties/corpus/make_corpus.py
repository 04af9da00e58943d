#!/usr/bin/env python3
"""Writes the hand-picked edge cases of properties/corpus/ (run once; the directories are committed).

    python3 properties/corpus/make_corpus.py

Each case is a case directory (DESIGN.md): case.json and float64 .npy inputs whose values are
float32-representable, with dout (and the state cotangent) so that the backward is replayed too.
`scanlab test --gtest_filter=Corpus.*` replays every case here on the reference backend and on
every compiled Kokkos backend and requires a pass. Shrunk failures saved by `scanlab check` or a
property join this directory, as they are, once they are fixed.
"""
import json
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
INV_SQRT2 = float(np.float32(1 / np.sqrt(2)))  # |A| where S7's A_bar = 1 − 1/(A² + 0.5) crosses 0
ULP32_AT_20 = 2.0 ** -19


def f32(x):
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def write(name, case, tensors, config=None):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(case, f, indent=2)
        f.write("\n")
    for key, value in tensors.items():
        np.save(os.path.join(d, key + ".npy"), np.ascontiguousarray(f32(value)))
    if config is not None:  # the kernel config a finding ran with (used where the backend can run it)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
            f.write("\n")


def main():
    rng = np.random.default_rng(20240601)
    u = lambda *shape, scale=1.0: rng.uniform(-scale, scale, size=shape)

    def gated(b, D, N, L):  # selective_scan with delta_bias, D, z and both cotangents
        return {"u": u(b, D, L), "delta": u(b, D, L), "delta_bias": u(D), "A": -rng.uniform(0.1, 2, size=(D, N)),
                "B": u(b, N, L), "C": u(b, N, L), "D": u(D), "z": u(b, D, L, scale=3), "dout": u(b, D, L),
                "dlast_state": u(b, D, N)}

    # s7_scan at A_bar = 0: every A is ±float32(1/√2), where lrnnx's backward divides by zero.
    b, H, N, L = 1, 2, 3, 7
    A = INV_SQRT2 * np.where(rng.uniform(size=(b, N, L)) < 0.5, -1.0, 1.0)
    write("s7_scan-abar-zero", {"op": "s7_scan", "note": "A = ±float32(1/sqrt(2)) everywhere: A_bar = 0 (to float32)"},
          {"u": u(b, H, L), "A": A, "B": u(b, N, H, L), "C": u(b, H, N, L), "bias": u(b, N, L),
           "initial_state": u(b, N), "dout": u(b, H, L), "dlast_state": u(b, N)})

    # s7_scan with every size 1.
    write("s7_scan-all-ones", {"op": "s7_scan", "note": "batch 2, dim 1, dstate 1, seqlen 1"},
          {"u": u(2, 1, 1), "A": u(2, 1, 1, scale=3), "B": u(2, 1, 1, 1), "C": u(2, 1, 1, 1),
           "initial_state": u(2, 1), "dout": u(2, 1, 1), "dlast_state": u(2, 1)})

    # s7_inner at A_bar = 0: the x_proj rows that make A are zero, so A = base_params = ±1/√2.
    b, L, Dm, N = 1, 5, 2, 2
    R = 2 * N + 2 * Dm * N + Dm
    x_proj = u(R, Dm, scale=0.7)
    x_proj[:N, :] = 0
    write("s7_inner-abar-zero", {"op": "s7_inner", "note": "A rows of x_proj zero, base_params = ±float32(1/sqrt(2))"},
          {"hidden_states": u(b, L, Dm), "in_proj_weight": u(Dm, Dm, scale=0.7), "x_proj_weight": x_proj,
           "gate_proj_weight": u(Dm, Dm, scale=0.7), "base_params": np.array([INV_SQRT2, -INV_SQRT2]),
           "dout": u(b, L, Dm)})

    # selective_scan around the softplus threshold: delta + delta_bias = 20 ± 16 float32 ulps,
    # ± 1e-3, 19.5, 20.5 and 25 (past it), all with float32-exact addends.
    b, D, N, L = 1, 2, 4, 6
    bias = f32(u(D, scale=1.0))
    offsets = np.array([16 * ULP32_AT_20, -16 * ULP32_AT_20, 1e-3, -1e-3, -0.5, 5.0])
    delta = np.empty((b, D, L))
    for d in range(D):
        delta[0, d] = f32(20.0 + offsets - bias[d])
        raw = delta[0, d] + bias[d]
        assert np.all(np.abs(raw - 20.0) >= 8 * ULP32_AT_20), raw
    write("selective_scan-softplus-threshold",
          {"op": "selective_scan", "delta_softplus": True, "note": "delta + delta_bias at 20 ± 16 ulps, ± 1e-3, 19.5, 25"},
          {"u": u(b, D, L), "delta": delta, "delta_bias": bias, "A": -rng.uniform(0.1, 2, size=(D, N)),
           "B": u(b, N, L), "C": u(b, N, L), "D": u(D), "z": u(b, D, L, scale=3), "dout": u(b, D, L),
           "dlast_state": u(b, D, N)})

    # selective_scan with seqlen 1 and every option: groups, a time-invariant C, initial state.
    b, D, G, N, L = 2, 4, 2, 2, 1
    write("selective_scan-seqlen1", {"op": "selective_scan", "delta_softplus": True, "note": "seqlen 1, every option"},
          {"u": u(b, D, L), "delta": u(b, D, L), "delta_bias": u(D), "A": -rng.uniform(0.1, 2, size=(D, N)),
           "B": u(b, G, N, L), "C": u(D, N), "D": u(D), "z": u(b, D, L, scale=3), "initial_state": u(b, D, N),
           "dout": u(b, D, L), "dlast_state": u(b, D, N)})

    # selective_scan past every chunk length with the largest compile-time dstate.
    b, D, N, L = 1, 1, 64, 131
    write("selective_scan-long-dstate64", {"op": "selective_scan", "note": "seqlen 131 (past chunk lengths up to 128), dstate 64"},
          {"u": u(b, D, L), "delta": rng.uniform(0.01, 0.5, size=(b, D, L)), "A": -rng.uniform(0.05, 3, size=(D, N)),
           "B": u(b, N, L), "C": u(b, N, L), "dout": u(b, D, L)})

    # state_space_v1 with seqlen 1, an exact-GELU gate, conv_state passthrough and an initial state.
    b, L, D, N, K = 2, 1, 3, 2, 4
    write("state_space_v1-seqlen1-gelu-conv",
          {"op": "state_space_v1", "act_fn": "gelu_erf", "note": "seqlen 1, gelu_erf gate, conv_state, initial_state"},
          {"hidden_states": u(b, L, D), "A": -rng.uniform(0.1, 2, size=(D, N)), "B": u(b, L, N), "C": u(b, L, N),
           "D": u(D), "dt": rng.uniform(0.01, 1.0, size=(b, L, D)), "gate": u(b, L, D, scale=3),
           "initial_state": u(b, D, N), "conv_state": u(b, D, K), "dout": u(b, L, D), "dfinal_state": u(b, D, N)})

    # selective_scan as "tiled" ran it on the H200 with a state split of 4 over chunks of 8: a change
    # (not kept) that had each of a channel's four backward threads finish two steps met the 16-byte
    # path of load/store_channel_steps moving kK / 4 = 0 vectors, so du and ddelta were never written
    # (session 6; found by `scanlab check --impl tiled` on cuda). config.json runs it where the
    # backend offers teams of four threads (CUDA, OpenMP with 4+); elsewhere the heuristic's.
    write("selective_scan-tiled-split4-two-step-slices",
          {"op": "selective_scan", "delta_softplus": True, "note": "tiled, bwd_state_split 4, chunk 8: two-step backward slices"},
          gated(1, 1, 4, 2),
          {"impl": "tiled", "dstate_static": 4, "channels_per_team": 1, "team_size": 4, "state_split": 4,
           "time_tile": 16, "chunk_len": 8, "bwd_channels_per_team": 1, "bwd_team_size": 4,
           "bwd_state_split": 4, "stage_io": 0, "scratch_level": 0})

    # selective_scan as "tiled"'s forward with direct_io 2 (the team's rows of u and delta staged
    # through scratch) first ran it on the GPU (session 35): the swizzle was a constexpr host
    # function, which device code called without --expt-relaxed-constexpr (only a warning), and the
    # call compiled to nothing, so every 16-byte piece of a tile was copied to its row's start and
    # read from there: out and last_state wrong on CUDA alone (the host ran it right). Found by
    # `scanlab check --impl tiled --config '{"direct_io":2,...}'` on an H100. Two tiles of 32 steps
    # and a short third, 8 channels a team of 8 (CUDA, OpenMP with 8+ threads: ctest
    # kernels_wide_teams), z on.
    write("selective_scan-tiled-direct-rows-swizzle",
          {"op": "selective_scan", "delta_softplus": True, "note": "tiled forward, direct_io 2: rows staged through scratch, three tiles"},
          gated(2, 8, 2, 72),
          {"impl": "tiled", "dstate_static": 2, "channels_per_team": 8, "team_size": 8, "state_split": 1,
           "time_tile": 32, "direct_io": 2, "chunk_len": 8, "bwd_channels_per_team": 1, "bwd_team_size": 1,
           "stage_io": 0, "scratch_level": 0})


if __name__ == "__main__":
    main()
