# llm_embed.sh - fingerprints from an embeddings endpoint (--embed URL):
# records keep the embedder that made them, export and import keep the
# vector, advise matches only within one embedder, a history never mixes
# embedders, and a failing endpoint adds nothing and makes advise fall
# back instead of guessing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../llm/lib.sh"
R=$SM_TMP/rules.json
DB=$SM_TMP/emb.db
M=$SM_TMP/meta.json
cat >"$M" <<'EOF'
{"metadata": {"model_name": "gpt2-124m", "task": "language_model_pretraining",
 "domain": "nlp", "dataset": "openwebtext", "iterations": 600000,
 "iteration_type": "steps", "gpus": 8, "nodes": 1}}
EOF
cat >"$R" <<'EOF'
[{"endpoint": "embeddings", "last": "model_name=gpt2-124m", "dims": 384},
 {"endpoint": "embeddings", "dims": 384}]
EOF
llm_start "$R"
for i in 1 2 3; do
  "$SCHEDMATE" history add --db "$DB" --id "e$i" --duration $((3600 + i * 60)) \
    --embed "$LLM_URL" --embed-model emb-test --llm-cache "$SM_TMP/cache" \
    --meta "$M" >/dev/null ||
    fail "history add --embed"
done
"$SCHEDMATE" history export --db "$DB" --out "$SM_TMP/export.jsonl" >/dev/null
jq -e -s 'length == 3 and all(.embedder == "api:emb-test" and (.fp | length) == 256)' \
  "$SM_TMP/export.jsonl" >/dev/null || fail "records do not keep the embedder"
# The same text was embedded once: the rest came from the disk cache.
[ "$(llm_requests)" = 1 ] || fail "expected one embedding request, got $(llm_requests)"
"$SCHEDMATE" advise --json --db "$DB" --meta "$M" --embed "$LLM_URL" \
  --embed-model emb-test >"$SM_TMP/a.json"
jq -e '.fallback == false and (.matches | length) == 3 and
       .matches[0].score > 0.999 and .embedder == "api:emb-test" and
       .llm_stats.embed.runs == 1' "$SM_TMP/a.json" >/dev/null ||
  fail "advise --embed: $(jq -c '[.fallback,.fallback_reason,.matches,.llm_stats.embed]' "$SM_TMP/a.json")"
# Without --embed the query is a hashing fingerprint: never compared with
# the endpoint's vectors.
"$SCHEDMATE" advise --json --db "$DB" --meta "$M" >"$SM_TMP/b.json"
jq -e '.fallback == true and (.matches | length) == 0' "$SM_TMP/b.json" \
  >/dev/null || fail "embedders mixed in a match: $(jq -c '.matches' "$SM_TMP/b.json")"
# A built-in record cannot go into this history, nor a record of another
# embedder.
expect_rc 2 "$SCHEDMATE" history add --db "$DB" --id h1 --duration 60 --meta "$M"
grep -q "never mixes embedders" "$SM_TMP/last.err" || fail "no clear message: $(cat "$SM_TMP/last.err")"
expect_rc 2 "$SCHEDMATE" history add --db "$DB" --id h2 --duration 60 --meta "$M" \
  --embed "$LLM_URL" --embed-model other-model
[ "$("$SCHEDMATE" history list --json --db "$DB" | jq '.jobs | length')" = 3 ] ||
  fail "a refused record was written"
# Export and import keep the vectors (they cannot be recomputed here).
"$SCHEDMATE" history import --db "$SM_TMP/copy.db" "$SM_TMP/export.jsonl" >/dev/null
"$SCHEDMATE" advise --json --db "$SM_TMP/copy.db" --meta "$M" --embed "$LLM_URL" \
  --embed-model emb-test >"$SM_TMP/c.json"
jq -e '(.matches | length) == 3 and .matches[0].score > 0.999' "$SM_TMP/c.json" \
  >/dev/null || fail "imported vectors differ"
# Importing them into a built-in history is refused as a whole batch.
H=$SM_TMP/hash.db
"$SCHEDMATE" history add --db "$H" --id b1 --duration 60 --meta "$M" >/dev/null
expect_rc 2 "$SCHEDMATE" history import --db "$H" "$SM_TMP/export.jsonl"
grep -q "never mixes embedders" "$SM_TMP/last.err" || fail "import: $(cat "$SM_TMP/last.err")"
# A damaged vector in an import is an error naming the line.
jq -c '.fp[3] = "x"' "$SM_TMP/export.jsonl" | head -1 >"$SM_TMP/bad.jsonl"
expect_rc 2 "$SCHEDMATE" history import --db "$SM_TMP/bad.db" "$SM_TMP/bad.jsonl"
grep -q "bad.jsonl:1" "$SM_TMP/last.err" || fail "bad fp: $(cat "$SM_TMP/last.err")"

# ---- A failing endpoint: nothing added, advise falls back.
printf '[{"endpoint": "embeddings", "status": 500}]\n' >"$R"
llm_start "$R"
expect_rc 2 "$SCHEDMATE" history add --db "$DB" --id e9 --duration 60 --meta "$M" \
  --embed "$LLM_URL" --embed-model emb-test --llm-retries 0
grep -q "nothing added" "$SM_TMP/last.err" || fail "add: $(cat "$SM_TMP/last.err")"
"$SCHEDMATE" advise --json --db "$DB" --meta "$M" --embed "$LLM_URL" \
  --embed-model fresh-model --llm-retries 1 >"$SM_TMP/f.json"
jq -e '.fallback == true and .fallback_reason == "history_unavailable" and
       (.fallback_detail | test("embeddings endpoint")) and
       .llm_stats.embed.reasons.http_5xx == 1 and .llm_stats.embed.calls == 2' \
  "$SM_TMP/f.json" >/dev/null || fail "failing endpoint: $(jq -c '[.fallback_reason,.fallback_detail,.llm_stats.embed]' "$SM_TMP/f.json")"
# Not an embedding at all.
printf '[{"endpoint": "embeddings", "embedding": ["a", 1]}]\n' >"$R"
llm_start "$R"
"$SCHEDMATE" advise --json --db "$DB" --meta "$M" --embed "$LLM_URL" \
  --embed-model other >"$SM_TMP/g.json"
jq -e '.fallback == true and .llm_stats.embed.reasons.bad_response == 1' \
  "$SM_TMP/g.json" >/dev/null || fail "bad embedding: $(jq -c .llm_stats.embed "$SM_TMP/g.json")"
echo ok
