#!/usr/bin/env bash
# Start-up benchmark (run by `make bench`): what every invocation of
# schedmate pays before it does any work (the Slurm plugin runs `advise`
# for each submission, scripts run `track` and `diagnose` in loops).
# Prints the median of RUNS runs (default 30, interleaved) of
#
#   /bin/true                        the cost of starting any process
#   reference                        an empty program linked with the
#                                    libraries schedmate links (SQLite,
#                                    hiredis, libyaml, cJSON, tree-sitter,
#                                    zlib): the floor for this design
#   schedmate --version              start-up and exit
#   schedmate track LOG              a 40-line log
#
# and the ratio of `schedmate --version` to the reference (goal: < 2).
# The optional libraries (CBC, libcurl, libmicrohttpd) are loaded only by
# the commands that use them, so they are not part of any of these.
set -eu
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-30}
BIN=${SCHEDMATE:-build/schedmate}
[ -x "$BIN" ] || { echo "bench/startup: $BIN not built (run make)"; exit 1; }
command -v python3 >/dev/null || { echo "bench/startup: python3 needed"; exit 1; }
TMP=$(mktemp -d /tmp/schedmate-bench-startup.XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM
echo 'int main(void) { return 0; }' >"$TMP/ref.c"
# Without --as-needed, so that the reference maps every library it names.
${CC:-cc} -O2 -Wl,--no-as-needed -o "$TMP/ref" "$TMP/ref.c" \
  $(pkg-config --libs sqlite3 hiredis yaml-0.1 libcjson tree-sitter zlib) -lm -lpthread
for s in $(seq 1 40); do echo "step $s/1000 | loss 2.$s | 0.25 s/it"; done >"$TMP/train.log"
python3 - "$RUNS" /bin/true "$TMP/ref" "$BIN --version" "$BIN track $TMP/train.log" <<'PY'
import os, statistics, sys, time
runs = int(sys.argv[1])
names = ["/bin/true", "reference", "schedmate --version", "schedmate track LOG"]
cmds = [a.split() for a in sys.argv[2:]]
null = os.open(os.devnull, os.O_WRONLY)
fa = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
ts = [[] for _ in cmds]
for _ in range(runs):
    for i, c in enumerate(cmds):
        t = time.perf_counter()
        pid = os.posix_spawn(c[0], c, os.environ, file_actions=fa)
        _, st = os.waitpid(pid, 0)
        ts[i].append(time.perf_counter() - t)
        if st != 0:
            sys.exit("bench/startup: %s failed" % " ".join(c))
med = [statistics.median(t) * 1000 for t in ts]
for n, m, t in zip(names, med, ts):
    print("%-22s median %7.2f ms   min %7.2f ms" % (n, m, min(t) * 1000))
print("ratio --version / reference: %.2f   (goal < 2)" % (med[2] / med[1]))
PY
