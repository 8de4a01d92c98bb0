#!/usr/bin/env bash
# evaluate.sh - scores `schedmate diagnose` on a directory of failure logs
# with hand-checked labels (JSON lines: file, first_error_line, category,
# component; null fields are not checked).
#
#   bench/diagnose/evaluate.sh [--quiet] [-- DIAGNOSE-OPTIONS...] DIR LABELS
#
# Prints one row per log (expected and found line, category, component,
# planned actions) unless --quiet, then a summary, and last a line
#
#   SUMMARY n=N line=P cat=P infra_f1=F comp=P unsafe=K
#
# line: first error within +-2 lines (a log labelled without a failure
# must give no_failure); cat: category accuracy; infra_f1: F1 of the
# infrastructure category; comp: component accuracy on infrastructure
# labels; unsafe: plans that restart or isolate for a user or framework
# fault (must be 0).  SCHEDMATE names the binary (default build/schedmate).
set -u
quiet=0
opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quiet) quiet=1; shift ;;
    --) shift; while [ $# -gt 2 ]; do opts+=("$1"); shift; done ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || { echo "usage: $0 [--quiet] [-- OPTIONS...] DIR LABELS" >&2; exit 2; }
dir=$1 labels=$2
bin=${SCHEDMATE:-build/schedmate}
command -v jq >/dev/null || { echo "evaluate.sh: jq is required" >&2; exit 2; }
[ -x "$bin" ] || { echo "evaluate.sh: $bin: not an executable" >&2; exit 2; }
[ -r "$labels" ] || { echo "evaluate.sh: $labels: cannot read" >&2; exit 2; }

n=0 nl=0 lok=0 nc=0 cok=0 tp=0 fp=0 fn=0 ncomp=0 compok=0 unsafe=0
[ $quiet = 1 ] || printf '%-32s %5s %5s %-3s %-15s %-15s %-11s %s\n' \
  file want got ok category found component actions
while IFS= read -r lab; do
  f=$(jq -r .file <<<"$lab")
  wl=$(jq -r '.first_error_line // "null"' <<<"$lab")
  wc=$(jq -r '.category // "null"' <<<"$lab")
  wk=$(jq -r '.component // "null"' <<<"$lab")
  out=$("$bin" diagnose --json "${opts[@]}" "$dir/$f" 2>/dev/null)
  rc=$?
  if [ $rc -gt 1 ] || [ -z "$out" ]; then
    out='{"status":"error","first_error_line":null,"category":"error","component":"error","actions":[]}'
  fi
  gl=$(jq -r '.first_error_line // "null"' <<<"$out")
  gc=$(jq -r .category <<<"$out")
  gk=$(jq -r .component <<<"$out")
  st=$(jq -r .status <<<"$out")
  acts=$(jq -r '.actions | join(",")' <<<"$out")
  n=$((n + 1))
  ok=-
  if [ "$wl" = null ] && [ "$wc" = null ]; then
    nl=$((nl + 1)); ok=no
    [ "$st" = no_failure ] && { lok=$((lok + 1)); ok=yes; }
  elif [ "$wl" != null ]; then
    nl=$((nl + 1)); ok=no
    if [ "$gl" != null ] && [ $((gl - wl)) -le 2 ] && [ $((wl - gl)) -le 2 ]; then
      lok=$((lok + 1)); ok=yes
    fi
  fi
  if [ "$wc" != null ]; then
    nc=$((nc + 1))
    [ "$gc" = "$wc" ] && cok=$((cok + 1))
    if [ "$wc" = infrastructure ] && [ "$gc" = infrastructure ]; then tp=$((tp + 1)); fi
    if [ "$wc" != infrastructure ] && [ "$gc" = infrastructure ]; then fp=$((fp + 1)); fi
    if [ "$wc" = infrastructure ] && [ "$gc" != infrastructure ]; then fn=$((fn + 1)); fi
    if [ "$wc" = infrastructure ] && [ "$wk" != null ]; then
      ncomp=$((ncomp + 1)); [ "$gk" = "$wk" ] && compok=$((compok + 1))
    fi
    if [ "$wc" = user ] || [ "$wc" = framework ]; then
      case ",$acts," in
        *,restart_from_checkpoint,*|*,isolate_node,*|*,request_replacement,*)
          unsafe=$((unsafe + 1)) ;;
      esac
    fi
  fi
  [ $quiet = 1 ] || printf '%-32s %5s %5s %-3s %-15s %-15s %-11s %s\n' \
    "$f" "$wl" "$gl" "$ok" "$wc" "$gc" "$gk" "$acts"
done < <(grep -v '^[[:space:]]*$' "$labels")

pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.3f", a / b }'; }
f1=$(awk -v tp=$tp -v fp=$fp -v fn=$fn 'BEGIN { d = 2 * tp + fp + fn; if (d == 0) print "n/a"; else printf "%.3f", 2 * tp / d }')
echo "logs $n: first error within 2 lines $lok/$nl, category $cok/$nc, infrastructure tp=$tp fp=$fp fn=$fn, component $compok/$ncomp, unsafe plans $unsafe"
echo "SUMMARY n=$n line=$(pct $lok $nl) cat=$(pct $cok $nc) infra_f1=$f1 comp=$(pct $compok $ncomp) unsafe=$unsafe"
