#!/usr/bin/env python3
"""Scores `schedmate track` on a directory of progress logs with labels.

    bench/track/evaluate.py [--quiet] [--bin PATH] DIR LABELS

LABELS is JSON lines in the format of the development set's progress
labels (file, has_progress, last_step, last_loss, step_time_s, alt).  A
log is fully right when

    has_progress false  -> status "missing";
    otherwise status "ok" and
      step       equal to last_step (or alt.last_step),
      loss       within 1 % of last_loss or alt.last_loss (null where null),
      step time  within 25 % of step_time_s (null where it is null).

Prints one row per log unless --quiet (use --quiet on a set-aside part,
whose misses must not be studied), then the count of logs fully right and
per criterion, and last a line "SUMMARY n=N right=K share=P".  The
binary is SCHEDMATE or --bin (default build/schedmate).

Where the labels carry them, the conventions are counted too (not part
of "fully right"): total_steps, last_epoch, step_scope (global / per
epoch) and step_time_basis agree with the answer's total_steps, epoch,
step_scope and step_time_basis.
"""
import argparse
import json
import os
import subprocess


def near(a, b, tol):
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return False
    if b == 0:
        return abs(a) < 1e-12
    return abs((a - b) / b) <= tol


def judge(got, lab):
    alt = lab.get("alt") or {}
    if not lab.get("has_progress"):
        return [] if got.get("status") == "missing" else ["expected missing"]
    why = []
    if got.get("status") != "ok":
        why.append("status " + str(got.get("status")))
    if not (got.get("step") == lab.get("last_step") or
            ("last_step" in alt and got.get("step") == alt["last_step"])):
        why.append("step")
    gl, wl = got.get("loss"), lab.get("last_loss")
    if isinstance(wl, str):
        # A loss labelled "nan" / "inf": the answer must say so
        # (loss null with loss_nonfinite), not report an older value.
        if not (gl is None and got.get("loss_nonfinite") is True):
            why.append("loss")
    elif not ((wl is None and gl is None) or near(gl, wl, 0.01) or
              ("last_loss" in alt and near(gl, alt["last_loss"], 0.01))):
        why.append("loss")
    gt, wt = got.get("step_time_s"), lab.get("step_time_s")
    if not ((wt is None and gt is None) or near(gt, wt, 0.25)):
        why.append("step_time")
    return why


def scope_of(label):
    s = label.get("step_scope")
    if not s:
        return None
    if s.startswith("global"):
        return "global"
    if s.startswith("per-epoch") or s.startswith("per-scale"):
        return "epoch"
    return None


def basis_of(label):
    b = label.get("step_time_basis")
    if b is None:
        return None
    if b.startswith("derived(epoch_seconds"):
        return "bar"
    if b.startswith("cumulative"):
        return "timestamps"
    return b


def conventions(got, lab):
    """Yields (name, agrees) for the conventions the label states."""
    if not lab.get("has_progress") or got.get("status") != "ok":
        return
    if "total_steps" in lab and lab.get("last_step") is not None:
        yield "total", got.get("total_steps") == lab["total_steps"]
    if "last_epoch" in lab:
        e = got.get("epoch")
        yield "epoch", isinstance(e, (int, float)) and abs(
            e - lab["last_epoch"]) < 1e-6
    sc = scope_of(lab)
    if sc is not None and lab.get("last_step") is not None:
        yield "scope", got.get("step_scope") == sc
    b = basis_of(lab)
    if b is not None and lab.get("step_time_s") is not None:
        yield "basis", got.get("step_time_basis") == b


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--bin", default=os.environ.get("SCHEDMATE",
                                                    "build/schedmate"))
    ap.add_argument("dir")
    ap.add_argument("labels")
    args = ap.parse_args()
    n = right = 0
    crit = {"status": 0, "step": 0, "loss": 0, "step_time": 0}
    conv = {}
    with open(args.labels) as fh:
        labels = [json.loads(l) for l in fh if l.strip()]
    for lab in labels:
        p = subprocess.run([args.bin, "track", "--json",
                            os.path.join(args.dir, lab["file"])],
                           capture_output=True, text=True)
        try:
            got = json.loads(p.stdout) if p.returncode == 0 else {}
        except ValueError:
            got = {}
        why = judge(got, lab)
        off = []
        for name, agrees in conventions(got, lab):
            c = conv.setdefault(name, [0, 0])
            c[0] += agrees
            c[1] += 1
            if not agrees:
                off.append(name)
        n += 1
        right += not why
        for k in crit:
            crit[k] += not any(w.startswith(k) or (k == "status" and
                                                    w == "expected missing")
                               for w in why)
        if not args.quiet:
            print("%-16s %-5s step %s/%s loss %s/%s time %s/%s %s%s" % (
                lab["file"], "ok" if not why else "MISS",
                got.get("step"), lab.get("last_step"), got.get("loss"),
                lab.get("last_loss"), got.get("step_time_s"),
                lab.get("step_time_s"), ",".join(why),
                (" (conventions: " + ",".join(off) + ")") if off else ""))
    print("logs %d: fully right %d; status %d, step %d, loss %d, step time %d"
          % (n, right, crit["status"], crit["step"], crit["loss"],
             crit["step_time"]))
    if conv:
        print("conventions: " + ", ".join(
            "%s %d/%d" % (k, conv[k][0], conv[k][1])
            for k in ("total", "epoch", "scope", "basis") if k in conv))
    print("SUMMARY n=%d right=%d share=%.3f" % (n, right,
                                               right / float(n) if n else 0))


if __name__ == "__main__":
    main()
