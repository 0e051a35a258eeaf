#!/usr/bin/env python3
"""timm models under Dynamo, original and mended: code graphmend was not written against.

Builds each model with random weights (``timm.create_model(name,
pretrained=False, num_classes=10)``, eval mode), runs it eagerly on one fixed
input, then compiled under graphmend's judge (``graphmend.judge``, the
counting backend of bench/README.md), and prints per model: graphs,
graph-break events, skipped frames, ``unimplemented`` counter entries, and
whether the compiled output is bitwise equal to eager in both arms with the
same eager checksum. Each arm runs in
its own interpreter; the mended arm imports timm under
``graphmend.install(packages=["timm"])``. The two arms' checksums must agree.

timm is installed apart, so that it cannot pull another torch, and
torchvision comes from bench/_tv.py:

    pip install --no-deps --target /tmp/timmpkg timm==1.0.31
    PYTHONPATH=/tmp/timmpkg .venv/bin/python bench/timm_models.py [--models a,b]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

DEFAULT_MODELS = ("resnet18,vit_tiny_patch16_224,convnext_atto,efficientnet_b0,mobilenetv3_small_100,"
                  "deit_tiny_patch16_224,swin_tiny_patch4_window7_224,levit_128s,mixer_s16_224,"
                  "beit_base_patch16_224,coat_tiny,crossvit_tiny_240,regnetx_002,densenet121,"
                  "poolformer_s12,edgenext_xx_small,mobilevit_xxs,eva02_tiny_patch14_224,"
                  "focalnet_tiny_srf,maxvit_nano_rw_256")


def child(arm: str, names: list[str]) -> dict:
    from _tv import import_torchvision

    import_torchvision()
    if arm == "mended":
        import graphmend

        graphmend.install(packages=["timm"])
    import timm
    import torch

    from graphmend.judge import explain_with_output

    out = {}
    for name in names:
        try:
            torch.manual_seed(0)
            model = timm.create_model(name, pretrained=False, num_classes=10).eval()
            size = tuple(model.pretrained_cfg.get("input_size", (3, 224, 224)))
            x = torch.randn(2, *size, generator=torch.Generator().manual_seed(1))
            with torch.no_grad():
                ref = model(x)
                report, got = explain_with_output(model, x)
            out[name] = {"graphs": report.graphs, "breaks": report.break_events,
                         "skipped": len(report.skipped_frames),
                         "unimplemented": report.counter_unimplemented,
                         "bitwise": bool(torch.equal(ref, got)),
                         "sha": hashlib.sha1(ref.numpy().tobytes()).hexdigest()[:12]}
        except Exception as e:  # a model this timm cannot build here
            out[name] = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--child", choices=("original", "mended"))
    a = ap.parse_args()
    names = a.models.split(",")
    if a.child:
        print(json.dumps(child(a.child, names)))
        return 0
    arms = {}
    for arm in ("original", "mended"):
        p = subprocess.run([sys.executable, __file__, "--child", arm, "--models", a.models],
                           capture_output=True, text=True, check=True)
        arms[arm] = json.loads(p.stdout.strip().splitlines()[-1])
    bad = 0
    print(f"{'model':32s} {'original: graphs/breaks/skipped/unimpl':>40s} {'mended':>14s}  outputs")
    for name in names:
        o, m = arms["original"][name], arms["mended"][name]
        if "error" in o or "error" in m:
            print(f"{name:32s} error: {o.get('error') or m.get('error')}")
            continue
        same = o["sha"] == m["sha"] and o["bitwise"] and m["bitwise"]
        bad += not same
        counts = ["/".join(str(r[k]) for k in ("graphs", "breaks", "skipped", "unimplemented"))
                  for r in (o, m)]
        print(f"{name:32s} {counts[0]:>40s} {counts[1]:>14s}  {'bitwise equal' if same else 'DIFFER'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
