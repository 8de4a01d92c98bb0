# The simulator is linear in jobs and in GPUs requested: each case is
# timed (simulation only, wall_s of --json, median of 3) at two sizes ten
# times apart, and the larger must cost less than 35 times the smaller
# (linear: about 10; the quadratic behaviours this guards against gave
# 100 and more).  Ratios, never absolute times: the machine is shared.
. "$(dirname "$0")/../lib.sh"
med3() { # CMD... -> median wall_s of three runs
  local a b c
  a=$("$@" | jq -r .wall_s); b=$("$@" | jq -r .wall_s); c=$("$@" | jq -r .wall_s)
  printf '%s\n%s\n%s\n' "$a" "$b" "$c" | sort -g | sed -n 2p
}
ratio_below() { # NAME SMALL LARGE LIMIT
  awk -v n="$1" -v s="$2" -v l="$3" -v m="$4" 'BEGIN {
    r = l / (s > 1e-4 ? s : 1e-4);
    printf "%s: %.4f s -> %.4f s (x%.1f)\n", n, s, l, r;
    exit !(r < m) }' || fail "$1 is not linear"
}
sim() { "$SCHEDMATE" simulate --json --no-progress "$@"; }

# Jobs asking for 100,000 / 1,000,000 GPUs each (twenty of them, one
# after the other) on an auto-sized cluster.
for g in 100000 1000000; do
  awk -v g=$g 'BEGIN { print "job_id,submit_s,duration_s,gpus";
    for (i = 0; i < 20; i++) printf "big%d,%d,100,%d\n", i, i * 200, g }' > $SM_TMP/big$g.csv
done
s=$(med3 sim --trace $SM_TMP/big100000.csv --policy fifo)
l=$(med3 sim --trace $SM_TMP/big1000000.csv --policy fifo)
ratio_below "jobs of N GPUs" "$s" "$l" 35

# 20,000 / 200,000 jobs submitted at time 0.
for n in 20000 200000; do
  awk -v n=$n 'BEGIN { print "job_id,submit_s,duration_s,gpus";
    for (i = 0; i < n; i++) printf "j%d,0,%d,%d\n", i, 100 + i % 97, 1 + i % 4 }' > $SM_TMP/t0_$n.csv
done
for p in fifo lucid; do
  s=$(med3 sim --trace $SM_TMP/t0_20000.csv --policy $p --lucid-tables builtin)
  l=$(med3 sim --trace $SM_TMP/t0_200000.csv --policy $p --lucid-tables builtin)
  ratio_below "N jobs at time 0 ($p)" "$s" "$l" 35
done

# Lucid + SchedMate against plain Lucid on the first 20,000 Philly jobs
# at load 0.8 (the built-in profiles of a fresh clone, the catalogue):
# the same order of cost (it was 100 times Lucid's when its passes
# followed the pending queue).
W=(--trace data/traces/sia_philly.csv.gz --limit 20000 --load 0.8 --lucid-tables builtin --workloads data/workloads)
s=$(med3 sim "${W[@]}" --policy lucid)
l=$(med3 sim "${W[@]}" --policy lucid+schedmate)
ratio_below "lucid+schedmate / lucid, 20,000 Philly jobs" "$s" "$l" 10
