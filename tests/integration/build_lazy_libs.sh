#!/usr/bin/env bash
# build_lazy_libs.sh - the optional heavy libraries (COIN-OR CBC for
# --policy sia, libcurl for the LLM stage, libmicrohttpd for serve) are
# on no link line and loaded on first use: the plain commands never map
# them, the command that needs one loads it, and one that cannot be
# loaded (a missing file, or a file without the functions) gives one line
# naming it and the way out (exit 2), or for the LLM stage the same
# fallback as an unreachable server.  SCHEDMATE_{CBC,CURL,MHD}_LIB name
# the file to open instead of the soname.
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
AGENT=$(dirname "$SCHEDMATE")/schedmate-slurm
HEAVY='lib(CbcSolver|Cbc|Clp|Osi|Cgl|CoinUtils|openblas|blas|lapack|gfortran|curl|microhttpd)[.-]'
command -v readelf >/dev/null || skip "no readelf"
command -v jq >/dev/null || skip "no jq"
unset SCHEDMATE_CBC_LIB SCHEDMATE_CURL_LIB SCHEDMATE_MHD_LIB
unset SCHEDMATE_LLM_URL http_proxy https_proxy HTTP_PROXY HTTPS_PROXY

# ---- Link time: nothing heavy is NEEDED (the agent included).
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
for f in "$SCHEDMATE" "$AGENT" "$B/libschedmate.so"; do
  [ -e "$f" ] || continue
  if needed "$f" | grep -Eq "^$HEAVY"; then
    fail "$f links $(needed "$f" | grep -E "^$HEAVY" | tr '\n' ' ')"
  fi
done
# The agent (GPL libslurm) has no code that could load the EPL solver.
[ ! -e "$AGENT" ] || ! grep -q libCbcSolver "$AGENT" || fail "$AGENT can load CBC"

# ---- Run time: what each command maps (LD_DEBUG=files lists every
# object the loader opens, at start-up or through dlopen).
LOG=$SM_TMP/train.log
for s in $(seq 1 40); do
  echo "step $s/1000 | loss $(awk -v s="$s" 'BEGIN{printf "%.3f", 3 - s/100}') | 0.25 s/it"
done >"$LOG"
mkdir -p "$SM_TMP/repo"
cat >"$SM_TMP/repo/train.py" <<'EOF'
import argparse
p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, default=3e-4)
p.add_argument("--batch-size", type=int, default=64)
args = p.parse_args()
EOF
loaded() { # FILE: the shared objects the loader opened, one a line
  sed -n 's/.*file=\([^ ]*\) \[0\];  *\(needed\|dynamically loaded\).*/\1/p' "$1" | sort -u
}
maps_none() { # WHAT DEBUGFILE
  if loaded "$2" | grep -Eq "$HEAVY"; then
    fail "$1 maps $(loaded "$2" | grep -E "$HEAVY" | tr '\n' ' ')"
  fi
}
LD_DEBUG=files "$SCHEDMATE" --version >/dev/null 2>"$SM_TMP/ver.dbg"
loaded "$SM_TMP/ver.dbg" | grep -q libsqlite3 || fail "LD_DEBUG=files lists nothing"
maps_none "--version" "$SM_TMP/ver.dbg"
LD_DEBUG=files "$SCHEDMATE" track --json "$LOG" >"$SM_TMP/t.json" 2>"$SM_TMP/track.dbg"
jq -e '.step == 40' "$SM_TMP/t.json" >/dev/null || fail "track: $(cat "$SM_TMP/t.json")"
maps_none "track" "$SM_TMP/track.dbg"
LD_DEBUG=files "$SCHEDMATE" extract --json --repo "$SM_TMP/repo" -- python train.py \
  --lr 0.1 >"$SM_TMP/e.json" 2>"$SM_TMP/extract.dbg"
jq -e '.metadata.lr == 0.1' "$SM_TMP/e.json" >/dev/null || fail "extract: $(cat "$SM_TMP/e.json")"
maps_none "extract" "$SM_TMP/extract.dbg"
# A running process: the maps of `track --follow` while it follows.
"$SCHEDMATE" track --follow --json --interval 0.05 --max-updates 1000 "$LOG" \
  >"$SM_TMP/follow.out" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 200); do [ -s "$SM_TMP/follow.out" ] && break; sleep 0.05; done
[ -s "$SM_TMP/follow.out" ] || fail "track --follow printed nothing"
cp "/proc/$pid/maps" "$SM_TMP/follow.maps"
kill "$pid"
wait "$pid" 2>/dev/null || true
trap - EXIT
grep -q libsqlite3 "$SM_TMP/follow.maps" || fail "maps unreadable"
! grep -Eq "/$HEAVY" "$SM_TMP/follow.maps" || fail "track --follow maps $(grep -Eo "/$HEAVY[^ ]*" "$SM_TMP/follow.maps" | sort -u | tr '\n' ' ')"

# ---- libcurl: loaded for --llm only; when it cannot be, the stage falls
# back with reason "connect" and a detail naming the file.  The log's
# progress lines are in a format the parser does not read (so the stage
# runs); nothing listens on the discard port.
dead="http://127.0.0.1:9"
U=$SM_TMP/odd.log
for i in 1 2 3 4 5 6; do echo "[w0] #3${i}0/9000 o=1.7$i t=0.5$i"; done >"$U"
"$SCHEDMATE" track --json "$U" >"$SM_TMP/u.json"
jq -e '.status == "missing"' "$SM_TMP/u.json" >/dev/null ||
  fail "fixture: the parser now reads $U; pick another format"
LD_DEBUG=files "$SCHEDMATE" track --json --llm "$dead" --llm-retries 0 "$U" \
  >"$SM_TMP/l.json" 2>"$SM_TMP/llm.dbg"
loaded "$SM_TMP/llm.dbg" | grep -q 'libcurl' || fail "--llm did not load libcurl"
jq -e '.llm.fallback_reason == "connect"' "$SM_TMP/l.json" >/dev/null ||
  fail "unreachable: $(jq -c .llm "$SM_TMP/l.json")"
# A short path that cannot exist: the detail shortens a long quoted path in
# its middle, so a path under a long $SM_TMP would not be quoted whole.
nocurl=/nonexistent/libcurl.so.4
SCHEDMATE_CURL_LIB=$nocurl \
  "$SCHEDMATE" track --json --llm "$dead" "$U" >"$SM_TMP/n.json"
jq -e --arg f "$nocurl" '.status == "missing" and
    .llm.fallback_reason == "connect" and .llm_stats.tracker.reasons.connect == 1 and
    .llm_stats.tracker.calls == 0 and (.llm.detail | contains("libcurl")) and
    (.llm.detail | contains($f)) and (.llm.detail | contains("libcurl4"))' \
  "$SM_TMP/n.json" >/dev/null || fail "no libcurl: $(jq -c .llm "$SM_TMP/n.json")"
# A file that is not libcurl: the first missing function is named.
SCHEDMATE_CURL_LIB=libz.so.1 \
  "$SCHEDMATE" track --json --llm "$dead" "$U" >"$SM_TMP/z.json"
jq -e '.llm.fallback_reason == "connect" and
    (.llm.detail | contains("libz.so.1 has no curl_global_init"))' \
  "$SM_TMP/z.json" >/dev/null || fail "not libcurl: $(jq -c .llm "$SM_TMP/z.json")"

# ---- CBC: loaded by --policy sia only; when it cannot be, one line and
# exit 2, and the greedy fallback still runs.
W=$SM_TMP/sia
mkdir -p "$W"
{
  echo "name,time,application,num_replicas,batch_size,duration"
  for i in $(seq 0 7); do echo "conv-$i,$((i * 200)),toyconv,1,1024,600"; done
} >"$W/w.csv"
SIA=(simulate --trace "$W" --cluster 2x4:slow,1x8:fast --policy sia
  --param sia.tables=tests/data/sia/tables)
rc=0
LD_DEBUG=files "$SCHEDMATE" "${SIA[@]}" >"$SM_TMP/sia.out" 2>"$SM_TMP/sia.dbg" || rc=$?
if grep -q "this build has no MILP solver" "$SM_TMP/sia.dbg"; then
  echo "note: built without CBC, its loading is not tested"
else
  [ $rc = 0 ] || fail "sia exited $rc: $(grep -v '^ *[0-9]*:' "$SM_TMP/sia.dbg")"
  loaded "$SM_TMP/sia.dbg" | grep -q 'libCbcSolver' || fail "--policy sia did not load CBC"
  for f in "$SM_TMP/no/libCbcSolver.so.3" libz.so.1; do
    SCHEDMATE_CBC_LIB=$f expect_rc 2 "$SCHEDMATE" "${SIA[@]}"
    [ "$(wc -l <"$SM_TMP/last.err")" = 1 ] || fail "not one line: $(cat "$SM_TMP/last.err")"
    grep -q "COIN-OR CBC (the MILP solver) could not be loaded (.*$f.*); install coinor-libcbc-dev, or run the greedy fallback with --param sia.solver=greedy" \
      "$SM_TMP/last.err" || fail "message: $(cat "$SM_TMP/last.err")"
    [ ! -s "$SM_TMP/last.out" ] || fail "output despite the error"
  done
  grep -q "has no Cbc_" "$SM_TMP/last.err" || fail "the missing function is not named"
  SCHEDMATE_CBC_LIB=$SM_TMP/no/libCbcSolver.so.3 expect_rc 0 "$SCHEDMATE" "${SIA[@]}" \
    --param sia.solver=greedy
  grep -q "greedy allocation (sia.solver=greedy)" "$SM_TMP/last.out" || fail "greedy: $(cat "$SM_TMP/last.out")"
fi

# ---- libmicrohttpd: serve says it cannot start, in one line, exit 2.
SCHEDMATE_MHD_LIB=$SM_TMP/no/libmicrohttpd.so.12 expect_rc 2 "$SCHEDMATE" serve \
  --db "$SM_TMP/h.db" --socket "$SM_TMP/s.sock" --allow-root "$SM_TMP" --quiet
[ "$(wc -l <"$SM_TMP/last.err")" = 1 ] || fail "serve: not one line: $(cat "$SM_TMP/last.err")"
grep -q "^schedmate serve: libmicrohttpd (the HTTP server) could not be loaded (.*libmicrohttpd.so.12.*); install the Debian package libmicrohttpd12$" \
  "$SM_TMP/last.err" || fail "serve: $(cat "$SM_TMP/last.err")"
echo ok
