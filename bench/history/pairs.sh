#!/usr/bin/env bash
# Matching accuracy on labelled same/different job pairs: job a goes into
# an empty history, job b (a's repository renamed / files edited / command
# changed as the pair says) asks `advise`, and the pair counts as matched
# when advise answers with a match (no fallback: identity vetoes and
# too_little_known count as kept apart).  Prints the confusion table and
# every pair's best score and fallback reason.  The scoring is
# bench/advisor/score.py's (the reference); this prints its pair part.
#
#   bench/history/pairs.sh REPOS_DIR [LABELS_DIR] [THRESHOLD]
#
# LABELS_DIR holds jobs.jsonl and pairs.jsonl (default: the development
# set, $SM_SHARED/devdata/advisor); REPOS_DIR the checked-out repositories
# (REPOS_DIR/minGPT, ...), as that set's README explains; nothing of them
# is kept here.  Score a set-aside part only with score.py --quiet.
set -u
cd "$(dirname "$0")/../.."
REPOS=${1:-}
LABELS=${2:-${SM_SHARED:-../shared}/devdata/advisor}
THR=${3:-}
if [ -z "$REPOS" ] || [ ! -d "$REPOS" ] || [ ! -f "$LABELS/pairs.jsonl" ]; then
  echo "pairs: repositories or labels absent; skipped"; exit 0; fi
command -v python3 >/dev/null || { echo "pairs: python3 absent; skipped"; exit 0; }
make -s all >/dev/null || exit 1
python3 bench/advisor/score.py --labels "$LABELS" --repos "$REPOS" \
  ${THR:+--threshold "$THR"} | sed -n '/^pairs  /,/^pair accuracy/p; /^pairs:/,$p'
