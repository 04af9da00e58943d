#!/usr/bin/env bash
# Session 32, call 2: the rest of issue 7's H200 picture for main's landed binary (dc0f97c, the
# same pack as call1): s7_scan and s7_inner beside lrnnx, state_space_v1 beside ejkernel (XLA),
# through measure_h200.sh's stages, after fuzzing the s7 ops on the GPU, and memcheck / racecheck
# of the s7 ops' heuristic kernels. First, while lrnnx builds, the forward's shape laid over the
# four shapes whose forward loses most per channel-step against the anchor (call1: 1.75x the
# anchor's time a channel-step at (2,4096,16,8192), 1.34x at (8,2048,16,2048)): time segments
# 2, 8, 16 around the rule's 4, and four or one thread a channel in segments. s7 was last measured beside lrnnx in
# session 11 (2026-12-02-s11/pipelined/: forward 92.1%, 86.8%, 85.2% of the copy ceiling); its
# kernels have changed only through shared headers since (1fc317c's exp2 test, b6c0aa3's macro).
# Prediction (forward overlays): within 5% of the heuristic; if one wins by more it is 8 segments at
# (2,4096,16,8192) (the rule's 4 dates from session 10, before direct_io's rewrite).
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
FSH="2x4096x16x8192,1x4096x16x8192,8x2048x16x2048,4x5120x16x4096"
SH="$FSH" ab "$S" fwd-rule fwd --repetitions 5
for v in seg2:'"fwd_time_segments":2' seg8:'"fwd_time_segments":8' seg16:'"fwd_time_segments":16' \
         split4-seg2:'"state_split":4,"channels_per_team":32,"team_size":128,"fwd_time_segments":2' \
         split4-seg4:'"state_split":4,"channels_per_team":32,"team_size":128,"fwd_time_segments":4' \
         split1-seg8:'"state_split":1,"channels_per_team":32,"team_size":32,"fwd_time_segments":8'; do
  SH="$FSH" ab "$S" "fwd-${v%%:*}" fwd --repetitions 5 --config "{\"direct_io\":1,${v#*:}}"
done
SH="$FSH" ab "$S" fwd-rule-again fwd --repetitions 5
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
for v in rule-again seg2 seg8 seg16 split4-seg2 split4-seg4 split1-seg8; do
  echo "== fwd-rule -> fwd-$v"; "$S" compare --min-change 0.02 "$O/selective_scan-fwd-rule.json" "$O/selective_scan-fwd-$v.json" | tail -n 6 | cut -c1-40,130-
done
grep -h "ms\b.*agree\|did not finish" "$O/measure.log" | cut -c1-150
grep -h "^\[.*\] s7\|^\[.*\] state_space" "$O/measure.log" | cut -c1-110
