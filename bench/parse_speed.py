#!/usr/bin/env python3
"""Parser speed and memory: graphmend vs CPython's ast.parse vs ruff.

Corpus: every .py file of CPython 3.11's Lib (tests included, site-packages
excluded; ~31 MB). In one run it measures

  graphmend, 1 thread      tools/parse_speed (decode + parse_module per file);
                           best of --repeat passes, like ast.parse below
                           (the mean over the passes is printed beside it)
  graphmend, all cores     same, std::thread pool (total over the passes)
  CPython ast.parse        an in-process loop over the same bytes (3.11):
                           one untimed pass, then best of --repeat - 1
  ruff check               `ruff check --no-cache --isolated FILES` (all cores,
                           and RAYON_NUM_THREADS=1), wall clock; ruff lexes,
                           parses AND lints, so it is an upper bound

and prints MB/s, ratios, and peak memory per MB of source: for graphmend and
CPython the RSS growth while every file's tree is kept alive, divided by the
corpus size; for ruff its whole-process peak RSS (getrusage of the child)
divided by the corpus size.

    bench/parse_speed.py [--parse-speed PATH] [--python PATH] [--ruff PATH]
                         [--repeat N] [--minor 11] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

CPYTHON_BENCH = r"""
import ast, json, resource, sys, time, warnings
warnings.simplefilter("ignore")
paths = [p for p in open(sys.argv[1]).read().split("\n") if p]
repeat = int(sys.argv[2])
data = [open(p, "rb").read() for p in paths]
ok = []
for d in data:
    try:
        ast.parse(d)
        ok.append(d)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
mb = sum(len(d) for d in ok) / 1e6
best = None
for _ in range(repeat):
    t0 = time.perf_counter()
    for d in ok:
        ast.parse(d)
    t = time.perf_counter() - t0
    best = t if best is None else min(best, t)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kept = [ast.parse(d) for d in ok]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"files": len(ok), "rejected": len(data) - len(ok), "mb": mb, "seconds": best,
                  "mbps": mb / best, "kept_mb_per_source_mb": (after - before) / 1024 / mb}))
"""


def find_tool(name: str) -> str | None:
    sys.path.insert(0, os.path.join(REPO, "tests", "differential"))
    from differential import find_build_tool

    return find_build_tool(name)


def stdlib_corpus(python: str, minor: int) -> list[str]:
    lib = os.path.join(os.path.dirname(os.path.dirname(python)), "lib", f"python3.{minor}")
    out = []
    for dirpath, dirnames, filenames in os.walk(lib):
        if os.path.relpath(dirpath, lib).split(os.sep)[0] == "site-packages":
            dirnames[:] = []
            continue
        dirnames.sort()
        out.extend(os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
    return out


def run_ruff(ruff: str, paths: list[str], threads: int | None) -> dict:
    env = dict(os.environ)
    if threads:
        env["RAYON_NUM_THREADS"] = str(threads)
    t0 = time.perf_counter()
    proc = subprocess.Popen([ruff, "check", "--no-cache", "--isolated", "--exit-zero", "--quiet", *paths],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    t = time.perf_counter() - t0
    return {"seconds": t, "peak_rss_mb": usage.ru_maxrss / 1024, "status": os.waitstatus_to_exitcode(status)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parse-speed", default=find_tool("parse_speed"))
    ap.add_argument("--python", default="/root/.pyenv/versions/3.11.7/bin/python")
    ap.add_argument("--ruff", default=shutil.which("ruff") or os.path.join(REPO, ".venv", "bin", "ruff"))
    ap.add_argument("--minor", type=int, default=11)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args()

    if not args.parse_speed or not os.access(args.parse_speed, os.X_OK):
        print("parse_speed not built: ninja -C build parse_speed (or pass --parse-speed)", file=sys.stderr)
        return 2
    paths = stdlib_corpus(args.python, args.minor)
    mb = sum(os.path.getsize(p) for p in paths) / 1e6
    print(f"corpus: CPython 3.{args.minor} Lib, {len(paths)} files, {mb:.1f} MB; {args.threads} cores")
    tmp = tempfile.mkdtemp(prefix="gm-bench-")
    lst = os.path.join(tmp, "files.lst")
    with open(lst, "w") as f:
        f.write("\n".join(paths) + "\n")
    results: dict[str, dict] = {"corpus": {"files": len(paths), "mb": mb}}
    try:
        out = subprocess.run([args.parse_speed, "--minor", str(args.minor), "--repeat", str(args.repeat),
                              "--threads", str(args.threads), "--json", "--list", lst],
                             capture_output=True, text=True, check=True).stdout
        print("\n".join("  " + line for line in out.strip().splitlines()[:-1]))
        gm = json.loads(out.strip().splitlines()[-1])
        results["graphmend"] = gm

        out = subprocess.run([args.python, "-c", CPYTHON_BENCH, lst, str(max(1, args.repeat - 1))],
                             capture_output=True, text=True, check=True).stdout
        cp = json.loads(out)
        results["cpython"] = cp

        ruff_all = ruff_one = None
        if args.ruff and os.access(args.ruff, os.X_OK):
            ruff_all = run_ruff(args.ruff, paths, None)
            ruff_one = run_ruff(args.ruff, paths, 1)
            results["ruff"] = {"all": ruff_all, "one": ruff_one, "version": subprocess.run(
                [args.ruff, "--version"], capture_output=True, text=True).stdout.strip()}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    rows = [
        ("graphmend, 1 thread", gm["mbps_1"], gm["kept_mb_per_source_mb"]),
        ("  (mean of its passes)", gm.get("mbps_1_mean", gm["mbps_1"]), None),
        (f"graphmend, {gm['threads']} threads", gm["mbps_n"], None),
        (f"CPython 3.{args.minor} ast.parse", cp["mbps"], cp["kept_mb_per_source_mb"]),
    ]
    if ruff_all:
        rows.append(("ruff check, all cores", mb / ruff_all["seconds"], ruff_all["peak_rss_mb"] / mb))
        rows.append(("ruff check, 1 thread", mb / ruff_one["seconds"], ruff_one["peak_rss_mb"] / mb))
    print()
    print(f"{'':28s}{'MB/s':>10s}{'x CPython':>11s}{'MB per source MB':>19s}")
    for name, mbps, mem in rows:
        print(f"{name:28s}{mbps:10.2f}{mbps / cp['mbps']:11.2f}{(f'{mem:.2f}' if mem is not None else '-'):>19s}")
    print("\nmemory: graphmend/CPython = RSS growth with every tree kept; ruff = whole-process peak RSS.")
    if ruff_all:
        print(f"ruff ({results['ruff']['version']}) lints as well as parses; its numbers bound parsing from above.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
