"""Build a transformers model from its default config, shrunk generically,
and choose inputs for it by modality.  Used by bench/survey.py.

The shrinking keeps the geometry that code depends on: the per-head size
(``head_dim``) is kept and the number of heads cut, so that rotary sections,
partial-rotary factors and ``hidden % heads`` stay consistent; stage lists
(Swin-like ``depths``/``num_heads``, ResNet-like ``hidden_sizes``) keep their
length and their ratios.  Token ids used by the config (pad/bos/eos, image
tokens, ...) stay inside the vocabulary.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Optional

# ---------------------------------------------------------------- attributes
LAYER_KEYS = {
    "num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
    "num_encoder_layers", "num_decoder_layers", "num_text_layers", "num_vision_layers",
    "text_layers", "vision_layers", "num_self_attends_per_block", "num_blocks",
    "num_backbone_layers", "num_cross_layers", "num_audio_layers", "depth", "encoder_depth",
    "decoder_depth", "num_global_layers", "num_local_layers", "num_hidden_groups",
    "decoder_num_layers", "encoder_num_layers", "num_stacks", "num_lstm_layers",
    "global_layers", "num_qformer_layers", "num_memory_attention_layers",
}
HEAD_KEYS = [
    "num_attention_heads", "num_heads", "n_head", "n_heads", "encoder_attention_heads",
    "decoder_attention_heads", "attention_heads", "num_attn_heads", "encoder_num_heads",
    "decoder_num_heads", "num_q_heads",
]
KV_HEAD_KEYS = ["num_key_value_heads", "num_kv_heads", "multi_query_group_num", "n_kv_heads", "kv_heads"]
HIDDEN_KEYS = [
    "hidden_size", "d_model", "n_embd", "embed_dim", "dim", "hidden_dim", "model_dim", "width",
    "d_embed", "embedding_dim", "encoder_hidden_size", "decoder_hidden_size", "n_embed",
]
INTER_KEYS = [
    "intermediate_size", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "d_ff", "n_inner",
    "mlp_dim", "ffn_hidden_size", "ffn_size", "hidden_dim_ffn", "inner_hidden_size",
    "moe_intermediate_size", "shared_expert_intermediate_size", "expert_intermediate_size",
    "dense_intermediate_size", "ff_dim", "dim_feedforward", "encoder_ffn_dim", "mlp_hidden_size",
]
EXPERT_KEYS = ["num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts", "num_routed_experts"]
TOPK_KEYS = ["num_experts_per_tok", "num_experts_per_token", "moe_topk", "top_k", "router_topk", "moe_k"]

TARGET_HEADS = 2
TARGET_LAYERS = 2
MAX_VOCAB = 512
MAX_IMAGE = 64


def _is_config(x: Any) -> bool:
    try:
        from transformers import PretrainedConfig
    except ImportError:  # pragma: no cover
        from transformers.configuration_utils import PretrainedConfig
    return isinstance(x, PretrainedConfig)


def _get(cfg: Any, k: str) -> Any:
    return cfg.__dict__.get(k, None)


def _short(v: Any) -> str:
    r = repr(v) if not isinstance(v, (int, float)) else str(v)
    return r if len(r) <= 48 else r[:45] + "..."


def _set(cfg: Any, k: str, v: Any, notes: list) -> None:
    old = _get(cfg, k)
    if old != v:
        try:
            setattr(cfg, k, v)
            notes.append(f"{k}:{_short(old)}->{_short(v)}")
        except Exception:
            pass


def token_ids(cfg: Any) -> set[int]:
    """Every int-valued ``*_token_id``/``*_token_index``/``*_id`` in the config tree."""
    out: set[int] = set()

    def walk(c: Any, depth: int = 0) -> None:
        if depth > 4:
            return
        for k, v in list(c.__dict__.items()):
            if _is_config(v):
                walk(v, depth + 1)
            elif isinstance(v, bool):
                continue
            elif isinstance(v, int) and (k.endswith("_token_id") or k.endswith("_token_index") or k.endswith("token_id")
                                         or k.endswith("_index") and "token" in k):
                out.add(v)
            elif isinstance(v, (list, tuple)) and (k.endswith("token_id") or k.endswith("token_ids")):
                out.update(i for i in v if isinstance(i, int) and not isinstance(i, bool))
    walk(cfg)
    return {i for i in out if i >= 0}


def _vocab_sizes(cfg: Any) -> list[int]:
    out = []
    for c in _flat_cfgs(cfg):
        v = c.__dict__.get("vocab_size")
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            out.append(v)
    return out


def _is_token_key(k: str) -> bool:
    return k.endswith(("_token_id", "_token_index", "token_ids")) or k in ("image_token_id", "video_token_id")


def _remap_token_ids(cfg: Any, notes: list) -> None:
    sizes = _vocab_sizes(cfg)
    if not sizes:
        return
    vmin = min(sizes)
    mapping: dict[int, int] = {}

    def new_id(old: int) -> int:
        if old not in mapping:
            mapping[old] = vmin - 1 - len(mapping)
        return mapping[old]

    for c in _flat_cfgs(cfg):
        for k, val in list(c.__dict__.items()):
            if not _is_token_key(k):
                continue
            if isinstance(val, int) and not isinstance(val, bool) and val >= vmin:
                _set(c, k, new_id(val), notes)
            elif isinstance(val, (list, tuple)) and any(isinstance(i, int) and not isinstance(i, bool) and i >= vmin
                                                        for i in val):
                _set(c, k, type(val)(new_id(i) if isinstance(i, int) and i >= vmin else i for i in val), notes)


def shrink_config(cfg: Any, notes: Optional[list] = None, depth: int = 0) -> list:
    """Shrink ``cfg`` in place (and its sub-configs); return notes of changes."""
    notes = [] if notes is None else notes
    if depth > 4:
        return notes
    d = cfg.__dict__

    # sub-configs first (text/vision/audio/encoder/decoder/backbone ...)
    for k, v in list(d.items()):
        if _is_config(v):
            sub: list = []
            shrink_config(v, sub, depth + 1)
            notes.extend(f"{k}.{n}" for n in sub)

    # layers
    for k in list(d):
        v = d[k]
        if k in LAYER_KEYS and isinstance(v, int) and not isinstance(v, bool) and v > TARGET_LAYERS:
            _set(cfg, k, TARGET_LAYERS, notes)
    # lists tied to the layer count
    nl = _get(cfg, "num_hidden_layers")
    for k in ("layer_types", "mlp_layer_types", "attention_layers", "block_types", "layers_block_type",
              "hybrid_override_pattern", "sliding_window_pattern_list", "full_attn_idxs", "moe_layers"):
        v = _get(cfg, k)
        if isinstance(v, (list, tuple)) and isinstance(nl, int) and len(v) > nl:
            _set(cfg, k, type(v)(v[:nl]), notes)
        elif isinstance(v, str) and isinstance(nl, int) and len(v) > nl:
            _set(cfg, k, v[:nl], notes)

    # stage lists (Swin, ResNet, ConvNeXt, PVT, ...): keep the number of stages
    depths = _get(cfg, "depths")
    if isinstance(depths, (list, tuple)) and depths and all(isinstance(x, int) for x in depths):
        _set(cfg, "depths", type(depths)(min(x, 1) if x > 0 else x for x in depths), notes)
    for k in ("hidden_sizes", "embed_dims", "embedding_dims", "hidden_dims", "dims", "channels"):
        v = _get(cfg, k)
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, int) and x > 0 for x in v) and min(v) > 32:
            f = max(1, min(v) // 16)
            _set(cfg, k, type(v)(max(1, x // f) for x in v), notes)

    # heads, head_dim, hidden
    head_key = next((k for k in HEAD_KEYS if isinstance(_get(cfg, k), int) and not isinstance(_get(cfg, k), bool)), None)
    hid_key = next((k for k in HIDDEN_KEYS if isinstance(_get(cfg, k), int) and not isinstance(_get(cfg, k), bool)
                    and _get(cfg, k) > 0), None)
    heads_list_key = next((k for k in HEAD_KEYS if isinstance(_get(cfg, k), (list, tuple))), None)
    if heads_list_key:
        hl = list(_get(cfg, heads_list_key))
        if hl and all(isinstance(x, int) and x > 0 for x in hl) and hl[0] > 1:
            f = hl[0]
            if all(x % f == 0 for x in hl):
                _set(cfg, heads_list_key, type(_get(cfg, heads_list_key))(x // f for x in hl), notes)
                if hid_key and _get(cfg, hid_key) % f == 0:
                    _set(cfg, hid_key, _get(cfg, hid_key) // f, notes)
    elif head_key:
        h = _get(cfg, head_key)
        H = _get(cfg, hid_key) if hid_key else None
        explicit_hd = _get(cfg, "head_dim")
        if isinstance(explicit_hd, int) and explicit_hd > 0:
            hd = explicit_hd
        elif H and h and H % h == 0:
            hd = H // h
        else:
            hd = None
        if h > TARGET_HEADS:
            new_h = TARGET_HEADS
            for k in HEAD_KEYS:
                if _get(cfg, k) == h:
                    _set(cfg, k, new_h, notes)
            for k in KV_HEAD_KEYS:
                kv = _get(cfg, k)
                if isinstance(kv, int) and not isinstance(kv, bool) and kv > 0:
                    _set(cfg, k, new_h if kv >= h else 1, notes)
            if H and hd:
                explicit = isinstance(explicit_hd, int) and explicit_hd > 0
                newH = new_h * hd if not explicit else min(H, max(64, new_h * hd))
                for k in HIDDEN_KEYS:
                    val = _get(cfg, k)
                    if val == H:
                        _set(cfg, k, newH, notes)
                    elif (not explicit and isinstance(val, int) and not isinstance(val, bool)
                          and val > 0 and val % h == 0):
                        # another width of the same attention (e.g. embed_dim
                        # beside hidden_size): keep its per-head size too
                        _set(cfg, k, new_h * (val // h), notes)
                H = newH
            elif H and H > 128:
                for k in HIDDEN_KEYS:
                    if _get(cfg, k) == H:
                        _set(cfg, k, 128, notes)
                H = 128
        elif H and H > 256 and hd is None:
            for k in HIDDEN_KEYS:
                if _get(cfg, k) == H:
                    _set(cfg, k, 256, notes)
            H = 256
        elif H and hd and h and H > h * hd and not isinstance(explicit_hd, int):
            pass
    elif hid_key and _get(cfg, hid_key) > 256:
        H = _get(cfg, hid_key)
        if H % 8 == 0:
            for k in HIDDEN_KEYS:
                if _get(cfg, k) == H:
                    _set(cfg, k, 128, notes)

    H = _get(cfg, hid_key) if hid_key else None
    # feed-forward widths
    for k in INTER_KEYS:
        v = _get(cfg, k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0 and H and v > 4 * H:
            _set(cfg, k, max(2 * H, 64), notes)
        elif isinstance(v, int) and not isinstance(v, bool) and v > 1024 and not H:
            _set(cfg, k, 256, notes)
    # experts
    for k in EXPERT_KEYS:
        v = _get(cfg, k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 4:
            _set(cfg, k, 4, notes)
    for k in TOPK_KEYS:
        v = _get(cfg, k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 2:
            _set(cfg, k, 2, notes)
    for k in ("n_group", "topk_group"):
        v = _get(cfg, k)
        if isinstance(v, int) and v > 1:
            _set(cfg, k, 1, notes)
    for k in ("n_shared_experts", "num_shared_experts"):
        v = _get(cfg, k)
        if isinstance(v, int) and v > 1:
            _set(cfg, k, 1, notes)
    for k in ("first_k_dense_replace",):
        v = _get(cfg, k)
        if isinstance(v, int) and v > 1:
            _set(cfg, k, 1, notes)

    # vocabulary: small; configured token ids that fall outside are moved
    # to the top of the small vocabulary (the weights are random anyway)
    v = _get(cfg, "vocab_size")
    if isinstance(v, int) and v > MAX_VOCAB:
        _set(cfg, "vocab_size", MAX_VOCAB, notes)
    if depth == 0:
        _remap_token_ids(cfg, notes)

    # images: small, multiple of the patch size (and of window sizes, roughly)
    img = _get(cfg, "image_size")
    patch = _get(cfg, "patch_size")
    if isinstance(img, int) and img > MAX_IMAGE:
        p = patch if isinstance(patch, int) and patch > 0 else 1
        win = _get(cfg, "window_size")
        mult = p
        if isinstance(win, int) and win > 0:
            mult = p * win * (2 ** max(0, len(_get(cfg, "depths") or []) - 1))
        new = max(mult, (MAX_IMAGE // mult) * mult) if mult <= 8 * MAX_IMAGE else img
        if new < img:
            _set(cfg, "image_size", new, notes)
    # audio: short
    for k in ("max_source_positions",):
        v = _get(cfg, k)
        if isinstance(v, int) and v > 64:
            _set(cfg, k, 64, notes)
    return notes


# ------------------------------------------------------------------ inputs

def _flat_cfgs(cfg: Any) -> list:
    out = [cfg]
    for v in cfg.__dict__.values():
        if _is_config(v):
            out.extend(_flat_cfgs(v))
    return out


def _first_attr(cfg: Any, names: tuple, default: Any = None) -> Any:
    for c in _flat_cfgs(cfg):
        for n in names:
            v = c.__dict__.get(n)
            if v is not None and not isinstance(v, bool):
                return v
    return default


def _image_hw(cfg: Any) -> tuple[int, int]:
    v = None
    vc = cfg.__dict__.get("vision_config")
    for c in ([vc] if _is_config(vc) else []) + _flat_cfgs(cfg):
        v = c.__dict__.get("image_size")
        if v is not None:
            break
    if isinstance(v, (list, tuple)) and len(v) >= 2:
        return int(v[0]), int(v[1])
    if isinstance(v, dict):
        h = v.get("height") or v.get("shortest_edge") or 64
        w = v.get("width") or h
        return int(h), int(w)
    if isinstance(v, int) and v > 0:
        return v, v
    return 64, 64


def input_variants(model: Any, batch: int = 2, seq: int = 32, seed: int = 0) -> list[tuple[str, dict]]:
    """Candidate input dicts, most complete first; the caller keeps the first
    that runs eagerly."""
    import torch

    cfg = model.config
    g = torch.Generator().manual_seed(seed)
    try:
        params = set(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):
        params = set()
    main = getattr(model, "main_input_name", "input_ids")
    if isinstance(main, (list, tuple)):  # e.g. OneFormer: ["pixel_values", "task_inputs"]
        main = main[0] if main else "input_ids"
    if not isinstance(main, str):
        main = "input_ids"
    vocab = _first_attr(cfg, ("vocab_size",), 100)
    if not isinstance(vocab, int) or vocab < 8:
        vocab = 100
    special = token_ids(cfg)
    hi = min(vocab, 1000)
    pool = [i for i in range(3, hi) if i not in special] or list(range(hi))
    pool_t = torch.tensor(pool)

    def ids(n: int = seq) -> torch.Tensor:
        return pool_t[torch.randint(0, len(pool_t), (batch, n), generator=g)]

    text: dict = {}
    if "input_ids" in params:
        text["input_ids"] = ids()
        if "attention_mask" in params:
            text["attention_mask"] = torch.ones(batch, seq, dtype=torch.long)
    if getattr(cfg, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        text["decoder_input_ids"] = ids(seq // 2)

    variants: list[tuple[str, dict]] = []
    h, w = _image_hw(cfg)
    ch = _first_attr(cfg, ("num_channels", "in_channels", "in_chans"), 3)
    ch = ch if isinstance(ch, int) and 0 < ch <= 16 else 3
    if "pixel_values" in params:
        pix = {"pixel_values": torch.randn(batch, ch, h, w, generator=g)}
        if text:
            variants.append(("text+image", {**text, **pix}))
        variants.append(("image", dict(pix, **{k: v for k, v in text.items() if k == "decoder_input_ids"})))
    if "input_features" in params:
        mel = _first_attr(cfg, ("num_mel_bins", "feature_size", "n_mels", "num_mel_filters", "input_feat_per_channel"), 80)
        mel = mel if isinstance(mel, int) and 0 < mel <= 512 else 80
        msp = _first_attr(cfg, ("max_source_positions",), None)
        frames = 2 * msp if isinstance(msp, int) and msp > 0 else 64
        af = {**{k: v for k, v in text.items() if k == "decoder_input_ids"}}
        variants.append(("audio(B,mel,T)", {**af, "input_features": torch.randn(batch, mel, frames, generator=g)}))
        variants.append(("audio(B,T,mel)", {**af, "input_features": torch.randn(batch, frames, mel, generator=g)}))
        if text:
            variants.append(("text+audio", {**text, "input_features": torch.randn(batch, mel, frames, generator=g)}))
    if "input_values" in params:
        af = {k: v for k, v in text.items() if k == "decoder_input_ids"}
        variants.append(("waveform", {**af, "input_values": torch.randn(batch, 4000, generator=g)}))
    if text:
        variants.append(("text", text))
    if main not in ("input_ids", "pixel_values", "input_features", "input_values") and main in params:
        # a modality we do not model: try a float tensor shaped like text
        variants.append((f"{main}(float)", {main: torch.randn(batch, seq, generator=g)}))
    # order: the model's main input first
    def rank(v: tuple[str, dict]) -> int:
        return 0 if main in v[1] else 1
    variants.sort(key=rank)
    return variants


def describe_inputs(inputs: dict) -> dict:
    out = {}
    for k, v in inputs.items():
        shape = getattr(v, "shape", None)
        out[k] = list(shape) if shape is not None else repr(v)[:40]
    return out


def count_params(model: Any) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def build(cls: Any, seed: int = 0) -> tuple[Any, list]:
    """Default config of ``cls``, shrunk, and a random-weight model from it."""
    import torch

    cfg_cls = getattr(cls, "config_class", None)
    if cfg_cls is None:
        raise RuntimeError("no config_class")
    cfg = cfg_cls()
    notes = shrink_config(cfg)
    torch.manual_seed(seed)
    model = cls(cfg)
    model.to(torch.float32)
    return model, notes


_ = math  # keep import for future shape arithmetic
