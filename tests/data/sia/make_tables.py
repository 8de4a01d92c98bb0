#!/usr/bin/env python3
"""Writes the synthetic Sia tables the tests use (tests/data/sia/tables/).

Two made-up applications on two made-up GPU types, in the layout of Sia's
artifact (one directory per application): validation-<batch>.csv with
progress, metric and gradient statistics per epoch; placements-<gpu>.csv
and scalability-<gpu>.csv with step and sync times.  Step times follow
the Pollux step-time model with known parameters and a deterministic
+-0.5 % wobble, so that a fit has something to recover.  Nothing here is
a measurement.  Run it again to regenerate (the output is deterministic).
"""
import math
import os
import zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tables")

# (alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, gamma) per GPU type.
APPS = {
    "toyconv": {
        "epochs": 12,
        "per_epoch": 3000.0,         # progress (iterations at batch 64)
        "batches": [64, 128, 256, 512, 1024],
        "bsz": [16, 23, 32, 45, 64, 91, 128],
        "gpus": {"slow": (0.020, 0.0012, 0.060, 0.004, 0.012, 0.0015, 1.6),
                 "fast": (0.008, 0.0003, 0.030, 0.002, 0.004, 0.0006, 2.2)},
    },
    "toylm": {
        "epochs": 4,
        "per_epoch": 2500.0,
        "batches": [8, 16, 32, 64, 128],
        "bsz": [2, 3, 4, 6, 8, 12, 16],
        "gpus": {"slow": (0.080, 0.030, 0.400, 0.020, 0.060, 0.010, 1.3),
                 "fast": (0.030, 0.008, 0.200, 0.010, 0.020, 0.004, 1.8)},
    },
}
PLACEMENTS = {"slow": ["1", "2", "3", "4", "11", "13", "22", "44", "444",
                       "4444"],
              "fast": ["1", "2", "4", "8", "12", "44", "88"]}
SCALABILITY = {"slow": [(3, 6), (4, 8), (4, 12)], "fast": [(2, 8), (2, 12)]}


def wobble(*key):
    h = zlib.crc32(repr(key).encode()) / 0xFFFFFFFF
    return 1.0 + 0.01 * (h - 0.5)


def step(p, nodes, replicas, bsz, w):
    """Compute and step time; w scales both terms (the wobble)."""
    ac, bc, an, bn, ar, br, g = p
    comp = (ac + bc * bsz) * w
    k = max(replicas - 2, 1e-8)
    if nodes > 1:
        net = an + bn * k
    elif replicas > 1:
        net = ar + br * k
    else:
        net = 1e-8
    net *= w
    return comp, (comp ** g + net ** g) ** (1.0 / g)


def write(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")


def main():
    for app, a in APPS.items():
        d = os.path.join(OUT, app)
        os.makedirs(d, exist_ok=True)
        for gpu, p in a["gpus"].items():
            rows = []
            for pl in PLACEMENTS[gpu]:
                nodes, reps = len(pl), sum(map(int, pl))
                for b in a["bsz"]:
                    comp, st = step(p, nodes, reps, b,
                                    wobble(app, gpu, pl, b))
                    rows.append([pl, str(b), "%.9g" % st, "%.9g" % (st - comp)])
            write(os.path.join(d, "placements-%s.csv" % gpu),
                  ["placement", "local_bsz", "step_time", "sync_time"], rows)
            rows = []
            for nodes, reps in SCALABILITY[gpu]:
                for b in a["bsz"]:
                    comp, st = step(p, nodes, reps, b,
                                    wobble(app, gpu, nodes, reps, b))
                    rows.append(["%.9g" % st, "%.9g" % (st - comp), str(nodes),
                                 str(reps), str(b)])
            write(os.path.join(d, "scalability-%s.csv" % gpu),
                  ["step_time", "sync_time", "num_nodes", "num_replicas",
                   "local_bsz"], rows)
        b0 = a["batches"][0]
        for b in a["batches"]:
            rows = []
            for e in range(a["epochs"]):
                prog = a["per_epoch"] * (e + 1) * (1 + 0.002 * math.log(b / b0))
                sqr = 2.0 * math.exp(-e / 4.0)
                var = 30.0 * (1 + 0.1 * e)
                it = prog * b0 / b
                metric = 1 - math.exp(-(e + 1) / 3.0)
                rows.append(["%.6f" % prog, "%d" % round(it), "%.6f" % metric,
                             "%.9g" % sqr, "%.9g" % var])
            write(os.path.join(d, "validation-%d.csv" % b),
                  ["progress", "iteration", "metric", "grad_sqr", "grad_var"],
                  rows)


if __name__ == "__main__":
    main()
