#!/usr/bin/env bash
# Everything one H200 device call does, within a wall-clock budget (the device time is scarce):
# the peers' float32 extensions build on the CPU cores in the background while the GPU runs the
# tests and `scanlab check` for every op (scripts/gpu/h200-checks.sh); then the measurement
# stages of issue 5 (scripts/peers/measure_h200.sh) with scanlab and the peers side by side; the
# built peer libraries are copied to OUT/built so later calls can carry them instead of rebuilding.
#   bash scripts/gpu/h200-session.sh OUT_DIR [BUDGET_S=560] [STAGES...]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${1:?usage: h200-session.sh OUT_DIR [BUDGET_S] [STAGES...]}"
budget="${2:-560}"
shift $(( $# >= 2 ? 2 : 1 ))
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(ceilings selective_scan state_space_v1 s7_scan s7_inner report tune)
mkdir -p "$out"
# The device tool returns a limited number of files: everything goes back as one archive, also
# when a stage runs out of time.
trap 'tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")" && echo "h200-session: archived $out.tar.gz"' EXIT
left() { echo $(( budget - SECONDS > 5 ? budget - SECONDS : 5 )); }
echo "h200-session: budget ${budget} s; $(nproc) cores; $(python3 -c 'import torch; print("torch", torch.__version__)' 2>&1)"
builders=()
for peer in mamba_ssm lrnnx; do  # in parallel: each compiles its own few files
  (
    python3 scripts/peers/build_peers.py "$peer" > "$out/peers-build-$peer.log" 2>&1
    echo "build_peers $peer exit $? after $SECONDS s" >> "$out/peers-build-$peer.log"
  ) &
  builders+=($!)
done
# CHECKS=all (tests, check of every op, large-index), tests (the test suite only) or none.
if [ "${CHECKS:-all}" != none ]; then
  [ "${CHECKS:-all}" = tests ] && export CHECKS_ONLY_TESTS=1
  OUT="$out/checks" timeout "${CHECKS_BUDGET:-$(( $(left) * 5 / 10 ))}" bash scripts/gpu/h200-checks.sh "${CHECKS_SCALE:-1}"
  echo "h200-session: checks exit $? at ${SECONDS} s"
fi
wait "${builders[@]}"
tail -n 2 "$out"/peers-build-*.log
echo "h200-session: peers built at ${SECONDS} s"
timeout "$(left)" bash scripts/peers/measure_h200.sh "$out/measure" "${stages[@]}"
echo "h200-session: measure exit $? at ${SECONDS} s"
