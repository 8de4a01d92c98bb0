#!/usr/bin/env python3
"""What libschedmate.so exports, against what the public headers declare.

    scripts/check-exports.py LIBSCHEDMATE.so [HEADER...]

The library is built with -fvisibility=hidden, so a symbol is exported
only when its declaration carries SM_EXTERN.  Checked (each failure is
one line; exit status 1 if any):

  * no internal symbol (sm__*) is exported;
  * nothing outside the sm_ namespace is exported (a bundled grammar or
    helper would leak);
  * every function declared in include/schedmate/*.h is declared with
    SM_EXTERN and exported (a declaration without it, or one the library
    does not define, is a broken promise of the API).

Default headers: include/schedmate/*.h.
"""
import glob
import re
import subprocess
import sys

# Symbols every shared object carries.
LINKER = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def declarations(path):
    """(name, has SM_EXTERN) of each function a header declares."""
    with open(path, encoding="utf-8") as fh:
        text = strip_comments(fh.read())
    # Drop preprocessor lines (with their continuations).
    lines, skip = [], False
    for line in text.split("\n"):
        if skip or line.lstrip().startswith("#"):
            skip = line.rstrip().endswith("\\")
            continue
        lines.append(line)
    # The extern "C" block of C++ builds is not a scope of its own.
    text = re.sub(r'extern\s+"C"\s*\{', "", "\n".join(lines))
    # Top-level statements only: drop the bodies of structs, unions, enums.
    out, depth = [], 0
    for ch in text:
        if ch == "{":
            depth += 1
            continue
        if ch == "}":
            depth = max(depth - 1, 0)
            continue
        if depth == 0:
            out.append(ch)
    for stmt in "".join(out).split(";"):
        stmt = " ".join(stmt.split())
        if stmt.startswith("typedef") or "(" not in stmt:
            continue
        m = re.search(r"\b(sm_[A-Za-z0-9_]+)\s*\(", stmt)
        if m is None or re.search(r"\(\s*\*\s*" + m.group(1), stmt):
            continue
        yield m.group(1), "SM_EXTERN" in stmt[:m.start()]


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib],
                         capture_output=True, text=True, check=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] not in ("U", "w", "v"):
            syms.add(parts[2].split("@")[0])
    return syms


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    lib = sys.argv[1]
    headers = sys.argv[2:] or sorted(glob.glob("include/schedmate/*.h"))
    try:
        syms = exported(lib)
    except (OSError, subprocess.CalledProcessError) as e:
        print("check-exports: %s: %s" % (lib, e), file=sys.stderr)
        return 2
    problems = []
    for s in sorted(syms):
        if s.startswith("sm__"):
            problems.append("exported internal symbol: %s" % s)
        elif not s.startswith("sm_") and s not in LINKER:
            problems.append("exported outside the sm_ namespace: %s" % s)
    declared = 0
    for h in headers:
        for name, ext in declarations(h):
            declared += 1
            if not ext:
                problems.append("%s: %s is declared without SM_EXTERN" %
                                (h, name))
            elif name not in syms:
                problems.append("%s: %s is declared but not exported" %
                                (h, name))
    for p in problems:
        print("check-exports: " + p)
    print("check-exports: %d symbols exported, %d public functions declared, "
          "%d problem(s)" % (len(syms), declared, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
