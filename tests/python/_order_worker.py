"""Worker for test_order_independence.py: lint and fix every ``.py`` file
under a directory in one process, in a given order and on a given number of
threads, and print one JSON object {relative path: sha256 of its results}.

    python _order_worker.py ROOT MODE

MODE is one of
  alone     each file on a fresh thread of its own (nothing ran on that
            thread before it)
  forward   one thread, sorted order
  reverse   one thread, reverse sorted order
  shuffled  two threads, an order shuffled with a fixed seed

A file's results: for each region mode ("reachable", the CLI's default, and
"all", the import hook's) its diagnostics with every fix's edits (safe and
unsafe), and, when any diagnostic carries a fix, the text mended with safe
fixes and with unsafe ones (status, applied fixes, what remains).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from graphmend import lint

SEED = 20261201


def results(data: bytes) -> str:
    h = hashlib.sha256()
    for regions in ("reachable", "all"):
        checked = lint.run_check(data, unsafe_fixes=True, regions=regions)
        h.update(repr(checked).encode("utf-8", "surrogatepass"))
        if any(d.get("fix") for d in checked["diagnostics"]):
            for unsafe in (False, True):
                fixed = lint.run_fix(data, unsafe_fixes=unsafe, regions=regions)
                h.update(repr(fixed).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def main(root: str, mode: str) -> None:
    base = Path(root)
    files = sorted(str(p.relative_to(base)) for p in base.rglob("*.py"))
    datas = {f: (base / f).read_bytes() for f in files}
    out: dict[str, str] = {}
    if mode == "alone":
        for f in files:
            t = threading.Thread(target=lambda f=f: out.__setitem__(f, results(datas[f])))
            t.start()
            t.join()
    elif mode in ("forward", "reverse"):
        for f in files if mode == "forward" else reversed(files):
            out[f] = results(datas[f])
    elif mode == "shuffled":
        order = list(files)
        random.Random(SEED).shuffle(order)
        with ThreadPoolExecutor(max_workers=2) as pool:
            for f, digest in zip(order, pool.map(lambda f: results(datas[f]), order)):
                out[f] = digest
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
