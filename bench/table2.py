#!/usr/bin/env python
"""The GraphMend paper's Table 2, rebuilt on CPU (docs/BENCHMARKS.md §2).

Every row whose model code ships inside ``transformers`` is built from a
small config with random weights, fully offline (HF_HUB_OFFLINE=1), under
the paper's ``transformers==4.52.4`` and ``torch==2.13.0``; Dynamo's graph
breaks are counted with :func:`graphmend.explain` (counting backend,
``fullgraph=False``) after one eager call.  Each row runs in its own
subprocess of the benchmark interpreter with a timeout:

    $GRAPHMEND_TF452_PYTHON   (default: <repo>/.venv-tf452/bin/python)

  python bench/table2.py                 # all rows
  python bench/table2.py biogpt t5       # some rows
  python bench/table2.py --json out.json

Rows are data (:data:`ROWS`); measuring is :func:`measure_row`, which takes
``load``: how the model code is loaded.  Only ``"original"`` exists now; a
``"mended"`` loader (graphmend's import hook over transformers) adds the
"after" columns without touching the rows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

TF_VERSION = "4.52.4"


def default_python() -> str:
    return os.environ.get("GRAPHMEND_TF452_PYTHON") or os.path.join(C.REPO, ".venv-tf452", "bin", "python")


# --------------------------------------------------------------------- rows
# A row's ``build`` runs in the child: it returns (model, inputs dict).  It
# may import transformers and torch; ``load`` has been applied before.


def _ids(lo: int, hi: int, shape: tuple) -> Any:
    import torch

    g = torch.Generator().manual_seed(0)
    return torch.randint(lo, hi, shape, generator=g)


def _t5() -> tuple:
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(vocab_size=128, d_model=64, d_kv=32, d_ff=128, num_layers=2, num_decoder_layers=2,
                   num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    return T5ForConditionalGeneration(cfg), {"input_ids": _ids(2, 128, (1, 8)), "decoder_input_ids": _ids(2, 128, (1, 8))}


def _whisper() -> tuple:
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    cfg = WhisperConfig(vocab_size=128, num_mel_bins=80, d_model=64, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=128,
                        decoder_ffn_dim=128, max_source_positions=64, max_target_positions=64,
                        pad_token_id=1, bos_token_id=2, eos_token_id=2, decoder_start_token_id=3,
                        suppress_tokens=None, begin_suppress_tokens=None)
    feats = torch.randn(1, 80, 128, generator=torch.Generator().manual_seed(0))
    return WhisperForConditionalGeneration(cfg), {"input_features": feats, "decoder_input_ids": _ids(4, 128, (1, 8))}


def _bart_like(kind: str) -> Callable[[], tuple]:
    def build() -> tuple:
        import transformers

        cfg_cls, model_cls = {
            "bart": ("BartConfig", "BartForConditionalGeneration"),
            "marian": ("MarianConfig", "MarianMTModel"),
            "blenderbot": ("BlenderbotConfig", "BlenderbotForConditionalGeneration"),
        }[kind]
        kw: dict[str, Any] = dict(vocab_size=128, d_model=64, encoder_layers=2, decoder_layers=2,
                                  encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=128,
                                  decoder_ffn_dim=128, max_position_embeddings=64)
        if kind == "marian":
            kw.update(decoder_start_token_id=2, pad_token_id=1, eos_token_id=0)
        if kind == "blenderbot":
            kw.update(pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
        cfg = getattr(transformers, cfg_cls)(**kw)
        model = getattr(transformers, model_cls)(cfg)
        return model, {"input_ids": _ids(3, 128, (1, 8)), "decoder_input_ids": _ids(3, 128, (1, 8))}

    return build


def _biogpt() -> tuple:
    from transformers import BioGptConfig, BioGptForCausalLM

    cfg = BioGptConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=128, max_position_embeddings=64)
    return BioGptForCausalLM(cfg), {"input_ids": _ids(3, 128, (1, 8))}


def _pegasus_causal() -> tuple:
    from transformers import PegasusConfig, PegasusForCausalLM

    cfg = PegasusConfig(vocab_size=128, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128,
                        max_position_embeddings=64, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    return PegasusForCausalLM(cfg), {"input_ids": _ids(3, 128, (1, 8))}


def _layoutlmv3() -> tuple:
    import torch
    from transformers import LayoutLMv3Config, LayoutLMv3Model

    cfg = LayoutLMv3Config(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=128, coordinate_size=8, shape_size=16, visual_embed=False,
                           max_position_embeddings=64, max_2d_position_embeddings=128)
    return LayoutLMv3Model(cfg), {"input_ids": _ids(3, 128, (1, 8)), "bbox": torch.zeros(1, 8, 4, dtype=torch.long)}


def _phi3_longrope() -> tuple:
    from transformers import Phi3Config, Phi3ForCausalLM

    head_dim = 64 // 2
    cfg = Phi3Config(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                     num_key_value_heads=2, intermediate_size=128, max_position_embeddings=64,
                     original_max_position_embeddings=16, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                     rope_scaling={"type": "longrope", "short_factor": [1.0] * (head_dim // 2),
                                   "long_factor": [2.0] * (head_dim // 2)})
    return Phi3ForCausalLM(cfg), {"input_ids": _ids(3, 128, (1, 8))}


def _grounding_dino() -> tuple:
    import torch
    from transformers import (
        BertConfig,
        GroundingDinoConfig,
        GroundingDinoModel,
        SwinConfig,
    )

    backbone = SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1, 1, 1], num_heads=[1, 1, 2, 2],
                          window_size=2, out_features=["stage2", "stage3", "stage4"])
    text = BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64)
    cfg = GroundingDinoConfig(backbone_config=backbone, text_config=text, use_timm_backbone=False,
                              use_pretrained_backbone=False, d_model=64, encoder_layers=2, decoder_layers=2,
                              encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=128,
                              decoder_ffn_dim=128, num_queries=10, num_feature_levels=4,
                              encoder_n_points=2, decoder_n_points=2, max_text_len=16)
    g = torch.Generator().manual_seed(0)
    return GroundingDinoModel(cfg), {"pixel_values": torch.randn(1, 3, 32, 32, generator=g),
                                     "input_ids": _ids(3, 128, (1, 8))}


def _longformer() -> tuple:
    from transformers import LongformerConfig, LongformerModel

    cfg = LongformerConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=128, attention_window=8, max_position_embeddings=128,
                           pad_token_id=1, bos_token_id=0, eos_token_id=2)
    return LongformerModel(cfg), {"input_ids": _ids(3, 128, (1, 20))}


def _clap() -> tuple:
    import torch
    from transformers import ClapAudioConfig, ClapConfig, ClapModel, ClapTextConfig

    text = ClapTextConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                          intermediate_size=128, max_position_embeddings=64, projection_dim=32)
    audio = ClapAudioConfig(spec_size=64, window_size=4, num_mel_bins=16, patch_embeds_hidden_size=16,
                            depths=[1, 1], num_attention_heads=[1, 2], hidden_size=32, patch_stride=(4, 4),
                            enable_fusion=True, projection_dim=32)
    cfg = ClapConfig(text_config=text.to_dict(), audio_config=audio.to_dict(), projection_dim=32)
    g = torch.Generator().manual_seed(0)
    # fused input: 4 channels (1 global + 3 local crops) of (time, mel)
    feats = torch.randn(1, 4, 64, 16, generator=g)
    return ClapModel(cfg), {"input_ids": _ids(3, 128, (1, 8)), "attention_mask": torch.ones(1, 8, dtype=torch.long),
                            "input_features": feats, "is_longer": torch.tensor([[True]])}


@dataclass
class Row:
    name: str
    model: str  # transformers class
    build: Callable[[], tuple] = field(repr=False)
    paper: tuple[int, int]  # breaks before -> after in the paper
    artifact: tuple[Optional[int], Optional[int]]  # the artifact's CPU reproduction
    dtype: str = "float32"
    knobs: str = ""
    note: str = ""
    in_total: bool = True  # False for variants of a row already counted (fp16)

    def meta(self) -> dict:
        d = asdict(self)
        d.pop("build")
        return d


ROWS: list[Row] = [
    Row("t5", "T5ForConditionalGeneration", _t5, (3, 0), (3, 0), knobs="d_model 64, 2 layers, 2 heads"),
    Row("whisper", "WhisperForConditionalGeneration", _whisper, (3, 0), (3, 0), knobs="80 mel bins, 64 positions"),
    Row("bart", "BartForConditionalGeneration", _bart_like("bart"), (7, 0), (3, 0), knobs="fp32",
        note="fp32 folds the fp16 overflow-clamp guard away; see bart-fp16"),
    Row("bart-fp16", "BartForConditionalGeneration", _bart_like("bart"), (7, 0), (None, None), dtype="float16",
        knobs="fp16 activates the overflow-clamp guard", in_total=False),
    Row("marian", "MarianMTModel", _bart_like("marian"), (6, 0), (3, 0), knobs="fp32, decoder_start 2, pad 1"),
    Row("marian-fp16", "MarianMTModel", _bart_like("marian"), (6, 0), (None, None), dtype="float16",
        knobs="fp16, decoder_start 2, pad 1", in_total=False),
    Row("biogpt", "BioGptForCausalLM", _biogpt, (2, 0), (2, 0), knobs="hidden 64, 2 layers"),
    Row("blenderbot", "BlenderbotForConditionalGeneration", _bart_like("blenderbot"), (3, 0), (3, 0),
        knobs="d_model 64, 2+2 layers"),
    Row("pegasus-causal", "PegasusForCausalLM", _pegasus_causal, (2, 0), (2, 0), knobs="2 decoder layers"),
    Row("layoutlmv3", "LayoutLMv3Model", _layoutlmv3, (2, 0), (2, 0),
        knobs="coordinate 8, shape 16, visual_embed=False, bbox zeros"),
    Row("phi3-longrope", "Phi3ForCausalLM", _phi3_longrope, (5, 0), (5, 0),
        knobs="rope_scaling longrope, original_max_position_embeddings 16"),
    Row("grounding-dino", "GroundingDinoModel", _grounding_dino, (17, 7), (16, 7),
        knobs="Swin 32 px, Bert 2 layers, d_model 64, no timm"),
    Row("longformer", "LongformerModel", _longformer, (5, 3), (5, 3), knobs="attention_window 8, ids (1, 20)"),
    Row("clap", "ClapModel", _clap, (4, 4), (2, 2), knobs="audio enable_fusion=True"),
]
ROW_BY_NAME = {r.name: r for r in ROWS}

# ------------------------------------------------------------------ loaders
# ``load`` says how the model code is brought in before ``build`` runs.


def _load_original() -> None:
    return None


LOADERS: dict[str, Callable[[], None]] = {"original": _load_original}


# ---------------------------------------------------------------- measuring

def measure_row(row: Row, load: str = "original") -> dict:
    """Build ``row`` (after applying loader ``load``), run it eagerly once,
    then count with graphmend.explain.  Runs in the current process."""
    C.set_offline_env()
    C.ensure_graphmend_importable()
    LOADERS[load]()
    import torch

    torch.set_num_threads(1)
    import transformers
    from graphmend.judge import explain

    rec: dict[str, Any] = {"row": row.name, "load": load, "versions": C.versions()}
    torch.manual_seed(0)
    t0 = time.perf_counter()
    model, inputs = row.build()
    dtype = getattr(torch, row.dtype)
    model = model.to(dtype).eval()
    inputs = {k: (v.to(dtype) if torch.is_tensor(v) and v.is_floating_point() else v) for k, v in inputs.items()}
    rec["build_s"] = round(time.perf_counter() - t0, 3)
    with torch.no_grad():
        model(**inputs)  # eager first: the artifact compares against it
        t0 = time.perf_counter()
        rep = explain(model, **inputs)
    rec["compile_s"] = round(time.perf_counter() - t0, 3)
    rec.update(C.summarize_report(rep))
    rec["transformers"] = transformers.__version__
    return rec


def run_row_subprocess(name: str, python: str, load: str, timeout: float) -> dict:
    cmd = [python, os.path.abspath(__file__), "--_child", name, "--load", load]
    env = C.set_offline_env(dict(os.environ))
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"row": name, "load": load, "status": "timeout", "wall_s": round(time.perf_counter() - t0, 1)}
    wall = round(time.perf_counter() - t0, 1)
    last = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode == 0 and last:
        rec = json.loads(last[-1])
        rec["status"] = "ok"
    else:
        tail = (p.stderr or p.stdout).strip().splitlines()
        rec = {"row": name, "load": load, "status": "error", "error": tail[-1][:400] if tail else f"exit {p.returncode}",
               "stderr_tail": "\n".join(tail[-30:])}
    rec["wall_s"] = wall
    return rec


def _child(name: str, load: str) -> int:
    rec = measure_row(ROW_BY_NAME[name], load=load)
    sys.stdout.write("\n" + json.dumps(rec, default=str) + "\n")
    return 0


def _fmt(v: Any) -> str:
    return "-" if v is None else str(v)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rows", nargs="*", metavar="ROW", help=f"rows to run (default all): {', '.join(ROW_BY_NAME)}")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    p.add_argument("--python", default=None, help="interpreter with transformers==4.52.4 "
                   "(default: $GRAPHMEND_TF452_PYTHON or <repo>/.venv-tf452/bin/python)")
    p.add_argument("--load", default="original", choices=sorted(LOADERS), help="how model code is loaded")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per row")
    p.add_argument("--list", action="store_true", help="list the rows and exit")
    p.add_argument("--_child", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a._child:
        return _child(a._child, a.load)
    if a.list:
        for r in ROWS:
            print(f"{r.name:16} {r.model:36} paper {r.paper[0]}->{r.paper[1]}  artifact "
                  f"{_fmt(r.artifact[0])}->{_fmt(r.artifact[1])}  {r.dtype}  {r.knobs}")
        return 0
    unknown = [r for r in a.rows if r not in ROW_BY_NAME]
    if unknown:
        p.error(f"unknown row(s): {', '.join(unknown)}; known: {', '.join(ROW_BY_NAME)}")
    python = a.python or default_python()
    if not os.path.exists(python):
        print(f"table2: no interpreter at {python}; set GRAPHMEND_TF452_PYTHON or create .venv-tf452 "
              f"from requirements/bench-tf452.txt", file=sys.stderr)
        return 2
    rows = [ROW_BY_NAME[n] for n in a.rows] if a.rows else ROWS
    results = []
    hdr = (f"{'row':16} {'model':36} {'here':>5} {'paper':>5} {'artif':>5}  {'graphs':>6} {'g-1':>4} "
           f"{'skip':>4}  status")
    print(hdr)
    print("-" * len(hdr))
    tot_here = tot_paper = tot_art = tot_g1 = 0
    for r in rows:
        rec = run_row_subprocess(r.name, python, a.load, a.timeout)
        rec["meta"] = r.meta()
        results.append(rec)
        here = rec.get("break_events") if rec["status"] == "ok" else None
        g1 = rec["graphs"] - 1 if rec["status"] == "ok" else None
        if r.in_total:
            if here is not None:
                tot_here += here
                tot_g1 += g1
            tot_paper += r.paper[0]
            tot_art += r.artifact[0] or 0
        print(f"{r.name + ('' if r.in_total else '*'):16} {r.model:36} {_fmt(here):>5} {r.paper[0]:>5} {_fmt(r.artifact[0]):>5}  "
              f"{_fmt(rec.get('graphs')):>6} {_fmt(g1):>4} {_fmt(rec.get('skipped_frames')):>4}  {rec['status']}"
              + (f": {rec.get('error')}" if rec["status"] != "ok" else ""), flush=True)
    print("-" * len(hdr))
    print(f"{'TOTAL':16} {'':36} {tot_here:>5} {tot_paper:>5} {tot_art:>5}  {'':>6} {tot_g1:>4}")
    print("here: graph-break events Dynamo logged; g-1: graphs compiled minus one (what "
          "torch._dynamo.explain calls graph_break_count); skip: frames Dynamo skipped; "
          "TOTAL leaves out the fp16 variants (their paper count is already in the fp32 row)")
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"load": a.load, "python": python, "rows": results,
                       "total": {"here": tot_here, "graphs_minus_1": tot_g1, "paper": tot_paper,
                                 "artifact": tot_art}}, f, indent=1, default=str)
            f.write("\n")
    return 0 if all(r["status"] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
