#!/usr/bin/env python3
"""Scores `schedmate extract` and job matching on a labelled Advisor set.

    bench/advisor/score.py --labels DIR --repos REPOS_DIR [options]

DIR holds jobs.jsonl and pairs.jsonl in the format of the Advisor
development set (one job per line: id, repo, workdir, command, truth,
accept_also; one pair per line: a, b, label).  REPOS_DIR holds one work
tree per repository, named after the repository's last path component
(REPOS_DIR/minGPT, ...).  Nothing of those repositories is kept in this
project; the scorer is run by hand and is not part of the tests.

Options:
    --bin PATH          the schedmate binary (default build/schedmate)
    --only R1,R2,...    score only these repositories (owner/name)
    --skip R1,R2,...    score every repository but these
    --split FILE        JSON {"aside": [...], "tune": [...]}; with
                        --part aside|tune it selects one part
    --quiet             aggregates only: no per-job misses (use it on a
                        set-aside part, whose misses must not be studied)
    --no-pairs          fields only
    --threshold T       matching threshold for pairs (default: advise's)
    --json              one JSON object instead of the tables

Scoring: numbers within a relative 1e-6; strings compared lower case
without punctuation, equal or one containing the other (at least 4
characters); task by family; parallelism by leading family; null only
where the truth is null; any value of accept_also also counts.  A pair is
"matched" when `advise` returns a match (no fallback) for job b against a
history that holds job a only.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

FIELDS = ["model_name", "task", "domain", "dataset", "iterations",
          "iteration_type", "global_batch_size", "per_device_batch_size",
          "lr", "gpus", "nodes", "d_model", "n_layers", "seq_len",
          "precision", "parallelism"]

FAMILIES = (("lora", "finetune"), ("sft", "finetune"), ("dpo", "finetune"),
            ("rlhf", "finetune"),
            ("instruction", "finetune"), ("finetun", "finetune"),
            ("pretrain", "pretrain"), ("classif", "classification"),
            ("detection", "detection"), ("segment", "segmentation"),
            ("diffusion", "diffusion"))


def norm(s):
    return re.sub(r"[^a-z0-9]", "", str(s).lower())


def family(t):
    t = str(t).lower()
    for key, fam in FAMILIES:
        if key in t:
            return fam
    return t


def same(field, got, want):
    if got is None or want is None:
        return got is None and want is None
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        try:
            g = float(got)
        except (TypeError, ValueError):
            return False
        return abs(g - want) <= 1e-6 * max(1.0, abs(want))
    if field == "task":
        return family(got) == family(want)
    if field == "parallelism":
        def fam(s):
            return norm(re.split(r"[_\d]", str(s).lower())[0])
        return norm(got) == norm(want) or fam(got) == fam(want)
    a, b = norm(got), norm(want)
    if a == b:
        return True
    return min(len(a), len(b)) >= 4 and (a in b or b in a)


def right(field, got, job):
    if same(field, got, job["truth"].get(field)):
        return True
    alts = job.get("accept_also", {}).get(field, [])
    return got is not None and any(same(field, got, a) for a in alts)


def repo_dir(repos, job):
    return os.path.join(repos, job["repo"].split("/")[1])


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def score_fields(args, jobs):
    per_field = {f: 0 for f in FIELDS}
    per_repo = {}
    misses, ms, n = [], [], 0
    for job in jobs:
        root = repo_dir(args.repos, job)
        if not os.path.isdir(root):
            print("score: %s missing, job %s skipped" % (root, job["id"]),
                  file=sys.stderr)
            continue
        p = run([args.bin, "extract", "--json", "--repo", root, "--cwd",
                 job["workdir"], "--"] + shlex.split(job["command"]))
        meta = {}
        if p.returncode == 0:
            out = json.loads(p.stdout)
            meta = out.get("metadata", {})
            ms.append(out.get("elapsed_ms", 0.0))
        else:
            print("score: %s: exit %d" % (job["id"], p.returncode),
                  file=sys.stderr)
        n += 1
        r = per_repo.setdefault(job["repo"], [0, 0])
        for f in FIELDS:
            good = right(f, meta.get(f), job)
            per_field[f] += good
            r[0] += good
            r[1] += 1
            if not good:
                misses.append((job["id"], f, meta.get(f), job["truth"].get(f)))
    return {"jobs": n, "per_field": per_field, "per_repo": per_repo,
            "misses": misses, "elapsed_ms": sorted(ms)}


def materialise(args, jobs, spec, tmp, tag):
    if isinstance(spec, str):
        j = jobs[spec]
        return repo_dir(args.repos, j), j["workdir"], shlex.split(j["command"])
    j = jobs[spec["base"]]
    root, cmd = repo_dir(args.repos, j), j["command"]
    if any(k in spec for k in ("rename_repo", "copy_file", "replace_in_file")):
        new = os.path.join(tmp, tag, spec.get("rename_repo",
                                              os.path.basename(root)))
        shutil.copytree(root, new, symlinks=True)
        root = new
    if "copy_file" in spec:
        shutil.copy(os.path.join(root, spec["copy_file"]["from"]),
                    os.path.join(root, spec["copy_file"]["to"]))
    for f in spec.get("replace_in_file", []):
        path = os.path.join(root, f["path"])
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        for a, b in f["replace"].items():
            text = text.replace(a, b)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(text)
    for a, b in spec.get("replace_in_command", {}).items():
        cmd = cmd.replace(a, b)
    if "extra_args" in spec:
        cmd += " " + spec["extra_args"]
    return root, j["workdir"], shlex.split(cmd)


def score_pairs(args, jobs, pairs):
    conf = {"same": [0, 0], "different": [0, 0]}   # [matched, kept apart]
    rows = []
    tmp = tempfile.mkdtemp(prefix="sm-score-")
    try:
        for i, p in enumerate(pairs):
            db = os.path.join(tmp, "h%d.db" % i)
            ra = materialise(args, jobs, p["a"], tmp, "a%d" % i)
            rb = materialise(args, jobs, p["b"], tmp, "b%d" % i)
            run([args.bin, "history", "add", "--db", db, "--id", "a",
                 "--duration", "1000", "--repo", ra[0], "--cwd", ra[1], "--"]
                + ra[2])
            cmd = [args.bin, "advise", "--json", "--db", db]
            if args.threshold is not None:
                cmd += ["--threshold", str(args.threshold)]
            out = run(cmd + ["--repo", rb[0], "--cwd", rb[1], "--"] + rb[2])
            try:
                ans = json.loads(out.stdout)
            except ValueError:
                ans = {}
            matched = not ans.get("fallback", True)
            conf[p["label"]][0 if matched else 1] += 1
            b = p["b"] if isinstance(p["b"], str) else "edit of " + p["b"]["base"]
            rows.append((matched == (p["label"] == "same"), p["label"],
                         ans.get("best_score"), ans.get("fallback_reason"),
                         p["a"], b))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"confusion": conf, "rows": rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labels", required=True)
    ap.add_argument("--repos", required=True)
    ap.add_argument("--bin", default="build/schedmate")
    ap.add_argument("--only")
    ap.add_argument("--skip")
    ap.add_argument("--split")
    ap.add_argument("--part", choices=("aside", "tune"))
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--no-pairs", action="store_true")
    ap.add_argument("--threshold", type=float)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    jobs = {}
    with open(os.path.join(args.labels, "jobs.jsonl")) as fh:
        for line in fh:
            if line.strip():
                j = json.loads(line)
                jobs[j["id"]] = j
    keep = set(j["repo"] for j in jobs.values())
    if args.only:
        keep &= set(args.only.split(","))
    if args.skip:
        keep -= set(args.skip.split(","))
    if args.split:
        with open(args.split) as fh:
            split = json.load(fh)
        if args.part:
            keep &= set(split[args.part])
    chosen = [j for j in jobs.values() if j["repo"] in keep]
    res = {"repos": len(set(j["repo"] for j in chosen))}
    res.update(score_fields(args, chosen))
    pairs_path = os.path.join(args.labels, "pairs.jsonl")
    if not args.no_pairs and os.path.exists(pairs_path):
        def repo_of(s):
            return jobs[s if isinstance(s, str) else s["base"]]["repo"]
        with open(pairs_path) as fh:
            pairs = [json.loads(l) for l in fh if l.strip()]
        pairs = [p for p in pairs
                 if repo_of(p["a"]) in keep and repo_of(p["b"]) in keep]
        res.update(score_pairs(args, jobs, pairs))

    n = res["jobs"]
    total = sum(res["per_field"].values())
    res["field_accuracy"] = total / float(n * len(FIELDS)) if n else 0.0
    if "confusion" in res:
        c = res["confusion"]
        np_ = sum(c["same"]) + sum(c["different"])
        res["pair_accuracy"] = (c["same"][0] + c["different"][1]) / float(np_) if np_ else 0.0
    if args.quiet:
        res.pop("misses", None)
        res.pop("rows", None)
        res.pop("per_repo", None)
    if args.json:
        print(json.dumps(res, indent=1))
        return
    print("%d jobs in %d repositories" % (n, res["repos"]))
    print("%-24s %8s" % ("field", "accuracy"))
    for f in FIELDS:
        k = res["per_field"][f]
        print("%-24s %7.1f%%  (%d/%d)" % (f, 100.0 * k / max(n, 1), k, n))
    print("%-24s %7.1f%%  (%d/%d)" % ("all fields", 100.0 * res["field_accuracy"],
                                      total, n * len(FIELDS)))
    ms = res["elapsed_ms"]
    if ms:
        print("extract: median %.1f ms, max %.1f ms" % (ms[len(ms) // 2], ms[-1]))
    if "per_repo" in res:
        print("\n%-40s %8s" % ("repository", "fields"))
        for r, (k, t) in sorted(res["per_repo"].items()):
            print("%-40s %7.1f%%" % (r, 100.0 * k / t))
    if "confusion" in res:
        c = res["confusion"]
        print("\npairs          matched  kept apart")
        print("same           %7d  %10d" % tuple(c["same"]))
        print("different      %7d  %10d" % tuple(c["different"]))
        print("pair accuracy  %.3f" % res["pair_accuracy"])
    if "misses" in res:
        print("\nmisses:")
        for jid, f, got, want in res["misses"]:
            print("  %-36s %-22s got %-28s want %s" % (jid, f, json.dumps(got),
                                                      json.dumps(want)))
    if "rows" in res:
        print("\npairs:")
        for ok, label, score, why, a, b in res["rows"]:
            print("  %s %-9s %-6s %-18s %s | %s" % (
                "ok  " if ok else "MISS", label,
                "%.3f" % score if score is not None else "-",
                why or "", a, b))


if __name__ == "__main__":
    main()
