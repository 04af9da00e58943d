#!/usr/bin/env bash
# ctest: scale-out under mpirun on the CPU backends (issue 8). Open MPI's mpirun (Debian's
# openmpi-bin, installed by scripts/setup.sh) starts 2 ranks of scanlab:
#   1. a 2-rank sweep merges to the same set of cases as a one-process run of the same sweep, and
#      records both ranks;
#   2. a rank killed after its first case (SCANLAB_FAULT_KILL_RANK) leaves its partial shard; the
#      run fails, and the same command with --resume finishes it, keeping what was measured;
#   3. a 2-rank check runs 2 x --cases distinct cases, rank 0 prints the combined summary; a rank
#      killed before writing its summary fails the run, --resume re-runs only that rank;
#   4. --shard together with a launch of several ranks is refused.
# Usage: mpi_test.sh path/to/scanlab
set -euo pipefail
scanlab="$1"
command -v mpirun > /dev/null || { echo "mpi_test: no mpirun (scripts/setup.sh installs openmpi-bin)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# One node: Open MPI's "isolated" launcher starts local ranks without looking for ssh/rsh (a
# fresh container may have neither, and mpirun then refuses to start at all).
export OMPI_MCA_plm=isolated
mpi=(mpirun --oversubscribe -np 2)
fail() { echo "mpi_test: FAIL: $*" >&2; exit 1; }
keys() {  # the sorted case keys of a sweep JSON
  python3 -c 'import json,sys; print("\n".join(sorted(c["key"] for c in json.load(open(sys.argv[1]))["cases"])))' "$1"
}

"$scanlab" ceilings --backend openmp --quick --out ceilings.json > /dev/null 2>&1 || fail "ceilings"
sweep=(sweep selective_scan --backend openmp --ceilings ceilings.json --batch 1 --dim 8,16 --dstate 4 --seqlen 16,32
       --direction fwd,fwdbwd --repetitions 2 --iterations 1 --warmups 0)

echo "== 1. two ranks merge to the one-process sweep"
"$scanlab" "${sweep[@]}" --out single.json --quiet || fail "the one-process sweep"
"${mpi[@]}" "$scanlab" "${sweep[@]}" --out merged.json > mpi1.log 2>&1 || { cat mpi1.log; fail "the 2-rank sweep"; }
[ "$(keys single.json)" = "$(keys merged.json)" ] || fail "merged cases differ from the one-process run"
python3 - merged.json <<'PY' || fail "merged context"
import json, sys
b = json.load(open(sys.argv[1]))["scanlab"]
assert b["complete"] is True, b.get("error")
ranks = sorted(m["launch"]["rank"] for m in b["merged_from"])
assert ranks == [0, 1], ranks
assert all(m["device"] for m in b["merged_from"]), b["merged_from"]
assert b["launch"]["ranks"] == 2 and b["launch"]["launcher"] == "Open MPI", b["launch"]
PY

echo "== 2. a killed rank, then --resume"
set +e
SCANLAB_FAULT_KILL_RANK=1 "${mpi[@]}" "$scanlab" "${sweep[@]}" --out killed.json > mpi2.log 2>&1
code=$?
set -e
[ "$code" != 0 ] || { cat mpi2.log; fail "the run with a killed rank exited 0"; }
partial=killed.json.ranks/rank-1-of-2.json
[ -f "$partial" ] || { cat mpi2.log; fail "the killed rank left no partial shard"; }
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert len(j["cases"])==1 and not j["scanlab"]["complete"], j["scanlab"]' "$partial" \
  || fail "the killed rank's shard should hold exactly its first case"
"${mpi[@]}" "$scanlab" "${sweep[@]}" --out killed.json --resume > mpi3.log 2>&1 || { cat mpi3.log; fail "--resume"; }
grep -q "kept from the earlier run" mpi3.log || { cat mpi3.log; fail "--resume ran the killed rank's first case again"; }
[ "$(keys single.json)" = "$(keys killed.json)" ] || fail "the resumed merge differs from the one-process run"

echo "== 3. check on two ranks"
check=(check selective_scan --cases 25 --seed 7 --backend openmp --gather gather)
"${mpi[@]}" "$scanlab" "${check[@]}" > check1.log 2> check1.err || { cat check1.log check1.err; fail "2-rank check"; }
grep -q "2 ranks" check1.log && grep -q ": 50 cases on openmp" check1.log && grep -q "PASS" check1.log \
  || { cat check1.log; fail "the combined summary should count 50 cases and pass"; }
rm -rf gather
set +e
SCANLAB_FAULT_KILL_RANK=1 SCANLAB_FAULT_POINT=before_check_summary "${mpi[@]}" "$scanlab" "${check[@]}" > check2.log 2>&1
code=$?
set -e
[ "$code" != 0 ] || { cat check2.log; fail "the check with a killed rank exited 0"; }
[ ! -f gather/rank-1.json ] || fail "the killed rank wrote its summary"
"${mpi[@]}" "$scanlab" "${check[@]}" --resume > check3.log 2> check3.err || { cat check3.log check3.err; fail "check --resume"; }
if [ -f gather/rank-0.json ] && grep -q "kept the finished result" check3.err; then :; else
  # mpirun may have killed rank 0 before it wrote its summary; then both ranks ran again.
  grep -q "rank 0/2" check3.err || { cat check3.err; fail "check --resume: no rank ran or kept"; }
fi
grep -q ": 50 cases on openmp" check3.log || { cat check3.log; fail "the resumed check should count 50 cases"; }

echo "== 4. --shard with several ranks is refused"
set +e
"${mpi[@]}" "$scanlab" "${sweep[@]}" --shard 0/2 --out refused.json > mpi4.log 2>&1
code=$?
set -e
[ "$code" != 0 ] && grep -q "both split the sweep" mpi4.log || { cat mpi4.log; fail "--shard under mpirun was not refused"; }
echo "mpi_test: PASS"
