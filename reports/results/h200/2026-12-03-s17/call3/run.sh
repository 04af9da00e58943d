#!/usr/bin/env bash
# Session 17's third call: the committed heuristic (direct_io with its fitted carve-out wherever
# the forward runs without time segments from dstate 16; two threads a channel below 7 warps an
# SM) on the six issue shapes, forward, backward and forward+backward, beside mamba_ssm; the CUDA
# kernel tests; GPU checks of direct_io with one and two threads a channel (carve-out on, as
# always now). Ceilings from this session's first call. A deadline keeps the archive inside the
# device budget. Run from the repository root, carrying build/carry and .peers/src:
#   bash reports/results/h200/2026-12-03-s17/call3/run.sh $OUT/s17c
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
ceil=reports/results/h200/2026-12-03-s17/call2/ceilings-call1.json
left() { echo $(( ${DEADLINE:-270} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
(python3 scripts/peers/build_peers.py mamba_ssm > "$O/peers-build.log" 2>&1; echo "exit $?" >> "$O/peers-build.log") &
builder=$!
OPTS=(--z on --D on --delta-bias on --softplus on)
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
run $S sweep selective_scan --backend cuda --ceilings $ceil --impl tiled --no-cache --direction fwd,bwd,fwdbwd "${OPTS[@]}" \
    --shapes 8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048 \
    --out "$O/selective_scan-tiled.json" > "$O/sweep.txt" 2>&1
i=0
for config in '{"direct_io":1,"state_split":1,"fwd_time_segments":1,"channels_per_team":32,"team_size":32}' \
              '{"direct_io":1,"state_split":2,"fwd_time_segments":1,"channels_per_team":32,"team_size":64}'; do
  i=$((i + 1))
  for op in selective_scan state_space_v1; do
    run $S check $op --backend cuda --impl tiled --config "$config" --cases 200 --seed $((60 + i)) > "$O/check-$op-direct$i.txt" 2>&1
    echo "exit $?" >> "$O/check-$op-direct$i.txt"
  done
done
wait $builder
run python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$O/selective_scan-tiled.json" --scanlab $S \
    --repetitions 10 --out "$O/selective_scan-mamba_ssm.json" > "$O/peers-run.log" 2>&1
run $S report "$O/selective_scan-tiled.json" "$O/selective_scan-mamba_ssm.json" --out "$O/report" > /dev/null 2>&1
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "failures\|^exit" "$O"/check-*.txt | paste - - ; tail -n 1 "$O/peers-run.log"; echo "done at $SECONDS s"
