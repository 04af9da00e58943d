#!/usr/bin/env bash
# ctest: fuzzes scripts/exec_example/selective_scan_numpy.py through `scanlab check --backend exec:`
# (the example must pass), then shows that a deliberately wrong copy of it (out perturbed by
# 1e-3 through SCANLAB_EXAMPLE_PERTURB) is caught, shrunk and saved, and that the saved case
# replays as a failure with the wrong implementation and as a pass with the right one.
# Usage: exec_example_test.sh path/to/scanlab
set -euo pipefail
scanlab="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/env.sh"
python="${SCANLAB_PYTHON:-$SCANLAB_VENV/bin/python}"
if ! "$python" -c 'import numpy' 2>/dev/null; then
  echo "exec_example_test: $python cannot import numpy (run scripts/setup.sh cpu python)" >&2
  exit 1
fi
example="$root/scripts/exec_example/selective_scan_numpy.py"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export SCANLAB_FAILURE_DIR="$work/failures" OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

echo "== the example passes 30 cases"
"$scanlab" check selective_scan --cases 30 --seed 1 --backend "exec:$python $example" | tee "$work/good.txt"
grep -q "failures: 0" "$work/good.txt"

echo "== its float32 mode passes too (the bound admits a float32 NumPy)"
"$scanlab" check selective_scan --cases 15 --seed 2 --backend "exec:$python $example --float32" > "$work/f32.txt"
grep -q "failures: 0" "$work/f32.txt" || { cat "$work/f32.txt"; exit 1; }

echo "== a wrong implementation (out × (1 + 1e-3)) is caught and saved"
set +e
SCANLAB_EXAMPLE_PERTURB=1e-3 "$scanlab" check selective_scan --cases 30 --seed 3 \
  --backend "exec:$python $example" > "$work/wrong.txt" 2>&1
status=$?
set -e
cat "$work/wrong.txt"
[ "$status" -eq 1 ] || { echo "expected exit 1 from check of the wrong implementation, got $status" >&2; exit 1; }
saved="$(sed -n 's/^saved: //p' "$work/wrong.txt")"
[ -f "$saved/case.json" ] || { echo "no saved case directory ($saved)" >&2; exit 1; }
[ -f "$saved/out-exec/out.npy" ] || { echo "the saved case lacks the implementation's outputs" >&2; exit 1; }
grep -q '"seed": 3' "$saved/case.json"

echo "== the saved case replays: fails with the wrong implementation, passes with the right one"
set +e
SCANLAB_EXAMPLE_PERTURB=1e-3 "$scanlab" replay "$saved" --backend "exec:$python $example"
status=$?
set -e
[ "$status" -eq 1 ] || { echo "expected replay of the wrong implementation to fail (1), got $status" >&2; exit 1; }
"$scanlab" replay "$saved" --backend "exec:$python $example"
"$scanlab" replay "$saved" --backend reference
echo "exec_example_test: OK"
