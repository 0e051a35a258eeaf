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
    "decoder_num_heads", "num_q_heads", "cross_num_attention_heads",
]
KV_HEAD_KEYS = ["num_key_value_heads", "num_kv_heads", "multi_query_group_num", "n_kv_heads", "kv_heads",
                "cross_num_key_value_heads"]
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
#: (SSM head count, SSM head size, expansion, SSM group count) of Mamba-2 mixers
SSM_HEAD_KEYS = [("mamba_n_heads", "mamba_d_head", "mamba_expand", "mamba_n_groups"),
                 ("n_mamba_heads", "mamba_headdim", "mamba_expand", "mamba_ngroups"),
                 ("num_heads", "head_dim", "expand", "n_groups")]
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


def _is_config_cls(c: Any) -> bool:
    from transformers import PretrainedConfig
    return inspect.isclass(c) and issubclass(c, PretrainedConfig)


def _params(fn: Any) -> Any:
    """The parameters of ``fn``'s signature by name (empty when it has none)."""
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}


def _head_size(d: dict) -> Optional[int]:
    """A config's per-head size: its ``head_dim``, else width over heads."""
    H, h = d.get("hidden_size"), d.get("num_attention_heads")
    return d["head_dim"] if _int(d.get("head_dim")) else (H // h if _int(H) and _int(h) and h else None)


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


def _kinds_pattern(v: Any, n: int, repeat: int = 1) -> Any:
    """The shortest pattern of at least ``n`` layers with every distinct
    kind of ``v`` in order of first appearance (padded with the first),
    ``repeat`` times."""
    seq = list(v)
    kinds: list = []
    for x in seq:
        if x not in kinds:
            kinds.append(x)
    out = kinds * repeat + [seq[0]] * max(0, n - len(kinds) * repeat)
    if isinstance(v, str):
        return "".join(out)
    return type(v)(out)


def _shrink_layer_patterns(cfg: Any, notes: list, repeat: int = 1) -> None:
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
            new = _kinds_pattern(v, nl, repeat)
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
    # trailing layers that reuse earlier layers' keys/values (Gemma 3n's
    # ``num_kv_shared_layers``): each finds an earlier unshared layer of its
    # kind, so every kind appears once unshared and once shared
    for k in list(d):
        v = d[k]
        if "shared" in k and k.endswith("_layers") and k not in LAYER_KEYS and _int(v) and v > 0:
            pats = {pk: d[pk] for pk in PATTERN_KEYS if isinstance(d.get(pk), (list, tuple)) and len(d[pk]) == nl}
            n_k = max([len(dict.fromkeys(p)) for p in pats.values()] + [1])
            for pk, p in pats.items():
                head = list(_kinds_pattern(p, n_k))[:n_k]
                _set(cfg, pk, type(p)(head + head), notes)
            if nl != 2 * n_k:
                _set(cfg, layer_key, 2 * n_k, notes)
                nl = 2 * n_k
            _set(cfg, k, n_k, notes)
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


def _shrink_backbone_stages(cfg: Any, notes: list) -> None:
    """A transformer backbone names one stage per layer (``stem``,
    ``stage1`` ...) and outputs some of them (``out_indices``): with its
    layers cut, keep as many layers as outputs, output the last ones, and
    drop layer indices (window blocks) past the end."""
    d = cfg.__dict__
    names, nl = d.get("stage_names"), d.get("num_hidden_layers")
    idx = getattr(cfg, "out_indices", None)
    if not (isinstance(names, list) and isinstance(nl, int) and not isinstance(nl, bool) and nl > 0
            and len(names) > nl + 1 and names[1:] == [f"stage{i}" for i in range(1, len(names))]
            and isinstance(idx, (list, tuple)) and idx and all(isinstance(i, int) for i in idx)
            and max(idx) > nl and hasattr(cfg, "set_output_features_output_indices")):
        return
    n_out = len(idx)
    if n_out > nl:
        _set(cfg, "num_hidden_layers", n_out, notes)
        nl = n_out
    new = list(range(nl - n_out + 1, nl + 1))
    try:
        cfg.stage_names = ["stem"] + [f"stage{i}" for i in range(1, nl + 1)]
        cfg.set_output_features_output_indices(out_features=None, out_indices=new)
        notes.append(f"out_indices:{list(idx)}->{new}")
    except Exception:  # noqa: BLE001
        return
    for k, v in list(d.items()):
        if k.endswith(("_indices", "_indexes")) and not k.startswith("_out") and k != "out_indices" and \
                isinstance(v, (list, tuple)) and v and all(isinstance(i, int) and not isinstance(i, bool)
                                                           for i in v) and max(v) >= nl:
            _set(cfg, k, type(v)(i for i in v if i < nl), notes)


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
    # a decoder's cross-attention reads the sibling encoder (Dia)
    enc = next((v for k, v in cfg.__dict__.items() if "encoder" in k and _is_config(v)
                and isinstance(v.__dict__.get("hidden_size"), int)), None)
    if enc is not None:
        for _key, sub in list(cfg.__dict__.items()):
            if _is_config(sub) and sub is not enc and isinstance(sub.__dict__.get("cross_hidden_size"), int):
                _set(sub, "cross_hidden_size", enc.hidden_size, notes)
    # a sub-config naming a sibling's width (Blt's encoder/decoder
    # ``hidden_size_global`` = ``global_config.hidden_size``)
    subs = {k[: -len("_config")]: v for k, v in cfg.__dict__.items() if k.endswith("_config") and _is_config(v)}
    for name, sib in subs.items():
        W = sib.__dict__.get("hidden_size")
        if not isinstance(W, int) or isinstance(W, bool):
            continue
        for other in subs.values():
            for k in (f"hidden_size_{name}", f"{name}_hidden_size"):
                if other is not sib and isinstance(other.__dict__.get(k), int) and other.__dict__[k] != W:
                    _set(other, k, W, notes)
    # SSM (Mamba-2) heads: heads x head size is the SSM width, expand x hidden
    # unless the config sets the width (FalconH1's mamba_d_ssm); the head
    # count is cut with the attention heads but the width follows the hidden size
    for c in _flat_cfgs(cfg):
        d = c.__dict__
        for hk, dk, ek, gk in SSM_HEAD_KEYS:
            nh, hd, ex, H = d.get(hk), d.get(dk), d.get(ek), d.get("hidden_size")
            if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (nh, hd, ex, H)):
                continue
            width = d.get("mamba_d_ssm") if isinstance(d.get("mamba_d_ssm"), int) else ex * H
            if nh * hd == width:
                continue
            if width % hd == 0:
                _set(c, hk, width // hd, notes)
            elif width % nh == 0:
                _set(c, dk, width // nh, notes)
            ng = d.get(gk)
            if isinstance(ng, int) and ng > 1 and d[hk] % ng:
                _set(c, gk, math.gcd(ng, d[hk]), notes)
    # group norms: the group count divides every shrunk width
    for c in _flat_cfgs(cfg):
        widths = [w for k in ("hidden_sizes", "embedding_size", "hidden_size", "embed_dims", "channels")
                  for w in ((c.__dict__.get(k),) if isinstance(c.__dict__.get(k), int) else (c.__dict__.get(k) or ()))
                  if isinstance(w, int) and not isinstance(w, bool) and w > 0]
        group_keys = [k for k in c.__dict__ if k.endswith("groups") and k not in LAYER_KEYS]
        for k in group_keys:  # norm groups, grouped (depthwise) convolutions
            gv = c.__dict__.get(k)
            if isinstance(gv, int) and not isinstance(gv, bool) and gv > 1 and widths and \
                    any(w % gv for w in widths):
                _set(c, k, math.gcd(gv, *widths), notes)
    if _is_config(tc) and _is_config(vc):
        H = tc.__dict__.get("hidden_size") or tc.__dict__.get("d_model")
        keys = ("out_hidden_size", "text_hidden_size") + (("projection_dim",) if _image_token_id(cfg) is not None
                                                           else ())
        if _int(vc.__dict__.get("embed_dim")) and _image_token_id(cfg) is not None:
            # a tower that names its own width embed_dim: its hidden_size is
            # the width it hands the text model (Qwen2-VL's patch merger)
            keys += ("hidden_size",)
        for k in keys:
            if isinstance(vc.__dict__.get(k), int) and isinstance(H, int) and vc.__dict__[k] != H:
                _set(vc, k, H, notes)


def _refresh_derived(cfg: Any, notes: list, depth: int = 0) -> None:
    """Attributes a hybrid (layer-pattern) config derives in ``__post_init__``
    from its fields (Zamba2's ``mamba_headdim`` from the hidden size and the
    head count, its ``hybrid_layer_ids`` from the layer pattern) are computed
    again from the shrunk fields: a fresh config of the same fields tells
    them.  Only hybrid configs: elsewhere a derived value (a sparse-layer
    step, a stage list) would undo or change a shrinking that works."""
    import dataclasses

    if depth > 4:
        return
    d = cfg.__dict__
    for v in list(d.values()):
        if _is_config(v):
            _refresh_derived(v, notes, depth + 1)
    if not dataclasses.is_dataclass(cfg) or not any(isinstance(d.get(k), (list, tuple, str)) and d.get(k)
                                                     for k in PATTERN_KEYS):
        return
    fields = {f.name for f in dataclasses.fields(cfg)} | set(getattr(cfg, "attribute_map", {}) or {})
    try:
        fresh = type(cfg)(**{k: d[k] for k in fields if k in d})
    except Exception:  # noqa: BLE001
        return

    def plain(v: Any) -> bool:
        return isinstance(v, int) or isinstance(v, (list, tuple)) and all(isinstance(i, int) for i in v)
    for k, v in fresh.__dict__.items():
        if k in fields or k.startswith("_") or k not in d or not plain(v) or not plain(d[k]):
            continue
        if v != d[k] and not (isinstance(v, int) and isinstance(d[k], int) and v > d[k]):  # never un-shrink
            _set(cfg, k, v, notes)


def _tie_parent_widths(cfg: Any, before: dict, notes: list) -> None:
    """A sub-config whose width was its parent's own width (a feed-forward
    or attention block described apart, DBRX's ``ffn_config.hidden_size``
    beside ``d_model``) keeps it: both are shrunk on their own otherwise."""
    for p in _flat_cfgs(cfg):
        pb = before.get(id(p), {})
        pk = next((k for k in HIDDEN_KEYS if _int(pb.get(k)) and _int(p.__dict__.get(k))), None)
        if pk is None:
            continue
        for k, v in pb.items():  # an output width that defaulted to the width (ViT's pooler_output_size)
            if k.endswith("output_size") and _int(v) and v == pb[pk] and p.__dict__.get(k) == v:
                _set(p, k, p.__dict__[pk], notes)
        for sub in p.__dict__.values():
            sb = before.get(id(sub), {})
            if not _is_config(sub) or any(_int(sb.get(k)) for k in list(LAYER_KEYS) + HEAD_KEYS):
                continue  # only a block described apart, not a model of its own (a text tower)
            for k in HIDDEN_KEYS:
                if _int(sb.get(k)) and sb[k] == pb[pk] and sub.__dict__.get(k) != p.__dict__[pk]:
                    _set(sub, k, p.__dict__[pk], notes)


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
    _fill_unset(cfg, notes, depth)
    if depth == 0:
        _assign_placeholder_tokens(cfg, notes)
    for k in ("use_timm_backbone", "use_pretrained_backbone"):
        if d.get(k) is True:
            _set(cfg, k, False, notes)
    # sliding-window layers (or heads) whose window defaults to None: code
    # that builds the sliding mask for every forward (Step3p7) needs one;
    # wider than any input
    if "sliding_window" in d and d["sliding_window"] is None and (any(
            "sliding" in k and k != "sliding_window" and v and not isinstance(v, bool)
            or k in PATTERN_KEYS and isinstance(v, (list, tuple)) and any(isinstance(t, str) and "sliding" in t
                                                                          for t in v)
            for k, v in d.items()) or isinstance(d.get("layer_types"), list) and "use_sliding_window" not in d):
        _set(cfg, "sliding_window", 4096, notes)
    if "prediction_length" in d and d.get("prediction_length") is None:
        _set(cfg, "prediction_length", 8, notes)
    if "context_length" in d and d.get("context_length") is None:
        _set(cfg, "context_length", 16, notes)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _moe_disabled(d: dict) -> bool:
    """A config with an expert block switched off (``enable_moe_block=False``)
    leaves its expert fields None on purpose."""
    return any(v is False and "moe" in k.lower() for k, v in d.items())


def _fill_unset(cfg: Any, notes: list, depth: int = 0) -> None:
    """Fields a checkpoint sets that the default config leaves None, filled
    from what they mean: a head size is the width over the heads, the
    key/value heads are the query heads (no grouping), layer kinds are full
    attention, an expert block gets a few experts (the shrinking keeps 4 of
    2 routed per token) and a token-to-name map (the tokenizer's) is empty."""
    d = cfg.__dict__
    H, h = d.get("hidden_size"), d.get("num_attention_heads")
    nl = d.get("num_hidden_layers")
    if "head_dim" in d and d["head_dim"] is None and _int(H) and _int(h) and h > 0 and H % h == 0:
        _set(cfg, "head_dim", H // h, notes)
    for k in KV_HEAD_KEYS:
        if k in d and d[k] is None and _int(h):
            _set(cfg, k, h, notes)
    if "layer_types" in d and d["layer_types"] is None and _int(nl):
        _set(cfg, "layer_types", ["full_attention"] * nl, notes)
    if d.get("rope_parameters") == {}:
        # a per-layer-kind rope table left empty: the default rope, read
        # either way (flat or by layer kind)
        base = {"rope_type": getattr(cfg, "default_rope_type", "default") or "default",
                "rope_theta": float(getattr(cfg, "default_theta", 10000.0))}
        table = dict(base)
        for lt in dict.fromkeys(d.get("layer_types") or ()):
            if isinstance(lt, str):
                table[lt] = dict(base)
        _set(cfg, "rope_parameters", table, notes)
    if "vocab_size" in d and d["vocab_size"] is None:
        # the vocabulary is the tokenizer's: its size and special ids
        _set(cfg, "vocab_size", MAX_VOCAB, notes)
        for i, k in enumerate(("pad_token_id", "mask_token_id")):
            if k in d and d[k] is None:
                _set(cfg, k, i, notes)
    # a sparse-attention token indexer's geometry (``indexer_n_heads``,
    # ``indexer_head_dim``, ...): the attention's heads and head size, one
    # key head, a 16-token budget in blocks of 4
    hd = _head_size(d)
    for k in list(d):
        if d[k] is not None or k in KV_HEAD_KEYS or k == "head_dim":
            continue
        if k.endswith(("_n_heads", "_num_heads")) and _int(h):
            _set(cfg, k, h, notes)
        elif k.endswith("_kv_heads"):
            _set(cfg, k, 1, notes)
        elif k.endswith("_head_dim") and hd:
            _set(cfg, k, hd, notes)
        elif k.endswith("_compress_ratio"):
            _set(cfg, k, 4, notes)
        elif k.endswith("_budget"):
            _set(cfg, k, 16, notes)
    for k in d:
        if (k.endswith("_depth") or k == "depth") and d[k] is None:  # a depth (layer count) a checkpoint sets
            _set(cfg, k, TARGET_LAYERS, notes)
    rp = d.get("rope_parameters")
    if isinstance(rp, dict) and rp and "mrope_section" not in rp and hd and \
            not any(isinstance(v, dict) for v in rp.values()) and \
            any("mrope" in n and callable(getattr(type(cfg), n, None)) for n in dir(type(cfg))):
        # a multimodal rope whose config checks its ``mrope_section`` (the
        # model has no default for it) left without one: three axes
        # (time/height/width) splitting the rotary half
        half = hd // 2
        _set(cfg, "rope_parameters", {**rp, "mrope_section": [half - 2 * (half // 3), half // 3, half // 3]}, notes)
    if "vocabulary_map" in d and d["vocabulary_map"] is None:
        _set(cfg, "vocabulary_map", {}, notes)
    # experts
    if not _moe_disabled(d):
        for k in EXPERT_KEYS:
            if k in d and d[k] is None:
                _set(cfg, k, 4, notes)
        for k in TOPK_KEYS + ["top_k_experts"]:
            if k in d and d[k] is None:
                _set(cfg, k, 2, notes)
        for k in ("n_group", "topk_group", "n_shared_experts", "num_shared_experts"):
            if k in d and d[k] is None:
                _set(cfg, k, 1, notes)
        inter = d.get("intermediate_size")
        for k in ("moe_intermediate_size", "expert_intermediate_size", "shared_expert_intermediate_size"):
            if k in d and d[k] is None and _int(inter):
                _set(cfg, k, inter, notes)
        if "mlp_layer_types" in d and d["mlp_layer_types"] is None and _int(nl) and \
                any(_int(d.get(k)) and d[k] > 0 for k in EXPERT_KEYS):
            k_dense = d.get("first_k_dense_replace")
            k_dense = k_dense if _int(k_dense) else 0
            _set(cfg, "mlp_layer_types", ["dense" if i < k_dense else "sparse" for i in range(nl)], notes)


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


def _each_subconfig(cfg: Any, notes: list, shrink: Any) -> None:
    """``shrink(sub, sub_notes)`` on every sub-config (text, vision, audio,
    encoder, decoder, backbone ...); their notes prefixed with the key."""
    for k, v in list(cfg.__dict__.items()):
        if _is_config(v):
            sub: list = []
            shrink(v, sub)
            notes.extend(f"{k}.{n}" for n in sub)


def _cut_layers(cfg: Any, notes: list, repeat: int) -> None:
    """Layer counts to TARGET_LAYERS, and the lists tied to them: keep one
    layer of every kind the full pattern has (a hybrid model cut to its first
    two layers may have no attention layer left, and its cache then has
    nothing to measure) and the backbone stages a model outputs."""
    for k, v in list(cfg.__dict__.items()):
        if k in LAYER_KEYS and isinstance(v, int) and not isinstance(v, bool) and v > TARGET_LAYERS:
            _set(cfg, k, TARGET_LAYERS, notes)
    _shrink_layer_patterns(cfg, notes, repeat)
    _shrink_backbone_stages(cfg, notes)


def shrink_config(cfg: Any, notes: Optional[list] = None, depth: int = 0, repeat: int = 1) -> list:
    """Shrink ``cfg`` in place (and its sub-configs); return notes of changes."""
    notes = [] if notes is None else notes
    if depth > 4:
        return notes
    d = cfg.__dict__

    # sub-configs first (text/vision/audio/encoder/decoder/backbone ...)
    _each_subconfig(cfg, notes, lambda sub, sub_notes: shrink_config(sub, sub_notes, depth + 1, repeat))
    _cut_layers(cfg, notes, repeat)

    # stage lists (Swin, ResNet, ConvNeXt, PVT, ...): keep the number of stages
    depths = _get(cfg, "depths")
    if isinstance(depths, (list, tuple)) and depths and all(isinstance(x, int) for x in depths):
        _set(cfg, "depths", type(depths)(min(x, 1) if x > 0 else x for x in depths), notes)
    # (not where the stages' real widths are other lists, e.g. HGNetV2's
    # ``stage_out_channels``: ``hidden_sizes`` then only reports them)
    staged = any(k.startswith("stage_") and k.endswith("channels") for k in d)
    for k in ("hidden_sizes", "embed_dims", "embedding_dims", "hidden_dims", "dims", "channels"):
        v = _get(cfg, k)
        if staged:
            break
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, int) and x > 0 for x in v) and min(v) > 32:
            f = max(1, min(v) // 16)
            _set(cfg, k, type(v)(max(1, x // f) for x in v), notes)

    # heads, head_dim, hidden
    head_key = next((k for k in HEAD_KEYS if isinstance(_get(cfg, k), int) and not isinstance(_get(cfg, k), bool)), None)
    hid_key = next((k for k in HIDDEN_KEYS if isinstance(_get(cfg, k), int) and not isinstance(_get(cfg, k), bool)
                    and _get(cfg, k) > 0), None)
    H0 = _get(cfg, hid_key) if hid_key else None
    heads_list_key = next((k for k in HEAD_KEYS if isinstance(_get(cfg, k), (list, tuple))), None)
    if heads_list_key:
        hl = list(_get(cfg, heads_list_key))
        if hl and all(isinstance(x, int) and x > 0 for x in hl) and hl[0] > 1:
            f = hl[0]
            if all(x % f == 0 for x in hl):
                _set(cfg, heads_list_key, type(_get(cfg, heads_list_key))(x // f for x in hl), notes)
                if hid_key and _get(cfg, hid_key) % f == 0:
                    _set(cfg, hid_key, _get(cfg, hid_key) // f, notes)
                    # the first stage's width, which the last (hidden) one doubles
                    # from (CLAP's audio encoder: hidden = 8 x patch embeds)
                    pe = _get(cfg, "patch_embeds_hidden_size")
                    if isinstance(pe, int) and pe % f == 0:
                        _set(cfg, "patch_embeds_hidden_size", pe // f, notes)
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
    # a head projecting to the model's own width (SigLIP's text head: its
    # output is compared with the vision tower's, which shrinks the same)
    if H and H0 and H != H0 and _get(cfg, "projection_size") == H0:
        _set(cfg, "projection_size", H, notes)
    # feed-forward widths
    for k in INTER_KEYS:
        v = _get(cfg, k)
        if isinstance(v, (list, tuple)) and v and all(_int(x) and x > 0 for x in v) and H and max(v) > 4 * H:
            _set(cfg, k, type(v)(min(x, max(2 * H, 64)) for x in v), notes)  # one width per layer
        elif isinstance(v, int) and not isinstance(v, bool) and v > 0 and H and v > 4 * H:
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
    params = set(_params(model.forward))
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
                # inside the stream's own vocabulary (Evolla's protein_encoder_config: 446)
                pre = p_[: -len("input_ids")]
                sv = next((v.__dict__.get("vocab_size") for k, v in cfg.__dict__.items()
                           if _is_config(v) and k.startswith(pre)), None)
                if isinstance(sv, int) and not isinstance(sv, bool) and 0 < sv < hi:
                    text[p_] = text[p_] % sv
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
    elif "pixel_values" in params and "grid_thw" in params and not text:
        # the same tower taking ``pixel_values``: packed patches and their grid
        # (first where the grid is required: nothing else can run)
        pv = _packed_patch_variants(model, cfg, params, batch, g, ch)
        if _required(model, "grid_thw"):
            variants[:0] = pv
        else:
            variants += pv
    if text and "pixel_values" in params:
        variants[:0] = _vlm_variants(model, cfg, params, batch, seq, g, ids, text)
    if "pixel_values" in params and ("spatial_shapes" in params or "pixel_position_ids" in params):
        pp = _patchified_variants(cfg, params, batch, g, ch)
        variants += [("text+" + lab, {**text, **x}) for lab, x in pp] if text else []
        variants += pp
    if text:
        variants.append(("text", text))
    if main not in ("input_ids", "pixel_values", "input_features", "input_values", "past_values") \
            and main in params:
        # a modality we do not model: try a float tensor shaped like text
        variants.append((f"{main}(float)", {main: torch.randn(batch, seq, generator=g)}))
    variants += _first_tensor_variants(model, cfg, batch, seq, g, (h, w, ch))
    nf = _first_attr(cfg, ("num_frames",), None)
    if "pixel_values" in params and isinstance(nf, int) and 1 < nf <= 64:
        # a video tower taking its frames folded into the batch (X-CLIP's vision model)
        variants.append(("frames(B*F,C,H,W)", {"pixel_values": torch.randn(batch * nf, ch, h, w, generator=g)}))
    if "pixel_values" in params and _frames(cfg) != 2:  # matchers (LoFTR, SuperGlue): an image pair
        variants.append(("image pair", {"pixel_values": torch.randn(batch, 2, ch, h, w, generator=g)}))
    for hh in (h, h // 2):  # (half: a prompt and an image stacked to the config's height, SegGPT)
        extra = _required_image_companions(model, cfg, params, batch, g, ch, hh, w)
        if extra:
            variants.append((f"image({hh}x{w})+" + "+".join(sorted(extra)), {
                "pixel_values": torch.randn(batch, ch, hh, w, generator=g), **extra}))
    if "pixel_values_videos" in params:  # video (B, F, C, H, W), beside the text where there is one
        vid = {"pixel_values_videos": torch.randn(batch, _frames(cfg), ch, h, w, generator=g)}
        if text:
            variants.append(("text+videos", {**text, **vid}))
        variants.append(("videos", vid))
    nq = _first_attr(cfg, ("num_queries",), None)
    if "pixel_values" in params and isinstance(nq, int) and 0 < nq <= 1024:
        # a detector choosing its ``num_queries`` queries by top-k among the
        # encoder's tokens (RT-DETR): enough tokens at stride 8 (a ViT
        # backbone: its patch), in whole windows of patches
        bc = cfg.__dict__.get("backbone_config")
        bc = bc if _is_config(bc) else cfg
        patch = bc.__dict__.get("patch_size")
        patch = patch if isinstance(patch, int) and 8 <= patch <= 64 else None
        # (``num_windows`` per side or in all: a multiple of either)
        nw = bc.__dict__.get("num_windows_side") or bc.__dict__.get("num_windows") or 1
        nw = nw if isinstance(nw, int) and 0 < nw <= 64 else 1
        mult = patch * nw if patch else 32
        side = mult * math.ceil((patch or 8) * math.ceil(math.sqrt(nq)) / mult)
        if side > min(h, w):
            variants.append((f"image({side}x{side})", {"pixel_values": torch.randn(batch, ch, side, side,
                                                                                  generator=g)}))
    # order: the model's main input first
    def rank(v: tuple[str, dict]) -> int:
        return 0 if main in v[1] else 1
    variants.sort(key=rank)
    # later additions, tried after everything above (so that a model that ran
    # with an earlier variant keeps it): multi-codebook ids, text fixes, audio
    # layouts the variants above miss
    late: list[tuple[str, dict]] = []
    if text:
        late += _codebook_variants(model, cfg, batch, seq, g, ids, text)
        late += _text_fallback_variants(model, cfg, params, batch, seq, g, ids, text)
    late += _audio_fallback_variants(model, cfg, params, batch, seq, g, text)
    late += _embeds_variants(model, cfg, params, batch, seq, g, text)
    late += _required_merges(model, variants + late)
    no_cache = "use_cache" in params or "past_key_values" in params and _takes_kwargs(model)
    out = []
    for group in (variants, late):
        out += group
        if no_cache:
            # fallbacks: models whose cache cannot be built for this config (a
            # hybrid model with linear-attention layers only asks the cache for
            # its length) run without one; a CausalLM head without the
            # parameter passes it on to its model through **kwargs
            out += [(f"{lab}+use_cache=False", {**v, "use_cache": False}) for lab, v in list(group)]
    return out


def _text_fallback_variants(model: Any, cfg: Any, params: set, batch: int, seq: int, g: Any, ids: Any,
                            text: dict) -> list:
    """Text inputs the plain variant gets wrong: a sequence longer than a
    small position table (OWL-ViT's text model: 16), a per-example id the
    forward needs besides the tokens (X-MOD's ``lang_ids``: adapter 0), or
    embeddings instead of ids (a vocabulary of one: Decision Transformer)."""
    import torch

    out = []
    P = cfg.__dict__.get("max_position_embeddings")
    if isinstance(P, int) and not isinstance(P, bool) and 0 < P < seq:
        out.append((f"text(seq={P})", {k: (ids(P) if k.endswith("input_ids") else torch.ones(batch, P, dtype=v.dtype))
                                       if torch.is_tensor(v) and v.dim() == 2 and v.shape[1] == seq else v
                                       for k, v in text.items()}))
    skip = {"position_ids", "token_type_ids", "decoder_position_ids", "mm_token_type_ids", "cache_position"}
    for p_ in sorted(params):
        if p_.endswith("_ids") and not p_.endswith("input_ids") and p_ not in text and p_ not in skip:
            out.append((f"text+{p_}(B,)", {**text, p_: torch.zeros(batch, dtype=torch.long)}))
    return out


def _embeds_variants(model: Any, cfg: Any, params: set, batch: int, seq: int, g: Any, text: dict) -> list:
    """Embeddings instead of ids: a sub-model fed embeddings by its parent (a
    talker, a code-to-wave transformer), or one whose vocabulary is a
    placeholder (Decision Transformer), at the width of its own token table
    (else the config's), alone and with the other id streams."""
    import torch

    if "inputs_embeds" not in params:
        return []
    try:
        E = int(model.get_input_embeddings().weight.shape[-1])
    except Exception:  # noqa: BLE001
        E = _first_attr(cfg, tuple(HIDDEN_KEYS), None)
    if not (_int(E) and 0 < E <= 8192):
        return []
    emb = {"inputs_embeds": torch.randn(batch, seq, E, generator=g)}
    if "attention_mask" in params:
        emb["attention_mask"] = torch.ones(batch, seq, dtype=torch.long)
    out = [("inputs_embeds", emb)]
    others = {k: v for k, v in text.items() if k not in ("input_ids", "attention_mask")}
    if others:  # with the other id streams (a talker's thinker ids, for its positions)
        out.append(("inputs_embeds+ids", {**emb, **others}))
    return out


def _audio_fallback_variants(model: Any, cfg: Any, params: set, batch: int, seq: int, g: Any, text: dict) -> list:
    """Audio layouts the plain variants miss: spectrogram ``input_values``
    (B, max_length, mel) (AST), 4-D features (B, 1, T, mel) (CLAP), stacked
    frames of the projection's input width (Wav2Vec2-BERT: 2 x 80), 128 mel
    bins where the config names none, and ``input_values`` that are already
    hidden states (SpeechT5 without pre-nets, with decoder_input_values)."""
    import torch

    out = []
    dec = {k: v for k, v in text.items() if k == "decoder_input_ids"}
    mel = _first_attr(cfg, ("num_mel_bins", "feature_size", "n_mels", "num_mel_filters", "input_feat_per_channel"),
                      None)
    mels = [m for m in (mel, 128) if isinstance(m, int) and 0 < m <= 512]
    mels = list(dict.fromkeys(mels))
    T = _first_attr(cfg, ("max_length", "max_audio_length", "num_frames"), 64)
    T = T if isinstance(T, int) and 0 < T <= 4096 else 64
    if "input_values" in params:
        for m in mels:
            out.append((f"spectrogram(B,T={T},mel={m})", {**dec, "input_values": torch.randn(batch, T, m, generator=g)}))
        H = _first_attr(cfg, tuple(HIDDEN_KEYS), None)
        if isinstance(H, int) and 0 < H <= 8192:
            x = {**dec, "input_values": torch.randn(batch, seq, H, generator=g)}
            if "decoder_input_values" in params:
                x["decoder_input_values"] = torch.randn(batch, seq // 2, H, generator=g)
            out.append(("input_values(B,T,hidden)", x))
    if "input_features" in params:
        dec = text if "input_ids" in text else dec  # a text+audio model (CLAP) gets its text too
        widths = [w for w in (_first_attr(cfg, ("feature_projection_input_dim",), None),) if isinstance(w, int)
                  and 0 < w <= 4096]
        for m in mels:
            out.append((f"audio(B,1,T,mel={m})", {**dec, "input_features": torch.randn(batch, 1, T, m, generator=g)}))
        for m in widths + [128]:
            if m != mel:
                out.append((f"audio(B,T,{m})", {**dec, "input_features": torch.randn(batch, 64, m, generator=g)}))
                out.append((f"audio(B,{m},T)", {**dec, "input_features": torch.randn(batch, m, 64, generator=g)}))
    return out


def _required_merges(model: Any, variants: list) -> list:
    """A forward that requires two modalities at once (PE-Audio: text and
    waveform; X-Codec2: waveform and features): each variant completed with
    the missing required inputs of the first variant that has them."""
    req = {p.name for p in _params(model.forward).values() if p.default is p.empty
           and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    out, seen = [], set()
    for lab, v in variants:
        missing = req - set(v)
        if not missing or not req & set(v):
            continue
        # one missing input: every layout of it in turn; more: the first of each
        donors = [[(l2, v2) for l2, v2 in variants if k in v2] for k in sorted(missing)]
        if any(not d for d in donors):
            continue
        choices = donors[0] if len(donors) == 1 else [None]
        for choice in choices:
            merged, labs = dict(v), [lab]
            for d in ([choice] if choice is not None else [d[0] for d in donors]):
                merged.update({k2: x for k2, x in d[1].items() if k2 not in merged})
                labs.append(d[0])
            key = tuple(sorted((k2, tuple(getattr(x, "shape", ()))) for k2, x in merged.items()))
            if req <= set(merged) and key not in seen:
                seen.add(key)
                out.append(("+".join(labs), merged))
    return out


def _takes_kwargs(model: Any) -> bool:
    return any(p.kind == p.VAR_KEYWORD for p in _params(model.forward).values())


def _codebook_counts(cfg: Any) -> list[int]:
    """Codebooks of an audio-token model (``num_codebooks``, Bark's
    ``n_codes_total``, or ``num_channels`` of a text-like config without an
    image: Dia's decoder), most specific first."""
    out: list[int] = []
    for keys, textlike in ((("num_codebooks", "n_codes_total"), False), (("num_channels",), True)):
        for c in _flat_cfgs(cfg):
            d = c.__dict__
            if textlike and (not isinstance(d.get("vocab_size"), int) or "image_size" in d or "patch_size" in d):
                continue
            for k in keys:
                v = d.get(k)
                if isinstance(v, int) and not isinstance(v, bool) and 1 < v <= 64 and v not in out:
                    out.append(v)
    return out


def _required_ints(model: Any) -> dict:
    """Required ``int`` parameters of the forward (Bark's ``codebook_idx``):
    1, a valid index past a first given codebook."""
    return {p.name: 1 for p in _params(model.forward).values() if p.default is p.empty
            and p.annotation in (int, "int")}


def _codebook_variants(model: Any, cfg: Any, batch: int, seq: int, g: Any, ids: Any, text: dict) -> list:
    """Multi-codebook audio tokens: each id stream of ``text`` in turn laid out
    as (B*K, T) (MusicGen's documented layout: one row per codebook; a
    transposed layout with as many elements runs eagerly but is not what the
    model means), (B, T, K), (B, K, T) or (B, T, K+1) (a text stream beside
    K audio streams, Kyutai), K the config's codebook count."""
    out = []
    ints = _required_ints(model)
    for K in _codebook_counts(cfg):
        for key in [k for k in text if k.endswith("input_ids")]:
            T = text[key].shape[1]
            for lab, shape in (("(B*K,T)", (batch * K, T)), ("(B,T,K)", (batch, T, K)), ("(B,K,T)", (batch, K, T)),
                               ("(B,T,K+1)", (batch, T, K + 1))):
                x = {**text, **ints, key: ids(math.prod(shape) // batch).reshape(shape)}
                out.append((f"text+{key}{lab} K={K}", x))
    return out


def _required(model: Any, name: str) -> bool:
    p = _params(model.forward).get(name)
    return p is not None and p.default is p.empty


def _packed_patch_variants(model: Any, cfg: Any, params: set, batch: int, g: Any, ch: int) -> list:
    """Packed patches for a vision tower with ``grid_thw``: one row per patch,
    (C*t*p*p) flat or (C, p, p), a (1, 2m, 2m) grid per image with ``m`` the
    spatial merge size (with ``merge_sizes`` where the forward takes them)."""
    import torch

    p_, t_, m_ = _patch_geometry(_vision_cfg(cfg))
    gh = gw = 2 * m_
    n = batch * gh * gw
    extra: dict = {"grid_thw": torch.tensor([[1, gh, gw]] * batch)}
    if "merge_sizes" in params:
        extra["merge_sizes"] = torch.tensor([m_] * batch)
    flat = torch.randn(n, ch * t_ * p_ * p_, generator=g)
    out = [("patches+grid_thw", {"pixel_values": flat, **extra})]
    out.append(("patches(N,C,p,p)+grid_thw", {"pixel_values": flat.reshape(n, ch * t_, p_, p_)}))
    out[-1][1].update(extra)
    out.append(("patches(1,N,C,p,p)+grid_thw", {"pixel_values": flat.reshape(1, n, ch * t_, p_, p_), **extra}))
    return out


def _patchified_variants(cfg: Any, params: set, batch: int, g: Any, ch: int) -> list:
    """Images as rows of flattened patches (B, N, C*p*p) with their layout:
    ``spatial_shapes`` (rows, columns) and a patch mask (SigLIP-2 NaFlex), or
    ``pixel_position_ids`` (x, y) per patch (Gemma 4); the grid side is a
    multiple of the pooling kernel / spatial merge size."""
    import torch

    p_, _t, m_ = _patch_geometry(_vision_cfg(cfg))
    k = _first_attr(cfg, ("pooling_kernel_size",), None)
    k = k if isinstance(k, int) and 0 < k <= 8 else m_
    side = 2 * k if k > 1 else 4
    n = side * side
    x: dict = {"pixel_values": torch.randn(batch, n, ch * p_ * p_, generator=g)}
    if "spatial_shapes" in params:
        x["spatial_shapes"] = torch.tensor([[side, side]] * batch)
    if "pixel_attention_mask" in params:
        x["pixel_attention_mask"] = torch.ones(batch, n, dtype=torch.long)
    if "pixel_position_ids" in params:
        yy, xx = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
        x["pixel_position_ids"] = torch.stack([xx.reshape(-1), yy.reshape(-1)], -1)[None].repeat(batch, 1, 1)
    return [("patchified(B,N,C*p*p)", x)]


def _required_image_companions(model: Any, cfg: Any, params: set, batch: int, g: Any, ch: int, h: int,
                                w: int) -> dict:
    """Required inputs that come with an image: another image and its masks
    (SegGPT's ``prompt_pixel_values``/``prompt_masks``, shaped like the
    image), a task's token sequence (OneFormer's ``task_inputs``, as float
    ids of the config's ``task_seq_len``)."""
    import torch

    if "pixel_values" not in params:
        return {}
    out: dict = {}
    for name in params:
        if name == "pixel_values" or not _required(model, name):
            continue
        if name.endswith("pixel_values") or (name.endswith(("_masks", "_mask")) and name.startswith("prompt")):
            out[name] = torch.randn(batch, ch, h, w, generator=g)
        elif name == "task_inputs":
            n = _first_attr(cfg, ("task_seq_len",), 16)
            n = n if isinstance(n, int) and 0 < n <= 512 else 16
            out[name] = torch.randint(1, 100, (batch, n), generator=g).float()
    return out


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

    params = _params(model.forward)
    first = next((p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
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
        if lab == "(B,T,hidden)" and "encoder_hidden_states" in params and isinstance(E, int) \
                and 0 < E <= 8192:
            x["encoder_hidden_states"] = torch.randn(batch, seq, E, generator=g)
        for mask in ("attention_mask", "mask"):
            if mask in params and t_axis is not None:
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
    # a config that counts its time features (TimeSeriesTransformer, Informer)
    # sizes its input projection by them: zero of them is a width-0 tensor
    ntf_min = 0 if isinstance(_first_attr(cfg, ("num_time_features",), None), int) else 1
    out = []
    for shape_kind in ("(B,T)", "(B,T,C)"):
        if shape_kind == "(B,T)" and nin != 1:
            continue
        pv = torch.randn(batch, past, *(() if shape_kind == "(B,T)" else (nin,)), generator=g)
        x: dict = {"past_values": pv}
        if "past_time_features" in params:
            x["past_time_features"] = torch.randn(batch, past, max(ntf, ntf_min), generator=g)
        if "past_observed_mask" in params:
            x["past_observed_mask"] = torch.ones_like(pv)
        if "future_time_features" in params:
            x["future_time_features"] = torch.randn(batch, pred, max(ntf, ntf_min), generator=g)
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


def _vision_cfg(cfg: Any) -> Any:
    vc = cfg.__dict__.get("vision_config")
    return vc if _is_config(vc) else cfg


def _patch_geometry(vc: Any) -> tuple[int, int, int]:
    """(patch size, temporal patch size, spatial merge size) of a vision config."""
    def one(k: str, default: int) -> int:
        v = vc.__dict__.get(k) or default
        v = v[0] if isinstance(v, (list, tuple)) else v
        return v if isinstance(v, int) and v > 0 else default
    t = next((one(k, 1) for k in ("temporal_patch_size", "patch_temporal") if k in vc.__dict__), 1)
    return one("patch_size", 14), t, one("spatial_merge_size", 1)


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
    pos_mask = "image_embeds_position_mask" in params  # Kosmos-2: image positions as a mask, no token
    if tok is None and not pos_mask:
        return []
    vc = _vision_cfg(cfg)
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
        if n is None and pos_mask:  # no get_image_features: the config's count of image queries
            q = _first_attr(cfg, ("latent_query_num",), None)
            n = q * batch if isinstance(q, int) and q > 0 else None
        if not n or n % batch:
            continue
        per = n // batch
        L = max(seq, per + 8)
        x = dict(text)
        x["input_ids"] = ids(L)
        if tok is not None:
            x["input_ids"][:, 2:2 + per] = tok
        if pos_mask:
            x["image_embeds_position_mask"] = torch.zeros(batch, L, dtype=torch.long)
            x["image_embeds_position_mask"][:, 2:2 + per] = 1
        if "attention_mask" in x:
            x["attention_mask"] = torch.ones(batch, L, dtype=torch.long)
        if "token_type_ids" in params:
            x["token_type_ids"] = torch.zeros(batch, L, dtype=torch.long)
        if "mm_token_type_ids" in params:
            x["mm_token_type_ids"] = (x["input_ids"] == (-1 if tok is None else tok)).long()
        out.append((f"text+image{lab}+{per} image tokens", {**x, **kw}))
    if "position_ids" in params and any(isinstance(getattr(m, "mrope_section", None), (list, tuple))
                                        for m in model.modules()):
        # multimodal rotary positions given, (3, B, L): the model's own
        # computation may read config attributes a default config lacks
        out += [(f"{lab}+position_ids(3,B,L)", {**x, "position_ids": torch.arange(
            x["input_ids"].shape[1]).expand(3, batch, -1).clone()}) for lab, x in list(out)]
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


def shrink_depth(cfg: Any, notes: list, vocab: bool, depth: int = 0, repeat: int = 1) -> None:
    """The ``layers``/``depth`` levels: cut the layer counts (and with
    ``vocab`` the vocabulary, moving token ids inside it), nothing else."""
    if depth > 4:
        return
    _each_subconfig(cfg, notes, lambda sub, sub_notes: shrink_depth(sub, sub_notes, vocab, depth + 1, repeat))
    _cut_layers(cfg, notes, repeat)
    v = _get(cfg, "vocab_size")
    if vocab and isinstance(v, int) and v > MAX_VOCAB:
        _set(cfg, "vocab_size", MAX_VOCAB, notes)
    if vocab and depth == 0:
        _remap_token_ids(cfg, notes)


def _own_config_class(cls: Any) -> Any:
    """The config class ``cls`` is built from.  A sub-model (a text or vision
    tower, a depth decoder) often inherits its composite's ``config_class``
    but takes its own sub-config: the one its ``__init__`` annotates, else
    the sub-config named like the class (``XDepthDecoderConfig`` for
    ``XDepthDecoderForCausalLM``)."""
    cfg_cls = getattr(cls, "config_class", None)
    if cfg_cls is None:
        return None
    try:
        ann = inspect.signature(cls.__init__).parameters["config"].annotation
    except (KeyError, TypeError, ValueError):
        ann = None

    def subs(c: Any, depth: int = 0) -> list:
        out = []
        for s in (getattr(c, "sub_configs", None) or {}).values():
            if _is_config_cls(s) and s.__module__.startswith("transformers.models.") and depth < 3:
                out += [s] + subs(s, depth + 1)
        return out

    if _is_config_cls(ann):  # annotated: that class if it is one of the sub-configs
        return ann if ann in subs(cfg_cls) else cfg_cls
    stem = lambda c: c.__name__[: -len("Config")] if c.__name__.endswith("Config") else c.__name__  # noqa: E731
    best = max((s for s in subs(cfg_cls) if cls.__name__.startswith(stem(s))), key=lambda s: len(stem(s)),
               default=None)
    if best is not None and len(stem(best)) > len(stem(cfg_cls)) and cls.__name__.startswith(stem(cfg_cls)):
        return best
    return cfg_cls


def _fill_none_subconfigs(cfg: Any, notes: list) -> bool:
    """Optional sub-configs left None (a tower the model is then built
    without) become what the composite makes of an empty dict: for models
    that build the tower regardless.  True if one was filled."""
    filled = False
    for c in _flat_cfgs(cfg):
        for k in (getattr(type(c), "sub_configs", None) or {}):
            if k in c.__dict__ and c.__dict__[k] is None:
                try:
                    sub = getattr(type(c)(**{k: {}}), k)
                except Exception:  # noqa: BLE001
                    continue
                if _is_config(sub):
                    setattr(c, k, sub)
                    notes.append(f"{k}:None->{type(sub).__name__}()")
                    filled = True
    return filled


STOCK_SUBCONFIGS = {"vision": "ViTConfig", "speech": "Wav2Vec2Config", "text": "BertConfig"}


def _stock_config(cls: Any, cfg_cls: Any) -> Any:
    """A composite that has no default for its sub-configs (encoder-decoder
    and dual-encoder wrappers around any two models): small stock models by
    each sub-config's role: a ViT for vision, a Wav2Vec2 for speech (an
    encoder of a model fed ``input_values``/``input_features``), else BERT
    (as a decoder with cross-attention for the decoder)."""
    import transformers

    params = set(_params(cls.forward))
    kw = {}
    for k in getattr(cfg_cls, "sub_configs", None) or {}:
        role = "vision" if "vision" in k or (k == "encoder" and "pixel_values" in params) else \
            "speech" if k == "encoder" and params & {"input_values", "input_features"} else "text"
        sub = getattr(transformers, STOCK_SUBCONFIGS[role])()
        if "decoder" in k:
            sub.is_decoder, sub.add_cross_attention = True, True
        kw[k] = sub.to_dict()
    return cfg_cls(**kw)


def make_config(cls: Any, level: str = "shrunk", fill_subconfigs: bool = False, repeat: int = 1) -> tuple[Any, list]:
    """The default config of ``cls``, repaired and shrunk to ``level``
    (layer patterns keep every kind ``repeat`` times)."""
    cfg_cls = _own_config_class(cls)
    if cfg_cls is None:
        raise RuntimeError("no config_class")
    if level not in LEVELS:
        raise ValueError(f"unknown shrink level {level!r}")
    try:
        cfg = cfg_cls()
    except ValueError as e:
        if "sub-configurations are passed" not in str(e):
            raise
        cfg = _stock_config(cls, cfg_cls)
    notes: list = []
    if fill_subconfigs:
        _fill_none_subconfigs(cfg, notes)
    repair_config(cfg, notes)
    if level == "shrunk":
        before = {id(c): dict(c.__dict__) for c in _flat_cfgs(cfg)}
        shrink_config(cfg, notes, repeat=repeat)
        _tie_widths(cfg, notes)
        _tie_parent_widths(cfg, before, notes)
    else:
        shrink_depth(cfg, notes, vocab=level == "layers", repeat=repeat)
    _refresh_derived(cfg, notes)
    return cfg, notes


def _absent_value(c: Any, root: Any, name: str) -> tuple[bool, Any]:
    """A value for a field the model reads that ``c``'s class does not
    define (its composite sets it on the sub-config, or the model reads a
    sibling architecture's field), from what the field means."""
    d = c.__dict__
    h, hd = d.get("num_attention_heads"), _head_size(d)
    if name in KV_HEAD_KEYS and _int(h):
        return True, h  # no key/value grouping
    if name == "head_dim" and hd:
        return True, hd
    held = [o.__dict__[name] for o in _flat_cfgs(root) if o is not c and o.__dict__.get(name) is not None]
    if held:  # the composite keeps it on another sub-config
        return True, held[0]
    if name.endswith("intermediate_size"):
        for k in ("moe_intermediate_size", "intermediate_size"):
            if _int(d.get(k)):
                return True, d[k]
    if name.endswith("merge_size"):
        return True, 2  # the usual 2x2 patch merge of a Qwen-VL-style tower
    if name == "initializer_range":
        return True, 0.02
    if name == "rope_theta":
        rp = _first_attr(root, ("rope_parameters",), None)
        theta = rp.get("rope_theta") if isinstance(rp, dict) else None
        return True, float(theta or getattr(c, "default_theta", 10000.0))
    if name == "attention_multiplier" and hd:
        return True, hd ** -0.5  # the usual attention scaling
    if name.endswith(("_multiplier", "_scaling", "_scale")):
        return True, 1.0
    if name.endswith(("dropout", "_pdrop", "dropout_rate", "dropout_prob")):
        return True, 0.0
    if name.endswith("_eps"):
        return True, 1e-6
    return False, None


def _construct(cls: Any, cfg: Any, notes: list) -> Any:
    """``cls(cfg)``; a field the model reads but the config lacks (an
    AttributeError naming a config class) is filled and the build retried."""
    import re

    for _ in range(8):
        try:
            return cls(cfg)
        except ValueError as e:
            # an encoder-only class of an encoder-decoder family (T5Gemma's)
            if "encoder-only" in str(e) and getattr(cfg, "is_encoder_decoder", False):
                _set(cfg, "is_encoder_decoder", False, notes)
                continue
            raise
        except AttributeError as e:
            m = re.match(r"'(\w+)' object has no attribute '(\w+)'", str(e))
            owners = [c for c in _flat_cfgs(cfg) if m and type(c).__name__ == m.group(1)
                      and m.group(2) not in c.__dict__] if m else []
            fixed = False
            for c in owners:
                ok, val = _absent_value(c, cfg, m.group(2))
                if ok:
                    setattr(c, m.group(2), val)
                    notes.append(f"{m.group(2)}:absent->{_short(val)}")
                    fixed = True
            if not fixed:
                raise
    return cls(cfg)


def build(cls: Any, seed: int = 0, level: str = "shrunk") -> tuple[Any, list]:
    """A random-weight model of ``cls`` from its default config at ``level``.
    A build that fails is retried once per remedy: two layers of every kind
    when weights are tied across the layers of a kind (Zamba's shared
    transformer), and towers left None filled when the model builds them
    regardless."""
    import torch

    opts: dict = {}
    while True:
        cfg, notes = make_config(cls, level, **opts)
        try:
            if level != "shrunk":
                with torch.device("meta"):
                    n = count_params(_construct(cls, cfg, []))
                cfg, notes = make_config(cls, level, **opts)  # a model's __init__ may edit its config
            else:
                n = 0
            if n <= MAX_PARAMS:
                torch.manual_seed(seed)
                model = _construct(cls, cfg, notes)
                break
        except Exception as e:  # noqa: BLE001
            if "tie_weights_keys" in str(e) and "repeat" not in opts:
                opts["repeat"] = 2
            elif "fill_subconfigs" not in opts and _fill_none_subconfigs(make_config(cls, level, **opts)[0], []):
                opts["fill_subconfigs"] = True
            else:
                raise
            continue
        raise RuntimeError(f"{n / 1e6:.0f}M parameters at shrink level {level!r} (limit {MAX_PARAMS / 1e6:.0f}M)")
    if _fit_mrope_sections(model, notes):
        torch.manual_seed(seed)
        model = _construct(cls, cfg, notes)
    model.to(torch.float32)
    return model, notes


def _fit_mrope_sections(model: Any, notes: list) -> bool:
    """Multimodal rotary embeddings split the rotary frequencies into
    (temporal, height, width) sections; a default config without
    ``mrope_section`` gets the code's fallback, sized for the checkpoint's
    head size, not the config's.  Scale the sections to the frequencies the
    built rotary module has and write them into its config (True: rebuild)."""
    changed = False
    for mod in model.modules():
        sec, inv = getattr(mod, "mrope_section", None), getattr(mod, "inv_freq", None)
        rp = getattr(getattr(mod, "config", None), "rope_parameters", None)
        if not (isinstance(sec, (list, tuple)) and sec and all(isinstance(s, int) and s > 0 for s in sec)
                and inv is not None and hasattr(inv, "numel") and isinstance(rp, dict)
                and "rope_type" in rp):
            continue
        n = int(inv.numel())
        if sum(sec) == n or n < len(sec):
            continue
        new = [max(1, s * n // sum(sec)) for s in sec]
        new[-1] += n - sum(new)
        if new[-1] < 1:
            continue
        rp["mrope_section"] = new
        notes.append(f"mrope_section:{list(sec)}->{new}")
        changed = True
    return changed
