#!/usr/bin/env bash
# Tracker benchmark (run by `make bench`).  Generates a realistic mixed
# training log of SIZE bytes (default 1 GiB) in a temporary directory and
# prints, side by side with the reference runs of public tools on the
# same file:
#
#   (a) `schedmate track LOG` against `wc -l LOG`: the tracker reads only
#       the tail, so its time should be under 1 % of the full scan;
#   (b) full-file line classification (`schedmate track --classify-all`)
#       in MB/s against `grep -c loss LOG`: at least half of grep's speed.
#
# The file is read once first so that every run finds it in the page
# cache; each timing is the best of REPEAT runs (default 3).
#
#   bench/track/run.sh                 SIZE=100000000 bench/track/run.sh
set -eu
cd "$(dirname "$0")/../.."
SIZE=${SIZE:-1073741824}
REPEAT=${REPEAT:-3}
BIN=${SCHEDMATE:-build/schedmate}
[ -x "$BIN" ] || { echo "bench/track: $BIN not built (run make)"; exit 1; }
TMP=$(mktemp -d /tmp/schedmate-bench-track.XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM

${CC:-cc} -O2 -o "$TMP/genlog" bench/track/genlog.c -lm
"$TMP/genlog" "$SIZE" >"$TMP/train.log"
bytes=$(stat -c %s "$TMP/train.log")
cat "$TMP/train.log" >/dev/null

# best_time CMD...: prints the best wall time of REPEAT runs, in seconds.
# Output goes to a file, not /dev/null: GNU grep stops at the first match
# when it sees its output discarded.
best_time() {
  local best="" t0 t1 dt
  for _ in $(seq "$REPEAT"); do
    t0=$(date +%s.%N)
    "$@" >"$TMP/run.out"
    t1=$(date +%s.%N)
    dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    if [ -z "$best" ] || awk -v x="$dt" -v y="$best" 'BEGIN { exit !(x < y) }'; then
      best=$dt
    fi
  done
  echo "$best"
}

mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
echo "input: $mb MB generated log ($(wc -l <"$TMP/train.log") lines)"

t_true=$(best_time /bin/true)
t_track=$(best_time "$BIN" track --json "$TMP/train.log")
t_wc=$(best_time wc -l "$TMP/train.log")
"$BIN" track --json "$TMP/train.log" >"$TMP/answer.json"
read_b=$(sed -E 's/.*"bytes_read":([0-9]+).*/\1/' "$TMP/answer.json")
echo "answer: $(cut -c1-160 "$TMP/answer.json")"
awk -v t="$t_track" -v w="$t_wc" -v r="$read_b" -v b="$bytes" -v z="$t_true" 'BEGIN {
  printf "(a) schedmate track: %.4f s (read %d bytes, %.4f%% of the file)\n", t, r, 100 * r / b
  printf "    wc -l:           %.4f s\n", w
  printf "    ratio track/wc:  %.3f%%   (goal < 1%%)\n", 100 * t / w
  printf "    for scale: starting /bin/true takes %.4f s = %.3f%% of wc -l\n", z, 100 * z / w
  printf "    beyond process start: (track - true)/wc = %.3f%%\n", 100 * (t - z) / w }'

t_cls=$(best_time "$BIN" track --classify-all "$TMP/train.log")
t_grep=$(best_time grep -c loss "$TMP/train.log")
"$BIN" track --classify-all "$TMP/train.log" | sed 's/^/    /'
awk -v c="$t_cls" -v g="$t_grep" -v b="$bytes" 'BEGIN {
  printf "(b) classify-all:    %.3f s = %.1f MB/s\n", c, b / c / 1e6
  printf "    grep -c loss:    %.3f s = %.1f MB/s\n", g, b / g / 1e6
  printf "    ratio classify/grep speed: %.2f   (goal >= 0.5)\n", g / c }'

# (c) Ended runs and input without newlines: the log with the tail a
#     crashed writer leaves (16 MB of NUL padding, no newline, then a 2 GB
#     hole of a file extended and never written), and a bar that printed
#     only carriage returns for its whole run (NLSIZE, 256 MiB).  The
#     tracker reads back at most its look-back budget, skips holes, and
#     never re-reads a region: its time stays far below one read of the
#     file (`cat`).
NLSIZE=${NLSIZE:-268435456}
head -c 16777216 /dev/zero >>"$TMP/train.log"
truncate -s +2G "$TMP/train.log"
t_nul=$(best_time "$BIN" track --json "$TMP/train.log")
"$BIN" track --json "$TMP/train.log" >"$TMP/answer.json"
read_n=$(sed -E 's/.*"bytes_read":([0-9]+).*/\1/' "$TMP/answer.json")
step_n=$(sed -E 's/.*"step":([0-9null]+).*/\1/' "$TMP/answer.json")
rm -f "$TMP/train.log"
awk -v n="$NLSIZE" 'BEGIN { for (s = 1; s * 70 < n; s++)
  printf "\r %2d%%|#####     | %d/9999999 [01:00<02:00, 12.%02dit/s, loss=%.4f]",
         s % 100, s, s % 100, 3 - s / 1e7 }' >"$TMP/bar.log"
t_bar=$(best_time "$BIN" track --json "$TMP/bar.log")
"$BIN" track --json "$TMP/bar.log" >"$TMP/answer.json"
read_b=$(sed -E 's/.*"bytes_read":([0-9]+).*/\1/' "$TMP/answer.json")
t_cat=$(best_time cat "$TMP/bar.log")
awk -v a="$t_nul" -v ra="$read_n" -v sa="$step_n" -v b="$t_bar" -v rb="$read_b" \
    -v c="$t_cat" -v n="$NLSIZE" 'BEGIN {
  printf "(c) log + 16 MB NULs + 2 GB hole: %.4f s (read %d bytes, step %s)\n", a, ra, sa
  printf "    %.0f MB bar without newlines: %.4f s (read %d bytes)\n", n / 1e6, b, rb
  printf "    cat of the bar log:           %.4f s\n", c
  printf "    ratio track/cat: %.3f%%   (goal: far below one read)\n", 100 * b / c }'
