#!/usr/bin/env python
"""Plot Table 2 before/after: break events per model (grouped bars, with the
paper's counts as markers) and the cold-start and steady-state speedups
(original / mended) with their noise bands.

  python bench/plot.py [bench/results/table2_mended.json] [-o bench/results/table2.png]
      [--safe-counts bench/results/table2_mended_counts.json]

With --safe-counts (a counting run with the safe fixes only) and a main run
made with --unsafe-fixes, the "after" bars show both.

Given an arms summary instead (bench/results/survey_arms.summary.json from
``bench/survey.py --arms``, or a bench/table2_vision.py JSON), it plots the
break events per arm: one group of bars per mode (survey) or per model
(torchvision rows):

  python bench/plot.py bench/results/survey_arms.summary.json -o bench/results/survey_arms.png

Needs matplotlib (in the main .venv: requirements/dev.txt).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

DEFAULT_IN = os.path.join(C.RESULTS, "table2_mended.json")
DEFAULT_OUT = os.path.join(C.RESULTS, "table2.png")


def _ok(r: Optional[dict]) -> bool:
    return bool(r) and r.get("status") == "ok"


def plot(doc: dict, out: str, safe: Optional[dict] = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = doc["rows"]
    names = [r["row"] + ("" if r["meta"].get("in_total", True) else "*") for r in rows]
    before = [r.get("break_events") if _ok(r) else None for r in rows]
    after = [(r.get("mended") or {}).get("break_events") if _ok(r.get("mended")) else None for r in rows]
    unsafe = bool(doc.get("unsafe_fixes"))
    safe_by_row = {r["row"]: r for r in (safe or {}).get("rows", [])} if unsafe else {}
    safe_after = [(safe_by_row.get(r["row"], {}).get("mended") or {}).get("break_events") for r in rows]
    pb = [r["meta"]["paper"][0] for r in rows]
    pa = [r["meta"]["paper"][1] for r in rows]
    mode = (doc.get("timing") or {}).get("modes", ["default"])[0] if (doc.get("timing") or {}).get("on") else None

    def speed(r: dict, key: str) -> tuple[Optional[float], Optional[float]]:
        t = ((r.get("timing") or {}).get(mode) or {}).get(key) or {}
        return t.get("speedup"), t.get("noise") or t.get("aa_spread")

    cold = [speed(r, "cold") for r in rows]
    steady = [speed(r, "steady") for r in rows]
    have_timing = any(c[0] for c in cold)

    n = len(rows)
    x = list(range(n))
    fig, axes = plt.subplots(2 if have_timing else 1, 1, figsize=(max(9, 0.8 * n + 3), 8.5 if have_timing else 4.8),
                             squeeze=False)
    ax = axes[0][0]
    w = 0.38
    ax.bar([i - w / 2 for i in x], [b or 0 for b in before], w, label="before (original transformers 4.52.4)",
           color="#c0504d")
    if safe_by_row:
        ax.bar([i + w / 4 for i in x], [a or 0 for a in safe_after], w / 2,
               label="after, safe fixes (graphmend.install())", color="#95b3d7")
        ax.bar([i + 3 * w / 4 for i in x], [a or 0 for a in after], w / 2,
               label="after, with unsafe fixes (install(unsafe=True))", color="#4f81bd")
    else:
        ax.bar([i + w / 2 for i in x], [a or 0 for a in after], w,
               label="after (graphmend.install(unsafe=True))" if unsafe else "after (graphmend.install)",
               color="#4f81bd")
    ax.scatter([i - w / 2 for i in x], pb, marker="_", s=260, color="black", zorder=3, label="paper before")
    ax.scatter([i + w / 2 for i in x], pa, marker="_", s=260, color="dimgray", zorder=3, label="paper after")
    for i, (b, a) in enumerate(zip(before, after)):
        if b is None:
            ax.text(i - w / 2, 0.2, "err", ha="center", fontsize=7, rotation=90)
        if a is None:
            ax.text(i + w / 2, 0.2, "n/a", ha="center", fontsize=7, rotation=90)
        elif a == 0:
            ax.text(i + w / 2, 0.15, "0", ha="center", fontsize=8, color="#4f81bd")
    tot = doc.get("total") or {}
    frac = tot.get("removed_frac")
    ax.set_title("Graph-break events per model (Dynamo's count, CPU, torch 2.13, transformers 4.52.4)"
                 + (f"\n{tot.get('before')} -> {tot.get('after')} ({100 * frac:.0f}% removed; paper "
                    f"{tot.get('paper_before')} -> {tot.get('paper_after')})" if frac is not None else "")
                 + (f"; safe fixes only: {safe['total'].get('before')} -> {safe['total'].get('after')}"
                    if safe_by_row and (safe or {}).get("total") else ""), fontsize=10)
    ax.set_ylabel("break events")
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)

    if have_timing:
        ax = axes[1][0]
        for off, series, label, color in ((-w / 2, cold, "cold start (first call incl. compile)", "#9bbb59"),
                                          (w / 2, steady, "steady state (median call)", "#8064a2")):
            vals = [s[0] or 0 for s in series]
            ax.bar([i + off for i in x], vals, w, label=label, color=color)
            for i, (v, sp) in enumerate(series):
                if v and sp:
                    ax.errorbar(i + off, v, yerr=[[v - v / sp], [v * sp - v]], color="black", capsize=2, lw=0.8)
                if v is None:
                    ax.text(i + off, 0.05, "n/a", ha="center", fontsize=7, rotation=90)
        ax.axhline(1.0, color="black", lw=0.8)
        t = doc.get("timing") or {}
        ax.set_title(f"Speedup original / mended (>1: mended faster), Inductor mode {mode!r} on {t.get('device')}\n"
                     + (f"median of {t.get('reps')} fresh processes per arm (ABBA order)" if (t.get('reps') or 1) > 1
                        else "one fresh process per arm") + "; whiskers: noise band (A/A spread widened by the "
                     "contention seen in the processes)",
                     fontsize=10)
        ax.set_ylabel("speedup (x)")
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


ARM_COLORS = {"original": "#c0504d", "switches": "#f79646", "safe": "#95b3d7", "unsafe": "#4f81bd",
              "safe+switches": "#8064a2", "unsafe+switches": "#4bacc6", "nested": "#9bbb59"}


def is_arms_doc(doc: dict) -> bool:
    return isinstance(doc.get("arms"), list) and (isinstance(doc.get("modes"), dict)
                                                   or isinstance(doc.get("rows"), dict))


def arms_series(doc: dict) -> tuple[list[str], list[str], dict]:
    """(groups, arms, {arm: [break events per group]}) of an arms summary
    (survey: groups are modes) or a table2_vision result (groups are rows)."""
    arms = list(doc["arms"])
    if isinstance(doc.get("modes"), dict):
        groups = list(doc["modes"])
        vals = {a: [doc["modes"][g]["arms"].get(a, {}).get("break_events") for g in groups] for a in arms}
    else:
        groups = list(doc["rows"])
        vals = {a: [((doc["rows"][g].get(a) or {}).get("break_events")
                     if (doc["rows"][g].get(a) or {}).get("status") == "ok" else None) for g in groups]
                for a in arms}
    return groups, arms, vals


def original_on_same_pairs(doc: dict, groups: list[str], arms: list[str]) -> dict:
    """{arm: [the original's break events on the pairs that arm ran, per
    group]} for the arms of a survey summary that ran fewer pairs than the
    original (the switches where a pair fails to compile)."""
    if not isinstance(doc.get("modes"), dict):
        return {}
    out = {}
    for a in arms:
        if a == "original":
            continue
        base = [doc["modes"][g]["arms"].get(a, {}).get("original_break_events") for g in groups]
        full = [doc["modes"][g]["arms"].get("original", {}).get("break_events") for g in groups]
        if any(b is not None and b != f for b, f in zip(base, full)):
            out[a] = base
    return out


def plot_arms(doc: dict, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups, arms, vals = arms_series(doc)
    base = original_on_same_pairs(doc, groups, arms)
    n, k = len(groups), len(arms)
    w = 0.8 / max(k, 1)
    fig, ax = plt.subplots(figsize=(max(7, 1.2 * n * k / 3 + 3), 4.8))
    for j, a in enumerate(arms):
        xs = [i - 0.4 + w * (j + 0.5) for i in range(n)]
        ys = [v or 0 for v in vals[a]]
        if a in base:
            # an arm that runs fewer pairs than the original is weighed
            # against the original's events on the pairs it ran, drawn behind
            ax.bar(xs, [b or 0 for b in base[a]], w, fill=False, edgecolor="#7f7f7f", hatch="//",
                   linewidth=0.6, label="original on the arm's pairs" if j == min(
                       arms.index(x) for x in base) else None)
        ax.bar(xs, ys, w, label=a, color=ARM_COLORS.get(a))
        for xx, v in zip(xs, vals[a]):
            ax.text(xx, (v or 0) + 0.2, "n/a" if v is None else str(v), ha="center", fontsize=7)
    meta = doc.get("meta") or {}
    title = "Graph-break events per arm"
    if isinstance(doc.get("modes"), dict):
        # Wrapped to the figure's width: the note (where the records come
        # from) can be a long sentence.
        title = "\n".join(textwrap.wrap(title + " on the survey's breaking pairs (pairs each arm and the "
                                         "original both ran; hatched: the original on the pairs an arm ran)" + (f"; {meta['note']}" if meta.get("note") else ""),
                                         90))
    else:
        title += " (torchvision rows, CPU, random weights)"
    ax.set_title(title, fontsize=8 if "\n" in title else 10)
    ax.set_ylabel("break events")
    ax.set_xticks(list(range(n)))
    ax.set_xticklabels(groups, rotation=0 if n < 5 else 30, ha="center" if n < 5 else "right", fontsize=9)
    tallest = max([v or 0 for vs in vals.values() for v in vs] + [b or 0 for bs in base.values() for b in bs])
    ax.set_ylim(0, tallest * 1.35 + 1)  # room for the legend above the bars
    ax.legend(fontsize=8, ncol=3, loc="upper center")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", nargs="?", default=DEFAULT_IN)
    p.add_argument("-o", "--out", default=DEFAULT_OUT)
    p.add_argument("--safe-counts", metavar="JSON", help="a table2 counting run with the safe fixes only")
    a = p.parse_args(argv)
    with open(a.json, encoding="utf-8") as f:
        doc = json.load(f)
    if is_arms_doc(doc):
        plot_arms(doc, a.out)
        print(f"plot: {a.out}", file=sys.stderr)
        return 0
    safe = None
    if a.safe_counts:
        with open(a.safe_counts, encoding="utf-8") as f:
            safe = json.load(f)
    plot(doc, a.out, safe)
    print(f"plot: {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
