#!/usr/bin/env python3
"""Functions longer than a limit (150 lines) in src/ and cli/.

    scripts/long-functions.py [--max N] [--fail] [--clean P1,P2,...]
                              [FILE_OR_DIR...]

A function is counted from the first line of its definition (return type
or name) to its closing brace, both included.  The code is clang-formatted,
so a definition starts at column 0 and its body closes with a "}" at
column 0; braces inside comments, strings and character constants are
skipped.  Prints "LINES path:line name" for each function over the limit,
longest first, then a count.  Exit status 0; 1 with --fail when any
function is over the limit, or when one is in a file or folder named in
--clean (so that what is clean stays clean while the rest is reported).
"""
import argparse
import os
import re
import sys

NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def strip_code(text):
    """The text with comments, strings and character constants blanked
    (newlines kept), so that braces and parentheses can be counted."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " "
                               for ch in text[i:j]))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, line count) of each function defined in path."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = strip_code(fh.read()).split("\n")
    except OSError:
        return
    depth = 0
    start = None  # first line of a possible definition at depth 0
    sig = ""
    in_func = None
    for no, line in enumerate(lines, 1):
        if depth == 0 and in_func is None:
            s = line.strip()
            if line[:1] not in ("", " ", "\t", "#") and start is None:
                start, sig = no, ""
            if start is not None:
                sig += " " + s
            if start is not None and (s.endswith(";") or s == ""):
                start = None
        for ch in line:
            if ch == "{":
                if depth == 0 and in_func is None and start is not None:
                    head = sig.split("{")[0]
                    m = None
                    for m in NAME.finditer(head.split("=")[0]):
                        break
                    if m is not None and ")" in head and "=" not in head:
                        in_func = (m.group(1), start)
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    if in_func is not None:
                        yield in_func[0], in_func[1], no - in_func[1] + 1
                    in_func = None
                    start = None
        if depth == 0 and in_func is None and line.strip().endswith(";"):
            start = None


def sources(args):
    paths = []
    for a in args:
        if os.path.isdir(a):
            for root, _, files in os.walk(a):
                paths += [os.path.join(root, f) for f in files
                          if f.endswith(".c")]
        else:
            paths.append(a)
    return sorted(paths)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=150)
    ap.add_argument("--fail", action="store_true",
                    help="exit 1 when a function is over the limit")
    ap.add_argument("--clean", default="",
                    help="comma-separated files or folders that must have "
                    "no function over the limit")
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    found = []
    for p in sources(args.paths or ["src", "cli"]):
        for name, first, count in functions(p):
            if count > args.max:
                found.append((count, p, first, name))
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    clean = [os.path.normpath(c) for c in args.clean.split(",") if c]

    def must_be_clean(path):
        path = os.path.normpath(path)
        return any(path == c or path.startswith(c + os.sep) for c in clean)

    bad = 0
    for count, p, first, name in found:
        tag = "   MUST BE CLEAN" if must_be_clean(p) else ""
        bad += 1 if tag else 0
        print("%5d %s:%d %s%s" % (count, p, first, name, tag))
    print("long-functions: %d function(s) over %d lines, %d in files that "
          "must be clean" % (len(found), args.max, bad))
    return 1 if bad or (found and args.fail) else 0


if __name__ == "__main__":
    sys.exit(main())
