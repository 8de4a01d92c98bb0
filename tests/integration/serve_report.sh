# The shadow report (schedmate report) on a history that schedmate serve
# wrote back, with its audit log and an agent's audit lines: the estimate
# errors by end state, fallback rates and reasons, would-be evictions,
# diagnoses against what happened next (a restart that completed), the
# profiling GPU-hours saved, latency by channel; the HTML page holds its
# plots as well-formed SVG and, where Chromium is installed, renders
# without console messages.  Bad input: a missing store or audit log,
# malformed audit lines.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve_lib.sh"
S=$SCHEDMATE
D=tests/data/history
DB="$SM_TMP/h.db"
ROOT="$SM_TMP/root"
mkdir -p "$ROOT"
cp data/examples/failed_ecc.log "$ROOT/ecc.log"
for d in 3000 3200 3400; do
  expect_rc 0 $S history add --db "$DB" --id "old-$d" --duration $d --meta $D/llama7b_alpaca.json
done
serve_start rep --db "$DB" --socket "$SM_TMP/s.sock" --allow-root "$ROOT" \
  --audit "$SM_TMP/audit.jsonl"
U="unix:$SM_TMP/s.sock"
L7=$(cat $D/llama7b_alpaca.json)
L13=$(cat $D/llama13b_alpaca.json)
# A: estimated 3200 s, ran 4000 s.
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"c:A\",\"metadata\":$L7,\"gpus\":4}"
[ "$(body_get .advice.estimate.duration_s)" = 3200 ] || fail "A's estimate"
expect_http 200 "$U" /v1/jobs/c:A/end -d '{"end_state":"completed","duration_s":4000}'
# B: estimated 3400 s (A is in the history now), cancelled after 1700 s.
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"c:B\",\"metadata\":$L7,\"gpus\":4}"
[ "$(body_get .advice.estimate.duration_s)" = 3400 ] || fail "B's estimate"
expect_http 200 "$U" /v1/jobs/c:B/end -d '{"end_state":"canceled","duration_s":1700}'
# C: nothing similar.
expect_http 201 "$U" /v1/jobs -d '{"id":"c:C","metadata":{"model_name":"yolov8n","task":"detection","dataset":"coco"}}'
[ "$(body_get .advice.fallback)" = true ] || fail "C should fall back"
expect_http 200 "$U" /v1/jobs/c:C/end -d '{"end_state":"completed","duration_s":100}'
# D fails on a GPU fault (diagnosed), its restart D.1 completes.
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"c:D\",\"metadata\":$L13,\"gpus\":8,\"log\":\"$ROOT/ecc.log\"}"
expect_http 200 "$U" /v1/jobs/c:D/end -d '{"end_state":"failed","duration_s":1200}'
[ "$(body_get .end_state)" = failed_infra ] || fail "D diagnosed"
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"c:D.1\",\"metadata\":$L13,\"gpus\":8}"
expect_http 200 "$U" /v1/jobs/c:D.1/end -d '{"end_state":"completed","duration_s":5000}'
serve_stop rep
# An agent's audit lines (interference flags), one of them broken.
cat > "$SM_TMP/agent.jsonl" <<'EOF'
{"time":"2024-05-01T10:00:00Z","epoch":1714557600,"mode":"shadow","channel":"run","decision":"interference","job":41,"node":"n3","joined_by":57,"base_rate":2.0,"rate":1.2,"ratio":0.6,"unit":"it/s","executed":false,"result":"flagged"}
{"time":"2024-05-01T10:05:00Z","epoch":1714557900,"mode":"shadow","channel":"run","decision":"interference","job":44,"node":"n1","joined_by":58,"base_rate":100,"rate":70,"ratio":0.7,"unit":"samples/s","executed":false,"result":"flagged"}
{"time":"2024-05-01T10:06:00Z","channel":"run","decision":
not json at all
EOF

expect_rc 0 $S report --db "$DB" --audit "$SM_TMP/audit.jsonl" --audit "$SM_TMP/agent.jsonl" --json --html "$SM_TMP/r.html"
R="$SM_TMP/last.out"
[ "$(jget "$R" .records)" = 8 ] || fail "records"
[ "$(jget "$R" .with_outcome)" = 5 ] || fail "with_outcome"
[ "$(jget "$R" .advised)" = 5 ] || fail "advised"
[ "$(jget "$R" .estimates.n)" = 2 ] || fail "estimates"
[ "$(jget "$R" '.estimates.by_end_state.completed.median_rel_error')" = -0.2 ] || fail "A's error"
[ "$(jget "$R" '.estimates.by_end_state.canceled.median_abs_rel_error')" = 1 ] || fail "B's error"
[ "$(jget "$R" '.fallbacks.ended_jobs.fallback')" = 3 ] || fail "fallbacks"
[ "$(jget "$R" '.fallbacks.ended_jobs.by_reason|add')" = 3 ] || fail "fallback reasons"
[ "$(jget "$R" '.fallbacks.answers.n')" = 5 ] || fail "answers in the audit"
[ "$(jget "$R" .evictions.n)" = 2 ] || fail "evictions"
[ "$(jget "$R" '.evictions.max_slowdown*100|round')" = 40 ] || fail "slowdown"
[ "$(jget "$R" .diagnoses.infrastructure.n)" = 1 ] || fail "diagnoses"
[ "$(jget "$R" .diagnoses.infrastructure.restarted_completed)" = 1 ] || fail "restart completed"
[ "$(jget "$R" .profiling.gpu_hours_saved)" = 0.67 ] || fail "GPU-hours: $(jget "$R" .profiling.gpu_hours_saved)"
[ "$(jget "$R" '.latency.submit.n')" = 5 ] || fail "submit latency"
[ "$(jget "$R" '.latency.exit.n')" = 5 ] || fail "exit latency"
[ "$(jget "$R" .audit.malformed)" = 2 ] || fail "malformed audit lines"
expect_rc 0 $S report --db "$DB" --audit "$SM_TMP/audit.jsonl" --profile-s 600
grep -q 'profiling saved: 1.3 GPU-hours' "$SM_TMP/last.out" || fail "text summary"
python3 - "$SM_TMP/r.html" <<'EOF' || fail "HTML"
import re, sys, xml.etree.ElementTree as ET
from html.parser import HTMLParser
page = open(sys.argv[1]).read()
HTMLParser().feed(page)
svgs = re.findall(r"<svg.*?</svg>", page, re.S)
assert len(svgs) >= 4, len(svgs)
for s in svgs:
    ET.fromstring(s)
for want in ("Estimate error", "Fallbacks", "Would-be evictions",
             "Diagnoses", "Profiling saved", "Latency by channel"):
    assert want in page, want
assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
EOF
B=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -n "$B" ]; then
  timeout 120 "$B" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --no-first-run --user-data-dir="$SM_TMP/chromium" --enable-logging=stderr --v=0 \
    --dump-dom "file://$SM_TMP/r.html" > "$SM_TMP/dom.html" 2> "$SM_TMP/chromium.log" \
    || { tail -5 "$SM_TMP/chromium.log"; fail "chromium failed"; }
  ! grep -q CONSOLE "$SM_TMP/chromium.log" || fail "console messages"
  [ "$(grep -o '<svg' "$SM_TMP/dom.html" | wc -l)" -ge 4 ] || fail "the browser did not see the plots"
fi
# Bad input.
expect_rc 2 $S report --db "$SM_TMP/missing.db" --json
expect_rc 2 $S report --db "$DB" --audit "$SM_TMP/missing.jsonl"
grep -q missing.jsonl "$SM_TMP/last.err" || fail "the message names the audit log"
expect_rc 2 $S report --json
expect_rc 2 $S report --db "$DB" --profile-s -1
echo "ok: shadow report"
