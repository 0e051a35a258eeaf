"""The arms of the survey's before/after comparison, and their tables.

An arm is one way of running a breaking (class, mode) pair, each in a fresh
interpreter (bench/survey.py --arms):

- ``original``: transformers as installed, Dynamo's defaults;
- ``switches``: Dynamo's two switches for data-dependent code,
  ``capture_scalar_outputs`` and ``capture_dynamic_output_shape_ops``, no
  source change;
- ``safe``: graphmend's import hook (safe fixes) before transformers is imported;
- ``unsafe``: the hook with unsafe fixes too;
- ``safe+switches``: the hook (safe) and the two switches;
- ``unsafe+switches``: the hook with unsafe fixes too, and the two switches;
- ``nested``: ``nested_graph_breaks = True`` (for information: Dynamo resumes
  inside the inlined frame instead of breaking every frame above it).

The switches are set on ``torch._dynamo.config`` in the harness itself.  This
module holds the definitions, the per-arm merge of a phase record with the
eager reference, and the markdown/JSON tables; it imports no torch at import
time.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from typing import Any, Optional

ARMS: dict[str, dict[str, Any]] = {
    "original": {"hook": None, "switches": False, "nested": False},
    "switches": {"hook": None, "switches": True, "nested": False},
    "safe": {"hook": "safe", "switches": False, "nested": False},
    "unsafe": {"hook": "unsafe", "switches": False, "nested": False},
    "safe+switches": {"hook": "safe", "switches": True, "nested": False},
    "unsafe+switches": {"hook": "unsafe", "switches": True, "nested": False},
    "nested": {"hook": None, "switches": False, "nested": True},
}
ARM_ORDER = list(ARMS)
INFO_ONLY = {"nested"}
SWITCHES = ("capture_scalar_outputs", "capture_dynamic_output_shape_ops")


def parse_arms(text: str) -> list[str]:
    arms = [a.strip() for a in text.split(",") if a.strip()]
    bad = [a for a in arms if a not in ARMS]
    if bad:
        raise ValueError(f"unknown arm(s) {bad}; choose from {', '.join(ARM_ORDER)}")
    if "original" not in arms:
        arms.insert(0, "original")
    return [a for a in ARM_ORDER if a in arms]


def setup_arm(arm: str, packages: tuple = ("transformers",)) -> dict:
    """Configure this interpreter for ``arm``: the hook first (before the
    packages are imported), then Dynamo's config.  Returns what was set."""
    import sys

    spec = ARMS[arm]
    done: dict[str, Any] = {"arm": arm}
    if spec["hook"]:
        already = [p for p in packages if p in sys.modules]
        if already:
            raise RuntimeError(f"{', '.join(already)} imported before graphmend's hook")
        import graphmend

        if not hasattr(graphmend, "install"):
            raise RuntimeError(f"graphmend at {os.path.dirname(graphmend.__file__)} has no install()")
        graphmend.install(packages=list(packages), unsafe=spec["hook"] == "unsafe")
        done["hook"] = spec["hook"]
    import torch._dynamo.config as dc

    if spec["switches"]:
        for k in SWITCHES:
            if not hasattr(dc, k):
                raise RuntimeError(f"torch._dynamo.config has no {k}")
            setattr(dc, k, True)
            done[k] = True
    if spec["nested"]:
        if not hasattr(dc, "nested_graph_breaks"):
            raise RuntimeError("torch._dynamo.config has no nested_graph_breaks in this torch")
        dc.nested_graph_breaks = True
        done["nested_graph_breaks"] = True
    return done


def counts(r: Optional[dict]) -> dict:
    if not r or r.get("status") != "ok":
        return {}
    return {"graphs": r.get("graphs"), "break_events": r.get("break_events"),
            "skipped_frames": r.get("skipped_frames"), "fully_traced": r.get("fully_traced"),
            "recompiles": r.get("recompiles"),
            "break_types": sorted({x.get("gb_type") or x.get("reason") or "?" for x in r.get("reasons", [])})}


def merge_arm(before: dict, arm: str, ref: Optional[dict], rec: Optional[dict]) -> dict:
    """One (class, mode, arm) record: the counts of the arm's phase and how
    its outputs and side effects compare with the original eager run."""
    out: dict[str, Any] = {"class": before.get("class"), "mode": before.get("mode"), "arm": arm,
                           "module": before.get("module"), "inputs": before.get("inputs"),
                           "survey": counts(before)}
    if ref is None or ref.get("status") != "ok":
        out.update(status=(ref or {}).get("status", "missing"), stage="reference", error=(ref or {}).get("error"))
        return out
    if rec is None or rec.get("status") != "ok":
        out.update(status=(rec or {}).get("status", "missing"), stage=(rec or {}).get("stage", arm),
                   error=(rec or {}).get("error"), error_site=(rec or {}).get("error_site"))
        return out
    out["status"] = "ok"
    out["counts"] = counts(rec)
    out["reasons"] = [{k: x.get(k) for k in ("gb_type", "reason", "count", "sites")} for x in rec.get("reasons", [])]
    out["skipped"] = [{k: x.get(k) for k in ("function", "file", "fail_type", "site")} for x in rec.get("skipped", [])]
    o = rec.get("outputs") or {}
    out["outputs"] = o
    out["compile_s"] = rec.get("compile_s")
    # the original compiled against its eager run: the original arm's own
    # finding, recorded by every later arm of the same run (--mended: the
    # reference phase's)
    out["control"] = o.get("control_original_compiled_vs_eager") or ref.get("control")
    out["verdict"] = verdict(o, arm)
    return out


def verdict(o: dict, arm: str = "") -> str:
    """``identical``: compiled and eager give the original's eager outputs and
    side effects.  ``dynamo-difference``: the arm's eager program is the
    original's (outputs and side effects) and its compiled run gives what the
    original compiled gives, which differs from eager.
    ``arm-compile-difference``: the arm's eager program is the original's, its
    compiled run is not (the arm's finding, e.g. the switches).  ``differs``:
    the arm's eager run or its side effects differ from the original's.  For
    the ``original`` arm, any difference of its compiled run is Dynamo's."""
    if not o:
        return "missing"
    if o.get("identical"):
        return "identical"
    eager_same = (o.get("eager_vs_original_eager") or {}).get("identical")
    if arm == "original" and eager_same:
        # the original program compiled: whatever differs (outputs, or what
        # it prints or warns while compiling) is Dynamo's own
        return "dynamo-difference"
    # records from before the eager run's side effects were kept compare only
    # the compiled run's
    compiled_se = o.get("side_effects") or {}
    eager_se = o.get("eager_side_effects") or compiled_se
    if not (eager_same and eager_se.get("identical")):
        return "differs"
    # older records: the compiled run's effects against eager only
    se_vs_orig = o.get("compiled_side_effects_vs_original_compiled") or compiled_se
    if (o.get("compiled_vs_original_compiled") or {}).get("identical") and se_vs_orig.get("identical"):
        return "dynamo-difference"
    if not (o.get("compiled_vs_own_eager") or {}).get("identical", True) or not compiled_se.get("identical"):
        return "arm-compile-difference"
    return "differs"


def _site_key(x: dict) -> list[str]:
    return x.get("sites") or ["?"]


def compute(recs: list[dict]) -> dict:
    """Totals per (mode, arm), break types and sites per arm."""
    latest: dict[tuple, dict] = {}
    for r in recs:
        latest[(r["class"], r["mode"], r["arm"])] = r
    modes = sorted({m for _, m, _ in latest})
    arms = [a for a in ARM_ORDER if any(k[2] == a for k in latest)]
    s: dict[str, Any] = {"arms": arms, "modes": {}}
    for m in modes:
        pairs = sorted({c for c, mm, _ in latest if mm == m})
        # totals over the pairs this arm and the original arm both ran, so
        # that each arm is compared with the original on the same pairs
        def both(c: str, a: str, m: str = m) -> bool:
            return all(latest.get((c, m, x), {}).get("status") == "ok" for x in ("original", a))
        # the arms run in this mode (an arm may have been run in one mode only)
        marms = [a for a in arms if any((c, m, a) in latest for c in pairs)]
        common = [c for c in pairs if all(both(c, a) for a in marms)]
        per_arm: dict[str, Any] = {}
        types: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        sites: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for a in marms:
            rs = [latest[(c, m, a)] for c in pairs if (c, m, a) in latest]
            ok = [r for r in rs if r.get("status") == "ok"]
            okc = [latest[(c, m, a)] for c in pairs if both(c, a)]
            base = [latest[(c, m, "original")] for c in pairs if both(c, a)]
            verdicts: dict[str, int] = defaultdict(int)
            for r in ok:
                verdicts[r.get("verdict", "missing")] += 1
            per_arm[a] = {
                "pairs": len(rs), "ran": len(ok),
                "errors": sorted(f"{r['class']}: {r.get('status')}: {str(r.get('error'))[:120]}"
                                 for r in rs if r.get("status") != "ok"),
                "break_events": sum(r["counts"].get("break_events") or 0 for r in okc),
                "skipped_frames": sum(r["counts"].get("skipped_frames") or 0 for r in okc),
                "graphs": sum(r["counts"].get("graphs") or 0 for r in okc),
                "compared": len(okc),
                "original_break_events": sum(r["counts"].get("break_events") or 0 for r in base),
                "break_free": sum(bool(r["counts"].get("fully_traced")) for r in okc),
                "break_free_classes": sorted(r["class"] for r in okc if r["counts"].get("fully_traced")),
                "verdicts": dict(verdicts),
                "findings": sorted(f"{r['class']}: {r.get('verdict')}" for r in ok
                                   if r.get("verdict") not in ("identical", "dynamo-difference")),
            }
            for r in (latest[(c, m, a)] for c in common):
                for x in r.get("reasons", []):
                    n = x.get("count") or 0
                    types[x.get("gb_type") or x.get("reason") or "?"][a] += n
                    for site in _site_key(x)[:1]:
                        sites[site][a] += n
                for sk in r.get("skipped", []):
                    types["(skipped frame) " + str(sk.get("fail_type") or "?")][a] += 1
        for a in marms:
            ob = per_arm[a]["original_break_events"]
            if ob and a != "original":
                per_arm[a]["removed_frac"] = round(1 - per_arm[a]["break_events"] / ob, 3)
        s["modes"][m] = {"pairs": len(pairs), "common": len(common), "arms": per_arm, "arms_run": marms,
                         "break_types": {k: dict(v) for k, v in types.items()},
                         "sites": {k: dict(v) for k, v in sites.items()}}
    return s


def render(s: dict, meta: dict) -> str:
    L = ["# Survey arms: the breaking pairs under Dynamo's switches and graphmend", "",
         f"Source: `{meta.get('source')}`. Versions: "
         + ", ".join(f"{k} {v}" for k, v in (meta.get("versions") or {}).items() if k != "platform")
         + f". graphmend at {str((meta.get('graphmend_commit') or {}).get('commit', '?'))[:10]}. "
         f"Wall time {meta.get('wall_s')} s" + (f"; {meta['note']}" if meta.get("note") else "")
         + (f"; the records come from {1 + len(meta['earlier_runs'])} runs (wall time "
            f"{round(meta.get('wall_s', 0) + sum(r.get('wall_s') or 0 for r in meta['earlier_runs']), 1)} s in all, "
            "see the summary's meta), the latest record of each pair counting" if meta.get("earlier_runs") else "")
         + ".", "",
         "Each arm runs every pair in its own interpreter (a forked child per class); the eager reference "
         "(outputs, stdout, log records, warnings on the survey's input and "
         f"{meta.get('fresh_inputs')} fresh ones) comes from a separate interpreter of the original code. "
         "`switches` = `torch._dynamo.config.capture_scalar_outputs` and `capture_dynamic_output_shape_ops`; "
         "`nested` = `nested_graph_breaks = True` (for information). Each arm's totals count the pairs it and the "
         "original arm both ran (`compared`); break types and sites count the pairs every arm ran.", ""]
    L += ["| mode | arm | pairs | ran | compared | break events | removed | skipped frames | graphs | break-free pairs | "
          "outputs identical | arm's own compile differs | other differences | errors |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m, d in s["modes"].items():
        for a in d["arms_run"]:
            x = d["arms"][a]
            v = x["verdicts"]
            rf = x.get("removed_frac")
            L.append(f"| {m} | {a} | {x['pairs']} | {x['ran']} | {x['compared']} | {x['break_events']} | "
                     f"{'' if rf is None else f'{100 * rf:.0f}%'} | {x['skipped_frames']} | {x['graphs']} | "
                     f"{x['break_free']} | {v.get('identical', 0) + v.get('dynamo-difference', 0)} | "
                     f"{v.get('arm-compile-difference', 0)} | {v.get('differs', 0)} | {len(x['errors'])} |")
    for m, d in s["modes"].items():
        ma = d["arms_run"]
        L += ["", f"## Break types ({m}, the {d['common']} pairs every arm ran): events per arm", "",
              "| break type | " + " | ".join(ma) + " |", "|---|" + "---|" * len(ma)]
        for t, v in sorted(d["break_types"].items(), key=lambda kv: -kv[1].get("original", 0)):
            L.append(f"| {t[:90]} | " + " | ".join(str(v.get(a, 0)) for a in ma) + " |")
        L += ["", f"## Break sites ({m}): events per arm (first site of each reason)", "",
              "| site | " + " | ".join(ma) + " |", "|---|" + "---|" * len(ma)]
        for t, v in sorted(d["sites"].items(), key=lambda kv: (-kv[1].get("original", 0), kv[0])):
            L.append(f"| `{t}` | " + " | ".join(str(v.get(a, 0)) for a in ma) + " |")
    for m, d in s["modes"].items():
        fl = [(a, f) for a in d["arms_run"] for f in d["arms"][a]["findings"]]
        er = [(a, e) for a in d["arms_run"] for e in d["arms"][a]["errors"]]
        if fl or er:
            L += ["", f"## Findings and errors ({m})", ""]
            L += [f"- {a}: {f}" for a, f in fl]
            L += [f"- {a}: error: {e}" for a, e in er]
    return "\n".join(L) + "\n"


def write(recs: list[dict], md: str, meta: dict) -> dict:
    s = compute(recs)
    s["meta"] = meta
    with open(md, "w", encoding="utf-8") as f:
        f.write(render(s, meta))
    tmp = os.path.splitext(md)[0] + ".summary.json"
    with open(tmp + ".tmp", "w", encoding="utf-8") as f:
        json.dump(s, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp + ".tmp", tmp)
    return s
