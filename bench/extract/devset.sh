#!/usr/bin/env bash
# Per-field accuracy of `schedmate extract` on the Advisor development set
# (shared/devdata/advisor: 36 labelled jobs in 10 public repositories).
#
#   bench/extract/devset.sh REPOS_DIR [SCHEDMATE]
#
# REPOS_DIR holds one checked-out work tree per repository, named after
# the repository (REPOS_DIR/minGPT, REPOS_DIR/detr, ...), rebuilt as
# devdata/advisor/README.md explains.  Nothing of them is kept in this
# project.  Scoring follows that README: numbers within a relative 1e-6,
# strings lower case without punctuation where one contains the other (at
# least 4 characters), task by family, parallelism by leading family, and
# null only where the truth is null.  SM_DEVSET_VERBOSE=1 lists misses.
# Skips (exit 0 with a message) when the repositories or the labels are
# absent.
set -u
cd "$(dirname "$0")/../.."
REPOS=${1:-}
BIN=${2:-build/schedmate}
LABELS=${SM_SHARED:-../shared}/devdata/advisor/jobs.jsonl
if [ -z "$REPOS" ] || [ ! -d "$REPOS" ]; then
  echo "devset: no repository directory given or found; skipped"; exit 0; fi
if [ ! -f "$LABELS" ]; then echo "devset: $LABELS absent; skipped"; exit 0; fi
command -v python3 >/dev/null || { echo "devset: python3 absent; skipped"; exit 0; }
[ -x "$BIN" ] || { echo "devset: $BIN not built (run make)"; exit 1; }
exec python3 - "$REPOS" "$BIN" "$LABELS" <<'PY'
import json, os, re, shlex, subprocess, sys
repos, binp, labels = sys.argv[1:4]
FIELDS = ["model_name", "task", "domain", "dataset", "iterations",
          "iteration_type", "global_batch_size", "per_device_batch_size",
          "lr", "gpus", "nodes", "d_model", "n_layers", "seq_len",
          "precision", "parallelism"]
def norm(s): return re.sub(r"[^a-z0-9]", "", str(s).lower())
def family(t):
    t = str(t).lower()
    for k, f in (("lora", "finetune"), ("sft", "finetune"), ("instruction", "finetune"),
                 ("finetun", "finetune"), ("qlora", "finetune"), ("pretrain", "pretrain"),
                 ("classif", "classification"), ("detection", "detection"),
                 ("segment", "segmentation"), ("diffusion", "diffusion")):
        if k in t: return f
    return t
def same(field, got, want):
    if got is None or want is None: return got is None and want is None
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        try: g = float(got)
        except (TypeError, ValueError): return False
        return abs(g - want) <= 1e-6 * max(1.0, abs(want))
    if field == "task": return family(got) == family(want)
    if field == "parallelism":
        fam = lambda s: norm(re.split(r"[_\d]", str(s).lower())[0])
        return norm(got) == norm(want) or fam(got) == fam(want)
    a, b = norm(got), norm(want)
    if a == b: return True
    return min(len(a), len(b)) >= 4 and (a in b or b in a)
ok = {f: 0 for f in FIELDS}; n = 0; total_ms = []; files = []; misses = []
for line in open(labels):
    job = json.loads(line)
    name = job["repo"].split("/")[1]
    root = os.path.join(repos, name)
    if not os.path.isdir(root):
        print("devset: %s missing, job %s skipped" % (root, job["id"])); continue
    cmd = [binp, "extract", "--json", "--repo", root, "--cwd", job["workdir"], "--"] + shlex.split(job["command"])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print("devset: %s: exit %d: %s" % (job["id"], p.returncode, p.stderr.strip())); out = {"metadata": {}}
    else:
        out = json.loads(p.stdout); total_ms.append(out["elapsed_ms"]); files.append(out["files_read"])
    n += 1
    for f in FIELDS:
        got = out["metadata"].get(f); want = job["truth"].get(f)
        good = same(f, got, want) or (got is not None and any(same(f, got, a) for a in job.get("accept_also", {}).get(f, [])))
        ok[f] += good
        if not good: misses.append("%-34s %-22s got %-30s want %s" % (job["id"], f, json.dumps(got), json.dumps(want)))
if n == 0: print("devset: no job run"); sys.exit(0)
print("%-24s %8s" % ("field", "accuracy"))
for f in FIELDS: print("%-24s %7.1f%%  (%d/%d)" % (f, 100.0 * ok[f] / n, ok[f], n))
allf = sum(ok.values()); print("%-24s %7.1f%%  (%d/%d)" % ("all fields", 100.0 * allf / (n * len(FIELDS)), allf, n * len(FIELDS)))
if total_ms:
    s = sorted(total_ms); print("jobs %d, median %.2f ms, max %.2f ms, median files read %d" % (n, s[len(s)//2], s[-1], sorted(files)[len(files)//2]))
if os.environ.get("SM_DEVSET_VERBOSE"):
    print("\n".join(misses))
PY
