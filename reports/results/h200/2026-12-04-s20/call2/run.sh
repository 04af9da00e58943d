#!/usr/bin/env bash
# Session 20's second call. build/baseline is eb7e3d2 (direct_io in time segments and its rule);
# build/cuda adds an L1 prefetch of the next chunk's first reads in the backward (u, raw delta, dout,
# z and the first group's chunk-start states, issued at the chunk's start; speed-notes §37).
# 1. The committed code (baseline) on the six issue shapes and (8,4096,32,2048), forward, backward
#    and forward+backward, beside mamba_ssm; ceilings first.
# 2. The prefetch's backward against the baseline's, each twice, alternating.
# Then CUDA kernel tests of the prefetch binary, and memcheck of its interleaved backward.
# Prediction (§37): backward 1.03-1.08x at the anchor (its three long-scoreboard rows, 18.5% of the
# stall samples, are the chunk's first reads), less where teams are fewer.
# Run from the repository root, carrying build/carry and .peers/src:
#   DEADLINE=420 bash reports/results/h200/2026-12-04-s20/call2/run.sh $OUT/s20b
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab BASE=build/baseline/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-400} - SECONDS )); }
run() { echo "+ $*" >> "$O/commands.txt"; [ "$(left)" -gt 5 ] && timeout "$(left)" "$@"; }
(python3 scripts/peers/build_peers.py mamba_ssm > "$O/peers-build.log" 2>&1; echo "exit $? at $SECONDS s" >> "$O/peers-build.log") &
builder=$!
OPTS=(--z on --D on --delta-bias on --softplus on)
SH=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048,8x4096x32x2048
run $BASE ceilings --backend cuda --out "$O/ceilings.json" > "$O/ceilings.txt" 2>&1
run $BASE sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
    --direction fwd,bwd,fwdbwd "${OPTS[@]}" --shapes $SH --out "$O/selective_scan-tiled.json" > "$O/sweep.txt" 2>&1
bwd() {  # BINARY NAME
  run $1 sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
      --implementation "scanlab-$2" --direction bwd "${OPTS[@]}" --shapes $SH \
      --out "$O/selective_scan-bwd-$2.json" > "$O/sweep-bwd-$2.txt" 2>&1
}
bwd $S prefetch
bwd $BASE baseline-again
bwd $S prefetch-again
run $S test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1; echo "exit $?" >> "$O/tests-cuda.txt"
wait $builder
run python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$O/selective_scan-tiled.json" --scanlab $BASE \
    --repetitions 10 --out "$O/selective_scan-mamba_ssm.json" > "$O/peers-run.log" 2>&1
run $BASE report "$O/selective_scan-tiled.json" "$O/selective_scan-mamba_ssm.json" --out "$O/report" > /dev/null 2>&1
if [ "$(left)" -gt 40 ]; then
  run compute-sanitizer --tool memcheck --error-exitcode 9 $S check selective_scan --backend cuda --impl tiled \
      --config '{"bwd_state_split":1,"bwd_channels_per_team":32,"bwd_team_size":32,"bwd_state_interleave":2,"chunk_len":8}' \
      --cases 8 --seed 9 --max-size 6000 > "$O/sanitizer-prefetch-memcheck.txt" 2>&1
  echo "sanitizer memcheck exit $?" >> "$O/sanitizer-prefetch-memcheck.txt"
fi
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; grep -h "exit" "$O"/sanitizer-*.txt; tail -n 1 "$O/peers-build.log" "$O/peers-run.log"; echo "done at $SECONDS s"
for f in "$O/sweep.txt" "$O"/sweep-bwd-*.txt "$O/peers-run.log"; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-90; done
