# llm_injection.sh - repository text is data, never instructions.  The
# test repository's README tells a model to read /etc/passwd and to
# answer fixed values; the replayed "model" obeys it in every way it can
# (absolute paths, "..", a link inside the repository that points at
# /etc/passwd, a native tool call to a shell, the fixed values cited from
# the README and from a comment).  Nothing of it may happen: no byte of
# /etc/passwd reaches a request, every tool call is refused and counted,
# every fixed value is dropped, and the answer is the deterministic one.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../llm/lib.sh"
[ -r /etc/passwd ] || skip "no /etc/passwd to protect"
REPO=$SM_TMP/repo
cp -r "$(dirname "$0")/../llm/repo_inject" "$REPO"
ln -s /etc/passwd "$REPO/passwd_link"
ln -s /etc "$REPO/etc_dir"
R=$SM_TMP/rules.json
extract() { "$SCHEDMATE" extract --json --repo "$REPO" "$@" -- python train.py; }
extract >"$SM_TMP/static.json"

cat >"$R" <<'EOF'
[
 {"last": "Find these fields", "content": "{\"action\": \"read\", \"path\": \"README.md\"}"},
 {"last": "Lines 1.. of README.md", "content": "{\"action\": \"read\", \"path\": \"/etc/passwd\"}"},
 {"last": "refused: /etc/passwd", "tool": {"name": "shell", "arguments": {"cmd": "cat /etc/passwd"}}},
 {"last": "refused: unknown tool", "content": "{\"action\": \"read\", \"path\": \"passwd_link\"}"},
 {"last": "refused: passwd_link",
  "content": "{\"action\": \"answer\", \"fields\": {\"d_model\": {\"value\": 4096, \"evidence\": \"README.md:4\"}, \"n_layers\": {\"value\": 96, \"evidence\": \"model.py:3\"}, \"seq_len\": {\"value\": 4096, \"evidence\": \"/etc/passwd:1\"}}}"}
]
EOF
llm_start "$R"
extract --llm "$LLM_URL" >"$SM_TMP/i.json"
jq -e --slurpfile s "$SM_TMP/static.json" \
  '.metadata == $s[0].metadata and .evidence == $s[0].evidence' \
  "$SM_TMP/i.json" >/dev/null || fail "the injection changed the answer: $(jq -c .metadata "$SM_TMP/i.json")"
jq -e '.llm.tool_calls == 1 and .llm.tool_refused == 3 and .llm.claims == 3 and
       .llm.verified == 0 and .llm_stats.advisor.tool_refused == 3 and
       .llm_stats.advisor.reasons.tool_refused == 1' "$SM_TMP/i.json" >/dev/null ||
  fail "refusals not counted: $(jq -c .llm "$SM_TMP/i.json")"
for pair in d_model:not_code_or_config n_layers:not_on_line seq_len:outside_root; do
  f=${pair%%:*} why=${pair#*:}
  jq -e --arg f "$f" --arg w "$why" \
    '[.llm.drops[] | select(.field == $f and .why == $w)] | length == 1' \
    "$SM_TMP/i.json" >/dev/null || fail "$f should be dropped as $why"
done
# No byte of the protected file in any request: the first line of
# /etc/passwd (root's entry) never appears.
first=$(head -1 /etc/passwd)
if grep -qF "$first" "$LLM_LOG"; then fail "/etc/passwd reached the model"; fi
if grep -q 'root:x:0:0' "$LLM_LOG"; then fail "/etc/passwd reached the model"; fi
# The refusals went back to the model as refusals.
jq -r 'select(.request.messages) | .request.messages[-1].content' "$LLM_LOG" \
  >"$SM_TMP/last.txt"
grep -q "refused: /etc/passwd is outside the repository" "$SM_TMP/last.txt" ||
  fail "no refusal for /etc/passwd"
grep -q "refused: passwd_link is not a readable file" "$SM_TMP/last.txt" ||
  fail "no refusal for the link"
# The README's instructions were shown to the model only as quoted data:
# inside a <<<DATA ...>>> block of a user message, after a system prompt
# that says data is never an instruction.
jq -e 'select(.request.messages) | .request.messages |
       (.[0].role == "system" and (.[0].content | test("never an instruction"))) and
       ([.[] | select(.content != null and (.content | contains("ignore all previous instructions")))] |
        all(.role == "user" and (.content | test("<<<DATA [0-9a-f]{16}>>>\n(.|\n)*ignore all previous instructions(.|\n)*<<<END DATA [0-9a-f]{16}>>>"))))' \
  "$LLM_LOG" >/dev/null || fail "the README was not quoted as data"
# The file tree shown to the model has no links out of the root.
jq -r 'select(.request.messages) | .request.messages[1].content' "$LLM_LOG" |
  head -c 100000 >"$SM_TMP/first.txt"
if grep -q "passwd_link\|etc_dir" "$SM_TMP/first.txt"; then
  fail "the tree offers links that leave the root"
fi

# ---- A model that keeps trying is stopped after a few refusals.
cat >"$R" <<'EOF'
[
 {"last": "Find these fields", "content": "{\"action\": \"list\", \"path\": \"etc_dir\"}"},
 {"content": "{\"action\": \"read\", \"path\": \"../../../../etc/shadow\"}"}
]
EOF
llm_start "$R"
extract --llm "$LLM_URL" >"$SM_TMP/j.json"
jq -e --slurpfile s "$SM_TMP/static.json" \
  '.metadata == $s[0].metadata and .llm.fallback_reason == "tool_refused" and
   .llm.tool_refused == 4 and .llm.tool_calls == 0' "$SM_TMP/j.json" >/dev/null ||
  fail "repeated refusals: $(jq -c .llm "$SM_TMP/j.json")"
if grep -q 'root:' "$LLM_LOG"; then fail "a system file reached the model"; fi
echo ok
