"""How `graphmend check` scales (issue 14 item 9), measured side by side.

1. Growth in one function: a `forward` with 250 and with 2,000 sequential
   data-dependent `if`s (each followed by a `print`); prints the time of
   each and the ratio (linear would be 8x; the target is at most 16x).
2. A generated file of about 100 MB (many small nn.Module classes and plain
   functions): `graphmend check` against `ruff check` on the same file,
   alternating runs; prints each time, the peak memory and the ratio.

Each timing is the best of --repeat runs of the command line tool in a
fresh process (start-up included). Usage:

    python bench/scale.py [--size-mb 100] [--repeat 3] [--ruff PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def ifs_source(n: int) -> str:
    lines = [
        "import torch",
        "",
        "",
        "class M(torch.nn.Module):",
        "    def forward(self, x):",
        "        h = torch.relu(x)",
    ]
    for i in range(n):
        lines += [
            f"        if h.sum() > {i}:",
            "            h = h * 2",
            f'        print("step", {i})',
        ]
    lines.append("        return h")
    return "\n".join(lines) + "\n"


BLOCK = '''

class Block{i}(nn.Module):
    """Block {i}: a residual MLP with a data-dependent gate."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)
        self.scale = 0.5

    def forward(self, x, mask=None):
        h = self.norm(x)
        h = torch.relu(self.up(h))
        if h.mean() > 0:
            h = h * self.scale
        else:
            h = h + 1
        y = h if h.sum() > 0 else -h
        print("block {i}", y.shape)
        out = self.down(y)
        if mask is not None:
            out = out.masked_fill(mask, 0.0)
        return x + out


def helper_{i}(values, factor=2):
    total = 0
    for v in values:
        if v % factor == 0:
            total += v
        else:
            total -= v // factor
    return {{"index": {i}, "total": total, "name": "helper_{i}"}}
'''


def big_source(size_mb: float) -> str:
    parts = ["import torch\nimport torch.nn as nn\n"]
    size = len(parts[0])
    target = int(size_mb * 1024 * 1024)
    i = 0
    while size < target:
        b = BLOCK.format(i=i)
        parts.append(b)
        size += len(b)
        i += 1
    return "".join(parts)


def timed(cmd: list[str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS of that process (KB), exit code."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed with exit code {proc.returncode}")
    return dt, usage.ru_maxrss, proc.returncode


def best(cmd: list[str], repeat: int) -> float:
    return min(timed(cmd)[0] for _ in range(repeat))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=100.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--small", type=int, default=250)
    ap.add_argument("--large", type=int, default=2000)
    ap.add_argument("--graphmend", default=shutil.which("graphmend") or
                    os.path.join(os.path.dirname(sys.executable), "graphmend"))
    ap.add_argument("--ruff", default=shutil.which("ruff") or "/work/main/.venv/bin/ruff")
    args = ap.parse_args(argv)

    gm = [args.graphmend, "check"]
    with tempfile.TemporaryDirectory(prefix="gm-scale-") as tmp:
        # 1. growth within one function
        times = {}
        for n in (args.small, args.large):
            p = os.path.join(tmp, f"ifs{n}.py")
            with open(p, "w", encoding="utf-8") as f:
                f.write(ifs_source(n))
            times[n] = best(gm + [p], args.repeat)
            print(f"graphmend check, {n:5d} ifs in one forward: {times[n]:8.3f} s")
        growth = times[args.large] / times[args.small]
        print(f"growth {args.small} -> {args.large} ifs: {growth:.2f}x "
              f"(linear {args.large / args.small:.0f}x, target <= 16x)")

        # 2. a large file against ruff, alternating
        big = os.path.join(tmp, "big.py")
        src = big_source(args.size_mb)
        with open(big, "w", encoding="utf-8") as f:
            f.write(src)
        print(f"generated file: {len(src) / 1e6:.1f} MB, {src.count(chr(10))} lines")
        ruff = [args.ruff, "check", "--no-cache", "--isolated", big]
        g_times, r_times, g_rss, r_rss = [], [], 0, 0
        for _ in range(args.repeat):
            dt, rss, _ = timed(gm + [big])
            g_times.append(dt)
            g_rss = max(g_rss, rss)
            dt, rss, _ = timed(ruff)
            r_times.append(dt)
            r_rss = max(r_rss, rss)
        g, r = min(g_times), min(r_times)
        print(f"graphmend check: {g:8.2f} s (runs {', '.join(f'{t:.2f}' for t in g_times)}), "
              f"peak RSS {g_rss / 1024:.0f} MB")
        print(f"ruff check:      {r:8.2f} s (runs {', '.join(f'{t:.2f}' for t in r_times)}), "
              f"peak RSS {r_rss / 1024:.0f} MB")
        print(f"graphmend / ruff: {g / r:.2f}x (target < 1)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
