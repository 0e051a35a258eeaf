#!/usr/bin/env python3
"""Package-wide regions against what really runs: recall and precision.

For each model class named, build it from its config class with random
weights (shrunk like the survey does), run its forward eagerly on the
survey's inputs under sys.setprofile, and record every Python function of
the transformers package that ran (by file and qualified name). Those are
the functions Dynamo traces when it compiles that forward. Then ask the
package analysis (graphmend.lint.package_roots over every module of the
installed transformers, include_own=True) which functions it makes regions,
and print, per model and in total:

  ran        functions that ran inside forward
  missed     of those, functions the analysis did not reach (a fix there
             would be lost against library mode; should be 0)
  reached    functions the analysis makes regions, over the whole package
  library    every function of the package (what --regions all mends)

    bench/region_recall.py [--models bart,llama,t5,...] [--json OUT]

The models are named by their class (attributes of the transformers package).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

DEFAULT_MODELS = ("BartForConditionalGeneration,LlamaForCausalLM,T5ForConditionalGeneration,"
                  "WhisperForConditionalGeneration,BertForMaskedLM,GPT2LMHeadModel,MistralModel,"
                  "Qwen2ForCausalLM,Phi3ForCausalLM,ViTModel,CLIPModel,Wav2Vec2Model,LongformerModel")


def reached_functions(root: str, files: list[tuple[str, bytes]]) -> set[tuple[str, str]]:
    """(file relative to root, dotted name) of every function the package
    analysis of ``files`` (``[(path, source)]`` below root) makes a region."""
    from graphmend import lint

    reached = lint.package_roots(files, include_own=True)
    return {(os.path.relpath(p, root), name) for p, names in reached.items() for name in names}


def dotted(qualname: str) -> str:
    return qualname.replace(".<locals>", "")


def ran_in_forward(model, inputs, root: str) -> set[tuple[str, str]]:
    import torch

    seen: set[tuple[str, str]] = set()

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code.co_filename.startswith(root) and "<" not in code.co_name:
                seen.add((os.path.relpath(code.co_filename, root), dotted(code.co_qualname)))

    with torch.no_grad():
        sys.setprofile(profile)
        try:
            model(**inputs)
        finally:
            sys.setprofile(None)
    return seen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--json")
    args = ap.parse_args()

    import transformers

    from graphmend import lint

    import hfbuild

    root = os.path.dirname(transformers.__file__)
    files = lint.read_sources(lint.python_files(root))
    t0 = time.perf_counter()
    reached_set = reached_functions(root, files)
    analysis_s = time.perf_counter() - t0
    n_library = 0
    for _path, data in files:
        n_library += data.count(b"def ")
    print(f"transformers {transformers.__version__}: {len(files)} modules; package analysis "
          f"{analysis_s:.2f} s; {len(reached_set)} functions reached "
          f"(about {n_library} defs in the package)")
    totals = {"ran": 0, "missed": 0}
    rows = []
    for model_type in args.models.split(","):
        ran = None
        try:
            model, _ = hfbuild.build(getattr(transformers, model_type))
            model.eval()
            for _, inputs in hfbuild.input_variants(model):
                try:
                    ran = ran_in_forward(model, inputs, root)
                    break
                except Exception:  # noqa: BLE001 - try the next input variant
                    continue
        except Exception as exc:  # noqa: BLE001 - report and go on
            print(f"{model_type:34s} could not build: {type(exc).__name__}: {exc}")
            continue
        if ran is None:
            print(f"{model_type:34s} no input variant runs")
            continue
        missed = sorted(ran - reached_set)
        totals["ran"] += len(ran)
        totals["missed"] += len(missed)
        rows.append({"model": model_type, "ran": len(ran), "missed": missed})
        print(f"{model_type:34s} ran {len(ran):4d}  missed {len(missed):3d}"
              + ("".join(f"\n    {f}: {n}" for f, n in missed[:20])))
    print(f"total: ran {totals['ran']}, missed {totals['missed']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"reached": len(reached_set), "rows": rows, **totals}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
