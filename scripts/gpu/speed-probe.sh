#!/usr/bin/env bash
# Issue 7's H200 run, one device call: the "tiled" kernels fuzzed on the GPU, every
# selective_scan implementation on the issue's shapes beside mamba_ssm (agreement checked by the
# peer runner), compute-sanitizer memcheck and racecheck and an Nsight Compute profile of the
# "tiled" kernels, a tune of the forward and of forward+backward at the anchor shape, and
# mamba_ssm fuzzed through the exec protocol. Everything lands in OUT_DIR, archived as
# OUT_DIR.tar.gz on exit.
#   [IMPLS="tiled chunked"] [SPLITS="1 4"] [CONFIGS='{"state_split":4,"team_size":128} {...}' [CONFIG_DIRECTIONS=bwd] [CONFIG_SHAPES=2x4096x16x8192,...]] [S7=1 [S7_CONFIGS='{...} {...}' [S7_CONFIG_DIRECTIONS=fwd,fwdbwd]]] [NCU=1] [NCU_SOURCE=1] [NCU_CONFIG='{...}'] [BASELINE=build/baseline/scanlab [BASELINE_CONFIG='{...}']] [EXEC_CASES=6|0] [TUNE_DIRECTIONS="fwd fwdbwd"] [SELECTIVE_SCAN=0] bash scripts/gpu/speed-probe.sh OUT_DIR [BUDGET_S=540]
# SELECTIVE_SCAN=0 skips every selective_scan stage (with S7=1: an s7-only run). NCU_CONFIG: a config
# patch for the profiled anchor pass (e.g. '{"fast_activations":0}'); the heuristic's otherwise.
# BASELINE: another build's binary (scripts/gpu/build-baseline.sh REV; carry it too) whose tiled
# sweep runs in the same call, as implementation scanlab-baseline: an A/B side by side;
# BASELINE_CONFIG: a config patch over its heuristic (e.g. to match a field the heuristic changed).
# Carry the binaries compressed (scripts/gpu/carry.sh pack here, carry.sh unpack first in the
# call; carry build/carry) and .peers/src (or .peers, whose built mamba_ssm in .peers/built is
# reused, where the 64 MiB limit leaves room for its 15 MB).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${1:?usage: speed-probe.sh OUT_DIR [BUDGET_S]}"
budget="${2:-540}"
mkdir -p "$out"
trap 'tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")" && echo "speed-probe: archived $out.tar.gz"' EXIT
scanlab=build/cuda/scanlab
log() { echo "+ $*" | tee -a "$out/commands.txt" >&2; }
# Past the budget a command is skipped, not started with a few seconds to go: the archive must be
# written before the device call's own limit (give the call a timeout of BUDGET_S + 60 or more; a
# session-4 call with 20 s of margin lost its whole archive).
left() { echo $(( budget - SECONDS )); }
run() {
  log "$@"
  if [ "$(left)" -le 5 ]; then echo "speed-probe: out of budget, skipped" >&2; return 124; fi
  timeout "$(left)" "$@"
}
# compute-sanitizer memcheck and racecheck over `scanlab check CHECK_ARGS...`, each into
# OUT_DIR/sanitizer-PREFIXTOOL.txt with its exit status appended: sanitize PREFIX CHECK_ARGS...
sanitize() {
  local prefix="$1" tool; shift
  for tool in memcheck racecheck; do
    run compute-sanitizer --tool "$tool" --error-exitcode 9 $scanlab check "$@" > "$out/sanitizer-$prefix$tool.txt" 2>&1
    echo "sanitizer $prefix$tool exit $?" | tee -a "$out/sanitizer-$prefix$tool.txt"
  done
}
nvidia-smi -L > "$out/gpu.txt" 2>&1
selective_scan=${SELECTIVE_SCAN:-1}
[ "$selective_scan" = 1 ] && (python3 scripts/peers/build_peers.py mamba_ssm > "$out/peers-build-mamba_ssm.log" 2>&1; echo "exit $? at $SECONDS s" >> "$out/peers-build-mamba_ssm.log") &
builder=$!
if [ "${S7:-0}" = 1 ]; then  # lrnnx for the s7_scan stage
  (python3 scripts/peers/build_peers.py lrnnx > "$out/peers-build-lrnnx.log" 2>&1; echo "exit $? at $SECONDS s" >> "$out/peers-build-lrnnx.log") &
  s7_builder=$!
fi
shapes=8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048
opts=(--z on --D on --delta-bias on --softplus on)
run $scanlab ceilings --backend cuda --out "$out/ceilings.json"
if [ "$selective_scan" = 1 ]; then
# Correctness first: the tiled kernels fuzzed against the oracle on the GPU (MUFU, cp.async).
run $scanlab check selective_scan --backend cuda --impl tiled --cases 1000 --seed 43 > "$out/check-selective_scan-tiled.txt" 2>&1
echo "check selective_scan tiled exit $?" | tee -a "$out/check-selective_scan-tiled.txt"
run $scanlab check state_space_v1 --backend cuda --impl tiled --cases 500 --seed 44 > "$out/check-state_space_v1-tiled.txt" 2>&1
echo "check state_space_v1 tiled exit $?" | tee -a "$out/check-state_space_v1-tiled.txt"
# The tiled kernels with the library activation forms (the heuristic's are the SFU forms, whose
# MUFU error only shows on the GPU: the checks above).
for op in selective_scan state_space_v1; do
  run $scanlab check $op --backend cuda --impl tiled --config '{"fast_activations":0}' --cases 500 --seed 48 \
      > "$out/check-$op-tiled-library.txt" 2>&1
  echo "check $op tiled fast_activations 0 exit $?" | tee -a "$out/check-$op-tiled-library.txt"
done
# tiled's forward with each thread's inputs and outputs in registers (direct_io), which the
# heuristic takes only on shapes far larger than check's; with two threads per channel (direct2)
# the partners swap dt and shares of y by warp shuffles.
direct='{"direct_io":1,"state_split":1,"fwd_time_segments":1,"channels_per_team":32,"team_size":32}'
direct2='{"direct_io":1,"state_split":2,"fwd_time_segments":1,"channels_per_team":32,"team_size":64}'
for op in selective_scan state_space_v1; do
  run $scanlab check $op --backend cuda --impl tiled --config "$direct" --cases 500 --seed 49 > "$out/check-$op-tiled-direct.txt" 2>&1
  echo "check $op tiled direct_io exit $?" | tee -a "$out/check-$op-tiled-direct.txt"
  run $scanlab check $op --backend cuda --impl tiled --config "$direct2" --cases 500 --seed 50 > "$out/check-$op-tiled-direct2.txt" 2>&1
  echo "check $op tiled direct_io split 2 exit $?" | tee -a "$out/check-$op-tiled-direct2.txt"
done
# Every implementation and config axis (state_split 1, 2, 4 among them) drawn at random.
run $scanlab check selective_scan --backend cuda --impl random --cases 1000 --seed 45 > "$out/check-selective_scan-random.txt" 2>&1
echo "check selective_scan random exit $?" | tee -a "$out/check-selective_scan-random.txt"
for impl in ${IMPLS:-tiled chunked}; do
  run $scanlab sweep selective_scan --backend cuda --ceilings "$out/ceilings.json" --impl "$impl" --no-cache \
      --direction fwd,bwd,fwdbwd "${opts[@]}" --shapes "$shapes" --out "$out/selective_scan-$impl.json"
done
if [ -n "${BASELINE:-}" ]; then
  run "$BASELINE" sweep selective_scan --backend cuda --ceilings "$out/ceilings.json" --impl tiled --no-cache \
      --implementation scanlab-baseline ${BASELINE_CONFIG:+--config "$BASELINE_CONFIG"} --direction fwd,bwd,fwdbwd "${opts[@]}" --shapes "$shapes" \
      --out "$out/selective_scan-tiled-baseline.json"
  cp "$(dirname "$BASELINE")/REV" "$out/baseline-REV.txt" 2>/dev/null
fi
# A sweep of "tiled" with a config patch over the heuristic: NAME CONFIG DIRECTIONS SHAPES (the
# results in selective_scan-tiled-NAME.json, implementation scanlab-NAME).
sweep_patch() {
  run $scanlab sweep selective_scan --backend cuda --ceilings "$out/ceilings.json" --impl tiled --no-cache \
      --config "$2" --implementation "scanlab-$1" --direction "$3" "${opts[@]}" \
      --shapes "$4" --out "$out/selective_scan-tiled-$1.json"
}
# The forward with each other state split (the heuristic's is in the sweep above), 32 channels per
# team, on the dstate-16 shapes.
for split in ${SPLITS:-}; do
  sweep_patch "split$split" "{\"state_split\":$split,\"team_size\":$((32 * split)),\"channels_per_team\":32}" \
      fwd "${shapes%,8x4096x64x2048}"
done
# The forward and forward+backward (or CONFIG_DIRECTIONS) with other config patches over the
# heuristic (CONFIGS: JSON objects separated by spaces, e.g. '{"state_split":4,"team_size":128}'),
# every shape (or CONFIG_SHAPES).
i=0
for config in ${CONFIGS:-}; do
  i=$((i + 1))
  sweep_patch "config$i" "$config" "${CONFIG_DIRECTIONS:-fwd,fwdbwd}" "${CONFIG_SHAPES:-$shapes}"
done
# Races and out-of-bounds accesses of the tiled kernels (forward and backward, both tile paths,
# and the forward with direct_io).
sanitize "" selective_scan --backend cuda --impl tiled --cases 12 --seed 7 --max-size 6000
sanitize direct- selective_scan --backend cuda --impl tiled --config "$direct" --cases 12 --seed 7 --max-size 6000
sanitize direct2- selective_scan --backend cuda --impl tiled --config "$direct2" --cases 12 --seed 7 --max-size 6000
# The tiled kernels at the anchor shape under Nsight Compute (Kokkos names every kernel
# cuda_parallel_launch_*: match the functor in the demangled name): one fwd+bwd pass of each.
ncu_tiled=(ncu --clock-control none --kernel-name-base demangled -k 'regex:Tiled|Direct' --launch-count 2)
anchor_once=($scanlab sweep selective_scan --backend cuda --ceilings "$out/ceilings.json" --impl tiled --no-cache
    --direction fwdbwd "${opts[@]}" --shapes 8x4096x16x2048 --repetitions 1 --iterations 1 --warmups 0 --quiet
    --max-buffer-sets 1)
[ -n "${NCU_CONFIG:-}" ] && anchor_once+=(--config "$NCU_CONFIG")
[ "${NCU:-1}" = 1 ] && run "${ncu_tiled[@]}" --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --metrics l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,smsp__inst_executed.sum,smsp__inst_executed_pipe_xu.sum \
    "${anchor_once[@]}" --out "$out/ncu-sweep.json" > "$out/ncu-tiled.txt" 2>&1
# NCU_SOURCE=1: per-SASS-instruction execution counts and stall samples of both tiled kernels at
# the anchor (Source Counters), exported as CSV: where each kernel's instructions go.
if [ "${NCU_SOURCE:-0}" = 1 ]; then
  run "${ncu_tiled[@]}" --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy \
      -o /tmp/ncu-source -f "${anchor_once[@]}" --out /tmp/ncu-source-sweep.json > "$out/ncu-source.txt" 2>&1
  run ncu --import /tmp/ncu-source.ncu-rep --page source --csv --print-source sass 2>> "$out/ncu-source.txt" \
      | gzip > "$out/ncu-source-sass.csv.gz"
  run ncu --import /tmp/ncu-source.ncu-rep --page details >> "$out/ncu-source.txt" 2>&1
fi
fi  # selective_scan
# s7_scan (S7=1): fuzzed on the GPU, then swept beside lrnnx (scripts/peers/measure_h200.sh's stage).
if [ "${S7:-0}" = 1 ]; then
  run $scanlab check s7_scan --backend cuda --cases 500 --seed 46 > "$out/check-s7_scan.txt" 2>&1
  echo "check s7_scan exit $?" | tee -a "$out/check-s7_scan.txt"
  run $scanlab check s7_inner --backend cuda --cases 200 --seed 47 > "$out/check-s7_inner.txt" 2>&1
  echo "check s7_inner exit $?" | tee -a "$out/check-s7_inner.txt"
  sanitize s7_scan- s7_scan --backend cuda --impl random --cases 12 --seed 8 --max-size 6000
  # Every s7_scan kernel of one fwd+bwd pass per shape under Nsight Compute: time, DRAM bytes,
  # occupancy, instructions (CSV).
  for shape in 8x256x64x4096 16x128x16x8192 4x512x32x2048; do
    run ncu --clock-control none --kernel-name-base demangled -k regex:Stage --csv \
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
        $scanlab sweep s7_scan --backend cuda --ceilings "$out/ceilings.json" --direction fwdbwd --bias on --shapes "$shape" \
        --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --no-cache --out /tmp/ncu-s7.json \
        > "$out/ncu-s7_scan-$shape.csv" 2>&1
  done
  wait "$s7_builder"; tail -n 1 "$out/peers-build-lrnnx.log"
  mkdir -p "$out/s7" && cp "$out/ceilings.json" "$out/s7/ceilings.json"  # measure_h200 reuses it
  run bash scripts/peers/measure_h200.sh "$out/s7" ceilings s7_scan
  # The forward (or S7_CONFIG_DIRECTIONS) with other configs (S7_CONFIGS: JSON objects separated
  # by spaces, each a patch over the heuristic).
  i=0
  for config in ${S7_CONFIGS:-}; do
    i=$((i + 1))
    run $scanlab sweep s7_scan --backend cuda --ceilings "$out/s7/ceilings.json" --direction "${S7_CONFIG_DIRECTIONS:-fwd}" --bias on \
        --shapes 8x256x64x4096,16x128x16x8192,4x512x32x2048 --config "$config" --implementation "scanlab-config$i" \
        --out "$out/s7/s7_scan-config$i.json"
  done
fi

[ "$selective_scan" = 1 ] || { echo "speed-probe: done at $SECONDS s"; exit 0; }
wait "$builder"; tail -n 1 "$out/peers-build-mamba_ssm.log"
run python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$out/selective_scan-tiled.json" --scanlab $scanlab \
    --repetitions 10 --out "$out/selective_scan-mamba_ssm.json"
mkdir -p "$out/tune"
for dir in ${TUNE_DIRECTIONS-fwd fwdbwd}; do
  run $scanlab tune selective_scan --backend cuda --direction $dir --max-candidates "${TUNE_CANDIDATES:-20}" --repetitions 5 \
      --cache "$out/tune/tune-cache.json" "${opts[@]}" --shapes 8x4096x16x2048 \
      --out "$out/tune/selective_scan-$dir.json" > "$out/tune/selective_scan-$dir.txt" 2>&1
  tail -n 4 "$out/tune/selective_scan-$dir.txt"
done
# mamba_ssm fuzzed against the oracle through the exec protocol; it declines (exit 3) the cases
# with options it lacks, which check skips and counts.
if [ "${EXEC_CASES:-6}" != 0 ]; then
  run $scanlab check selective_scan --cases "${EXEC_CASES:-6}" --seed 11 \
      --backend exec:'python3 scripts/peers/exec_peer.py mamba_ssm' > "$out/exec-check-mamba_ssm.txt" 2>&1
  echo "exec check mamba_ssm exit $?" | tee -a "$out/exec-check-mamba_ssm.txt"
fi
# The report pairs scanlab's "tiled" run with mamba_ssm (the "chunked" JSON is the same name,
# scanlab, so it stays out of the figures; its numbers are in its own JSON).
run $scanlab report "$out/selective_scan-tiled.json" "$out/selective_scan-mamba_ssm.json" --out "$out/report" > /dev/null
# The kernels' SASS (the dstate-16 forward with two threads per channel, the chunk-8 backward)
# for reading instruction counts offline.
if command -v cuobjdump > /dev/null && [ "$(left)" -gt 10 ]; then
  cuobjdump -sass $scanlab 2>/dev/null | awk '/Function : /{keep = ($0 ~ /ForwardTiled.*Li16ELi2E/ || $0 ~ /BackwardTiled.*Li8E/)} keep' \
      | gzip > "$out/sass-tiled.txt.gz"
fi
echo "speed-probe: done at $SECONDS s"
