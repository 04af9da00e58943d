#!/usr/bin/env bash
# ctest entry (properties/measurement.tests): the Python tests of the report (reports/tests) and
# of the peer runners' CPU-side logic (scripts/peers/tests), with the project's venv
# (scripts/setup.sh python), so CI checks report.py exactly as `scanlab report` runs it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/env.sh"
python="${SCANLAB_PYTHON:-$SCANLAB_VENV/bin/python}"
if [ ! -x "$python" ]; then
  echo "reports/tests: no Python venv at $python (run scripts/setup.sh python)" >&2
  exit 1
fi
status=0
for dir in reports/tests scripts/peers/tests; do
  (cd "$root/$dir" && "$python" -W ignore::DeprecationWarning -m unittest discover -s . -p 'test_*.py' -v) || status=1
done
exit $status
