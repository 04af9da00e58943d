#!/usr/bin/env bash
# Session 29, call 4: where the backward's time goes, kernel by kernel, at the anchor and at the two
# shapes whose backward ratio to mamba_ssm is lowest (call1: (8,2048,16,2048) 1.44x and
# (2,4096,16,8192) 1.47x, against 2.13x at the anchor), and the forward's at (2,4096,16,8192). ncu's
# duration of each kernel of one timed call (no warm-up, one repetition of one call), main's
# binary (call1's), the heuristic's config; clocks not locked (--clock-control none). On an H200
# (none came this session until now) main beside mamba_ssm too, as call1 did on the H100.
#   bash reports/results/h100/2026-12-05-s29/call4/run.sh $OUT/s29d   # carry build/carry-s29 .peers/src
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s29}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
echo "gpu: $gpu"
# the sweeps need ceilings for their floors (not for ncu's durations): the H100's from call1
case "$gpu" in
  *H200*) start_peer_build mamba_ssm; ceilings ;;
  *) cp reports/results/h100/2026-12-05-s29/call1/ceilings.json "$O/ceilings.json" ;;
esac
# kernel_times NAME DIRECTION SHAPE: each kernel launch's duration into $O/ncu-NAME.csv
kernel_times() {
  run ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      "$S" sweep selective_scan --backend cuda --ceilings "$O/ceilings.json" --impl tiled --no-cache \
      --direction "$2" "${OPTS[@]}" --shapes "$3" --repetitions 1 --iterations 1 --warmups 0 \
      --max-buffer-sets 1 --quiet --out "$O/sweep-$1.json" > "$O/ncu-$1.csv" 2> "$O/ncu-$1.err"
  echo "$1: exit $?"
  python3 - "$O/ncu-$1.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; name = head.index("Kernel Name"); value = head.index("Metric Value"); unit = head.index("Metric Unit")
total = collections.OrderedDict()
for r in rows[1:]:
    k = r[name].split("<")[0].split("(")[0][:70]
    v = float(r[value].replace(",", "")) * {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3}.get(r[unit], 1.0)
    total.setdefault(k, []).append(v)
for k, vs in total.items():
    print(f"  {k:70s} {len(vs):3d} launches  {sum(vs):9.1f} us  (last {vs[-1]:.1f})")
PY
}
kernel_times bwd-anchor bwd 8x4096x16x2048
kernel_times bwd-8x2048 bwd 8x2048x16x2048
kernel_times bwd-2x8192 bwd 2x4096x16x8192
kernel_times fwd-2x8192 fwd 2x4096x16x8192
case "$gpu" in *H200*) beside_peer mamba_ssm ;; esac
call_end
