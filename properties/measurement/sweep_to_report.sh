#!/usr/bin/env bash
# ctest entry (properties/measurement.tests): the measurement verbs end to end on the CPU, small
# enough for CI's two cores. ceilings -> a sweep in two shards -> merge (checked against the
# unsharded case list) -> compare -> a second op's sweep -> report -> every plotted point and
# table cell recomputed from the JSON (reports/tests/check_report.py).
#   properties/measurement/sweep_to_report.sh path/to/scanlab
set -euo pipefail
scanlab="${1:?usage: sweep_to_report.sh path/to/scanlab}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/env.sh"
python="${SCANLAB_PYTHON:-$SCANLAB_VENV/bin/python}"
[ -x "$python" ] || { echo "sweep_to_report: no Python venv at $python (run scripts/setup.sh python)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=2

"$scanlab" ceilings --backend serial --quick --out "$work/ceilings.json"
axes=(selective_scan --backend serial --batch 1 --dim 8,16 --dstate 4 --seqlen 16:64:x2 --direction fwd,fwdbwd
      --repetitions 3 --iterations 2 --warmups 1 --ceilings "$work/ceilings.json" --quiet)
"$scanlab" sweep "${axes[@]}" --list-cases > "$work/all-cases.txt"
"$scanlab" sweep "${axes[@]}" --shard 0/2 --out "$work/shard0.json"
"$scanlab" sweep "${axes[@]}" --shard 1/2 --out "$work/shard1.json"
"$scanlab" merge "$work/shard1.json" "$work/shard0.json" --out "$work/selective_scan.json"
"$python" - "$work/selective_scan.json" "$work/all-cases.txt" <<'PY'
import json, sys
merged = json.load(open(sys.argv[1]))
keys = [c["key"] for c in merged["cases"]]
expected = open(sys.argv[2]).read().split()
assert keys == expected, f"merged shards {keys} != the sweep's cases {expected}"
assert merged["scanlab"]["complete"] is True
assert len(expected) == 12, len(expected)
print(f"merge: {len(keys)} cases in the sweep's order")
PY
if "$scanlab" merge "$work/shard0.json" "$work/shard0.json" --out "$work/x.json" 2>/dev/null; then
  echo "merge accepted the same shard twice" >&2; exit 1
fi
"$scanlab" compare "$work/selective_scan.json" "$work/selective_scan.json" > "$work/compare.txt"
grep -q "the same within noise in 12 of 12 matched cases" "$work/compare.txt" \
  || { cat "$work/compare.txt" >&2; echo "a file compared with itself is not the same within noise" >&2; exit 1; }
"$scanlab" sweep s7_scan --backend serial --batch 1 --dim 4 --dstate 4 --seqlen 16,32 --direction fwd,bwd \
  --repetitions 3 --iterations 2 --warmups 1 --ceilings "$work/ceilings.json" --quiet --out "$work/s7_scan.json"
SCANLAB_PYTHON="$python" "$scanlab" report "$work/selective_scan.json" "$work/s7_scan.json" --out "$work/report"
"$python" -W ignore::DeprecationWarning "$root/reports/tests/check_report.py" \
  "$work/selective_scan.json" "$work/s7_scan.json" --report "$work/report"
for f in report.md report.html points.json figures/roofline_*.png figures/roofline_*.svg figures/scaling_seqlen.svg; do
  [ -s "$(echo "$work/report/"$f)" ] || { ls -R "$work/report" >&2; echo "missing $f" >&2; exit 1; }
done
echo "sweep_to_report: ok"
