#!/usr/bin/env bash
# Session 22's second call: the landed tree (build/cuda: the SFU activation forms with one MUFU
# each, speed-notes §42) beside mamba_ssm on the six issue shapes and (8,4096,32,2048), forward,
# backward, forward+backward, ceilings first (call1's peer run failed on a sweep named by
# --implementation). Then the SASS of the anchor's forward kernel and ncu's source counters of it,
# for the next session's reading of its latency (call1: neither the XU pipe, 53% busy, nor the
# issue slots, ~50%, bind).
# Prediction: forward ratios as s21/call4's within noise (4.1-4.2x at the anchor), fwd+bwd the same.
# Run from the repository root, carrying build/carry and .peers/src:
#   DEADLINE=420 bash reports/results/h200/2026-12-04-s22/call2/run.sh $OUT/s22b
set -u
bash scripts/gpu/carry.sh unpack || exit 1
S=build/cuda/scanlab O="$1"; mkdir -p "$O"
left() { echo $(( ${DEADLINE:-420} - SECONDS )); }
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
CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
# every ForwardDirect<Cuda, 16, 1, sfu, vec, *> (whole, walk, summary): the anchor's is the whole one
run $CUOBJDUMP -sass $S 2>/dev/null | awk '/Function : /{p = /ForwardDirectINS_4CudaELi16ELi1ELb1ELb1E/} p' | gzip > "$O/sass-forward-direct-16-1.txt.gz"
if [ "$(left)" -gt 60 ]; then
  run ncu --clock-control none --kernel-name-base demangled -k 'regex:ForwardDirect' --launch-count 1 \
      --section SourceCounters --section WarpStateStats --section SchedulerStats \
      --metrics smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum,gpu__time_duration.sum -o /tmp/ncu-fwd -f \
      $S sweep selective_scan --backend cuda --impl tiled --no-cache --direction fwd "${OPTS[@]}" \
      --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 \
      --out /tmp/ncu-sweep.json > "$O/ncu-fwd-anchor.txt" 2>&1
  run ncu --import /tmp/ncu-fwd.ncu-rep --page source --csv --print-source sass 2>> "$O/ncu-fwd-anchor.txt" | gzip > "$O/ncu-fwd-anchor-source-sass.csv.gz"
  run ncu --import /tmp/ncu-fwd.ncu-rep --page details >> "$O/ncu-fwd-anchor.txt" 2>&1
fi
tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
tail -n 2 "$O/tests-cuda.txt"; tail -n 1 "$O/peers-build.log" "$O/peers-run.log"; echo "done at $SECONDS s"
for f in "$O/sweep.txt" "$O/peers-run.log"; do echo "== $(basename $f)"
  grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-70; done
zcat "$O/sass-forward-direct-16-1.txt.gz" | grep -c "Function :"
