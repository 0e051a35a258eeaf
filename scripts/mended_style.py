#!/usr/bin/env python3
"""Counts what a reviewer would send back in `graphmend fix --diff` output.

For every file given, runs `GRAPHMEND fix --diff FILE [--regions MODE]`, then
counts in the diff:

- padding: added lines that are blank (the mended code should add none);
- second wheres: a `name = _graphmend_rt.where(...)` added after another
  added assignment to the same name (a `where` or a plain one) in the same
  block and the same run of added lines (one `if`/`else` predicated
  assignment by assignment);
- long lines: added lines longer than the file's own longest line (at
  least 79 columns, the limit the rules wrap at).

Usage: scripts/mended_style.py [--graphmend PATH] [--regions reachable|all]
       [--unsafe-fixes] FILE...
Prints one row per file and a total row; exit status 0.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_diff(original: str, diff: str) -> tuple[str, list[set[int]]]:
    """The mended text, and the runs of added line numbers (1-based, mended)."""
    old = original.splitlines(keepends=True)
    out: list[str] = []
    runs: list[set[int]] = []
    at = 0  # next original line (0-based)
    lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = HUNK.match(lines[i])
        i += 1
        if not m:
            continue
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        out.extend(old[at:start])
        at = start
        run: set[int] = set()
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, text = lines[i][:1], lines[i][1:]
            if tag == " ":
                out.append(old[at])
                at += 1
                if run:
                    runs.append(run)
                    run = set()
            elif tag == "-":
                at += 1
            elif tag == "+":
                out.append(text)
                run.add(len(out))
            elif tag == "\\":
                pass
            else:
                break
            i += 1
        if run:
            runs.append(run)
    out.extend(old[at:])
    return "".join(out), runs


def is_where(call: ast.AST) -> bool:
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "where"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "_graphmend_rt"
        and len(call.args) >= 1
    )


def second_wheres(mended: str, runs: list[set[int]]) -> int:
    tree = ast.parse(mended)
    run_of = {n: k for k, run in enumerate(runs) for n in run}
    count = 0
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            # (name, run) -> assigned earlier in this run of added lines
            assigned: set[tuple] = set()
            for stmt in block:
                if not (
                    isinstance(stmt, ast.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                    and stmt.lineno in run_of
                ):
                    continue
                key = (stmt.targets[0].id, run_of[stmt.lineno])
                if is_where(stmt.value) and key in assigned:
                    count += 1
                assigned.add(key)
    return count


def measure(graphmend: str, path: str, regions: str | None, unsafe: bool) -> dict:
    cmd = [graphmend, "fix", "--diff", path]
    if regions:
        cmd += ["--regions", regions]
    if unsafe:
        cmd.append("--unsafe-fixes")
    diff = subprocess.run(cmd, capture_output=True, text=True).stdout
    original = open(path, encoding="utf-8").read()
    mended, runs = apply_diff(original, diff)
    limit = max([79] + [len(line) for line in original.splitlines()])
    added = [line[1:].rstrip("\n") for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return {
        "added": len(added),
        "padding": sum(1 for line in added if not line.strip()),
        "second_wheres": second_wheres(mended, runs),
        "long": sum(1 for line in added if len(line) > limit),
        "wheres": sum(line.count("_graphmend_rt.where(") for line in added),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphmend", default="graphmend")
    ap.add_argument("--regions", choices=["reachable", "all"])
    ap.add_argument("--unsafe-fixes", action="store_true")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    total = {"added": 0, "padding": 0, "second_wheres": 0, "long": 0, "wheres": 0}
    print(f"{'file':<28} {'added':>6} {'padding':>8} {'2nd where':>10} {'long':>5} {'wheres':>7}")
    for f in args.files:
        r = measure(args.graphmend, f, args.regions, args.unsafe_fixes)
        for k in total:
            total[k] += r[k]
        name = f.rsplit("/", 1)[-1]
        print(f"{name:<28} {r['added']:>6} {r['padding']:>8} {r['second_wheres']:>10} {r['long']:>5} {r['wheres']:>7}")
    t = total
    print(f"{'total':<28} {t['added']:>6} {t['padding']:>8} {t['second_wheres']:>10} {t['long']:>5} {t['wheres']:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
