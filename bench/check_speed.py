#!/usr/bin/env python3
"""`graphmend check` against `ruff check` (default rules), whole processes.

For each corpus and each thread count, the two commands run in turn
(A B B A A B ..., so drift and cache warmth hit both arms alike), each as a
fresh process with its output discarded; the CPU (user + sys, from the
kernel's accounting of the reaped child) and wall time of every run are
recorded and the ratios graphmend/ruff are taken pair by pair. Printed: the
median and the min-max of each arm and of the ratios.

    bench/check_speed.py [--graphmend PATH] [--ruff PATH] [--runs N]
                         [--threads 1,2] [--corpus NAME=DIR ...] [--json OUT]

Default corpora: CPython 3.11's Lib (the running interpreter's stdlib when it
is 3.11) and the transformers package importable from this interpreter.
graphmend runs with `--exit-zero --jobs N`; ruff with `--no-cache --isolated
--exit-zero` and RAYON_NUM_THREADS=N. Both read the same directory, so both
pay for directory walking and reading files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def default_corpora() -> dict[str, str]:
    corpora = {}
    stdlib = sysconfig.get_paths()["stdlib"]
    if os.path.isdir(stdlib):
        corpora[f"stdlib-{sys.version_info[0]}.{sys.version_info[1]}"] = stdlib
    try:
        import importlib.util

        spec = importlib.util.find_spec("transformers")
        if spec and spec.submodule_search_locations:
            import importlib.metadata as md

            version = md.version("transformers")
            corpora[f"transformers-{version}"] = list(spec.submodule_search_locations)[0]
    except Exception:  # noqa: BLE001 - a missing package only drops a corpus
        pass
    return corpora


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(cpu seconds of the child, wall seconds, exit status)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, wall, proc.returncode


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphmend", default=shutil.which("graphmend")
                    or os.path.join(os.path.dirname(sys.executable), "graphmend"))
    ap.add_argument("--ruff", default=shutil.which("ruff")
                    or os.path.join(os.path.dirname(sys.executable), "ruff"))
    ap.add_argument("--runs", type=int, default=5, help="counted runs per arm (default 5)")
    ap.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    ap.add_argument("--corpus", action="append", default=[], metavar="NAME=DIR")
    ap.add_argument("--json", help="write the raw figures here")
    args = ap.parse_args()

    corpora = dict(c.split("=", 1) for c in args.corpus) if args.corpus else default_corpora()
    threads = [int(t) for t in args.threads.split(",")]
    results = []
    print(f"graphmend: {args.graphmend}\nruff:      {args.ruff}  "
          f"({subprocess.run([args.ruff, '--version'], capture_output=True, text=True).stdout.strip()})")
    print(f"{args.runs} runs per arm after one warm-up each, alternating; median [min-max]\n")
    for name, path in corpora.items():
        for n in threads:
            env = dict(os.environ, RAYON_NUM_THREADS=str(n))
            gm = [args.graphmend, "check", "--exit-zero", "--jobs", str(n), path]
            ruff = [args.ruff, "check", "--no-cache", "--isolated", "--exit-zero", path]
            run_once(gm, env)
            run_once(ruff, env)
            arms = {"graphmend": [], "ruff": []}
            for i in range(args.runs):
                order = [("graphmend", gm), ("ruff", ruff)]
                if i % 2:
                    order.reverse()
                for arm, argv in order:
                    cpu, wall, rc = run_once(argv, env)
                    if rc not in (0, 1):
                        print(f"warning: {arm} exited {rc} on {name}", file=sys.stderr)
                    arms[arm].append((cpu, wall))
            cpu_ratio = [g[0] / r[0] for g, r in zip(arms["graphmend"], arms["ruff"])]
            wall_ratio = [g[1] / r[1] for g, r in zip(arms["graphmend"], arms["ruff"])]
            print(f"{name}, {n} thread{'s' if n > 1 else ''}:")
            for arm, figures in arms.items():
                print(f"  {arm:9s} cpu s {summary([f[0] for f in figures])}   "
                      f"wall s {summary([f[1] for f in figures])}")
            print(f"  graphmend/ruff  cpu {summary(cpu_ratio)}   wall {summary(wall_ratio)}\n")
            results.append({"corpus": name, "path": path, "threads": n,
                            "graphmend": arms["graphmend"], "ruff": arms["ruff"],
                            "cpu_ratio": cpu_ratio, "wall_ratio": wall_ratio})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
