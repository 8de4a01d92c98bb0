# The service's exact pre-search (src/serve/scan.c) answers advice from a
# few records; this checks, job by job, that every answer is the
# command's own (`schedmate advise --json` on the same SQLite history):
# recurring jobs (identical fingerprints), variants the identity rule
# vetoes (another length), thin jobs (no dataset), jobs below the
# threshold, other top_k and thresholds, and after write-backs through the
# service (new rows in the index and in its pre-search view).  Both paths
# (pre-search and full search) must have answered.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve_lib.sh"
S=$SCHEDMATE
DB=$SM_TMP/h.db
awk -v N=6000 -f tests/history_gen.awk > "$SM_TMP/h.jsonl"
expect_rc 0 $S history import --db "$DB" "$SM_TMP/h.jsonl"

# Queries: jobs of the history as they are, the same with another length
# (vetoed by the identity rule), without a dataset (thin), with a length
# nobody ran (below the threshold), with other top_k and thresholds.
awk 'NR % 97 == 5' "$SM_TMP/h.jsonl" | head -40 > "$SM_TMP/picked.jsonl"
{
  jq -c '{metadata}' "$SM_TMP/picked.jsonl"
  jq -c '{metadata: (.metadata | .iterations = (.iterations + 1000))}' "$SM_TMP/picked.jsonl" | head -12
  jq -c '{metadata: (.metadata | del(.dataset))}' "$SM_TMP/picked.jsonl" | head -8
  jq -c '{metadata: (.metadata | .iterations = 123457)}' "$SM_TMP/picked.jsonl" | head -6
  jq -c '{metadata, top_k: 1}' "$SM_TMP/picked.jsonl" | head -6
  jq -c '{metadata, top_k: 40, threshold: 0.9}' "$SM_TMP/picked.jsonl" | head -6
  jq -c '{metadata: (.metadata | .iterations = (.iterations + 1000)), threshold: 0.5, top_k: 8}' "$SM_TMP/picked.jsonl" | head -6
} > "$SM_TMP/queries.jsonl"

serve_start ps --db "$DB" --socket "$SM_TMP/s.sock" --rate 0 --quiet
U=$(serve_addr ps)

compare_all() { # LABEL
  local i=0 q args
  while IFS= read -r q; do
    i=$((i + 1))
    printf '%s\n' "$q" > "$SM_TMP/q.json"
    args=(--top-k "$(jq -r '.top_k // 5' <<<"$q")" --threshold "$(jq -r '.threshold // 0.95' <<<"$q")")
    expect_rc 0 $S advise --json --db "$DB" --meta "$SM_TMP/q.json" "${args[@]}"
    jq -cS 'del(.elapsed_ms)' "$SM_TMP/last.out" > "$SM_TMP/cli.json"
    expect_http 200 "$U" /v1/advise --data-binary @"$SM_TMP/q.json"
    jq -cS 'del(.elapsed_ms)' "$SM_TMP/body" > "$SM_TMP/srv.json"
    cmp -s "$SM_TMP/cli.json" "$SM_TMP/srv.json" ||
      fail "$1: query $i differs from the command: $q
$(diff <(jq -S . "$SM_TMP/cli.json") <(jq -S . "$SM_TMP/srv.json") | head -20)"
  done < "$SM_TMP/queries.jsonl"
  echo "$1: $i answers equal to the command's"
}
compare_all "loaded history"

# What the answers were: estimates and several kinds of fallback.
n_est=0
while IFS= read -r q; do
  expect_http 200 "$U" /v1/advise --data-binary "$q"
  [ "$(body_get .fallback)" = false ] && n_est=$((n_est + 1))
  body_get .fallback_reason >> "$SM_TMP/reasons"
done < "$SM_TMP/queries.jsonl"
[ "$n_est" -gt 30 ] || fail "only $n_est estimates"
grep -q below_threshold "$SM_TMP/reasons" || fail "no below_threshold among the answers"
grep -q too_little_known "$SM_TMP/reasons" || fail "no too_little_known among the answers"

# Write-backs through the service: new rows, some a new fingerprint, some
# a copy of a recurring job's.
for k in 1 2 3 4 5 6; do
  q=$(sed -n "${k}p" "$SM_TMP/picked.jsonl")
  [ $((k % 2)) = 0 ] && q=$(jq -c '.metadata.iterations = 424242' <<<"$q")
  jq -c --arg id "wb-$k" '{id: $id, metadata}' <<<"$q" > "$SM_TMP/reg.json"
  expect_http 201 "$U" /v1/jobs --data-binary @"$SM_TMP/reg.json"
  expect_http 200 "$U" "/v1/jobs/wb-$k/end" -d "{\"end_state\":\"completed\",\"duration_s\":$((1000 + k))}"
done
{
  head -6 "$SM_TMP/picked.jsonl" | jq -c '{metadata}'
  head -6 "$SM_TMP/picked.jsonl" | jq -c '{metadata: (.metadata | .iterations = 424242)}'
} > "$SM_TMP/queries.jsonl"
compare_all "after write-backs"

expect_http 200 "$U" /metrics
pre=$(sed -n 's/^schedmate_serve_advise_searches_total{path="presearch"} //p' "$SM_TMP/body")
full=$(sed -n 's/^schedmate_serve_advise_searches_total{path="full"} //p' "$SM_TMP/body")
fps=$(sed -n 's/^schedmate_serve_history_fingerprints //p' "$SM_TMP/body")
[ "${pre:-0}" -gt 100 ] || fail "the pre-search answered ${pre:-0} times"
[ "${full:-0}" -gt 0 ] || fail "no answer needed the full search (the fallback path is untested)"
[ "${fps:-0}" -gt 400 ] && [ "${fps:-0}" -lt 1000 ] || fail "distinct fingerprints: ${fps:-?}"
serve_stop ps
echo "ok: pre-search $pre, full $full, $fps distinct fingerprints"
