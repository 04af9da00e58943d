#!/usr/bin/env bash
# Session 32, call 2: the rest of issue 7's H200 picture for main's landed binary (dc0f97c, the
# same pack as call1): s7_scan and s7_inner beside lrnnx, state_space_v1 beside ejkernel (XLA),
# through measure_h200.sh's stages, after the whole test suite and fuzzing of the s7 ops on the GPU,
# and memcheck / racecheck of the s7 ops' heuristic kernels. s7 was last measured beside lrnnx in
# session 11 (2026-12-02-s11/pipelined/: forward 92.1%, 86.8%, 85.2% of the copy ceiling); its
# kernels have changed only through shared headers since (1fc317c's exp2 test, b6c0aa3's macro).
# Prediction: s7_scan forward 85-92% of the copy ceiling on its three shapes (so the 85% target is
# met or missed by a point at (4,512,32,2048)), fwd+bwd 7-9x lrnnx; every check and test passes.
#   DEADLINE=420 bash reports/results/h200/2026-12-06-s32/call2/run.sh $OUT/s32b   # carry build/carry-s32a .peers
set -u
export CARRY_DIR="${CARRY_DIR:-build/carry-s32a}"
source scripts/gpu/call-helpers.sh
call_begin "$1"
"$S" --version | head -n 1 > "$O/version.txt"
start_peer_build lrnnx
ceilings
RC_PARAMS="max_success=100" run "$S" test --gtest_brief=1 > "$O/tests-all.txt" 2>&1
echo "exit $?" >> "$O/tests-all.txt"
run "$S" check s7_scan --backend cuda --cases 500 --seed 325 > "$O/check-s7_scan.txt" 2>&1
echo "exit $?" >> "$O/check-s7_scan.txt"
run "$S" check s7_inner --backend cuda --cases 150 --seed 326 > "$O/check-s7_inner.txt" 2>&1
echo "exit $?" >> "$O/check-s7_inner.txt"
[ -n "$peer_builder" ] && wait "$peer_builder"
mkdir -p "$O/measure" && cp "$O/ceilings.json" "$O/measure/ceilings.json"
run timeout "$(( $(left) - 60 ))" bash scripts/peers/measure_h200.sh "$O/measure" s7_scan s7_inner state_space_v1 > "$O/measure.log" 2>&1
echo "measure exit $?" >> "$O/measure.log"
for op in s7_scan s7_inner; do
  for tool in memcheck racecheck; do
    [ "$(left)" -gt 25 ] || break
    run compute-sanitizer --tool $tool --error-exitcode 9 "$S" check $op --backend cuda --cases 4 --seed 9 --max-size 6000 \
        > "$O/sanitizer-$op-$tool.txt" 2>&1
    echo "sanitizer $tool exit $?" >> "$O/sanitizer-$op-$tool.txt"
  done
done
call_end
tail -n 3 "$O/tests-all.txt"
grep -h "ms\b.*agree\|did not finish" "$O/measure.log" | cut -c1-150
grep -h "^\[.*\] s7\|^\[.*\] state_space" "$O/measure.log" | cut -c1-110
