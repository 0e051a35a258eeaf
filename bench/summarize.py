#!/usr/bin/env python
"""Markdown summary of a survey JSONL file (see bench/README.md for the schema).

  python bench/summarize.py bench/results/survey.jsonl [-o bench/results/survey.md]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from typing import Any, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402


def latest(records: list[dict]) -> dict[tuple[str, str], dict]:
    """The last record for each (class, mode): reruns supersede."""
    out: dict[tuple[str, str], dict] = {}
    for r in records:
        out[(r.get("class"), r.get("mode"))] = r
    return out


def is_breaking(r: dict) -> bool:
    return r.get("status") == "ok" and (r.get("break_events", 0) > 0 or r.get("skipped_frames", 0) > 0)


def modality(shapes: dict) -> str:
    """The kinds of input a record's input set feeds the forward."""
    kinds = []
    for key, kind in (("input_ids", "text"), ("inputs_embeds", "embeddings"), ("bbox", "layout"),
                      ("input_features", "audio"), ("input_values", "audio"), ("past_values", "time series")):
        if key in shapes and kind not in kinds:
            kinds.append(kind)
    for key, shape in shapes.items():
        if "pixel_values" in key or key in ("hidden_states", "flattened_patches"):
            kind = "video" if "video" in key or len(shape) == 5 else "image"
            if key == "hidden_states" and len(shape) != 4 and "grid_thw" not in shapes:
                continue
            if kind not in kinds:
                kinds.append(kind)
    return "+".join(kinds) or "other (" + ", ".join(sorted(shapes)[:3]) + ")"


def compute(records: list[dict]) -> dict[str, Any]:
    recs = latest(records)
    classes = sorted({c for c, _ in recs})
    modes = sorted({m for _, m in recs})
    per_class_status: dict[str, set] = defaultdict(set)
    for (c, _m), r in recs.items():
        per_class_status[c].add(r.get("status"))
    built = [c for c in classes if not per_class_status[c] & {"build_error", "not_a_model"}
             and per_class_status[c] - {"timeout", "crash"}]
    not_models = [c for c in classes if per_class_status[c] == {"not_a_model"}]
    status_by_mode = {m: Counter(r.get("status") for (c, mm), r in recs.items() if mm == m) for m in modes}
    modalities = Counter(modality(r.get("input_shapes") or {}) for (c, m), r in recs.items()
                         if m == "eval" and r.get("status") == "ok")
    levels = Counter(r.get("shrink_level", "shrunk") for r in recs.values() if r.get("status") == "ok")
    out: dict[str, Any] = {
        "classes_tried": len(classes) - len(not_models),
        "shrink_levels_of_ok_records": dict(levels),
        "modalities_eval": dict(modalities),
        "no_forward": sorted(c for c in not_models if any(recs[(c, m)].get("reason") == "no forward"
                                                          for m in modes if (c, m) in recs)),
        "not_a_model": len(not_models),
        "classes_built": len(built),
        "status_by_mode": {m: dict(v) for m, v in status_by_mode.items()},
        "modes": {},
    }
    # registry ids by type, learned from reasons whose type is their own first
    # line; a "graph break in loop" event is filed under its root cause (its
    # first line) and counted separately as a loop skip
    type_id: dict[str, str] = {}
    for r in recs.values():
        for reason in r.get("reasons", []):
            if reason.get("gb_type") and reason.get("gb_id") and reason.get("gb_type") == reason.get("reason"):
                type_id.setdefault(reason["gb_type"], reason["gb_id"])
    for m in modes:
        ok = [r for (c, mm), r in recs.items() if mm == m and r.get("status") == "ok"]
        loop_events = 0
        brk = [r for r in ok if is_breaking(r)]
        types: Counter = Counter()
        type_classes: dict[str, set] = defaultdict(set)
        gb_ids: dict[str, str] = {}
        sites: Counter = Counter()
        site_classes: dict[str, set] = defaultdict(set)
        site_type: dict[str, Counter] = defaultdict(Counter)
        skipped: Counter = Counter()
        for r in ok:
            for reason in r.get("reasons", []):
                t = reason.get("reason") or reason.get("gb_type") or "?"
                if reason.get("gb_type") and reason.get("gb_type") != t:
                    loop_events += reason.get("count", 1)
                types[t] += reason.get("count", 1)
                type_classes[t].add(r["class"])
                gid = type_id.get(t) or (reason.get("gb_id") if reason.get("gb_type") == t else None)
                if gid:
                    gb_ids[t] = gid
                for s in reason.get("sites", []):
                    if s.startswith("transformers/"):
                        sites[s] += 1
                        site_classes[s].add(r["class"])
                        site_type[s][t] += 1
            for s in r.get("skipped", []):
                skipped[s.get("reason") or s.get("fail_type") or "?"] += 1
        out["modes"][m] = {
            "ok": len(ok),
            "breaking": len(brk),
            "fully_traced": sum(1 for r in ok if r.get("fully_traced")),
            "multi_graph_no_break": sum(1 for r in ok if not is_breaking(r) and r.get("graphs", 0) != 1),
            "break_events": sum(r.get("break_events", 0) for r in ok),
            "skipped_frames": sum(r.get("skipped_frames", 0) for r in ok),
            "wrapped_events": loop_events,
            "types": [
                {"gb_type": t, "gb_id": gb_ids.get(t), "events": n, "classes": len(type_classes[t])}
                for t, n in types.most_common()
            ],
            "sites": [
                {"site": s, "classes": len(site_classes[s]), "events": n,
                 "gb_type": site_type[s].most_common(1)[0][0]}
                for s, n in sorted(sites.items(), key=lambda kv: (-len(site_classes[kv[0]]), -kv[1], kv[0]))
            ],
            "skipped_reasons": skipped.most_common(),
            "worst": sorted(((r.get("break_events", 0), r["class"]) for r in brk), reverse=True)[:15],
        }
    return out


def _meta(jsonl: str) -> dict:
    p = os.path.splitext(jsonl)[0] + ".meta.json"
    if os.path.exists(p):
        with open(p, encoding="utf-8") as f:
            return json.load(f)
    return {}


def render(jsonl: str, top_types: int = 25, top_sites: int = 20) -> str:
    records = C.read_jsonl(jsonl)
    s = compute(records)
    meta = _meta(jsonl)
    v = meta.get("versions", {})
    lines = [
        "# Survey: transformers model classes through TorchDynamo",
        "",
        f"Generated by `bench/summarize.py` from `{os.path.basename(jsonl)}` "
        f"({len(records)} records). transformers {v.get('transformers', '?')}, torch {v.get('torch', '?')}, "
        f"Python {v.get('python', '?')}.",
        "",
        "Counting backend (no Inductor), `fullgraph=False`, batch 2, sequence 32 (8 where the position table is shorter), fp32; "
        "eval under `no_grad`, train under grad (forward only). A class *breaks* in a mode when "
        "Dynamo logged at least one graph break or skipped a frame.",
        "",
    ]
    runs = meta.get("runs", [])
    if runs:
        wall = sum(r.get("wall_s", 0) for r in runs)
        unfinished = sum(1 for r in runs if "wall_s" not in r)
        cpu = sum(r.get("cpu_s", 0) or 0 for r in records)
        lines.append(f"Runs: {len(runs)} ({unfinished} unfinished or in progress); wall time of finished runs "
                     f"{wall / 60:.1f} min; CPU time of the children {cpu / 60:.1f} min "
                     f"(jobs={runs[-1].get('jobs')}, timeout {runs[-1].get('timeout_s')} s per class, "
                     f"{runs[-1].get('cpu_count')} CPUs). Classes in the namespace: "
                     f"{max((r.get('classes_selected', 0) for r in runs), default=0)}.")
        lines.append("")
    lines += [
        "| | count |",
        "|---|---:|",
        f"| classes tried (PreTrainedModel subclasses) | {s['classes_tried']} |",
        f"| built from the default config (shrunk; `shrink_level` when a fallback level) | {s['classes_built']} |",
    ]
    for m, d in s["modes"].items():
        lines.append(f"| {m}: ran (eager and compile ok) | {d['ok']} ({_pct(d['ok'], s['classes_tried'])} of the "
                     "classes tried) |")
        lines.append(f"| {m}: breaking | {d['breaking']} ({_pct(d['breaking'], d['ok'])} of those that ran) |")
        lines.append(f"| {m}: fully traced (1 graph, 0 breaks, 0 skipped frames) | {d['fully_traced']} |")
        lines.append(f"| {m}: break events / skipped frames | {d['break_events']} / {d['skipped_frames']} |")
    lines += ["", "## Status by mode", "", "| status | " + " | ".join(s["status_by_mode"]) + " |",
              "|---|" + "---:|" * len(s["status_by_mode"])]
    all_status = sorted({k for v2 in s["status_by_mode"].values() for k in v2})
    for st in all_status:
        lines.append(f"| {st} | " + " | ".join(str(s["status_by_mode"][m].get(st, 0)) for m in s["status_by_mode"]) + " |")
    for m, d in s["modes"].items():
        lines += ["", f"## Break types ({m})", "",
                  "By root cause (the first line of Dynamo's message). "
                  f"{d['wrapped_events']} of these events reached Dynamo wrapped in another type "
                  "(mostly `graph break in loop`, GB7000: the frame was skipped).", "",
                  "| # | graph-break type | id | events | classes |", "|---:|---|---|---:|---:|"]
        for i, t in enumerate(d["types"][:top_types], 1):
            lines.append(f"| {i} | {_md(t['gb_type'])} | {t['gb_id'] or ''} | {t['events']} | {t['classes']} |")
        lines += ["", f"## Top {top_sites} break sites in transformers ({m})", "",
                  "Ranked by the number of classes that break there (many classes share code through "
                  "`# Copied from` and modular files).", "",
                  "| # | site | classes | events | most common type |", "|---:|---|---:|---:|---|"]
        for i, t in enumerate(d["sites"][:top_sites], 1):
            lines.append(f"| {i} | `{t['site']}` | {t['classes']} | {t['events']} | {_md(t['gb_type'])} |")
        if d["skipped_reasons"]:
            lines += ["", f"Skipped frames ({m}), by reason:", ""]
            for r, n in d["skipped_reasons"][:10]:
                lines.append(f"- {n} × {_md(r)}")
    mods = s.get("modalities_eval") or {}
    if mods:
        lines += ["", "## Inputs of the classes that ran (eval)", "",
                  "What the chosen input set feeds the forward (from `input_shapes`): a multimodal class counted "
                  "under `text` alone ran without its other towers.", "",
                  "| inputs | classes |", "|---|---:|"]
        for k, n in sorted(mods.items(), key=lambda kv: -kv[1]):
            lines.append(f"| {k} | {n} |")
    lv = s["shrink_levels_of_ok_records"]
    if set(lv) - {"shrunk"}:
        lines += ["", "Shrink level of the (class, mode) pairs that ran (`bench/hfbuild.py` `LEVELS`: the first "
                  "level that builds and runs eagerly): " + ", ".join(f"{k} {v}" for k, v in sorted(lv.items())) + "."]
    if s["no_forward"]:
        lines += ["", f"Not counted as classes: {len(s['no_forward'])} without a forward of their own "
                  f"(generate-only wrappers, deprecated aliases): {', '.join(s['no_forward'])}."]
    # every failure, by cause (status, stage, first line of the error)
    recs = latest(records)
    for m in s["status_by_mode"]:
        errs: dict[tuple, list] = defaultdict(list)
        for (c, mm), r in recs.items():
            if mm == m and r.get("status") not in ("ok", "not_a_model"):
                errs[(r["status"], r.get("stage") or "", (r.get("error") or "")[:120])].append(c)
        if errs:
            lines += ["", f"## Classes that did not run ({m}), by cause", "",
                      "| classes | status | stage | error (first line) | examples |", "|---:|---|---|---|---|"]
            for (st, stage, e), cs in sorted(errs.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                lines.append(f"| {len(cs)} | {st} | {stage} | {_md(e)} | {', '.join(sorted(cs)[:3])} |")
    lines.append("")
    return "\n".join(lines)


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.0f}%" if b else "n/a"


def _md(x: Any) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def write_summary(jsonl: str, md_path: str) -> str:
    text = render(jsonl)
    with open(md_path, "w", encoding="utf-8") as f:
        f.write(text)
    js = os.path.splitext(md_path)[0] + ".summary.json"
    with open(js, "w", encoding="utf-8") as f:
        json.dump(compute(C.read_jsonl(jsonl)), f, indent=1, sort_keys=True)
        f.write("\n")
    return text


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("jsonl", nargs="?", default=os.path.join(C.RESULTS, "survey.jsonl"))
    p.add_argument("-o", "--out", default=None)
    a = p.parse_args(argv)
    if not os.path.exists(a.jsonl):
        p.error(f"no such file: {a.jsonl}")
    md = a.out or os.path.splitext(a.jsonl)[0] + ".md"
    write_summary(a.jsonl, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
