#!/usr/bin/env bash
# Issue 5's H200 run in stages, on the GPU machine (device `run`, carrying .peers and build/cuda):
#   scripts/peers/measure_h200.sh OUT_DIR [STAGE...]
# STAGES (default: all, in this order):
#   build           the peers' float32 extensions (skipped when .peers/built holds them)
#   ceilings        scanlab ceilings on cuda -> ceilings.json (later stages reuse it)
#   selective_scan  scanlab at (B,D,N,L) in the issue's six shapes, z D delta_bias softplus on,
#                   fwd bwd fwdbwd; mamba_ssm beside it; mamba_ssm_ref at (2,1024,16,1024)
#   state_space_v1  scanlab at (8,2048,16,2048) with gate; ejkernel_xla beside it
#   s7_scan         scanlab at (b,H,N,L) in (8,256,64,4096) (16,128,16,8192) (4,512,32,2048); lrnnx beside it
#   s7_inner        scanlab at (b,L,Dm,N) = (8,4096,256,16); lrnnx beside it
#   report          scanlab report over every JSON in OUT_DIR -> OUT_DIR/report
#   tune            scanlab tune (fwdbwd) over the selective_scan and s7_scan shapes above, into
#                   OUT_DIR/tune/ (its own cache file there, so the sweeps above keep the heuristic)
# Every command is echoed and appended to OUT_DIR/commands.txt (commit it with the results).
# SCANLAB_BIN (default build/cuda/scanlab), PEERS_PYTHON (default python3), REPETITIONS (default 10).
set -euo pipefail
out="${1:?usage: measure_h200.sh OUT_DIR [STAGE...]}"; shift
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(build ceilings selective_scan state_space_v1 s7_scan s7_inner report)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
scanlab="${SCANLAB_BIN:-build/cuda/scanlab}"
python="${PEERS_PYTHON:-python3}"
reps="${REPETITIONS:-10}"
mkdir -p "$out"
[ -x "$scanlab" ] || { echo "measure_h200: no $scanlab (SCANLAB_PRESET=cuda ./scanlab --version builds it; carry build/cuda)" >&2; exit 1; }
export PYTHONUNBUFFERED=1 SCANLAB_PYTHON="$python"

run() {  # echo, log and run one command
  echo "+ $*" | tee -a "$out/commands.txt" >&2
  "$@"
}
ceilings() {
  [ -f "$out/ceilings.json" ] || run "$scanlab" ceilings --backend cuda --out "$out/ceilings.json"
}
sweep() {  # sweep NAME OP ARGS...
  local name="$1" op="$2"; shift 2
  ceilings
  run "$scanlab" sweep "$op" --backend cuda --ceilings "$out/ceilings.json" --repetitions "$reps" "$@" \
      --out "$out/$name.json"
}
peer() {  # peer NAME PEER LIKE ARGS...
  local name="$1" which="$2" like="$3"; shift 3
  run "$python" scripts/peers/run_peers.py --peer "$which" --like "$out/$like.json" --scanlab "$scanlab" \
      --repetitions "$reps" --out "$out/$name.json" "$@" || echo "measure_h200: $which did not finish (see above)" >&2
}

for stage in "${stages[@]}"; do
  case "$stage" in
    build) run "$python" scripts/peers/build_peers.py ;;
    ceilings) ceilings ;;
    selective_scan)
      sweep selective_scan selective_scan --direction fwd,bwd,fwdbwd --z on --D on --delta-bias on --softplus on \
        --shapes 8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048
      peer selective_scan-mamba_ssm mamba_ssm selective_scan
      sweep selective_scan_small selective_scan --direction fwd,bwd,fwdbwd --z on --D on --delta-bias on --softplus on \
        --shapes 2x1024x16x1024
      peer selective_scan_small-mamba_ssm_ref mamba_ssm_ref selective_scan_small --repetitions 3 --min-time 0 ;;
    state_space_v1)
      sweep state_space_v1 state_space_v1 --direction fwd,bwd,fwdbwd --gate on --shapes 8x2048x16x2048
      site=/tmp/scanlab-peer-site
      [ -d "$site" ] || run "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
          --target "$site" .peers/wheels/*.whl
      PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" peer state_space_v1-ejkernel_xla ejkernel_xla state_space_v1 ;;
    s7_scan)
      sweep s7_scan s7_scan --direction fwd,bwd,fwdbwd --bias on --shapes 8x256x64x4096,16x128x16x8192,4x512x32x2048
      peer s7_scan-lrnnx lrnnx s7_scan ;;
    s7_inner)
      sweep s7_inner s7_inner --direction fwd,bwd,fwdbwd --shapes 8x4096x256x16
      peer s7_inner-lrnnx lrnnx s7_inner ;;
    tune)
      mkdir -p "$out/tune"
      tune=(--backend cuda --direction fwdbwd --max-candidates "${TUNE_CANDIDATES:-10}" --repetitions "${TUNE_REPETITIONS:-5}"
            --cache "$out/tune/tune-cache.json")
      run "$scanlab" tune selective_scan "${tune[@]}" --z on --D on --delta-bias on --softplus on \
        --shapes 8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048 \
        --out "$out/tune/selective_scan.json" > "$out/tune/selective_scan.txt" || true
      cat "$out/tune/selective_scan.txt"
      run "$scanlab" tune s7_scan "${tune[@]}" --bias on --shapes 8x256x64x4096,16x128x16x8192,4x512x32x2048 \
        --out "$out/tune/s7_scan.json" > "$out/tune/s7_scan.txt" || true
      cat "$out/tune/s7_scan.txt" ;;
    report)
      mapfile -t files < <(ls "$out"/*.json | grep -v '/ceilings.json$')
      run "$scanlab" report "${files[@]}" --out "$out/report" ;;
    *) echo "measure_h200: unknown stage '$stage'" >&2; exit 2 ;;
  esac
done
