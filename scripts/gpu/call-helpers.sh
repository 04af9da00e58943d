#!/usr/bin/env bash
# Helpers for a device call's script (reports/results/<machine>/<session>/callN/run.sh), sourced
# after `set -u`, so that each call's script says only what it measures. Until session 23 each
# script repeated these (duplicates listed 28 pairs); the scripts that already ran keep their own
# copies, since they record what ran.
#   source scripts/gpu/call-helpers.sh
#   call_begin "$1"                  # unpacks build/carry (or $CARRY_DIR), makes $O
#   start_peer_build mamba_ssm       # builds a peer from .peers/src in the background
#   versions                         # what ran where: version.txt, version-base.txt, gpu.txt
#   ab "$BASE" baseline fwd          # one sweep of the shapes in $SH, named scanlab-NAME
#   ab_alternating fwd               # BASE and S alternating, each twice
#   ...
#   call_end                         # tars $O and prints the exit lines and every sweep's times
# Settings, all with defaults: DEADLINE (seconds the call may use, 560), BACKEND (cuda; openmp
# tries a script on the host), SH (the shapes: the six issue shapes with dstate 32 and 64), OPTS
# (the sweep's options: z, D, delta_bias, softplus on), IMPL (ab's --impl, tiled), S and BASE (the
# binaries).

S="${S:-build/cuda/scanlab}" BASE="${BASE:-build/baseline/scanlab}" BACKEND="${BACKEND:-cuda}"
SH="${SH:-8x4096x16x2048,2x4096x16x8192,8x2048x16x2048,16x1536x16x1024,4x5120x16x4096,8x4096x32x2048,8x4096x64x2048}"
if [ -z "${OPTS+x}" ]; then OPTS=(--z on --D on --delta-bias on --softplus on); fi

# The seconds left before DEADLINE.
left() { echo $(( ${DEADLINE:-560} - SECONDS )); }

# run COMMAND...: records the command in $O/commands.txt and runs it under what is left of the
# deadline (counted from the script's start, bash's SECONDS); skipped with a line on stderr and
# status 124, timeout's own, when 5 seconds or fewer are left, so the tar at the end still gets
# written (speed-probe.sh's run, which has its own copy, does the same).
run() {
  echo "+ $*" >> "$O/commands.txt"
  if [ "$(left)" -le 5 ]; then echo "call: out of time, skipped: $1" >&2; return 124; fi
  timeout "$(left)" "$@"
}

# call_begin OUT_DIR: the carried binaries unpacked (on the device; a host try-out with BACKEND
# other than cuda uses the binaries where they are), the output folder made.
call_begin() {
  O="${1:?call_begin: give the output folder, e.g. \$OUT/s23b}"
  if [ "$BACKEND" = cuda ]; then bash scripts/gpu/carry.sh unpack || exit 1; fi
  mkdir -p "$O"
  peer_builder=""
}

# start_peer_build PEER: scripts/peers/build_peers.py in the background, log in $O/peers-build.log.
start_peer_build() {
  (python3 scripts/peers/build_peers.py "$1" > "$O/peers-build.log" 2>&1; echo "exit $? at $SECONDS s" >> "$O/peers-build.log") &
  peer_builder=$!
}

# ceilings: the machine's measured ceilings into $O/ceilings.json (every sweep compares with them).
ceilings() { run "$S" ceilings --backend "$BACKEND" --out "$O/ceilings.json" > "$O/ceilings.txt" 2>&1; }

# ab BINARY NAME DIRECTIONS [SWEEP OPTIONS...]: one sweep of $SH, ${IMPL:-tiled} as the heuristic
# configures it (IMPL=auto for shapes tiled cannot run: session 39's dstate-4096 sweep), named
# scanlab-NAME, into $O/selective_scan-NAME.json and $O/sweep-NAME.txt. The sweep reads
# $O/ceilings.json, measured first if the script has not (session 27's call3 forgot it, and its
# four sweeps wrote only the error).
ab() {
  local bin="$1" name="$2" directions="$3"; shift 3
  [ -f "$O/ceilings.json" ] || ceilings
  run "$bin" sweep selective_scan --backend "$BACKEND" --ceilings "$O/ceilings.json" --impl "${IMPL:-tiled}" --no-cache \
      --implementation "scanlab-$name" --direction "$directions" "${OPTS[@]}" --shapes "$SH" "$@" \
      --out "$O/selective_scan-$name.json" > "$O/sweep-$name.txt" 2>&1
}

# ab_twice CONFIG_JSON: BASE and S alternating, each twice, forward only: as the heuristic sets
# them over $SH (sweeps base, new) and with CONFIG_JSON laid over on ${CONFIG_SH:-$SH} (base-laid,
# new-laid), the second round named -again.
ab_twice() {
  local pass
  for pass in "" -again; do
    ab "$BASE" "base$pass" fwd
    ab "$S" "new$pass" fwd
    SH=${CONFIG_SH:-$SH} ab "$BASE" "base-laid$pass" fwd --config "$1"
    SH=${CONFIG_SH:-$SH} ab "$S" "new-laid$pass" fwd --config "$1"
  done
}

# ab_alternating DIRECTIONS: BASE and S alternating over $SH as the heuristic sets them, each twice
# (sweeps base, new, base-again, new-again).
ab_alternating() {
  local pass
  for pass in "" -again; do
    ab "$BASE" "base$pass" "$1"
    ab "$S" "new$pass" "$1"
  done
}

# versions: the version line of $S (and of $BASE where it is there) and the card, into
# $O/version.txt, $O/version-base.txt and $O/gpu.txt, so a call's results name what ran where.
versions() {
  "$S" --version | head -n 1 > "$O/version.txt"
  if [ -x "$BASE" ]; then "$BASE" --version | head -n 1 > "$O/version-base.txt"; fi
  nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$O/gpu.txt" 2>&1
}

# ncu_kernel REGEX BINARY NAME SHAPE DIRECTION: ncu's warp-state, scheduler, pipe, memory-table,
# occupancy and launch sections, with instruction, local-memory, XU-pipe and bank-conflict counts,
# of the first kernel matching REGEX in one sweep of SHAPE, into $O/ncu-NAME.txt; skipped with
# fewer than 45 seconds left.
ncu_kernel() {
  [ "$(left)" -gt 45 ] || return 0
  run ncu --clock-control none --kernel-name-base demangled -k "regex:$1" --launch-count 1 \
      --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats \
      --metrics smsp__inst_executed.sum,gpu__time_duration.sum,smsp__inst_executed_op_local_ld.sum,smsp__inst_executed_op_local_st.sum,smsp__inst_executed_pipe_xu.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
      "$2" sweep selective_scan --backend cuda --impl tiled --no-cache "${OPTS[@]}" --shapes "$4" \
      --repetitions 1 --iterations 1 --warmups 0 --quiet --max-buffer-sets 1 --out /tmp/ncu-sweep.json --direction "$5" \
      > "$O/ncu-$3.txt" 2>&1
}

# beside_peer PEER: the candidate $S swept as "scanlab" (run_peers' --like wants that name, so no
# --implementation), then the peer on the same cases, then the report of both.
beside_peer() {
  [ -f "$O/ceilings.json" ] || ceilings
  run "$S" sweep selective_scan --backend "$BACKEND" --ceilings "$O/ceilings.json" --impl tiled --no-cache \
      --direction fwd,bwd,fwdbwd "${OPTS[@]}" --shapes "$SH" --out "$O/selective_scan-tiled.json" > "$O/sweep.txt" 2>&1
  [ -n "$peer_builder" ] && wait "$peer_builder"
  run python3 scripts/peers/run_peers.py --peer "$1" --like "$O/selective_scan-tiled.json" --scanlab "$S" \
      --repetitions 10 --out "$O/selective_scan-$1.json" > "$O/peers-run.log" 2>&1
  run "$S" report "$O/selective_scan-tiled.json" "$O/selective_scan-$1.json" --out "$O/report" > /dev/null 2>&1
}

# gpu_checks SEED CASES: the heuristic against the oracle (selective_scan CASES cases,
# state_space_v1 half as many) and the kernel tests, each with its exit line.
gpu_checks() {
  run "$S" check selective_scan --backend "$BACKEND" --impl tiled --cases "$2" --seed "$1" > "$O/check-selective_scan.txt" 2>&1
  echo "exit $?" >> "$O/check-selective_scan.txt"
  run "$S" check state_space_v1 --backend "$BACKEND" --cases $(( $2 / 2 )) --seed "$1" > "$O/check-state_space_v1.txt" 2>&1
  echo "exit $?" >> "$O/check-state_space_v1.txt"
  run "$S" test --gtest_filter='Corpus.*:KernelSelectiveScan.*' --gtest_brief=1 > "$O/tests-cuda.txt" 2>&1
  echo "exit $?" >> "$O/tests-cuda.txt"
}

# sanitize NAME CONFIG_JSON: compute-sanitizer's memcheck and racecheck of `check` under CONFIG,
# while 40 seconds or more are left, into $O/sanitizer-NAME-TOOL.txt.
sanitize() {
  local tool
  for tool in memcheck racecheck; do
    [ "$(left)" -gt 40 ] || break
    run compute-sanitizer --tool $tool --error-exitcode 9 "$S" check selective_scan --backend "$BACKEND" --impl tiled \
        --config "$2" --cases 6 --seed 9 --max-size 6000 > "$O/sanitizer-$1-$tool.txt" 2>&1
    echo "sanitizer $tool exit $?" >> "$O/sanitizer-$1-$tool.txt"
  done
}

# laid_over_checks NAME STAGE SEED CASES: the interleaved backward (one thread a channel, two states
# at once, 32 channels a team) with bwd_stage_inputs STAGE laid over CASES random cases, into
# $O/check-NAME-laid-over.txt, then its memcheck and racecheck in three time segments (bwd-NAME).
laid_over_checks() {
  local config="{\"bwd_state_split\":1,\"bwd_channels_per_team\":32,\"bwd_team_size\":32,\"bwd_state_interleave\":2,\"bwd_stage_inputs\":$2,\"chunk_len\":8}"
  run "$S" check selective_scan --backend "$BACKEND" --impl tiled --config "$config" --cases "$4" --seed "$3" \
      > "$O/check-$1-laid-over.txt" 2>&1
  echo "exit $?" >> "$O/check-$1-laid-over.txt"
  sanitize "bwd-$1" "${config%\}},\"bwd_time_segments\":3}"
}

# staged_checks SEED: the staged form (dstate 16's), 200 cases.
staged_checks() { laid_over_checks staged 1 "$1" 200; }

# call_end: $O tarred beside itself (only a few files come back one by one), then the exit lines
# and each sweep's times, one line a case, for the call's reply.
call_end() {
  tar -czf "$O.tar.gz" -C "$(dirname "$O")" "$(basename "$O")"
  local f
  [ -f "$O/tests-cuda.txt" ] && tail -n 2 "$O/tests-cuda.txt"
  for f in "$O/peers-build.log" "$O/peers-run.log"; do [ -f "$f" ] && tail -n 1 "$f"; done
  grep -h "exit\|^failures" "$O"/check-*.txt "$O"/sanitizer-*.txt 2>/dev/null
  echo "done at $SECONDS s"
  for f in "$O"/sweep-*.txt "$O/sweep.txt" "$O/peers-run.log"; do
    [ -f "$f" ] || continue
    echo "== $(basename "$f")"
    grep "selective_scan/" "$f" | sed 's/D=on.*batch=\([0-9]*\),.*dim=\([0-9]*\),dstate=\([0-9]*\).*seqlen=\([0-9]*\).*z=on/\1x\2x\3x\4/' | cut -c1-70
  done
}
