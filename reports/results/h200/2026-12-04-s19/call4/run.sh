#!/usr/bin/env bash
# Session 19's fourth call: the session's last code (§33-§34 and two states at once at every dstate-16
# shape above 16384 channels) on the six issue shapes and (8,4096,32,2048), forward, backward and
# forward+backward, beside mamba_ssm; ceilings measured first; CUDA kernel tests; memcheck and
# racecheck of the interleaved backward at 32-row teams if time is left. Run from the repository
# root, carrying build/carry and .peers/src:
#   DEADLINE=330 bash reports/results/h200/2026-12-04-s19/call4/run.sh $OUT/s19d
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-300} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
(python3 scripts/peers/build_peers.py mamba_ssm > "$O/peers-build.log" 2>&1; echo "exit $? at $SECONDS s" >> "$O/peers-build.log") &
builder=$!
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048,8x4096x32x2048
run $S ceilings --backend cuda --out "$O/ceilings.json" > "$O/ceilings.txt" 2>&1
run $S sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
    --direction fwd,bwd,fwdbwd "${OPTS[@]}" --shapes $SH --out "$O/selective_scan-tiled.json" > "$O/sweep.txt" 2>&1
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
wait $builder
run python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$O/selective_scan-tiled.json" --scanlab $S \
    --repetitions 10 --out "$O/selective_scan-mamba_ssm.json" > "$O/peers-run.log" 2>&1
run $S report "$O/selective_scan-tiled.json" "$O/selective_scan-mamba_ssm.json" --out "$O/report" > /dev/null 2>&1
if [ "$(left)" -gt 40 ]; then
  for tool in memcheck racecheck; do
    run compute-sanitizer --tool $tool --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
        --config '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8}' \
        --cases 8 --seed 9 --max-size 6000 > "$O/sanitizer-interleave2-$tool.txt" 2>&1
    echo "sanitizer $tool exit $?" >> "$O/sanitizer-interleave2-$tool.txt"
  done
fi
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit" "$O"/sanitizer-*.txt; tail -n 1 "$O/peers-build.log" "$O/peers-run.log"; echo "done at $SECONDS s"
grep "selective_scan/" "$O/sweep.txt" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-100
grep "selective_scan/" "$O/peers-run.log" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-100
