#!/usr/bin/env python3
"""Runs a command and writes its peak resident memory in KiB to a file.

    maxrss.py OUT_FILE CMD [ARG...]

Exits with the command's status (128 + N when killed by signal N).
"""
import os
import resource
import subprocess
import sys


def main():
    out = sys.argv[1]
    p = subprocess.run(sys.argv[2:])
    kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(out, "w") as f:
        f.write("%d\n" % kib)
    rc = p.returncode
    sys.exit(128 - rc if rc < 0 else rc)


if __name__ == "__main__":
    main()
