# No answer leaks into the facts, end to end: the first 3,000 jobs of the
# shipped Philly list, and the same jobs with their durations (and so
# gpu_time) shuffled among them.  Under every policy that models the
# SchedMate world and every facts source, with and without the workload
# catalogue, every job keeps its template, its profile and its
# fingerprint (columns workload, profile, fingerprint of --jobs-csv).  The
# oracle source, built from the outcome on purpose, must fail the same
# comparison.
. "$(dirname "$0")/../lib.sh"
T=data/traces/sia_philly.csv.gz
{ gzip -dc $T | head -1
  gzip -dc $T | tail -n +2 | grep -v "^$" | sort -s -t, -k1,1 | head -3000; } > $SM_TMP/a.csv
awk -F, -v OFS=, 'NR == 1 { print; next }
  { row[NR] = $0; d[NR] = $2; n = NR }
  END { srand(7)
    for (i = n; i > 2; i--) { k = 2 + int(rand() * (i - 1)); t = d[i]; d[i] = d[k]; d[k] = t }
    for (i = 2; i <= n; i++) { split(row[i], f, ","); f[2] = d[i]; f[4] = d[i] * f[3]
      print f[1], f[2], f[3], f[4], f[5] } }' $SM_TMP/a.csv > $SM_TMP/b.csv
cmp -s $SM_TMP/a.csv $SM_TMP/b.csv && fail "nothing shuffled"
world() { # CSV -> job_id,workload,profile,fingerprint sorted by id
  awk -F, -v OFS=, 'NR > 1 { print $1, $20, $21, $22 }' "$1" | sort
}
P=lucid,lucid+schedmate,sjf-schedmate,sjf-schedmate+fh
for wl in "" "--workloads data/workloads"; do
  for src in history calibrated oracle; do
    [ "$src" = oracle ] && [ -z "$wl" ] && continue
    for v in a b; do
      expect_rc 0 "$SCHEDMATE" simulate --no-progress --trace $SM_TMP/$v.csv --load 0.8 \
        --compare $P --facts $src $wl --lucid-tables builtin --jobs-csv $SM_TMP/$v.jobs.csv
    done
    for p in ${P//,/ }; do
      world $SM_TMP/a.jobs.$p.csv > $SM_TMP/wa
      world $SM_TMP/b.jobs.$p.csv > $SM_TMP/wb
      [ "$(wc -l < $SM_TMP/wa)" = 3000 ] || fail "$p: jobs"
      cut -d, -f2,3 $SM_TMP/wa | grep -qv '^,$' || fail "$p: no world recorded"
      if [ "$src" = oracle ]; then
        cut -d, -f1-3 $SM_TMP/wa > $SM_TMP/ta; cut -d, -f1-3 $SM_TMP/wb > $SM_TMP/tb
        cmp -s $SM_TMP/ta $SM_TMP/tb || fail "$p, oracle: the world moved with the outcomes"
        [ "$p" = lucid ] && continue
        ! cmp -s $SM_TMP/wa $SM_TMP/wb || fail "$p, oracle: the leak went unnoticed"
      else
        cmp -s $SM_TMP/wa $SM_TMP/wb || { diff $SM_TMP/wa $SM_TMP/wb | head -5;
          fail "$p, facts $src ${wl:+(templates)}: the facts moved with the outcomes"; }
      fi
    done
  done
done
echo "permutation test: world and fingerprints unchanged for history and calibrated"
