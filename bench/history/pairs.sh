#!/usr/bin/env bash
# Matching accuracy on the Advisor development pairs (devdata/advisor:
# pairs.jsonl, 17 "same" and 25 "different"): job a goes into an empty
# history, job b (a's repository renamed / files edited / command changed
# as the pair says) asks `advise`, and the pair counts as matched when the
# best score reaches the threshold.  Prints the confusion table and the
# score of every pair.
#
#   bench/history/pairs.sh REPOS_DIR [THRESHOLD]
#
# REPOS_DIR holds the checked-out repositories (REPOS_DIR/minGPT, ...), as
# devdata/advisor/README.md explains; nothing of them is kept here.
set -u
cd "$(dirname "$0")/../.."
REPOS=${1:-}
THR=${2:-0.95}
DEV=${SM_SHARED:-../shared}/devdata/advisor
if [ -z "$REPOS" ] || [ ! -d "$REPOS" ] || [ ! -f "$DEV/pairs.jsonl" ]; then
  echo "pairs: repositories or labels absent; skipped"; exit 0; fi
command -v python3 >/dev/null || { echo "pairs: python3 absent; skipped"; exit 0; }
make -s all >/dev/null || exit 1
exec python3 - "$REPOS" "$DEV" "$THR" "$PWD/build/schedmate" <<'PY'
import json, os, shlex, shutil, subprocess, sys, tempfile
repos, dev, thr, sm = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
jobs = {j["id"]: j for j in map(json.loads, open(os.path.join(dev, "jobs.jsonl")))}
tmp = tempfile.mkdtemp(prefix="sm-pairs-")

def repo_dir(job):
    return os.path.join(repos, job["repo"].split("/")[1])

def materialise(spec, tag):
    """Returns (repo root, workdir, argv) of a job spec (id or edits)."""
    if isinstance(spec, str):
        j = jobs[spec]
        return repo_dir(j), j["workdir"], shlex.split(j["command"])
    j = jobs[spec["base"]]
    root, cmd = repo_dir(j), j["command"]
    edits = any(k in spec for k in ("rename_repo", "copy_file", "replace_in_file"))
    if edits:
        name = spec.get("rename_repo", os.path.basename(root))
        new = os.path.join(tmp, tag, name)
        shutil.copytree(root, new, symlinks=True)
        root = new
    if "copy_file" in spec:
        shutil.copy(os.path.join(root, spec["copy_file"]["from"]),
                    os.path.join(root, spec["copy_file"]["to"]))
    for f in spec.get("replace_in_file", []):
        p = os.path.join(root, f["path"])
        text = open(p, encoding="utf-8", errors="surrogateescape").read()
        for a, b in f["replace"].items():
            text = text.replace(a, b)
        open(p, "w", encoding="utf-8", errors="surrogateescape").write(text)
    for a, b in spec.get("replace_in_command", {}).items():
        cmd = cmd.replace(a, b)
    if "extra_args" in spec:
        cmd += " " + spec["extra_args"]
    return root, j["workdir"], shlex.split(cmd)

def job_args(root, wd, argv):
    return ["--repo", root, "--cwd", wd, "--"] + argv

conf = {("same", True): 0, ("same", False): 0, ("different", True): 0, ("different", False): 0}
for i, line in enumerate(open(os.path.join(dev, "pairs.jsonl"))):
    p = json.loads(line)
    db = os.path.join(tmp, "h%d.db" % i)
    ra = materialise(p["a"], "a%d" % i)
    rb = materialise(p["b"], "b%d" % i)
    subprocess.run([sm, "history", "add", "--db", db, "--id", "a", "--duration", "1000"]
                   + job_args(*ra), check=True, capture_output=True)
    out = subprocess.run([sm, "advise", "--json", "--db", db, "--threshold", str(thr)]
                         + job_args(*rb), capture_output=True, text=True)
    score = json.loads(out.stdout).get("best_score") or 0.0
    matched = score >= thr
    conf[(p["label"], matched)] += 1
    ok = matched == (p["label"] == "same")
    b = p["b"] if isinstance(p["b"], str) else "edit of " + p["b"]["base"]
    print("%s %-9s %.3f  %s | %s" % ("ok  " if ok else "MISS", p["label"], score, p["a"], b))
shutil.rmtree(tmp)
n = sum(conf.values())
right = conf[("same", True)] + conf[("different", False)]
print("threshold %.2f: %d/%d pairs right; same matched %d/%d, different kept apart %d/%d"
      % (thr, right, n, conf[("same", True)], conf[("same", True)] + conf[("same", False)],
         conf[("different", False)], conf[("different", False)] + conf[("different", True)]))
PY
