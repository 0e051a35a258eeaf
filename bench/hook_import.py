"""What the import hook costs: importing transformers models plain vs under
``graphmend.install(packages=["transformers"])``, cold (empty cache_dir) and
warm (the cache the cold run wrote).

    python bench/hook_import.py [--pairs N] [--models bart,whisper,t5,llama,bert]
                                [--dontwritebytecode | --writebytecode]

Each sample is a fresh process that imports ``transformers.models.M.modeling_M``
for every model M (torch and transformers included, as a user's program
would). Each round runs plain, cold and warm once, in an order that rotates
from round to round, so drift on a shared machine falls on every arm alike.
CPU is user+sys of the child (``resource.getrusage(RUSAGE_CHILDREN)``
deltas); wall is ``time.perf_counter`` around the process. Printed: per arm
the median CPU and wall, and the cold/plain and warm/plain ratios of each
round (min / median / max). PYTHONDONTWRITEBYTECODE=1 is the default here
(as on the machine this was written on): the plain arm still reads
transformers' existing .pyc files, and the hook writes its cache only
because cache_dir is explicit.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = """\
import importlib, os, sys
os.environ["HF_HUB_OFFLINE"] = "1"
if sys.argv[1] != "plain":
    import graphmend
    finder = graphmend.install(["transformers"], cache_dir=sys.argv[2])
for m in sys.argv[3].split(","):
    importlib.import_module(f"transformers.models.{m}.modeling_{m}")
if sys.argv[1] != "plain":
    s = finder.stats
    want = {"cold": "mended", "warm": "cache_hit"}[sys.argv[1]]
    assert s[want] > 0 and not s["failed"], dict(s)
    if sys.argv[1] == "warm":
        assert not s["mended"] and not s["unchanged"], dict(s)
"""


def child_run(arm: str, cache: str, models: str, env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, arm, cache, models], env=env,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{arm} run failed:\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def spread(values: list[float]) -> str:
    return (f"min {min(values):.3f}  median {statistics.median(values):.3f}  "
            f"max {max(values):.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--models", default="bart,whisper,t5,llama,bert")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--dontwritebytecode", dest="dwb", action="store_true", default=True,
                       help="PYTHONDONTWRITEBYTECODE=1 in the children (default)")
    group.add_argument("--writebytecode", dest="dwb", action="store_false")
    args = ap.parse_args(argv)

    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    env.pop("GRAPHMEND_CACHE_DIR", None)
    if args.dwb:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    work = tempfile.mkdtemp(prefix="gm-hook-bench-")
    try:
        warm_cache = os.path.join(work, "warm")
        child_run("cold", warm_cache, args.models, env)  # fills the warm cache
        child_run("plain", warm_cache, args.models, env)  # the OS file cache, for all arms
        arms = ["plain", "cold", "warm"]
        samples: dict = {a: [] for a in arms}
        for i in range(args.pairs):
            order = arms[i % 3:] + arms[:i % 3]
            for arm in order:
                cache = warm_cache
                if arm == "cold":
                    cache = os.path.join(work, f"cold{i}")
                samples[arm].append(child_run(arm, cache, args.models, env))
                if arm == "cold":
                    shutil.rmtree(cache, ignore_errors=True)
            print(f"round {i + 1}/{args.pairs} ({', '.join(order)}): " + "  ".join(
                f"{a} {samples[a][-1][0]:.2f}s" for a in arms), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"\nmodels: {args.models}; PYTHONDONTWRITEBYTECODE="
          f"{'1' if args.dwb else 'unset'}; {args.pairs} rounds; python {sys.version.split()[0]}")
    for arm in arms:
        cpu = [c for c, _ in samples[arm]]
        wall = [w for _, w in samples[arm]]
        print(f"  {arm:5}  cpu median {statistics.median(cpu):.3f} s   "
              f"wall median {statistics.median(wall):.3f} s")
    for arm in ("cold", "warm"):
        cpu = [a[0] / p[0] for a, p in zip(samples[arm], samples["plain"])]
        wall = [a[1] / p[1] for a, p in zip(samples[arm], samples["plain"])]
        print(f"  {arm}/plain  cpu  {spread(cpu)}")
        print(f"  {arm}/plain  wall {spread(wall)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
