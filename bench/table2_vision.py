#!/usr/bin/env python
"""Table 2, the torchvision rows: the paper's detection and classification
models that ship in torchvision, under every arm.

Rows (random weights: ``weights=None, weights_backbone=None``; nothing is
downloaded; CPU, fp32, eval, ``torch.no_grad``): Faster/Mask/Keypoint R-CNN
(``GeneralizedRCNN``), RetinaNet, SSD300, FCOS, GoogLeNet, Inception v3.  The
detection models get two images of different sizes and a small
``min_size``/``max_size`` so that a CPU forward takes seconds, not minutes.

Arms, each in a fresh interpreter (bench/arms.py): ``original``,
``switches`` (``capture_scalar_outputs`` + ``capture_dynamic_output_shape_ops``),
``safe`` (``graphmend.install(packages=["torchvision"])``), ``unsafe``,
``safe+switches``, and ``nested`` (``nested_graph_breaks``, for
information).  The original arm saves its state_dict, inputs (the row's own
and fresh ones) and eager outputs, stdout, log records and warnings; every
other arm loads the same weights and inputs, runs compiled (counting backend)
and eagerly, compares both with the original's eager run, then counts with
graphmend.explain.

  python bench/table2_vision.py                          # every row, every arm
  python bench/table2_vision.py googlenet --arms original,switches
  python bench/table2_vision.py --json bench/results/table2_vision.json | tee bench/results/table2_vision.txt
  python bench/table2_vision.py --render bench/results/table2_vision.json

torchvision 0.28.0 (the release for torch 2.13.0) is installed by
scripts/setup.sh with --no-deps; see bench/_tv.py for how its ops load beside
the CPU torch.  The paper's per-row counts for these models are not in the
paper summary this project has (/work/shared/seed/graphmend-summary.txt), so
the ``paper`` column is empty until someone fills ``PAPER`` from the paper.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402
import arms as A  # noqa: E402

N_FRESH = 2
DET_KW = {"min_size": 160, "max_size": 224}
# name: (builder in torchvision.models(.detection), kwargs, input kind)
ROWS: dict[str, tuple[str, dict, str]] = {
    "fasterrcnn": ("detection.fasterrcnn_resnet50_fpn", dict(DET_KW), "det"),
    "maskrcnn": ("detection.maskrcnn_resnet50_fpn", dict(DET_KW), "det"),
    "keypointrcnn": ("detection.keypointrcnn_resnet50_fpn", dict(DET_KW), "det"),
    "retinanet": ("detection.retinanet_resnet50_fpn", dict(DET_KW), "det"),
    "ssd": ("detection.ssd300_vgg16", {}, "det"),
    "fcos": ("detection.fcos_resnet50_fpn", dict(DET_KW), "det"),
    "googlenet": ("googlenet", {"init_weights": True, "aux_logits": False}, "cls224"),
    "inception_v3": ("inception_v3", {"init_weights": True, "aux_logits": False}, "cls299"),
}
# breaks before -> after in the paper, where known (see the module docstring)
PAPER: dict[str, tuple[Optional[int], Optional[int]]] = {k: (None, None) for k in ROWS}


def make_inputs(kind: str, seed: int) -> list:
    import torch

    g = torch.Generator().manual_seed(seed)
    if kind == "det":
        # two images, different sizes: the batching and resizing paths run
        return [[torch.rand(3, 120, 160, generator=g), torch.rand(3, 144, 128, generator=g)]]
    side = 299 if kind == "cls299" else 224
    return [torch.randn(1, 3, side, side, generator=g)]


def build(row: str) -> Any:
    import torch

    tv = _import_tv()
    path, kw, _ = ROWS[row]
    mod = tv.models
    for part in path.split(".")[:-1]:
        mod = getattr(mod, part)
    fn = getattr(mod, path.split(".")[-1])
    kw = dict(kw, weights=None)
    if path.startswith("detection."):
        kw["weights_backbone"] = None
    torch.manual_seed(0)
    return fn(**kw).eval()


def _import_tv() -> Any:
    import _tv

    return _tv.import_torchvision()


def _merge(cmps: list[dict]) -> dict:
    return {"identical": all(c["identical"] for c in cmps), "bitwise": all(c["bitwise"] for c in cmps),
            "max_abs_diff": max((c["max_abs_diff"] for c in cmps), default=0.0),
            "mismatches": [f"input {i}: {m}" for i, c in enumerate(cmps) for m in c["mismatches"]][:6]}


def child(row: str, arm: str, data: str) -> dict:
    """One arm of one row, in this (fresh) interpreter."""
    C.set_offline_env()
    C.ensure_graphmend_importable()
    setup = A.setup_arm(arm, packages=("torchvision",))
    import torch

    torch.set_num_threads(1)
    import _equiv as E
    from graphmend.judge import explain

    tv = _import_tv()
    rec: dict[str, Any] = {"row": row, "arm": arm, "setup": setup, "versions": dict(C.versions(),
                                                                                    torchvision=tv.__version__)}
    ref_path = os.path.join(data, f"{row}.original.pt")
    model = build(row)
    kind = ROWS[row][2]
    if arm == "original":
        inputs = [make_inputs(kind, s) for s in range(N_FRESH + 1)]
        sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
    else:
        ref = torch.load(ref_path, weights_only=False)
        inputs, sd = ref["inputs"], ref["state_dict"]
        model.load_state_dict(sd, strict=True)
    rec["params"] = sum(p.numel() for p in model.parameters())
    outs, effects = [], []
    with torch.no_grad():
        for x in inputs:
            torch.manual_seed(0)
            with E.SideEffects() as se:
                y = model(*x)
            outs.append(E.flatten(y))
            effects.append(se.record())
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=lambda gm, ex: gm.forward, fullgraph=False)
    couts, ceffects = [], []
    try:
        with torch.no_grad():
            for x in inputs:
                torch.manual_seed(0)
                with E.SideEffects() as se:
                    couts.append(E.flatten(compiled(*x)))
                ceffects.append(se.record())
    except Exception as e:  # noqa: BLE001 - the arm's own failure (e.g. a switch's runtime assert)
        torch._dynamo.reset()
        rec.update(status="compile_error", error=C.short_error(e), error_site=C.error_site(e),
                   note="the compiled model raised where the eager model ran")
        return rec
    torch._dynamo.reset()
    del compiled
    own = _merge([E.compare(a, b) for a, b in zip(outs, couts)])
    if arm == "original":
        torch.save({"inputs": inputs, "state_dict": sd, "outputs": outs, "compiled_outputs": couts,
                    "effects": effects}, ref_path)
        rec["outputs"] = {"identical": own["identical"], "compiled_vs_own_eager": own, "inputs": len(inputs)}
        rec["control"] = own
    else:
        o = {"compiled_vs_original_eager": _merge([E.compare(a, b) for a, b in zip(ref["outputs"], couts)]),
             "eager_vs_original_eager": _merge([E.compare(a, b) for a, b in zip(ref["outputs"], outs)]),
             "compiled_vs_original_compiled": _merge([E.compare(a, b) for a, b in
                                                      zip(ref["compiled_outputs"], couts)]),
             "compiled_vs_own_eager": own,
             "side_effects": E.compare_side_effects(ref["effects"], effects),
             "compiled_side_effects": E.compare_side_effects(ref["effects"], ceffects),
             "inputs": len(inputs)}
        o["identical"] = (o["compiled_vs_original_eager"]["identical"] and o["eager_vs_original_eager"]["identical"]
                          and o["side_effects"]["identical"])
        rec["outputs"] = o
    t0 = time.perf_counter()
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            rep = explain(model, *inputs[0])
    except Exception as e:  # noqa: BLE001
        rec.update(status="compile_error", error=C.short_error(e), error_site=C.error_site(e),
                   note="counting: the compiled model raised")
        return rec
    rec["compile_s"] = round(time.perf_counter() - t0, 3)
    rec.update(C.summarize_report(rep))
    # sites relative to the package root, as for site-packages
    root = os.path.dirname(os.path.dirname(os.path.abspath(tv.__file__))) + os.sep
    for x in rec.get("reasons", []):
        x["sites"] = [s_.replace(root, "") for s_ in x.get("sites", [])]
    for x in rec.get("skipped", []):
        for k in ("file", "site"):
            if isinstance(x.get(k), str):
                x[k] = x[k].replace(root, "")
    rec["status"] = "ok"
    return rec


def run_child(row: str, arm: str, data: str, timeout: float) -> dict:
    env = C.without_source_tree(C.set_offline_env(dict(os.environ)))
    cmd = [sys.executable, os.path.abspath(__file__), "--_child", row, arm, data]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=C.REPO, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"row": row, "arm": arm, "status": "timeout", "wall_s": round(time.perf_counter() - t0, 1)}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{\"")]
    if p.returncode != 0 or not lines:
        return {"row": row, "arm": arm, "status": "error", "rc": p.returncode, "stderr_tail": p.stderr[-1500:],
                "wall_s": round(time.perf_counter() - t0, 1)}
    rec = json.loads(lines[-1])
    rec["wall_s"] = round(time.perf_counter() - t0, 1)
    return rec


def verdict(rec: dict, orig: Optional[dict]) -> str:
    if rec.get("status") == "compile_error":
        return f"compiled raises: {str(rec.get('error'))[:80]}"
    if rec.get("status") != "ok":
        return rec.get("status", "?")
    if rec["arm"] == "original":
        return "control identical" if rec["outputs"]["identical"] else "compiled differs from eager (Dynamo)"
    return A.verdict(rec["outputs"], rec["arm"])


def render(doc: dict) -> str:
    arms = doc["arms"]
    lines = [f"# Table 2, torchvision rows ({doc.get('versions', {}).get('torch')}, torchvision "
             f"{doc.get('versions', {}).get('torchvision')}, CPU, random weights, eval)", "",
             "break events per arm (graphs in brackets); outputs = compiled and eager vs the original's eager run",
             ""]
    head = f"{'row':14} {'paper':>7} " + " ".join(f"{a:>15}" for a in arms) + "  outputs"
    lines.append(head)
    tot = {a: 0 for a in arms}
    for row, by_arm in doc["rows"].items():
        p = PAPER.get(row, (None, None))
        cells, verd = [], []
        for a in arms:
            r = by_arm.get(a) or {}
            if r.get("status") == "ok":
                cells.append(f"{r['break_events']:>9} [{r['graphs']:>3}]")
                tot[a] += r["break_events"]
                v = r.get("verdict")
                if v not in ("identical", "control identical"):
                    verd.append(f"{a}: {v}")
            else:
                cells.append(f"{(r.get('status') or '-'):>15}")
                if r.get("status") == "compile_error":
                    verd.append(f"{a}: {r.get('verdict')}")
        ps = "-" if p[0] is None else f"{p[0]}>{p[1]}"
        lines.append(f"{row:14} {ps:>7} " + " ".join(f"{c:>15}" for c in cells) + "  "
                     + ("; ".join(verd) or "identical"))
    # an arm with a row that did not count has no comparable total
    bad = {a: sum((by.get(a) or {}).get("status") != "ok" for by in doc["rows"].values()) for a in arms}
    lines.append(f"{'TOTAL':14} {'':>7} " + " ".join(
        f"{(str(tot[a]) if not bad[a] else f'{tot[a]}+{bad[a]} n/a'):>15}" for a in arms))
    lines += ["", "break types (original arm): " + "; ".join(
        f"{row}: " + ", ".join(f"{x.get('gb_type')} x{x.get('count')}" for x in (by.get('original') or {}).get(
            'reasons', [])[:4]) for row, by in doc["rows"].items() if (by.get("original") or {}).get("reasons"))]
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rows", nargs="*", help=f"rows (default all): {', '.join(ROWS)}")
    p.add_argument("--arms", default=",".join(A.ARM_ORDER), help="comma list (original always runs first)")
    p.add_argument("--json", default=None, help="write the results here (resumable: rows x arms already "
                   "there with status ok are kept)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per row x arm")
    p.add_argument("--render", default=None, metavar="JSON", help="only print the table of a results file")
    p.add_argument("--_child", nargs=3, default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a._child:
        rec = child(*a._child)
        print(json.dumps(rec, default=str))
        return 0
    if a.render:
        print(render(json.load(open(a.render))), end="")
        return 0
    rows = a.rows or list(ROWS)
    bad = [r for r in rows if r not in ROWS]
    if bad:
        p.error(f"unknown rows {bad}; choose from {', '.join(ROWS)}")
    arms = A.parse_arms(a.arms)
    doc: dict[str, Any] = {"arms": arms, "rows": {}, "runs": []}
    if a.json and os.path.exists(a.json):
        old = json.load(open(a.json))
        doc["rows"] = old.get("rows", {})
        doc["runs"] = old.get("runs", [])
        doc["arms"] = [x for x in A.ARM_ORDER if x in set(arms) | set(old.get("arms", []))]
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="table2_vision_") as data:
        for row in rows:
            have = doc["rows"].setdefault(row, {})
            todo = [x for x in arms if (have.get(x) or {}).get("status") != "ok"]
            if todo and "original" not in todo:
                todo.insert(0, "original")  # the reference data lives in this run's scratch
            for arm in todo:
                rec = run_child(row, arm, data, a.timeout)
                rec["verdict"] = verdict(rec, have.get("original"))
                have[arm] = rec
                print(f"table2_vision: {row} {arm}: {rec.get('status')} "
                      f"{rec.get('break_events', '-')} breaks, {rec.get('graphs', '-')} graphs, "
                      f"{rec['verdict']} ({rec.get('wall_s')} s)", file=sys.stderr, flush=True)
                if a.json:
                    _save(a.json, doc)
                if arm == "original" and rec.get("status") != "ok":
                    break
                vs = rec.get("versions")
                if vs:
                    doc["versions"] = vs
    doc["runs"].append({"argv": sys.argv[1:], "wall_s": round(time.time() - t0, 1),
                        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"), "graphmend_commit": C.git_describe()})
    if a.json:
        _save(a.json, doc)
    print(render(doc), end="")
    return 0


def _save(path: str, doc: dict) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True, default=str)
        f.write("\n")
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    sys.exit(main())
