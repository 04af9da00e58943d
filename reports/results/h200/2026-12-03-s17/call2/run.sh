#!/usr/bin/env bash
# Session 17's second call: direct_io with two threads a channel under another launch bound
# (variant B: LaunchBounds<128, 3>, 165 registers, 12 warps an SM, carried as build/baseline) and
# with a smaller shared-memory carve-out (SCANLAB_DIRECT_CARVEOUT=1: more L1 for the half-sector
# reuse of its 16-byte loads), beside the heuristic's staged forward and mamba_ssm, forward only,
# on the dstate-16 issue shapes; GPU checks of both experiments and the CUDA kernel tests (the
# split-2 kernel-test configs now whole warps on CUDA). Ceilings from this session's first call.
# Run on the device machine from the repository root, carrying build/carry and .peers/src:
#   bash reports/results/h200/2026-12-03-s17/call2/run.sh $OUT/s17b
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab B=build/baseline/scanlab O="$1"; mkdir -p "$O"
here=reports/results/h200/2026-12-03-s17/call2
(python3 scripts/peers/build_peers.py mamba_ssm > "$O/peers-build.log" 2>&1; echo "exit $?" >> "$O/peers-build.log") &
builder=$!
SH=8x4096x16x2048,4x5120x16x4096,16x1536x16x1024,8x2048x16x2048,2x4096x16x8192
OPTS=(--z on --D on --delta-bias on --softplus on)
d1='{"direct_io":1,"state_split":1,"fwd_time_segments":1,"team_size":128,"channels_per_team":128,"time_tile":32}'
d2='{"direct_io":1,"state_split":2,"fwd_time_segments":1,"team_size":128,"channels_per_team":64,"time_tile":32}'
d2s='{"direct_io":1,"state_split":2,"fwd_time_segments":1,"team_size":64,"channels_per_team":32,"time_tile":32}'
(timeout 60 $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt")
sweep() {  # BINARY NAME CONFIG [ENV...]
  local bin="$1" name="$2" config="$3"; shift 3
  echo "+ $* $bin sweep --config $config ($name)" >> "$O/commands.txt"
  env "$@" $bin sweep selective_scan --backend cuda --ceilings $here/ceilings-call1.json --impl tiled --no-cache \
      ${config:+--config "$config"} --implementation "scanlab-$name" --direction fwd "${OPTS[@]}" --shapes $SH \
      --out "$O/selective_scan-$name.json" > "$O/sweep-$name.txt" 2>&1 || echo "sweep $name failed" >> "$O/commands.txt"
}
sweep $S heuristic ""
sweep $S d2-carveout "$d2s" SCANLAB_DIRECT_CARVEOUT=1
sweep $S d2-team64 "$d2s"
sweep $S d1-carveout "$d1" SCANLAB_DIRECT_CARVEOUT=1
sweep $B B-d2 "$d2"
sweep $B B-d2-carveout "$d2" SCANLAB_DIRECT_CARVEOUT=1
sweep $B B-d2-team64 "$d2s"
for c in "B $B {\"direct_io\":1,\"state_split\":2,\"fwd_time_segments\":1,\"team_size\":64,\"channels_per_team\":32}" \
         "carveout $S {\"direct_io\":1,\"state_split\":2,\"fwd_time_segments\":1,\"team_size\":64,\"channels_per_team\":32}"; do
  set -- $c
  SCANLAB_DIRECT_CARVEOUT=$([ "$1" = carveout ] && echo 1 || echo 0) timeout 60 $2 check selective_scan --backend cuda \
      --impl tiled --config "$3" --cases 300 --seed 52 > "$O/check-$1.txt" 2>&1; echo "exit $?" >> "$O/check-$1.txt"
done
wait $builder
timeout 150 python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$O/selective_scan-heuristic.json" --scanlab $S \
    --repetitions 10 --out "$O/selective_scan-mamba_ssm.json" > "$O/peers-run.log" 2>&1
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "failures\|exit" "$O"/check-*.txt; cat "$O/commands.txt" | grep failed
