#!/usr/bin/env python3
"""Dependency cycles between the files of one folder (src/*/, cli/, agent/).

    scripts/check-cycles.py [--obj BUILD/obj] [--clean F1,F2,...] [DIR...]

A folder should read top-down: every file depends only on files below it.
The graph of a folder has one node per .c file and an edge A -> B when

  * A.c includes a header of the folder named after B (B.h or B_int.h), or
  * A.o uses a symbol that B.o defines (read with nm from --obj, the object
    tree of a build: BUILD/obj/src/FOLDER/*.o).

Headers shared by the whole folder (slurm_int.h, failure_int.h) carry no
edge by themselves; the symbols show who calls whom.  Without --obj only
the include edges are seen.

Every strongly connected component of more than one file is printed with
the edges inside it (and up to three of the symbols behind each).  The exit
status is 1 when a folder named in --clean has a cycle, else 0, so that a
folder, once clean, stays clean while the others are still reported.
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def modules(folder):
    return sorted(f[:-2] for f in os.listdir(folder) if f.endswith(".c"))


def header_owner(name, mods):
    """The module a folder-local header belongs to, or None."""
    base = os.path.basename(name)
    if not base.endswith(".h"):
        return None
    stem = base[:-2]
    if stem.endswith("_int") and stem[:-4] in mods:
        return stem[:-4]
    return stem if stem in mods else None


def include_edges(folder, mods):
    """(A, B) -> reasons, from the #include lines of A.c (and of the
    headers it includes from the folder, one level deep)."""
    edges = {}
    fname = os.path.basename(folder.rstrip("/"))
    local = set(f for f in os.listdir(folder) if f.endswith(".h"))

    def local_header(inc):
        parts = inc.split("/")
        if len(parts) == 1 and parts[0] in local:
            return parts[0]
        if len(parts) == 2 and parts[0] == fname and parts[1] in local:
            return parts[1]
        return None

    def includes(path):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    m = INCLUDE.match(line)
                    if m:
                        yield m.group(1)
        except OSError:
            return

    for a in mods:
        seen = set()
        todo = [os.path.join(folder, a + ".c")]
        while todo:
            for inc in includes(todo.pop()):
                h = local_header(inc)
                if h is None or h in seen:
                    continue
                seen.add(h)
                todo.append(os.path.join(folder, h))
                b = header_owner(h, mods)
                if b is not None and b != a:
                    edges.setdefault((a, b), set()).add("#include " + h)
    return edges


def nm_symbols(obj):
    """(defined, undefined) global symbol sets of one object file."""
    try:
        out = subprocess.run(["nm", "-P", obj], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return set(), set()
    defined, undef = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, kind = parts[0], parts[1]
        if kind == "U":
            undef.add(sym)
        elif kind.isupper() or kind in ("V", "W", "u"):
            defined.add(sym)
    return defined, undef


def symbol_edges(objdir, mods):
    edges = {}
    if objdir is None or not os.path.isdir(objdir):
        return edges, False
    defs, uses = {}, {}
    found = False
    for m in mods:
        o = os.path.join(objdir, m + ".o")
        if os.path.exists(o):
            found = True
            defs[m], uses[m] = nm_symbols(o)
    owner = {}
    for m, syms in defs.items():
        for s in syms:
            owner.setdefault(s, m)
    for a, syms in uses.items():
        for s in sorted(syms):
            b = owner.get(s)
            if b is not None and b != a:
                edges.setdefault((a, b), set()).add(s)
    return edges, found


def sccs(nodes, adj):
    """Tarjan's strongly connected components."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(adj.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def check(folder, objroot):
    mods = modules(folder)
    edges = include_edges(folder, mods)
    objdir = None
    if objroot is not None:
        objdir = os.path.join(objroot, os.path.normpath(folder))
    sym, had_obj = symbol_edges(objdir, mods)
    for k, v in sym.items():
        edges.setdefault(k, set()).update(v)
    adj = {}
    for (a, b) in edges:
        adj.setdefault(a, set()).add(b)
    cycles = [c for c in sccs(mods, adj) if len(c) > 1]
    return cycles, edges, had_obj


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--obj", help="object tree of a build (BUILD/obj)")
    ap.add_argument("--clean", default="",
                    help="comma-separated folders that must have no cycle")
    ap.add_argument("dirs", nargs="*")
    args = ap.parse_args()
    dirs = args.dirs or sorted(
        [os.path.join("src", d) for d in os.listdir("src")
         if os.path.isdir(os.path.join("src", d))] +
        [d for d in ("cli", "agent") if os.path.isdir(d)])
    clean = set(os.path.normpath(d) for d in args.clean.split(",") if d)
    bad = []
    for d in dirs:
        d = os.path.normpath(d)
        if not os.path.isdir(d):
            print("check-cycles: %s: no such folder" % d, file=sys.stderr)
            return 2
        cycles, edges, had_obj = check(d, args.obj)
        how = "includes+symbols" if had_obj else "includes only"
        tag = "clean" if d in clean else "not yet"
        if not cycles:
            print("%-14s no cycle (%s)" % (d, how))
            continue
        print("%-14s %d cycle(s) (%s; %s)" %
              (d, len(cycles), how, "MUST BE CLEAN" if d in clean else tag))
        for comp in cycles:
            print("  cycle: %s" % " <-> ".join(comp))
            members = set(comp)
            for (a, b) in sorted(edges):
                if a in members and b in members:
                    why = sorted(edges[(a, b)])
                    more = " ..." if len(why) > 3 else ""
                    print("    %s -> %s: %s%s" % (a, b, ", ".join(why[:3]),
                                                  more))
        if d in clean:
            bad.append(d)
    for c in sorted(clean - set(os.path.normpath(d) for d in dirs)):
        print("check-cycles: %s is listed clean but was not checked" % c,
              file=sys.stderr)
        bad.append(c)
    if bad:
        print("check-cycles: cycles in folders that must be clean: %s" %
              ", ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
