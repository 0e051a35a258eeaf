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



PATTERN_KEYS = ("layer_types", "mlp_layer_types", "attention_layers", "block_types", "layers_block_type",
                "hybrid_override_pattern", "sliding_window_pattern_list", "layers_types")
INDEX_LIST_KEYS = ("full_attn_idxs", "moe_layers", "attn_layer_indices", "global_attn_layers")


def _kinds_pattern(v: Any, n: int) -> Any:
    """The shortest pattern of at least ``n`` layers with every distinct
    kind of ``v`` in order of first appearance (padded with the first)."""
    seq = list(v)
    kinds: list = []
    for x in seq:
        if x not in kinds:
            kinds.append(x)
    out = kinds + [seq[0]] * max(0, n - len(kinds))
    if isinstance(v, str):
        return "".join(out)
    return type(v)(out)


def _shrink_layer_patterns(cfg: Any, notes: list) -> None:
    d = cfg.__dict__
    layer_key = next((k for k in ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "decoder_layers")
                      if isinstance(d.get(k), int) and not isinstance(d.get(k), bool)), None)
    nl = d.get(layer_key) if layer_key else None
    if not isinstance(nl, int):
        return
    longest = nl
    for k in PATTERN_KEYS:
        v = d.get(k)
        if isinstance(v, (list, tuple, str)) and len(v) > nl:
            new = _kinds_pattern(v, nl)
            _set(cfg, k, new, notes)
            longest = max(longest, len(new))
    if longest > nl:
        _set(cfg, layer_key, longest, notes)
        nl = longest
        for k in PATTERN_KEYS:  # the other patterns: the same length
            v = d.get(k)
            if isinstance(v, (list, tuple, str)) and 0 < len(v) < nl:
                _set(cfg, k, v + (v[-1:] * (nl - len(v))), notes)
    for k in INDEX_LIST_KEYS:
        v = d.get(k)
        if isinstance(v, (list, tuple)) and v and all(isinstance(i, int) for i in v) and max(v) >= nl:
            kept = [i for i in v if i < nl] or [nl - 1]
            _set(cfg, k, type(v)(kept), notes)
    # "every P-th layer from offset O" (Jamba's attention and expert layers)
    for k in list(d):
        if k.endswith("_period") and isinstance(d[k], int) and d[k] > nl:
            off = k[: -len("_period")] + "_offset"
            _set(cfg, k, nl, notes)
            if isinstance(d.get(off), int) and d[off] >= nl:
                _set(cfg, off, nl - 1, notes)
        if k.endswith("_offset") and isinstance(d[k], int) and not isinstance(d[k], bool) and d[k] >= nl and \
                isinstance(d.get(k[: -len("_offset")] + "_period"), int):
            _set(cfg, k, nl - 1, notes)


def _tie_widths(cfg: Any, notes: list) -> None:
    """Widths one sub-config must share with another after shrinking: the
    vision tower's output width is the text model's hidden size."""
    tc, vc = cfg.__dict__.get("text_config"), cfg.__dict__.get("vision_config")
    # a bridge reading the vision tower (BLIP-2's Q-Former): its cross-attention width
    if _is_config(vc) and isinstance(vc.__dict__.get("hidden_size"), int):
        for _key, sub in list(cfg.__dict__.items()):
            if _is_config(sub) and sub is not vc and sub is not tc and isinstance(
                    sub.__dict__.get("encoder_hidden_size"), int) and sub.encoder_hidden_size != vc.hidden_size:
                _set(sub, "encoder_hidden_size", vc.hidden_size, notes)
    # group norms: the group count divides every shrunk width
    for c in _flat_cfgs(cfg):
        widths = [w for k in ("hidden_sizes", "embedding_size", "hidden_size", "embed_dims", "channels")
                  for w in ((c.__dict__.get(k),) if isinstance(c.__dict__.get(k), int) else (c.__dict__.get(k) or ()))
                  if isinstance(w, int) and not isinstance(w, bool) and w > 0]
        for k in ("num_groups", "num_norm_groups", "norm_num_groups", "group_norm_groups"):
            gv = c.__dict__.get(k)
            if isinstance(gv, int) and not isinstance(gv, bool) and gv > 1 and widths and \
                    any(w % gv for w in widths):
                _set(c, k, math.gcd(gv, *widths), notes)
    if _is_config(tc) and _is_config(vc):
        H = tc.__dict__.get("hidden_size") or tc.__dict__.get("d_model")
        keys = ("out_hidden_size", "text_hidden_size") + (("projection_dim",) if _image_token_id(cfg) is not None
                                                           else ())
        for k in keys:
            if isinstance(vc.__dict__.get(k), int) and isinstance(H, int) and vc.__dict__[k] != H:
                _set(vc, k, H, notes)


def repair_config(cfg: Any, notes: list, depth: int = 0) -> None:
    """Generic repairs of default configs that cannot build offline:
    a timm backbone (timm is not installed) becomes a small ResNet backbone
    with the same outputs; time-series configs get a prediction length."""
    import importlib.util

    if depth > 4:
        return
    d = cfg.__dict__
    for k, v in list(d.items()):
        if _is_config(v):
            if getattr(v, "model_type", None) == "timm_backbone" and importlib.util.find_spec("timm") is None:
                from transformers import ResNetConfig

                idx = [i for i in (getattr(v, "out_indices", None) or (4,)) if isinstance(i, int) and 0 < i <= 4] \
                    or [4]
                nc = getattr(v, "num_channels", 3)
                setattr(cfg, k, ResNetConfig(num_channels=nc, embedding_size=16, hidden_sizes=[16, 32, 64, 128],
                                             depths=[1, 1, 1, 1], layer_type="basic", out_indices=idx))
                notes.append(f"{k}:timm->resnet(out {idx})")
            else:
                repair_config(v, notes, depth + 1)
    if depth == 0:
        _assign_placeholder_tokens(cfg, notes)
    for k in ("use_timm_backbone", "use_pretrained_backbone"):
        if d.get(k) is True:
            _set(cfg, k, False, notes)
    if "prediction_length" in d and d.get("prediction_length") is None:
        _set(cfg, "prediction_length", 8, notes)
    if "context_length" in d and d.get("context_length") is None:
        _set(cfg, "context_length", 16, notes)


PLACEHOLDER_KEYS = ("image_token_id", "image_token_index", "video_token_id", "video_token_index", "audio_token_id",
                    "audio_token_index")


def _assign_placeholder_tokens(cfg: Any, notes: list) -> None:
    """A multimodal config whose placeholder token ids default to None (the
    checkpoint's tokenizer sets them) gets unused ids at the top of the
    vocabulary: without one the model cannot tell where image features go."""
    sizes = _vocab_sizes(cfg)
    if not sizes:
        return
    used = token_ids(cfg)
    free = (i for i in range(min(sizes) - 1, -1, -1) if i not in used)
    for c in _flat_cfgs(cfg):
        for k in PLACEHOLDER_KEYS:
            if k in c.__dict__ and c.__dict__[k] is None:
                _set(c, k, next(free), notes)


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
    # lists tied to the layer count: keep one layer of every kind the full
    # pattern has (a hybrid model cut to its first two layers may have no
    # attention layer left, and its cache then has nothing to measure)
    _shrink_layer_patterns(cfg, notes)

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
    if text:
        # second text streams (InstructBLIP's Q-Former prompt, ...)
        for p_ in sorted(params):
            if p_.endswith("_input_ids") and p_ not in text and p_ not in ("decoder_input_ids", "labels"):
                text[p_] = ids()
                mask = p_[: -len("input_ids")] + "attention_mask"
                if mask in params:
                    text[mask] = torch.ones(batch, seq, dtype=torch.long)

    variants: list[tuple[str, dict]] = []
    h, w = _image_hw(cfg)
    ch = _first_attr(cfg, ("num_channels", "in_channels", "in_chans"), 3)
    ch = ch if isinstance(ch, int) and 0 < ch <= 16 else 3
    if "pixel_values" in params:
        pix = {"pixel_values": torch.randn(batch, ch, h, w, generator=g)}
        if text:
            variants.append(("text+image", {**text, **pix}))
        variants.append(("image", dict(pix, **{k: v for k, v in text.items() if k == "decoder_input_ids"})))
        # video: (B, frames, C, H, W)
        vid = {"pixel_values": torch.randn(batch, _frames(cfg), ch, h, w, generator=g)}
        if text:
            variants.append(("text+video", {**text, **vid}))
        variants.append(("video", vid))
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
    if "input_values" in params:
        # (B, channels, T): neural audio codecs (Encodec, DAC, ...)
        ac = _first_attr(cfg, ("audio_channels", "num_channels", "in_channels"), 1)
        ac = ac if isinstance(ac, int) and 0 < ac <= 8 else 1
        af = {k: v for k, v in text.items() if k == "decoder_input_ids"}
        variants.append(("waveform(B,C,T)", {**af, "input_values": torch.randn(batch, ac, 4000, generator=g)}))
    if "bbox" in params and text:
        variants.insert(0, ("text+bbox", {**text, "bbox": _boxes(cfg, batch, seq, g)}))
        if "pixel_values" in params:
            pix = {"pixel_values": torch.randn(batch, ch, h, w, generator=g)}
            variants.insert(0, ("text+bbox+image", {**text, "bbox": _boxes(cfg, batch, seq, g), **pix}))
    if "past_values" in params:
        variants[:0] = _time_series_variants(model, cfg, params, batch, g)
    if "hidden_states" in params and "grid_thw" in params:
        # a Qwen-VL-style vision tower on its own: flattened patches and their grid
        p_, t_, m_ = _patch_geometry(cfg)
        gh = gw = 2 * m_
        variants.insert(0, ("vision patches+grid_thw", {
            "hidden_states": torch.randn(batch * gh * gw, ch * t_ * p_ * p_, generator=g),
            "grid_thw": torch.tensor([[1, gh, gw]] * batch)}))
    if text and "pixel_values" in params:
        variants[:0] = _vlm_variants(model, cfg, params, batch, seq, g, ids, text)
    if text:
        variants.append(("text", text))
    if main not in ("input_ids", "pixel_values", "input_features", "input_values", "past_values") \
            and main in params:
        # a modality we do not model: try a float tensor shaped like text
        variants.append((f"{main}(float)", {main: torch.randn(batch, seq, generator=g)}))
    variants += _first_tensor_variants(model, cfg, batch, seq, g, (h, w, ch))
    # order: the model's main input first
    def rank(v: tuple[str, dict]) -> int:
        return 0 if main in v[1] else 1
    variants.sort(key=rank)
    if "use_cache" in params:
        # fallbacks: models whose cache cannot be built for this config (a
        # hybrid model with linear-attention layers only asks the cache for
        # its length) run without one
        variants += [(f"{lab}+use_cache=False", {**v, "use_cache": False}) for lab, v in list(variants)]
    return variants


def _frames(cfg: Any) -> int:
    """Frames of a video input: the config's clip length, else 4."""
    nf = _first_attr(cfg, ("num_frames", "frames_per_clip", "num_frames_per_clip"), None)
    return nf if isinstance(nf, int) and 0 < nf <= 64 else 4


def _first_tensor_variants(model: Any, cfg: Any, batch: int, seq: int, g: Any, image: tuple) -> list:
    """A forward whose first required parameter is none of the modalities
    above (``hidden_states``, ``query_embeds``, ``mel_spectrogram`` of a
    sub-model used on its own): float tensors shaped as a sequence of the
    config's width, an image and a spectrogram, with the width's mask."""
    import torch

    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return []
    first = next((p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty), None)
    if first is None or first.name in ("input_ids", "pixel_values", "input_features", "input_values",
                                       "past_values", "inference_session"):
        return []
    H = _first_attr(cfg, tuple(HIDDEN_KEYS), 64)
    H = H if isinstance(H, int) and 0 < H <= 8192 else 64
    h, w, ch = image
    mel = _first_attr(cfg, ("num_mel_bins", "n_mels", "feature_size"), 80)
    mel = mel if isinstance(mel, int) and 0 < mel <= 512 else 80
    E = _first_attr(cfg, ("encoder_hidden_size",), H)
    nf = _frames(cfg)
    # (label, shape, index of the time axis a mask covers)
    shapes = [("(B,T,hidden)", (batch, seq, H), 1), ("(B,T,mel)", (batch, 64, mel), 1),
              ("(B,C,H,W)", (batch, ch, h, w), None), ("(B,mel,T)", (batch, mel, 64), 2),
              ("(B,1,T)", (batch, 1, 4000), 2), ("(B,F,C,H,W)", (batch, nf, ch, h, w), None)]
    out = []
    for lab, shape, t_axis in shapes:
        x = {first.name: torch.randn(*shape, generator=g)}
        if lab == "(B,T,hidden)" and "encoder_hidden_states" in sig.parameters and isinstance(E, int) \
                and 0 < E <= 8192:
            x["encoder_hidden_states"] = torch.randn(batch, seq, E, generator=g)
        for mask in ("attention_mask", "mask"):
            if mask in sig.parameters and t_axis is not None:
                x[mask] = torch.ones(batch, shape[t_axis], dtype=torch.bool if mask == "mask" else torch.long)
        out.append((f"{first.name}{lab}", x))
    return out


def _boxes(cfg: Any, batch: int, seq: int, g: Any) -> Any:
    """Valid ``bbox`` tensors (x0 <= x1, y0 <= y1) inside the 2-D position tables."""
    import torch

    hi = _first_attr(cfg, ("max_2d_position_embeddings",), 1024)
    hi = hi if isinstance(hi, int) and hi > 1 else 1024
    a = torch.randint(0, hi, (batch, seq, 2, 2), generator=g)
    lo, up = a.min(dim=2).values, a.max(dim=2).values
    return torch.stack([lo[..., 0], lo[..., 1], up[..., 0], up[..., 1]], dim=-1)


def _time_series_variants(model: Any, cfg: Any, params: set, batch: int, g: Any) -> list:
    """past_values / past_time_features / past_observed_mask (and the future
    ones) shaped from the config: context length plus the largest lag."""
    import torch

    ctx_len = _first_attr(cfg, ("context_length", "sequence_length", "input_size_len"), 32)
    ctx_len = ctx_len if isinstance(ctx_len, int) and ctx_len > 0 else 32
    lags = _first_attr(cfg, ("lags_sequence",), None)
    past = ctx_len + (max(lags) if isinstance(lags, (list, tuple)) and lags else 0)
    pred = _first_attr(cfg, ("prediction_length",), 8)
    pred = pred if isinstance(pred, int) and pred > 0 else 8
    nin = _first_attr(cfg, ("num_input_channels", "input_size", "num_channels"), 1)
    nin = nin if isinstance(nin, int) and nin > 0 else 1
    ntf = _first_attr(cfg, ("num_time_features",), 0)
    ntf = ntf if isinstance(ntf, int) and ntf >= 0 else 0
    if isinstance(_first_attr(cfg, ("num_dynamic_real_features",), 0), int):
        ntf += _first_attr(cfg, ("num_dynamic_real_features",), 0)
    out = []
    for shape_kind in ("(B,T)", "(B,T,C)"):
        if shape_kind == "(B,T)" and nin != 1:
            continue
        pv = torch.randn(batch, past, *(() if shape_kind == "(B,T)" else (nin,)), generator=g)
        x: dict = {"past_values": pv}
        if "past_time_features" in params:
            x["past_time_features"] = torch.randn(batch, past, max(ntf, 1), generator=g)
        if "past_observed_mask" in params:
            x["past_observed_mask"] = torch.ones_like(pv)
        if "future_time_features" in params:
            x["future_time_features"] = torch.randn(batch, pred, max(ntf, 1), generator=g)
        fut = dict(x)
        if "future_values" in params:
            fut["future_values"] = torch.randn(batch, pred, *pv.shape[2:], generator=g)
        nsc = _first_attr(cfg, ("num_static_categorical_features",), 0)
        if isinstance(nsc, int) and nsc > 0 and "static_categorical_features" in params:
            card = _first_attr(cfg, ("cardinality",), [1]) or [1]
            fut["static_categorical_features"] = torch.zeros(batch, nsc, dtype=torch.long)
            x["static_categorical_features"] = fut["static_categorical_features"]
            _ = card
        nsr = _first_attr(cfg, ("num_static_real_features",), 0)
        if isinstance(nsr, int) and nsr > 0 and "static_real_features" in params:
            fut["static_real_features"] = x["static_real_features"] = torch.randn(batch, nsr, generator=g)
        out += [(f"time-series{shape_kind}+future", fut), (f"time-series{shape_kind}", x)]
    return out


def _patch_geometry(vc: Any) -> tuple[int, int, int]:
    """(patch size, temporal patch size, spatial merge size) of a vision config."""
    def one(k: str, default: int) -> int:
        v = vc.__dict__.get(k) or default
        v = v[0] if isinstance(v, (list, tuple)) else v
        return v if isinstance(v, int) and v > 0 else default
    return one("patch_size", 14), one("temporal_patch_size", 1), one("spatial_merge_size", 1)


def _image_token_id(cfg: Any) -> Optional[int]:
    for k in ("image_token_id", "image_token_index", "image_token"):
        v = cfg.__dict__.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            return v
    for c in _flat_cfgs(cfg)[1:]:
        v = c.__dict__.get("image_token_id")
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            return v
    return None


def _count_image_features(model: Any, kw: dict) -> Optional[int]:
    """Image feature tokens per image, asked of the model itself
    (``get_image_features``), or None."""
    import torch

    for owner in (model, getattr(model, "model", None)):
        fn = getattr(owner, "get_image_features", None)
        if fn is None:
            continue
        try:
            sig = set(inspect.signature(fn).parameters)
            with torch.no_grad():
                feats = fn(**{k: v for k, v in kw.items() if k in sig})
        except Exception:  # noqa: BLE001
            continue
        for attr in ("pooler_output", "image_embeds", "last_hidden_state"):
            if hasattr(feats, attr) and getattr(feats, attr) is not None and not torch.is_tensor(feats):
                feats = getattr(feats, attr)
                break
        if isinstance(feats, (list, tuple)) and feats and all(torch.is_tensor(f) for f in feats):
            return int(sum(f.reshape(-1, f.shape[-1]).shape[0] for f in feats))
        if torch.is_tensor(feats) and feats.dim() >= 2:
            return int(feats.reshape(-1, feats.shape[-1]).shape[0])
    return None


def _vlm_variants(model: Any, cfg: Any, params: set, batch: int, seq: int, g: Any, ids: Any, text: dict) -> list:
    """Vision-language inputs: pixel values at the vision config's size (or
    Qwen-VL-style flattened patches with ``image_grid_thw``), and as many
    image placeholder tokens in the ids as the model makes image features
    (counted by the model's own ``get_image_features``)."""
    import torch

    tok = _image_token_id(cfg)
    if tok is None:
        return []
    vc = cfg.__dict__.get("vision_config")
    vc = vc if _is_config(vc) else cfg
    ch = vc.__dict__.get("num_channels") or vc.__dict__.get("in_channels") or vc.__dict__.get("in_chans") or 3
    ch = ch if isinstance(ch, int) and 0 < ch <= 16 else 3
    cands: list[tuple[str, dict]] = []
    if "image_grid_thw" in params:
        p, t, m = _patch_geometry(vc)
        gh = gw = 2 * m
        grid = torch.tensor([[1, gh, gw]] * batch)
        cands.append(("grid", {"pixel_values": torch.randn(batch * gh * gw, ch * t * p * p, generator=g),
                               "image_grid_thw": grid}))
    else:
        h, w = _image_hw(vc if vc is not cfg else cfg)
        pv = torch.randn(batch, ch, h, w, generator=g)
        cands.append(("(B,C,H,W)", {"pixel_values": pv}))
        if "image_sizes" in params:  # LLaVA-NeXT, Pixtral, Mistral3: (height, width) per image
            cands.append(("(B,C,H,W)+sizes", {"pixel_values": pv, "image_sizes": torch.tensor([[h, w]] * batch)}))
        cands.append(("(B,1,C,H,W)", {"pixel_values": pv[:, None]}))
    out = []
    for lab, kw in cands:
        if "pixel_attention_mask" in params and kw["pixel_values"].dim() >= 4:
            shp = kw["pixel_values"].shape
            kw = dict(kw, pixel_attention_mask=torch.ones(*shp[:-3], *shp[-2:], dtype=torch.bool))
        n = _count_image_features(model, kw)
        if not n or n % batch:
            continue
        per = n // batch
        L = max(seq, per + 8)
        x = dict(text)
        x["input_ids"] = ids(L)
        x["input_ids"][:, 2:2 + per] = tok
        if "attention_mask" in x:
            x["attention_mask"] = torch.ones(batch, L, dtype=torch.long)
        if "token_type_ids" in params:
            x["token_type_ids"] = torch.zeros(batch, L, dtype=torch.long)
        if "mm_token_type_ids" in params:
            x["mm_token_type_ids"] = (x["input_ids"] == tok).long()
        out.append((f"text+image{lab}+{per} image tokens", {**x, **kw}))
    return out


def describe_inputs(inputs: dict) -> dict:
    out = {}
    for k, v in inputs.items():
        shape = getattr(v, "shape", None)
        out[k] = list(shape) if shape is not None else repr(v)[:40]
    return out


def count_params(model: Any) -> int:
    return int(sum(p.numel() for p in model.parameters()))


#: How far ``build`` shrinks the default config, tried in this order by the
#: survey: everything (``shrunk``); only the layer count and the vocabulary
#: (``layers``: for configs whose widths are tied in ways the generic
#: shrinking does not know); only the layer count (``depth``).
LEVELS = ("shrunk", "layers", "depth")
#: A model larger than this at a fallback level is not built (memory, time).
MAX_PARAMS = 600_000_000


def shrink_depth(cfg: Any, notes: list, vocab: bool, depth: int = 0) -> None:
    """The ``layers``/``depth`` levels: cut the layer counts (and with
    ``vocab`` the vocabulary, moving token ids inside it), nothing else."""
    if depth > 4:
        return
    d = cfg.__dict__
    for k, v in list(d.items()):
        if _is_config(v):
            sub: list = []
            shrink_depth(v, sub, vocab, depth + 1)
            notes.extend(f"{k}.{n}" for n in sub)
    for k in list(d):
        v = d[k]
        if k in LAYER_KEYS and isinstance(v, int) and not isinstance(v, bool) and v > TARGET_LAYERS:
            _set(cfg, k, TARGET_LAYERS, notes)
    _shrink_layer_patterns(cfg, notes)
    v = _get(cfg, "vocab_size")
    if vocab and isinstance(v, int) and v > MAX_VOCAB:
        _set(cfg, "vocab_size", MAX_VOCAB, notes)
    if vocab and depth == 0:
        _remap_token_ids(cfg, notes)


def make_config(cls: Any, level: str = "shrunk") -> tuple[Any, list]:
    """The default config of ``cls``, repaired and shrunk to ``level``."""
    cfg_cls = getattr(cls, "config_class", None)
    if cfg_cls is None:
        raise RuntimeError("no config_class")
    if level not in LEVELS:
        raise ValueError(f"unknown shrink level {level!r}")
    cfg = cfg_cls()
    notes: list = []
    repair_config(cfg, notes)
    if level == "shrunk":
        shrink_config(cfg, notes)
        _tie_widths(cfg, notes)
    else:
        shrink_depth(cfg, notes, vocab=level == "layers")
    return cfg, notes


def build(cls: Any, seed: int = 0, level: str = "shrunk") -> tuple[Any, list]:
    """A random-weight model of ``cls`` from its default config at ``level``."""
    import torch

    cfg, notes = make_config(cls, level)
    if level != "shrunk":
        with torch.device("meta"):
            n = count_params(cls(cfg))
        if n > MAX_PARAMS:
            raise RuntimeError(f"{n / 1e6:.0f}M parameters at shrink level {level!r} (limit {MAX_PARAMS / 1e6:.0f}M)")
        cfg, notes = make_config(cls, level)  # a model's __init__ may edit its config
    torch.manual_seed(seed)
    model = cls(cfg)
    model.to(torch.float32)
    return model, notes
