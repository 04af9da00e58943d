#!/usr/bin/env bash
# One nvidia-h200-x2 device call, 2026-11-29 session 3: issue 5's leftovers (s7_scan beside lrnnx,
# the exec-protocol checks of the three peers) and issue 8 (selective_scan sweep split over two
# GPUs with torchrun vs the same sweep in one process on one GPU). Run from the repo root:
#   bash .carry/s3/run.sh [DEADLINE_S=550]
set -uo pipefail
deadline="${1:-550}"
H=/tmp/h200; mkdir -p "$H/x2" "$H/exec"
S=build/cuda/scanlab
mkdir -p build/cuda && cp .carry/s3/scanlab "$S" && chmod +x "$S"
left() { echo $(( deadline - SECONDS > 5 ? deadline - SECONDS : 5 )); }
cmd() { echo "[$SECONDS s] + $*" | tee -a "$H/commands.txt" >&2; }
{ nvidia-smi -L; nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv; nvidia-smi topo -m; } > "$H/machine.txt" 2>&1
{ "$S" --version; nproc; python3 -c 'import torch; print("torch", torch.__version__)'; } >> "$H/machine.txt" 2>&1
"$S" check --help > "$H/exec/check-help.txt" 2>&1
"$S" sweep --help > "$H/x2/sweep-help.txt" 2>&1
cat "$H/machine.txt"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false

# (a) peers build in the background, then ceilings + s7_scan with lrnnx + report (GPU 0)
cmd "CHECKS=none bash scripts/gpu/h200-session.sh $H/a 330 ceilings s7_scan report"
CHECKS=none bash scripts/gpu/h200-session.sh "$H/a" 330 ceilings s7_scan report > "$H/session.log" 2>&1 &
session=$!

# meanwhile (only the compilers on the CPU; nothing is timed): ejkernel through the exec protocol
site=/tmp/scanlab-peer-site
cmd "python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $site .peers/wheels/*.whl"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" .peers/wheels/*.whl > "$H/exec/pip.log" 2>&1
echo "pip exit $?" >> "$H/exec/pip.log"
ej() {  # ej GPU NAME TIMEOUT EXEC CASES
  cmd "CUDA_VISIBLE_DEVICES=$1 PYTHONPATH=$site EXEC_SKIP_LOG=$H/exec/$2-cases.log SCANLAB_FAILURE_DIR=$H/exec/failures-$2 timeout $3 $S check state_space_v1 --backend exec:'$4' --cases $5 --seed 11"
  CUDA_VISIBLE_DEVICES=$1 PYTHONPATH=$site EXEC_SKIP_LOG=$H/exec/$2-cases.log SCANLAB_FAILURE_DIR=$H/exec/failures-$2 \
    timeout "$3" "$S" check state_space_v1 --backend exec:"$4" --cases "$5" --seed 11 > "$H/exec/$2.txt" 2>&1
  echo "exit $? after $SECONDS s" >> "$H/exec/$2.txt"
}
ej 0 ejkernel_xla-plain 60 "python3 scripts/peers/exec_peer.py ejkernel_xla" 20 & e1=$!
ej 1 ejkernel_xla-skip 140 "sh .carry/s3/exec_skip.sh ejkernel_xla" 10 & e2=$!
wait "$e1" "$e2"
wait "$session"; echo "[$SECONDS s] session exit $?" | tee -a "$H/commands.txt"

# (b) issue 8: selective_scan, one process on one GPU vs torchrun over both (nothing else runs)
C="$H/a/measure/ceilings.json"; ce=(); [ -f "$C" ] && ce=(--ceilings "$C")
axes=(selective_scan --backend cuda --direction fwd,bwd,fwdbwd --z on --D on --delta-bias on --softplus on
      --shapes 8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x64x2048 "${ce[@]}")
TR=(torchrun); command -v torchrun > /dev/null || TR=(python3 -m torch.distributed.run)
for run in "1gpu:0" "x2:" "1gpu-dev1:1"; do
  name=${run%%:*}; dev=${run#*:}
  if [ "$name" = x2 ]; then
    cmd "timeout 150 ${TR[*]} --standalone --nproc-per-node=2 --no-python $S sweep ${axes[*]} --out $H/x2/ss-x2.json"
    timeout 150 "${TR[@]}" --standalone --nproc-per-node=2 --no-python "$S" sweep "${axes[@]}" --out "$H/x2/ss-x2.json" > "$H/x2/ss-x2.log" 2>&1
  else
    cmd "CUDA_VISIBLE_DEVICES=$dev timeout 90 $S sweep ${axes[*]} --out $H/x2/ss-$name.json"
    CUDA_VISIBLE_DEVICES=$dev timeout 90 "$S" sweep "${axes[@]}" --out "$H/x2/ss-$name.json" > "$H/x2/ss-$name.log" 2>&1
  fi
  echo "[$SECONDS s] $name exit $?" | tee -a "$H/commands.txt"
done
cp -r "$H/x2/ss-x2.json.ranks" "$H/x2/ranks" 2>/dev/null
for b in x2 1gpu-dev1; do
  cmd "$S compare $H/x2/ss-1gpu.json $H/x2/ss-$b.json --json $H/x2/compare-$b.json > $H/x2/compare-$b.txt"
  "$S" compare "$H/x2/ss-1gpu.json" "$H/x2/ss-$b.json" --json "$H/x2/compare-$b.json" > "$H/x2/compare-$b.txt" 2>&1
done
cp "$H/x2/compare-x2.txt" "$H/x2/compare.txt"; cat "$H/x2/compare.txt"

# (a, cont.) mamba_ssm and lrnnx through the exec protocol, after the timings (one GPU each)
T=$(( $(left) - 15 )); [ "$T" -gt 20 ] || T=20
pe() {  # pe GPU NAME OP TIMEOUT EXEC CASES
  cmd "CUDA_VISIBLE_DEVICES=$1 EXEC_SKIP_LOG=$H/exec/$2-cases.log SCANLAB_FAILURE_DIR=$H/exec/failures-$2 timeout $4 $S check $3 --backend exec:'$5' --cases $6 --seed 11"
  CUDA_VISIBLE_DEVICES=$1 EXEC_SKIP_LOG=$H/exec/$2-cases.log SCANLAB_FAILURE_DIR=$H/exec/failures-$2 \
    timeout "$4" "$S" check "$3" --backend exec:"$5" --cases "$6" --seed 11 > "$H/exec/$2.txt" 2>&1
  echo "exit $? after $SECONDS s" >> "$H/exec/$2.txt"
}
pe 0 mamba_ssm-plain selective_scan 60 "python3 scripts/peers/exec_peer.py mamba_ssm" 20 &
pe 1 lrnnx-plain s7_scan 60 "python3 scripts/peers/exec_peer.py lrnnx" 20 &
pe 0 mamba_ssm-skip selective_scan "$T" "sh .carry/s3/exec_skip.sh mamba_ssm" 40 &
pe 1 lrnnx-skip s7_scan "$T" "sh .carry/s3/exec_skip.sh lrnnx" 40 &
wait
for f in "$H"/exec/*.txt; do echo "== $f"; grep -E "^scanlab check|FAILED|^exec backend|unsupported|^exit|Error|error" "$f" | head -8; done
for f in "$H"/exec/*-cases.log; do echo "== $f: $(grep -c ^PEER "$f") peer, $(grep -c ^SKIPPED "$f") skipped"; done
rm -rf "$H"/a/built "$H"/a.tar.gz "$H"/x2/ss-x2.json.ranks
cp .carry/s3/run.sh .carry/s3/exec_skip.sh "$H/"
tar -czf /tmp/h200.tar.gz -C /tmp h200 && cp /tmp/h200.tar.gz "$OUT/" && ls -la "$OUT"
echo "[$SECONDS s] done"
