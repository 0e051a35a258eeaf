#!/usr/bin/env python
"""The GraphMend paper's Table 2, rebuilt on CPU (docs/BENCHMARKS.md §2),
before and after graphmend.

Every row whose model code ships inside ``transformers`` is built from a
small config with random weights, fully offline (HF_HUB_OFFLINE=1), under
the paper's ``transformers==4.52.4`` and ``torch==2.13.0``.  Two arms:

* ``original``: transformers as installed;
* ``mended``: ``graphmend.install(packages=["transformers"])`` before
  transformers is imported (the import hook mends its modules with
  graphmend's safe fixes).

For every row and arm (each in its own subprocess of the benchmark
interpreter, with a timeout) Dynamo's graphs, break events and skipped frames
are counted with graphmend.explain (counting backend, ``fullgraph=False``),
and the mended model's outputs are compared with the ORIGINAL model run
eagerly: same state_dict, the row's input and 3 fresh random inputs, tight
allclose for floats and exact equality for integers and booleans, plus the
same stdout, log records and warnings per call.  ``--timing`` adds cold start
(first call, compile included, Inductor, a fresh compiler cache and process
per measurement) and steady state (median of later calls), the arms
interleaved ABBA so that machine noise hits both.

    $GRAPHMEND_TF452_PYTHON   (default: <repo>/.venv-tf452/bin/python)

  python bench/table2.py                          # all rows, both arms, counting + outputs
  python bench/table2.py biogpt t5 --arms original
  python bench/table2.py --timing --reps 3 --json bench/results/table2_mended.json

Rows are data (:data:`ROWS`); how the model code is loaded is :data:`LOADERS`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

TF_VERSION = "4.52.4"
N_FRESH = 3  # fresh random inputs beside the row's own


def default_python() -> str:
    return os.environ.get("GRAPHMEND_TF452_PYTHON") or os.path.join(C.REPO, ".venv-tf452", "bin", "python")


# --------------------------------------------------------------------- rows
# A row has ``model()`` (called after torch.manual_seed(0); may import
# transformers; ``load`` has been applied before) and ``inputs(seed)``: the
# inputs for ``seed``; seed 0 gives the row's own inputs (those the counts
# were first measured with), seeds 1.. fresh random inputs of the same dtypes
# and shapes.


def _gen(seed: int) -> Any:
    import torch

    return torch.Generator().manual_seed(seed)


def _ids(lo: int, hi: int, shape: tuple, seed: int = 0) -> Any:
    import torch

    return torch.randint(lo, hi, shape, generator=_gen(seed))


def _t5_model() -> Any:
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(vocab_size=128, d_model=64, d_kv=32, d_ff=128, num_layers=2, num_decoder_layers=2,
                   num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    return T5ForConditionalGeneration(cfg)


def _t5_inputs(seed: int) -> dict:
    return {"input_ids": _ids(2, 128, (1, 8), seed), "decoder_input_ids": _ids(2, 128, (1, 8), seed + 1000)}


def _whisper_model() -> Any:
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    cfg = WhisperConfig(vocab_size=128, num_mel_bins=80, d_model=64, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=128,
                        decoder_ffn_dim=128, max_source_positions=64, max_target_positions=64,
                        pad_token_id=1, bos_token_id=2, eos_token_id=2, decoder_start_token_id=3,
                        suppress_tokens=None, begin_suppress_tokens=None)
    return WhisperForConditionalGeneration(cfg)


def _whisper_inputs(seed: int) -> dict:
    import torch

    return {"input_features": torch.randn(1, 80, 128, generator=_gen(seed)),
            "decoder_input_ids": _ids(4, 128, (1, 8), seed)}


def _bart_like_model(kind: str) -> Callable[[], Any]:
    def build() -> Any:
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
        return getattr(transformers, model_cls)(cfg)

    return build


def _seq2seq_inputs(seed: int) -> dict:
    # seed 0: the same tensor for both (as first measured); fresh seeds differ
    return {"input_ids": _ids(3, 128, (1, 8), seed), "decoder_input_ids": _ids(3, 128, (1, 8), seed * 7919)}


def _causal_inputs(seed: int) -> dict:
    return {"input_ids": _ids(3, 128, (1, 8), seed)}


def _biogpt_model() -> Any:
    from transformers import BioGptConfig, BioGptForCausalLM

    cfg = BioGptConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=128, max_position_embeddings=64)
    return BioGptForCausalLM(cfg)


def _pegasus_causal_model() -> Any:
    from transformers import PegasusConfig, PegasusForCausalLM

    cfg = PegasusConfig(vocab_size=128, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128,
                        max_position_embeddings=64, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    return PegasusForCausalLM(cfg)


def _layoutlmv3_model() -> Any:
    from transformers import LayoutLMv3Config, LayoutLMv3Model

    cfg = LayoutLMv3Config(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=128, coordinate_size=8, shape_size=16, visual_embed=False,
                           max_position_embeddings=64, max_2d_position_embeddings=128)
    return LayoutLMv3Model(cfg)


def _layoutlmv3_inputs(seed: int) -> dict:
    import torch

    if seed == 0:
        bbox = torch.zeros(1, 8, 4, dtype=torch.long)
    else:  # valid boxes: x0 <= x1, y0 <= y1, all < 128
        g = _gen(seed)
        a = torch.randint(0, 100, (1, 8, 2, 2), generator=g)
        lo, hi = a.min(dim=2).values, a.max(dim=2).values
        bbox = torch.stack([lo[..., 0], lo[..., 1], hi[..., 0], hi[..., 1]], dim=-1)
    return {"input_ids": _ids(3, 128, (1, 8), seed), "bbox": bbox}


def _phi3_longrope_model() -> Any:
    from transformers import Phi3Config, Phi3ForCausalLM

    head_dim = 64 // 2
    cfg = Phi3Config(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                     num_key_value_heads=2, intermediate_size=128, max_position_embeddings=64,
                     original_max_position_embeddings=16, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                     rope_scaling={"type": "longrope", "short_factor": [1.0] * (head_dim // 2),
                                   "long_factor": [2.0] * (head_dim // 2)})
    return Phi3ForCausalLM(cfg)


def _grounding_dino_model() -> Any:
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
    return GroundingDinoModel(cfg)


def _grounding_dino_inputs(seed: int) -> dict:
    import torch

    return {"pixel_values": torch.randn(1, 3, 32, 32, generator=_gen(seed)), "input_ids": _ids(3, 128, (1, 8), seed)}


def _longformer_model() -> Any:
    from transformers import LongformerConfig, LongformerModel

    cfg = LongformerConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=128, attention_window=8, max_position_embeddings=128,
                           pad_token_id=1, bos_token_id=0, eos_token_id=2)
    return LongformerModel(cfg)


def _longformer_inputs(seed: int) -> dict:
    return {"input_ids": _ids(3, 128, (1, 20), seed)}


def _clap_model() -> Any:
    from transformers import ClapAudioConfig, ClapConfig, ClapModel, ClapTextConfig

    text = ClapTextConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                          intermediate_size=128, max_position_embeddings=64, projection_dim=32)
    audio = ClapAudioConfig(spec_size=64, window_size=4, num_mel_bins=16, patch_embeds_hidden_size=16,
                            depths=[1, 1], num_attention_heads=[1, 2], hidden_size=32, patch_stride=(4, 4),
                            enable_fusion=True, projection_dim=32)
    cfg = ClapConfig(text_config=text.to_dict(), audio_config=audio.to_dict(), projection_dim=32)
    return ClapModel(cfg)


def _clap_inputs(seed: int) -> dict:
    import torch

    g = _gen(seed)
    # fused input: 4 channels (1 global + 3 local crops) of (time, mel)
    feats = torch.randn(1, 4, 64, 16, generator=g)
    longer = torch.tensor([[True]]) if seed == 0 else torch.rand(1, 1, generator=g) < 0.5
    return {"input_ids": _ids(3, 128, (1, 8), seed), "attention_mask": torch.ones(1, 8, dtype=torch.long),
            "input_features": feats, "is_longer": longer}


@dataclass
class Row:
    name: str
    model: str  # transformers class
    make_model: Callable[[], Any] = field(repr=False)
    make_inputs: Callable[[int], dict] = field(repr=False)
    paper: tuple[int, int]  # breaks before -> after in the paper
    artifact: tuple[Optional[int], Optional[int]]  # the artifact's CPU reproduction
    dtype: str = "float32"
    knobs: str = ""
    note: str = ""
    in_total: bool = True  # False for variants of a row already counted (fp16)

    def meta(self) -> dict:
        d = asdict(self)
        d.pop("make_model")
        d.pop("make_inputs")
        return d

    def build(self) -> tuple:
        """(model, inputs for seed 0), in fp32 (the caller casts)."""
        return self.make_model(), self.make_inputs(0)


ROWS: list[Row] = [
    Row("t5", "T5ForConditionalGeneration", _t5_model, _t5_inputs, (3, 0), (3, 0),
        knobs="d_model 64, 2 layers, 2 heads"),
    Row("whisper", "WhisperForConditionalGeneration", _whisper_model, _whisper_inputs, (3, 0), (3, 0),
        knobs="80 mel bins, 64 positions"),
    Row("bart", "BartForConditionalGeneration", _bart_like_model("bart"), _seq2seq_inputs, (7, 0), (3, 0),
        knobs="fp32", note="fp32 folds the fp16 overflow-clamp guard away; see bart-fp16"),
    Row("bart-fp16", "BartForConditionalGeneration", _bart_like_model("bart"), _seq2seq_inputs, (7, 0),
        (None, None), dtype="float16", knobs="fp16 activates the overflow-clamp guard", in_total=False),
    Row("marian", "MarianMTModel", _bart_like_model("marian"), _seq2seq_inputs, (6, 0), (3, 0),
        knobs="fp32, decoder_start 2, pad 1"),
    Row("marian-fp16", "MarianMTModel", _bart_like_model("marian"), _seq2seq_inputs, (6, 0), (None, None),
        dtype="float16", knobs="fp16, decoder_start 2, pad 1", in_total=False),
    Row("biogpt", "BioGptForCausalLM", _biogpt_model, _causal_inputs, (2, 0), (2, 0), knobs="hidden 64, 2 layers"),
    Row("blenderbot", "BlenderbotForConditionalGeneration", _bart_like_model("blenderbot"), _seq2seq_inputs,
        (3, 0), (3, 0), knobs="d_model 64, 2+2 layers"),
    Row("pegasus-causal", "PegasusForCausalLM", _pegasus_causal_model, _causal_inputs, (2, 0), (2, 0),
        knobs="2 decoder layers"),
    Row("layoutlmv3", "LayoutLMv3Model", _layoutlmv3_model, _layoutlmv3_inputs, (2, 0), (2, 0),
        knobs="coordinate 8, shape 16, visual_embed=False, bbox zeros (fresh inputs: random boxes)"),
    Row("phi3-longrope", "Phi3ForCausalLM", _phi3_longrope_model, _causal_inputs, (5, 0), (5, 0),
        knobs="rope_scaling longrope, original_max_position_embeddings 16"),
    Row("grounding-dino", "GroundingDinoModel", _grounding_dino_model, _grounding_dino_inputs, (17, 7), (16, 7),
        knobs="Swin 32 px, Bert 2 layers, d_model 64, no timm"),
    Row("longformer", "LongformerModel", _longformer_model, _longformer_inputs, (5, 3), (5, 3),
        knobs="attention_window 8, ids (1, 20)"),
    Row("clap", "ClapModel", _clap_model, _clap_inputs, (4, 4), (2, 2),
        knobs="audio enable_fusion=True (fresh inputs: is_longer random)"),
]
ROW_BY_NAME = {r.name: r for r in ROWS}

# ------------------------------------------------------------------ loaders
# ``load`` says how the model code is brought in, before transformers is
# imported.


def _load_original() -> None:
    return None


def _load_mended() -> None:
    if "transformers" in sys.modules:
        raise RuntimeError("mended loader: transformers was imported before the hook was installed")
    import graphmend

    install = getattr(graphmend, "install", None)
    if install is None:
        raise RuntimeError(f"graphmend at {os.path.dirname(graphmend.__file__)} has no install() "
                           "(python/graphmend/hook.py); rebuild and reinstall graphmend in this interpreter "
                           "(scripts/setup.sh)")
    # --unsafe-fixes (passed down in the environment): also the fixes graphmend
    # cannot prove invisible, e.g. GM104's speculated memo fills.
    regions = os.environ.get(REGIONS_ENV)  # unset: install()'s default
    install(packages=["transformers"], unsafe=os.environ.get(UNSAFE_ENV) == "1",
            **({"regions": regions} if regions else {}))


UNSAFE_ENV = "GRAPHMEND_TABLE2_UNSAFE"
REGIONS_ENV = "GRAPHMEND_TABLE2_REGIONS"  # --regions, passed down like UNSAFE_ENV


LOADERS: dict[str, Callable[[], None]] = {"original": _load_original, "mended": _load_mended}
ARMS = ("original", "mended")


# --------------------------------------------------------------- the child

def _graphmend_info() -> dict:
    info: dict[str, Any] = {}
    try:
        import graphmend

        info["path"] = os.path.dirname(os.path.abspath(graphmend.__file__))
        info["version"] = getattr(graphmend, "__version__", "?")
        info["has_install"] = hasattr(graphmend, "install")
        info["core_sha256"] = C.core_digest()
        try:
            info["rules"] = [r["code"] for r in graphmend.rules()]
        except Exception as e:  # noqa: BLE001 - the extension may be missing
            info["rules_error"] = C.short_error(e)
    except Exception as e:  # noqa: BLE001
        info["error"] = C.short_error(e)
    return info


def _prepare(row: Row, load: str) -> tuple[Any, dict]:
    """Apply the loader, import torch and transformers (timed)."""
    C.set_offline_env()
    C.ensure_graphmend_importable()
    t0 = time.perf_counter()
    LOADERS[load]()
    import torch

    torch.set_num_threads(1)
    import transformers

    timing = {"import_s": round(time.perf_counter() - t0, 3)}
    rec: dict[str, Any] = {"row": row.name, "load": load, "versions": C.versions(), "transformers":
                           transformers.__version__, "graphmend": _graphmend_info()}
    return rec, timing


def _cast(row: Row, inputs: dict) -> dict:
    import torch

    dtype = getattr(torch, row.dtype)
    return {k: (v.to(dtype) if torch.is_tensor(v) and v.is_floating_point() else v) for k, v in inputs.items()}


def _build(row: Row, ref: Optional[dict]) -> tuple[Any, list[dict]]:
    import torch

    torch.manual_seed(0)
    model = row.make_model()
    model = model.to(getattr(torch, row.dtype)).eval()
    if ref is not None:
        # the same weights as the original arm, exactly
        model.load_state_dict(ref["state_dict"], strict=True)
        inputs = ref["inputs"]
    else:
        inputs = [_cast(row, row.make_inputs(seed)) for seed in range(N_FRESH + 1)]
    return model, inputs


def _ref_path(data: str) -> str:
    return os.path.join(data, "original.pt")


def _load_ref(data: Optional[str]) -> Optional[dict]:
    if not data or not os.path.exists(_ref_path(data)):
        return None
    import torch

    return torch.load(_ref_path(data), weights_only=False)


def measure_row(row: Row, load: str = "original", data: Optional[str] = None) -> dict:
    """Count one arm of ``row`` in the current process.

    ``original``: run eagerly on the row's input and the fresh ones
    (capturing outputs, stdout, log records, warnings), save all that with
    the state_dict to ``<data>/original.pt`` when ``data`` is given, then
    count with graphmend.explain (its compiled output on the row's input is
    compared with the eager one: a control).

    ``mended``: load the original's state_dict and inputs from ``data``; run
    compiled (counting backend) on every input from a fresh process state
    and compare outputs and side effects with the original's eager run; run
    eagerly and compare outputs; then count.
    """
    rec, tm = _prepare(row, load)
    import torch
    import _equiv as E
    from graphmend.judge import explain_with_output

    ref = _load_ref(data) if load != "original" else None
    if load != "original" and ref is None:
        raise RuntimeError(f"no original arm data in {data!r}: run the original arm first")
    t0 = time.perf_counter()
    model, inputs = _build(row, ref)
    rec["build_s"] = round(time.perf_counter() - t0, 3)
    rec["import_s"] = tm["import_s"]
    rec["inputs"] = {k: [str(v.dtype).replace("torch.", ""), list(v.shape)] for k, v in inputs[0].items()}
    rec["n_inputs"] = len(inputs)

    with torch.no_grad():
        if ref is None:
            outs, effects = [], []
            for x in inputs:
                with E.SideEffects() as se:
                    y = model(**x)
                outs.append(E.flatten(y))
                effects.append(se.record())
            if data:
                sd = {k: v.detach().clone() for k, v in model.state_dict().items()}
                torch.save({"state_dict": sd, "inputs": inputs, "outputs": outs, "effects": effects},
                           _ref_path(data))
            rec["side_effect_events"] = sum(len(e["events"]) for e in effects)
        else:
            # compiled from a fresh process state (warning_once caches empty,
            # like the original's eager run), counting backend: the captured
            # graphs run eagerly, so the comparison is tight
            gms: list = []

            def counting_backend(gm: Any, example_inputs: Any) -> Any:
                gms.append(gm)
                return gm.forward

            torch._dynamo.reset()
            compiled = torch.compile(model, backend=counting_backend, fullgraph=False)
            cmp_c, effects = [], []
            for i, x in enumerate(inputs):
                with E.SideEffects() as se:
                    y = compiled(**x)
                cmp_c.append(E.compare(ref["outputs"][i], E.flatten(y)))
                effects.append(se.record())
            torch._dynamo.reset()
            cmp_e = [E.compare(ref["outputs"][i], E.flatten(model(**x))) for i, x in enumerate(inputs)]
            se_cmp = E.compare_side_effects(ref["effects"], effects)
            rec["outputs"] = {
                "identical": all(c["identical"] for c in cmp_c + cmp_e) and se_cmp["identical"],
                "compiled_vs_original_eager": _merge_cmp(cmp_c),
                "eager_vs_original_eager": _merge_cmp(cmp_e),
                "side_effects": se_cmp,
                "inputs": len(inputs),
            }
        t0 = time.perf_counter()
        rep, y0 = explain_with_output(model, **inputs[0])
    rec["compile_s"] = round(time.perf_counter() - t0, 3)
    if ref is None:
        rec["control"] = E.compare(outs[0], E.flatten(y0))  # original compiled vs original eager
    rec.update(C.summarize_report(rep))
    return rec


def _merge_cmp(cmps: list[dict]) -> dict:
    return {
        "identical": all(c["identical"] for c in cmps),
        "bitwise": all(c["bitwise"] for c in cmps),
        "max_abs_diff": max((c["max_abs_diff"] for c in cmps), default=0.0),
        "max_rel_diff": max((c["max_rel_diff"] for c in cmps), default=0.0),
        "mismatches": [f"input {i}: {m}" for i, c in enumerate(cmps) for m in c["mismatches"]][:6],
        "tensors_per_output": cmps[0]["tensors"] if cmps else 0,
    }


def time_row(row: Row, load: str, data: Optional[str], mode: str = "default", device: str = "cpu",
             warmup: int = 5, iters: int = 30, lock: Optional[str] = None) -> dict:
    """Cold start and steady state of one arm under Inductor, in this process.

    The driver gives each call a fresh process and a fresh, empty
    ``TORCHINDUCTOR_CACHE_DIR``.  Before the model, one toy function is
    compiled and Dynamo reset, so the one-time imports and toolchain probes
    of Inductor (the same for both arms) are outside the model's cold start
    (recorded as ``toy_s``).  Cold start: the first call of the compiled
    model, compile included; steady state: ``iters`` calls after ``warmup``
    more, each synchronised.  ``lock`` (a file path) serialises the timed
    loops of concurrent children on one GPU.
    """
    rec, tm = _prepare(row, load)
    import torch
    import _equiv as E
    from torch._dynamo.utils import counters

    ref = _load_ref(data)
    t0 = time.perf_counter()
    model, inputs = _build(row, ref)
    x = inputs[0]
    with torch.no_grad():
        ref_out = ref["outputs"][0] if ref is not None else E.flatten(model(**x))
    dev = torch.device(device)
    model = model.to(dev)
    x = {k: (v.to(dev) if torch.is_tensor(v) else v) for k, v in x.items()}
    cuda = dev.type == "cuda"

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    rec.update(import_s=tm["import_s"], build_s=round(time.perf_counter() - t0, 3), mode=mode, device=device,
               cache_dir=os.environ.get("TORCHINDUCTOR_CACHE_DIR"))
    if cuda:
        rec["gpu"] = torch.cuda.get_device_name(dev)
    with torch.no_grad():
        t0 = time.perf_counter()
        toy = torch.compile(lambda a: (a.sin() + 1).sum())
        toy(torch.ones(8, device=dev))
        sync()
        rec["toy_s"] = round(time.perf_counter() - t0, 3)
        torch._dynamo.reset()
        counters.clear()
        compiled = torch.compile(model, mode=None if mode == "default" else mode)
        sync()
        t0 = time.perf_counter()
        y = compiled(**x)
        sync()
        rec["cold_s"] = round(time.perf_counter() - t0, 4)
        rec["outputs_vs_original_eager"] = E.compare(ref_out, E.flatten(y), tol=E.LOOSE)
        rec["unique_graphs"] = int(counters["stats"]["unique_graphs"])
        rec["graph_break_counter"] = int(sum(counters["graph_break"].values()))
        del y
        lk = _Lock(lock)
        with lk:
            rec["lock_wait_s"] = round(lk.waited, 3)
            for _ in range(warmup):
                if mode == "reduce-overhead" and cuda:
                    torch.compiler.cudagraph_mark_step_begin()
                compiled(**x)
            sync()
            times = []
            for _ in range(iters):
                if mode == "reduce-overhead" and cuda:
                    torch.compiler.cudagraph_mark_step_begin()
                t0 = time.perf_counter()
                compiled(**x)
                sync()
                times.append(time.perf_counter() - t0)
    q = statistics.quantiles(times, n=4) if len(times) >= 2 else [times[0]] * 3
    rec.update(steady_median_s=statistics.median(times), steady_q1_s=q[0], steady_q3_s=q[2],
               steady_min_s=min(times), iters=iters, warmup=warmup,
               recompiles_after_cold=int(counters["stats"]["unique_graphs"]) - rec["unique_graphs"])
    return rec


class _Lock:
    def __init__(self, path: Optional[str]) -> None:
        self.path = path
        self.waited = 0.0
        self.f: Any = None

    def __enter__(self) -> "_Lock":
        if self.path:
            import fcntl

            t0 = time.perf_counter()
            self.f = open(self.path, "a")
            fcntl.flock(self.f, fcntl.LOCK_EX)
            self.waited = time.perf_counter() - t0
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.f is not None:
            import fcntl

            fcntl.flock(self.f, fcntl.LOCK_UN)
            self.f.close()


def _child(a: argparse.Namespace) -> int:
    row = ROW_BY_NAME[a._child]
    if a.phase == "timing":
        rec = time_row(row, a.load, a.data, mode=a.mode, device=a.device, warmup=a.warmup, iters=a.iters,
                       lock=a.lock)
    else:
        rec = measure_row(row, load=a.load, data=a.data)
    sys.stdout.flush()
    sys.__stdout__.write("\n" + json.dumps(rec, default=str) + "\n")
    return 0


# -------------------------------------------------------------- the driver

def _child_env(python: str, extra: Optional[dict] = None) -> dict:
    # prefer the graphmend installed in the row interpreter (it carries the
    # compiled extension) over the source tree on PYTHONPATH
    env = C.without_source_tree(C.set_offline_env(dict(os.environ)))
    env.update(extra or {})
    return env


def run_child(row: str, python: str, load: str, timeout: float, phase: str = "count", data: Optional[str] = None,
              extra_args: Optional[list] = None, env_extra: Optional[dict] = None) -> dict:
    cmd = [python, os.path.abspath(__file__), "--_child", row, "--load", load, "--phase", phase]
    if data:
        cmd += ["--data", data]
    cmd += extra_args or []
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_child_env(python, env_extra),
                           cwd=C.REPO)
    except subprocess.TimeoutExpired:
        return {"row": row, "load": load, "phase": phase, "status": "timeout",
                "wall_s": round(time.perf_counter() - t0, 1)}
    wall = round(time.perf_counter() - t0, 1)
    last = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode == 0 and last:
        rec = json.loads(last[-1])
        rec["status"] = "ok"
    else:
        tail = (p.stderr or p.stdout).strip().splitlines()
        rec = {"row": row, "load": load, "phase": phase, "status": "error",
               "error": tail[-1][:400] if tail else f"exit {p.returncode}", "stderr_tail": "\n".join(tail[-30:])}
    rec["wall_s"] = wall
    return rec


class Budget:
    def __init__(self, seconds: Optional[float]) -> None:
        self.deadline = time.monotonic() + seconds if seconds else None

    def left(self) -> Optional[float]:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def spent(self) -> bool:
        left = self.left()
        return left is not None and left <= 0


def run_row(r: Row, a: argparse.Namespace, python: str, budget: Budget) -> dict:
    """Every measurement of one row: counts of each arm (original first: the
    mended arm compares against its data), then the timing runs."""
    data = tempfile.mkdtemp(prefix=f"gm-t2-{r.name}-")
    out: dict[str, Any] = {"row": r.name, "meta": r.meta()}
    arms = a.arms
    try:
        if not a.no_count:
            for arm in arms:
                if budget.spent():
                    out[arm] = {"row": r.name, "load": arm, "status": "skipped", "error": "budget spent"}
                    continue
                if arm != "original" and "original" in out and out["original"].get("status") != "ok":
                    out[arm] = {"row": r.name, "load": arm, "status": "skipped",
                                "error": "the original arm failed: nothing to compare with"}
                    continue
                out[arm] = run_child(r.name, python, arm, a.timeout, data=data)
        if a.timing:
            out["timing"] = run_timing(r, a, python, data, budget)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    return out


def run_timing(r: Row, a: argparse.Namespace, python: str, data: str, budget: Budget) -> dict:
    """Cold start and steady state, ``reps`` fresh processes per arm and
    mode, in ABBA order (rep 0: original, mended; rep 1: mended, original;
    ...), each with its own empty Inductor cache directory."""
    res: dict[str, Any] = {"reps": a.reps, "modes": a.modes, "device": a.device, "runs": []}
    have_data = os.path.exists(_ref_path(data))
    for rep in range(a.reps):
        order = list(a.arms) if rep % 2 == 0 else list(reversed(a.arms))
        for arm in order:
            for mode in a.modes:
                if budget.spent():
                    res["runs"].append({"arm": arm, "mode": mode, "rep": rep, "status": "skipped",
                                        "error": "budget spent"})
                    continue
                cache = tempfile.mkdtemp(prefix=f"gm-inductor-{r.name}-{arm}-")
                env = {"TORCHINDUCTOR_CACHE_DIR": cache, "TRITON_CACHE_DIR": os.path.join(cache, "triton"),
                       "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "0"}
                if a.compile_threads:
                    env["TORCHINDUCTOR_COMPILE_THREADS"] = str(a.compile_threads)
                args = ["--mode", mode, "--device", a.device, "--warmup", str(a.warmup), "--iters", str(a.iters)]
                if a.lock:
                    args += ["--lock", a.lock]
                try:
                    rec = run_child(r.name, python, arm, a.timeout, phase="timing",
                                    data=data if have_data else None, extra_args=args, env_extra=env)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                rec.update(arm=arm, mode=mode, rep=rep)
                res["runs"].append(rec)
    for mode in a.modes:
        res[mode] = summarize_timing([x for x in res["runs"] if x.get("mode") == mode])
    return res


def summarize_timing(runs: list[dict], aa: Optional[dict] = None) -> dict:
    """Speedups original/mended (> 1: mended faster) of the medians of the
    repeats, and the noise: the A/A spread, max/min of one arm's repeats,
    the worse of the two arms.  A speedup is beyond noise when it lies
    outside [1/spread, spread].  With one repeat per arm the spread comes
    from ``aa`` ({key: spread}, a separate original-vs-original run) when
    given (``noise_from`` says which), else there is no estimate
    (``beyond_noise`` None).  Keys: ``cold`` (first call incl. compile),
    ``steady`` (median call), ``steady_min`` (fastest call: on a loaded
    machine the median mostly measures preemption)."""
    out: dict[str, Any] = {}
    for key, field_ in (("cold", "cold_s"), ("steady", "steady_median_s"), ("steady_min", "steady_min_s")):
        vals = {arm: [x[field_] for x in runs if x.get("arm") == arm and x.get("status") == "ok" and field_ in x]
                for arm in ARMS}
        o, m = vals["original"], vals["mended"]
        d: dict[str, Any] = {"original": o, "mended": m}
        if o:
            d["original_median"] = statistics.median(o)
        if m:
            d["mended_median"] = statistics.median(m)
        spreads = [max(v) / min(v) for v in (o, m) if len(v) >= 2 and min(v) > 0]
        d["aa_spread"] = max(spreads) if spreads else None
        d["noise_from"] = "repeats" if spreads else None
        if not spreads and aa and aa.get(key):
            d["aa_spread"] = aa[key]
            d["noise_from"] = "aa-run"
        # contention seen inside the processes themselves: the toy compile is
        # the same work in every process (its ratio between the arms shows
        # how differently loaded the machine was for their cold starts), and
        # the spread q3/q1 of the timed calls shows preemption in the loop
        okr = [x for x in runs if x.get("status") == "ok"]
        if key == "cold":
            toys = {arm: [x["toy_s"] for x in okr if x.get("arm") == arm and x.get("toy_s")] for arm in ARMS}
            inner = (max(statistics.median(toys["original"]) / statistics.median(toys["mended"]),
                         statistics.median(toys["mended"]) / statistics.median(toys["original"]))
                     if toys["original"] and toys["mended"] else None)
        else:
            qs = [x["steady_q3_s"] / x["steady_q1_s"] for x in okr if x.get("steady_q1_s")]
            inner = max(qs) if qs else None
        d["contention"] = inner
        if d["aa_spread"] is not None and inner is not None:
            d["noise"] = max(d["aa_spread"], inner)
        else:
            d["noise"] = d["aa_spread"]
        if o and m and statistics.median(m) > 0:
            ratio = statistics.median(o) / statistics.median(m)
            d["speedup"] = ratio
            sp = d["noise"]
            d["beyond_noise"] = None if sp is None else (ratio > sp or ratio < 1 / sp)
        out[key] = d
    ok = [x for x in runs if x.get("status") == "ok"]
    out["per_call_q3_over_q1"] = {arm: [round(x["steady_q3_s"] / x["steady_q1_s"], 2) for x in ok
                                        if x.get("arm") == arm and x.get("steady_q1_s")] for arm in ARMS}
    out["unique_graphs"] = {arm: sorted({x.get("unique_graphs") for x in ok if x.get("arm") == arm}) for arm in ARMS}
    out["inductor_outputs_close"] = all(x.get("outputs_vs_original_eager", {}).get("identical", False) for x in ok) \
        if ok else None
    out["errors"] = [f"{x.get('arm')} rep {x.get('rep')}: {x.get('status')}: {x.get('error', '')}"[:300]
                     for x in runs if x.get("status") != "ok"]
    return out


def _fmt(v: Any) -> str:
    return "-" if v is None else str(v)


def _pct(n: Optional[float]) -> str:
    return "-" if n is None else f"{100 * n:.0f}%"


def _ratio(d: Optional[dict]) -> str:
    if not d or d.get("speedup") is None:
        return "-"
    mark = {True: "*", False: "~", None: "?"}[d.get("beyond_noise")]
    return f"{d['speedup']:.2f}x{mark}"


def _fix_rate(before: Optional[int], after: Optional[int]) -> Optional[float]:
    if before is None or after is None:
        return None
    if before == 0:
        return None
    return (before - after) / before


def _ok(rec: Optional[dict]) -> bool:
    return bool(rec) and rec.get("status") == "ok"


def row_line(res: dict, mode: str) -> tuple[str, dict]:
    r = ROW_BY_NAME[res["row"]]
    o, m = res.get("original"), res.get("mended")
    before = o.get("break_events") if _ok(o) else None
    after = m.get("break_events") if _ok(m) else None
    t = (res.get("timing") or {}).get(mode) or {}
    go = o.get("graphs") if _ok(o) else None
    gm = m.get("graphs") if _ok(m) else None
    ug = t.get("unique_graphs") or {}
    if go is None and gm is None and (ug.get("original") or ug.get("mended")):
        # timing only: the graphs Inductor compiled
        go = ",".join(map(str, ug.get("original") or [])) or None
        gm = ",".join(map(str, ug.get("mended") or [])) or None
    g = f"{_fmt(go)}>{_fmt(gm)}"
    sk = f"{_fmt(o.get('skipped_frames') if _ok(o) else None)}>{_fmt(m.get('skipped_frames') if _ok(m) else None)}"
    ident = None
    if _ok(m):
        ident = "yes" if m.get("outputs", {}).get("identical") else "NO"
    status = []
    for arm in ARMS:
        rec = res.get(arm)
        if rec and rec.get("status") != "ok":
            status.append(f"{arm}: {rec.get('status')}: {str(rec.get('error', ''))[:80]}")
    if t.get("errors"):
        status.append(f"timing: {len(t['errors'])} failed")
    name = r.name + ("" if r.in_total else "*")
    line = (f"{name:16} {_fmt(before):>6} {_fmt(after):>5}  {r.paper[0]:>3}>{r.paper[1]:<3} "
            f"{_pct(_fix_rate(before, after)):>5} {_pct(_fix_rate(*r.paper)):>6}  {g:>7} {sk:>5}  "
            f"{_fmt(ident):>7}  {_ratio(t.get('cold')):>9} {_ratio(t.get('steady')):>9} "
            f"{_ratio(t.get('steady_min')):>9}  "
            + ("ok" if not status else "; ".join(status)))
    return line, {"before": before, "after": after, "identical": ident}


HEADER = (f"{'row':16} {'before':>6} {'after':>5}  {'paper':<7} {'fix':>5} {'paper':>6}  {'graphs':>7} "
          f"{'skip':>5}  {'outputs':>7}  {'cold':>9} {'steady':>9} {'fastest':>9}  status")


def render(results: list[dict], a: argparse.Namespace) -> tuple[str, dict]:
    mode = a.modes[0] if a.modes else "default"
    lines = [HEADER, "-" * len(HEADER)]
    tb = ta = tpb = tpa = 0
    n_rows = n_fixed = n_paper_fixed = 0
    colds: list[float] = []
    steadies: list[float] = []
    all_ident = True
    pb = pa = 0  # rows with both arms counted
    for res in results:
        line, v = row_line(res, mode)
        lines.append(line)
        r = ROW_BY_NAME[res["row"]]
        if v["identical"] == "NO":
            all_ident = False
        if not r.in_total:
            continue
        tpb += r.paper[0]
        tpa += r.paper[1]
        n_paper_fixed += r.paper[1] == 0
        tb += v["before"] or 0
        ta += v["after"] or 0
        if v["before"] is not None and v["after"] is not None:
            pb += v["before"]
            pa += v["after"]
            n_rows += 1
            m = res.get("mended") or {}
            n_fixed += bool(m.get("fully_traced"))
        t = (res.get("timing") or {}).get(mode) or {}
        if (t.get("cold") or {}).get("speedup"):
            colds.append(t["cold"]["speedup"])
        if (t.get("steady") or {}).get("speedup"):
            steadies.append(t["steady"]["speedup"])
    lines.append("-" * len(HEADER))

    def gmean(v: list[float]) -> Optional[float]:
        return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None

    gc, gs = gmean(colds), gmean(steadies)
    gmin = gmean([((res.get("timing") or {}).get(mode) or {}).get("steady_min", {}).get("speedup")
                  for res in results if ROW_BY_NAME[res["row"]].in_total
                  and (((res.get("timing") or {}).get(mode) or {}).get("steady_min") or {}).get("speedup")])
    total = {"before": tb, "after": ta if n_rows else None, "removed": pb - pa if n_rows else None,
             "removed_frac": (pb - pa) / pb if n_rows and pb else None,
             "paper_before": tpb, "paper_after": tpa, "paper_removed_frac": (tpb - tpa) / tpb if tpb else None,
             "rows_counted": n_rows, "rows_fully_traced_after": n_fixed, "paper_rows_fully_fixed": n_paper_fixed,
             "cold_speedup_geomean": gc, "steady_speedup_geomean": gs, "steady_min_speedup_geomean": gmin, "outputs_identical_all": all_ident}
    lines.append(f"{'TOTAL':16} {tb:>6} {_fmt(total['after']):>5}  {tpb:>3}>{tpa:<3} {_pct(total['removed_frac']):>5} "
                 f"{_pct(total['paper_removed_frac']):>6}  fully traced after: {n_fixed}/{n_rows} rows "
                 f"(paper {n_paper_fixed}/{sum(1 for r in ROWS if r.in_total)})"
                 + (f"; geomean speedup cold {gc:.2f}x, steady {gs:.2f}x, fastest {gmin:.2f}x"
                    if gc and gs and gmin else ""))
    for extra in (a.modes[1:] if a.timing else []):
        lines.append("")
        lines.append(f"mode {extra!r}: {'row':16} {'graphs':>7} {'cold':>9} {'steady':>9}")
        for res in results:
            t = (res.get("timing") or {}).get(extra) or {}
            ug = t.get("unique_graphs") or {}
            g = f"{','.join(map(str, ug.get('original') or [])) or '-'}>{','.join(map(str, ug.get('mended') or [])) or '-'}"
            lines.append(f"{'':>{len(repr(extra)) + 6}} {res['row']:16} {g:>7} {_ratio(t.get('cold')):>9} "
                         f"{_ratio(t.get('steady')):>9}" + (f"  {len(t['errors'])} failed" if t.get("errors") else ""))
    lines.append("")
    lines.append("before/after: graph-break events Dynamo logged (original / mended transformers); paper: the "
                 "paper's Table 2 before>after; fix: (before-after)/before here and in the paper; graphs, skip: "
                 "graphs compiled and frames skipped, before>after; outputs: the mended model, compiled "
                 "(counting backend) and eager, vs the original run eagerly, on the row's input and "
                 f"{N_FRESH} fresh ones (tight allclose / exact) with the same stdout, log records and warnings; "
                 "cold/steady: speedup original/mended of the median over repeats (>1: mended faster) of the "
                 f"first call incl. compile, of the median and of the fastest of {a.iters} later calls, Inductor "
                 f"mode {mode!r} on {a.device}; * beyond noise (outside the band: the A/A spread, max/min of one "
                 "arm's repeats or of a separate original-vs-original run, widened to the contention seen in the "
                 "processes: the ratio of their identical toy compiles for cold, the q3/q1 of the timed calls for "
                 "steady), ~ within noise, ? no noise estimate; "
                 "'-' not measured. TOTAL leaves out the fp16 "
                 "variants (their paper count is already in the fp32 row).")
    return "\n".join(lines) + "\n", total


def rerender(a: argparse.Namespace) -> int:
    """--render-from: summaries and table again from saved runs (optionally
    with the noise of a separate A/A run)."""
    with open(a.render_from, encoding="utf-8") as f:
        doc = json.load(f)
    t = doc.get("timing") or {}
    a.timing = bool(t.get("on"))
    a.modes = t.get("modes") or ["default"]
    a.device = t.get("device", "cpu")
    a.iters = t.get("iters", a.iters)
    aa_rows: dict[str, dict] = {}
    if a.aa_from:
        with open(a.aa_from, encoding="utf-8") as f:
            aa_doc = json.load(f)
        for r in aa_doc["rows"]:
            for mode in a.modes:
                s = summarize_timing((r.get("timing") or {}).get("runs", []))
                aa_rows.setdefault(mode, {})[r["row"]] = {k: (s.get(k) or {}).get("aa_spread")
                                                          for k in ("cold", "steady", "steady_min")}
        doc["aa"] = {"from": a.aa_from, "spreads": aa_rows, "argv": aa_doc.get("argv")}
    results = []
    for r in doc["rows"]:
        res = {"row": r["row"], "meta": r["meta"]}
        if "break_events" in r or r.get("status") not in (None, "skipped"):
            res["original"] = {k: v for k, v in r.items() if k not in ("mended", "timing", "meta")}
        if "mended" in r:
            res["mended"] = r["mended"]
        if "timing" in r:
            tm = r["timing"]
            for mode in a.modes:
                per = aa_rows.get(mode, {})
                aa = per.get(r["row"])
                if aa is None and per:  # the largest spread of the rows measured
                    aa = {k: max((v[k] for v in per.values() if v.get(k)), default=None)
                          for k in ("cold", "steady", "steady_min")}
                tm[mode] = summarize_timing([x for x in tm.get("runs", []) if x.get("mode") == mode], aa)
            res["timing"] = tm
        results.append(res)
    text, total = render(results, a)
    print(text, end="")
    doc["total"] = dict(total, here=total["before"], paper=total["paper_before"])
    for r, res in zip(doc["rows"], results):
        if "timing" in res:
            r["timing"] = res["timing"]
    if a.txt:
        with open(a.txt, "w", encoding="utf-8") as f:
            f.write(_txt_header(doc.get("argv") or [], doc.get("graphmend_commit") or {},
                                bool(doc.get("unsafe_fixes")), a.timing))
            f.write(text)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, default=str)
            f.write("\n")
    return 0


def _txt_header(argv: list, commit: dict, unsafe: bool, timing: bool) -> str:
    label = (commit.get("commit") or "?")[:10] + (" + uncommitted changes" if commit.get("dirty_src_python") else "")
    return (f"# bench/table2.py {' '.join(argv)}\n"
            f"# graphmend {label}, unsafe fixes {'on' if unsafe else 'off'}, timing {'on' if timing else 'off'}\n")


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rows", nargs="*", metavar="ROW", help=f"rows to run (default all): {', '.join(ROW_BY_NAME)}")
    p.add_argument("--json", metavar="PATH", help="write the results as JSON")
    p.add_argument("--txt", metavar="PATH", help="also write the table to this file")
    p.add_argument("--python", default=None, help="interpreter with transformers==4.52.4 "
                   "(default: $GRAPHMEND_TF452_PYTHON or <repo>/.venv-tf452/bin/python)")
    p.add_argument("--arms", default="original,mended", type=lambda s: [x for x in s.split(",") if x],
                   help="comma list of original,mended (default both)")
    p.add_argument("--load", default=None, choices=sorted(LOADERS), help="one arm only (same as --arms LOAD)")
    p.add_argument("--unsafe-fixes", action="store_true", help="mended arm: install(unsafe=True), i.e. also "
                   "the fixes graphmend marks unsafe (graphmend check says which and why)")
    p.add_argument("--regions", default=None, choices=["all", "package", "reachable"],
                   help="mended arm: install(regions=...) (default: install()'s default, package)")
    p.add_argument("--timing", action="store_true", help="also time cold start and steady state (Inductor)")
    p.add_argument("--no-count", action="store_true", help="timing only (no counting, no output comparison)")
    p.add_argument("--reps", type=int, default=3, help="fresh processes per arm and mode for timing (ABBA order)")
    p.add_argument("--modes", default="default", type=lambda s: [x for x in s.split(",") if x],
                   help="torch.compile modes to time, comma list (default: default; on CUDA also reduce-overhead)")
    p.add_argument("--device", default="cpu", help="device for timing (cpu, cuda)")
    p.add_argument("--warmup", type=int, default=5, help="calls after the cold one before timing")
    p.add_argument("--iters", type=int, default=30, help="timed steady-state calls (median reported)")
    p.add_argument("--compile-threads", type=int, default=0, help="TORCHINDUCTOR_COMPILE_THREADS for timing "
                   "children (default: 1, from the offline environment)")
    p.add_argument("--lock", default=None, help="file lock serialising timed loops (parallel jobs on one GPU)")
    p.add_argument("--jobs", type=int, default=1, help="rows measured at once")
    p.add_argument("--budget", type=float, default=0, help="seconds; start nothing new after that (0: no limit)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per subprocess")
    p.add_argument("--list", action="store_true", help="list the rows and exit")
    p.add_argument("--render-from", metavar="JSON", help="recompute the summaries of a results JSON (its "
                   "timing runs) and print/write the table again (with --json/--txt); no measuring")
    p.add_argument("--aa-from", metavar="JSON", help="with --render-from: a timing run of the original arm "
                   "alone (--arms original --timing --reps 3) whose repeat spreads are the noise of rows "
                   "that have one repeat per arm (per row when measured there, else the largest)")
    p.add_argument("--_child", help=argparse.SUPPRESS)
    p.add_argument("--phase", default="count", choices=["count", "timing"], help=argparse.SUPPRESS)
    p.add_argument("--data", default=None, help=argparse.SUPPRESS)
    p.add_argument("--mode", default="default", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.load:
        a.arms = [a.load]
    if a.render_from:
        return rerender(a)
    if a._child:
        a.load = a.load or "original"
        return _child(a)
    bad = [x for x in a.arms if x not in ARMS]
    if bad or not a.arms:
        p.error(f"unknown arm(s) {bad}; use original,mended")
    a.arms = [x for x in ARMS if x in a.arms]  # original first: the mended arm compares against it
    if a.list:
        for r in ROWS:
            print(f"{r.name:16} {r.model:36} paper {r.paper[0]}->{r.paper[1]}  artifact "
                  f"{_fmt(r.artifact[0])}->{_fmt(r.artifact[1])}  {r.dtype}  {r.knobs}")
        return 0
    unknown = [r for r in a.rows if r not in ROW_BY_NAME]
    if unknown:
        p.error(f"unknown row(s): {', '.join(unknown)}; known: {', '.join(ROW_BY_NAME)}")
    if "mended" in a.arms and "original" not in a.arms and not a.no_count:
        p.error("the mended arm is compared with the original arm: use --arms original,mended")
    if a.regions:
        os.environ[REGIONS_ENV] = a.regions  # the children inherit it (_child_env)
    else:
        os.environ.pop(REGIONS_ENV, None)
    if a.unsafe_fixes:
        os.environ[UNSAFE_ENV] = "1"  # the children inherit it (_child_env)
    else:
        os.environ.pop(UNSAFE_ENV, None)
    python = a.python or default_python()
    if not os.path.exists(python):
        print(f"table2: no interpreter at {python}; set GRAPHMEND_TF452_PYTHON or create .venv-tf452 "
              f"from requirements/bench-tf452.txt", file=sys.stderr)
        return 2
    rows = [ROW_BY_NAME[n] for n in a.rows] if a.rows else ROWS
    budget = Budget(a.budget)
    t_start = time.time()
    print(f"table2: {len(rows)} rows, arms {','.join(a.arms)}, timing {'on' if a.timing else 'off'}"
          + (f" ({a.reps} reps, modes {','.join(a.modes)}, {a.device})" if a.timing else "")
          + f", jobs {a.jobs}, interpreter {python}", file=sys.stderr, flush=True)
    plock = threading.Lock()

    def one(r: Row) -> dict:
        t0 = time.perf_counter()
        res = run_row(r, a, python, budget)
        with plock:
            line, _ = row_line(res, a.modes[0])
            print(f"[{time.perf_counter() - t0:6.0f}s] {line}", file=sys.stderr, flush=True)
        return res

    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(one, rows))
    text, total = render(results, a)
    print(text, end="")
    if a.txt:
        os.makedirs(os.path.dirname(os.path.abspath(a.txt)), exist_ok=True)
        with open(a.txt, "w", encoding="utf-8") as f:
            f.write(_txt_header(sys.argv[1:] if argv is None else argv, C.git_describe(), a.unsafe_fixes,
                                a.timing))
            f.write(text)
    flat = []
    for res in results:  # top level: the original arm's record (schema of the counting-only table)
        base = dict(res.get("original") or res.get("mended") or {"row": res["row"], "status": "skipped"})
        base["meta"] = res["meta"]
        for arm in ARMS:
            if arm != "original" and arm in res:
                base[arm] = res[arm]
        if "timing" in res:
            base["timing"] = res["timing"]
        flat.append(base)
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        doc = {"arms": a.arms, "load": a.arms[0] if len(a.arms) == 1 else "original+mended", "python": python,
               "unsafe_fixes": a.unsafe_fixes,
               "argv": sys.argv[1:] if argv is None else argv, "started": time.strftime(
                   "%Y-%m-%dT%H:%M:%S", time.localtime(t_start)), "wall_s": round(time.time() - t_start, 1),
               "timing": {"on": a.timing, "reps": a.reps, "modes": a.modes, "device": a.device,
                          "warmup": a.warmup, "iters": a.iters} if a.timing else {"on": False},
               "graphmend_commit": C.git_describe(), "rows": flat,
               "total": dict(total, here=total["before"], paper=total["paper_before"])}
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, default=str)
            f.write("\n")
    ok = all(_ok(res.get(arm)) for res in results for arm in a.arms if not a.no_count)
    ident = all((res.get("mended") or {}).get("outputs", {}).get("identical", True) for res in results)
    return 0 if ok and ident else 1


if __name__ == "__main__":
    sys.exit(main())
