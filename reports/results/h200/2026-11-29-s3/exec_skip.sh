#!/bin/sh
# exec_skip.sh PEER CASE_DIR OUT_DIR -- scripts/peers/exec_peer.py behind scanlab's exec protocol,
# except that a case the peer has no equivalent of (exec_peer.py exits 3, "unsupported: ...") is
# answered by scanlab's own float64 oracle (`scanlab run OP --backend reference`) and logged as
# SKIPPED, so `scanlab check` goes on to the next case instead of failing on it. Every case's
# disposition goes to $EXEC_SKIP_LOG: only the lines "PEER rc=0" are the peer's own answers; the
# SKIPPED ones prove nothing about the peer (the oracle against itself).
peer="$1"; case_dir="$2"; out_dir="$3"
log="${EXEC_SKIP_LOG:?set EXEC_SKIP_LOG}"
scanlab="${SCANLAB_BIN:-build/cuda/scanlab}"
t0=$(date +%s.%N)
${EXEC_PEER_CMD:-python3 scripts/peers/exec_peer.py} "$peer" "$case_dir" "$out_dir" 2>"$out_dir.stderr"
rc=$?
cat "$out_dir.stderr" >&2
op=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["op"])' "$case_dir/case.json")
shape=$(cd "$case_dir" && ls *.npy 2>/dev/null | sed 's/\.npy$//' | tr '\n' ',')
dt=$(echo "$(date +%s.%N) $t0" | awk '{printf "%.1f", $1-$2}')
if [ "$rc" -eq 3 ]; then
  reason=$(grep '^unsupported:' "$out_dir.stderr" | tail -n 1)
  echo "SKIPPED $peer $op inputs=$shape ${dt}s: $reason" >> "$log"
  rm -rf "$out_dir" && mkdir -p "$out_dir"
  exec "$scanlab" run "$op" --case "$case_dir" --backend reference --out "$out_dir" > /dev/null
fi
echo "PEER rc=$rc $peer $op inputs=$shape ${dt}s" >> "$log"
exit "$rc"
