#!/usr/bin/env bash
# One device call: what `--impl auto` (the heuristic, no tuning cache) runs, fuzzed on the GPU and
# swept beside mamba_ssm on the issue's shapes plus the few-channel ones (the rule's impl choice),
# with agreement checked by the peer runner. speed-probe.sh sweeps `--impl tiled` instead.
#   [SHAPES=8x4096x16x2048,...] [DIRECTIONS=fwd,bwd,fwdbwd] bash scripts/gpu/heuristic-probe.sh OUT_DIR
# Carry build/carry (scripts/gpu/carry.sh pack) and .peers/src; OUT_DIR.tar.gz is written at the end.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
o="${1:?usage: heuristic-probe.sh OUT_DIR}"
mkdir -p "$o"
trap 'tar -czf "$o.tar.gz" -C "$(dirname "$o")" "$(basename "$o")" && echo "heuristic-probe: archived $o.tar.gz"' EXIT
[ -x build/cuda/scanlab ] || bash scripts/gpu/carry.sh unpack
S=build/cuda/scanlab
log() { echo "+ $*" >> "$o/commands.txt"; }
$S --version | head -n 1 | tee "$o/version.txt"
(python3 scripts/peers/build_peers.py mamba_ssm > "$o/peers-build.log" 2>&1; echo "exit $?" >> "$o/peers-build.log") &
builder=$!
$S ceilings --backend cuda --out "$o/ceilings.json" > /dev/null
opts=(--z on --D on --delta-bias on --softplus on)
shapes=${SHAPES:-8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048,8x4096x32x2048,1x4096x16x8192,1x2048x16x8192,1x1024x16x4096}
# The heuristic on fuzzed problems (auto), tiled's configs, and every impl and config axis at random.
for check in "auto 300 73" "tiled 500 71" "random 500 72"; do
  set -- $check
  log $S check selective_scan --backend cuda --impl "$1" --cases "$2" --seed "$3"
  timeout 100 $S check selective_scan --backend cuda --impl "$1" --cases "$2" --seed "$3" > "$o/check-selective_scan-$1.txt" 2>&1
  echo "check $1 exit $?" | tee -a "$o/check-selective_scan-$1.txt"
done
log $S sweep selective_scan --backend cuda --ceilings "$o/ceilings.json" --impl auto --no-cache \
    --direction "${DIRECTIONS:-fwd,bwd,fwdbwd}" "${opts[@]}" --shapes "$shapes" --out "$o/selective_scan-heuristic.json"
timeout 240 $S sweep selective_scan --backend cuda --ceilings "$o/ceilings.json" --impl auto --no-cache \
    --direction "${DIRECTIONS:-fwd,bwd,fwdbwd}" "${opts[@]}" --shapes "$shapes" --out "$o/selective_scan-heuristic.json" \
    > "$o/sweep.log" 2>&1
echo "sweep exit $?"
wait "$builder"; tail -n 1 "$o/peers-build.log"
log python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$o/selective_scan-heuristic.json" --scanlab $S \
    --repetitions 10 --out "$o/selective_scan-mamba_ssm.json"
timeout 240 python3 scripts/peers/run_peers.py --peer mamba_ssm --like "$o/selective_scan-heuristic.json" --scanlab $S \
    --repetitions 10 --out "$o/selective_scan-mamba_ssm.json" > "$o/mamba.log" 2>&1
echo "peers exit $?"; tail -n 3 "$o/mamba.log"
log $S report "$o/selective_scan-heuristic.json" "$o/selective_scan-mamba_ssm.json" --out "$o/report"
$S report "$o/selective_scan-heuristic.json" "$o/selective_scan-mamba_ssm.json" --out "$o/report" > /dev/null
echo "report exit $?"
