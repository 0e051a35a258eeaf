#!/usr/bin/env python
"""Phi-3's LongRoPE switch mended with GM104's unsafe fix, on both sides of
the switch and across it, against the original.

Table 2's phi3-longrope row feeds sequences of one length (8, below
`original_max_position_embeddings` = 16), so its output check only takes
the short branch. This runs one model through lengths 8, 24, 8, 40, 12
(short, long, short, long, short: the memo fill happens on the first long
call in the original and on the first call in the mended code) and checks,
in two fresh interpreters of the transformers 4.52.4 environment:

* original eager (the reference; weights saved for the other side);
* mended (`graphmend.install(packages=["transformers"], unsafe=True)`):
  eager and compiled (counting backend) logits bitwise equal to the
  reference on every call, the `inv_freq` buffer equal after every call,
  and Dynamo's count on a long input: 1 graph, 0 break events.

  python bench/longrope_paths.py [--python .venv-tf452/bin/python]

Exit status 0 when everything matches.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _common as C  # noqa: E402

LENGTHS = (8, 24, 8, 40, 12)


def _side(arm: str, work: str) -> int:
    if arm == "mended":
        import graphmend

        graphmend.install(packages=["transformers"], unsafe=True)
    import torch

    import table2

    torch.manual_seed(0)
    model = table2._phi3_longrope_model().eval()
    weights = os.path.join(work, "weights.pt")
    if arm == "original":
        torch.save(model.state_dict(), weights)
    else:
        model.load_state_dict(torch.load(weights))
    gen = torch.Generator().manual_seed(1)
    ids = [torch.randint(3, 128, (1, n), generator=gen) for n in LENGTHS]
    ref_path = os.path.join(work, "reference.pt")
    with torch.no_grad():
        if arm == "original":
            logits, freqs = [], []
            for i in ids:
                logits.append(model(input_ids=i).logits)
                freqs.append(model.model.rotary_emb.inv_freq.clone())
            torch.save({"logits": logits, "inv_freq": freqs}, ref_path)
            print(json.dumps({"arm": arm, "calls": len(ids)}))
            return 0
        ref = torch.load(ref_path)
        report = {"arm": arm, "calls": []}
        compiled = torch.compile(model, backend="eager")
        for k, (i, r, f) in enumerate(zip(ids, ref["logits"], ref["inv_freq"])):
            call = {"length": LENGTHS[k]}
            call["eager_equal"] = torch.equal(model(input_ids=i).logits, r)
            call["eager_inv_freq_equal"] = torch.equal(model.model.rotary_emb.inv_freq, f)
            call["compiled_equal"] = torch.equal(compiled(input_ids=i).logits, r)
            call["compiled_inv_freq_equal"] = torch.equal(model.model.rotary_emb.inv_freq, f)
            report["calls"].append(call)
        explained = graphmend.explain(model, input_ids=ids[1])
        report["long_input"] = {"graphs": explained.graphs, "break_events": explained.break_events}
    print(json.dumps(report))
    ok = all(all(v for k, v in c.items() if k != "length") for c in report["calls"])
    return 0 if ok and report["long_input"] == {"graphs": 1, "break_events": 0} else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=None, help="the transformers 4.52.4 interpreter "
                    "(default: $GRAPHMEND_TF452_PYTHON or <repo>/.venv-tf452/bin/python)")
    ap.add_argument("--_side", choices=("original", "mended"), help=argparse.SUPPRESS)
    ap.add_argument("--_work", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a._side:
        C.set_offline_env()
        return _side(a._side, a._work)
    python = a.python or os.environ.get("GRAPHMEND_TF452_PYTHON") or os.path.join(C.REPO, ".venv-tf452", "bin",
                                                                                   "python")
    env = C.without_source_tree(C.set_offline_env(dict(os.environ)))
    status = 0
    with tempfile.TemporaryDirectory() as work:
        for arm in ("original", "mended"):
            p = subprocess.run([python, os.path.abspath(__file__), "--_side", arm, "--_work", work],
                               capture_output=True, text=True, env=env, cwd=C.REPO, timeout=900)
            lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
            print(lines[-1] if lines else f"{arm}: no report\n{p.stderr[-2000:]}")
            status |= p.returncode != 0 or not lines
    print("longrope_paths:", "all equal, 1 graph / 0 breaks on a long input" if status == 0 else "MISMATCH")
    return status


if __name__ == "__main__":
    sys.exit(main())
