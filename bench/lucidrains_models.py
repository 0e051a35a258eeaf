"""x-transformers and vector-quantize-pytorch under Dynamo, original and mended: code graphmend was not written against.

Builds 16 modules from the two packages (decoders and encoders with rotary,
ALiBi, relative and dynamic position biases, LayerDrop, a continuous wrapper,
a ViT; VectorQuantize with and without k-means init, residual, FSQ, LFQ and
SimVQ quantizers) with random weights, runs each eagerly on a deep copy and
then compiled under graphmend's judge (``graphmend.judge``, the counting
backend), seeding the RNG the same way before both calls, in eval and in
train mode. Each arm runs in its own interpreter; the mended arm imports both
packages under ``graphmend.install(packages=[...])``. Printed per module and
mode: break events in each arm, whether compiled equals eager (bitwise, every
output tensor) in each arm, and whether the arms' eager outputs agree.

The packages are installed apart, so that they cannot pull another torch:

    pip install --no-deps --target /tmp/xtpkg x-transformers==2.31.10 \\
        vector-quantize-pytorch==1.32.0 einops==0.8.2 einx==0.4.3 loguru==0.7.3 \\
        torch-einops-utils==0.2.0 frozendict==2.5.1
    PYTHONPATH=/tmp/xtpkg .venv/bin/python bench/lucidrains_models.py
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import subprocess
import sys


def tensors(o, torch):
    if isinstance(o, torch.Tensor):
        return [o]
    if isinstance(o, (tuple, list)):
        return [t for x in o for t in tensors(x, torch)]
    if isinstance(o, dict):
        return [t for x in o.values() for t in tensors(x, torch)]
    return []


def models(torch):
    from vector_quantize_pytorch import (FSQ, LFQ, ResidualFSQ, ResidualLFQ, ResidualVQ, SimVQ,
                                         VectorQuantize)
    from x_transformers import (ContinuousTransformerWrapper, Decoder, Encoder, TransformerWrapper,
                                ViTransformerWrapper)

    def gen(seed):
        return torch.Generator().manual_seed(seed)

    def tok():
        return torch.randint(0, 256, (2, 32), generator=gen(3))

    def seq():
        return torch.randn(2, 16, 32, generator=gen(4))

    def lm(layers):
        return lambda: TransformerWrapper(num_tokens=256, max_seq_len=64, attn_layers=layers())

    yield "dec", lm(lambda: Decoder(dim=64, depth=2, heads=4)), tok
    yield "dec_rotary", lm(lambda: Decoder(dim=64, depth=2, heads=4, rotary_pos_emb=True,
                                           ff_glu=True, attn_qk_norm=True)), tok
    yield "dec_layerdrop", lm(lambda: Decoder(dim=64, depth=3, heads=4, layer_dropout=0.0)), tok
    yield "dec_alibi", lm(lambda: Decoder(dim=64, depth=2, heads=4, alibi_pos_bias=True,
                                          residual_attn=True)), tok
    yield "enc_relpos", lm(lambda: Encoder(dim=64, depth=2, heads=4, rel_pos_bias=True,
                                           sandwich_norm=True)), tok
    yield "enc_dynpos", lm(lambda: Encoder(dim=64, depth=2, heads=4, dynamic_pos_bias=True)), tok
    yield "continuous", lambda: ContinuousTransformerWrapper(
        dim_in=32, dim_out=8, max_seq_len=64, attn_layers=Encoder(dim=64, depth=2, heads=4)), seq
    yield "vit", lambda: ViTransformerWrapper(
        image_size=32, patch_size=8, num_classes=10, attn_layers=Encoder(dim=64, depth=2, heads=4)), \
        lambda: torch.randn(2, 3, 32, 32, generator=gen(5))
    yield "vq", lambda: VectorQuantize(dim=32, codebook_size=64), seq
    yield "vq_cos_kmeans", lambda: VectorQuantize(dim=32, codebook_size=64, use_cosine_sim=True,
                                                  kmeans_init=True, kmeans_iters=2,
                                                  threshold_ema_dead_code=2), seq
    yield "residual_vq", lambda: ResidualVQ(dim=32, num_quantizers=3, codebook_size=64), seq
    yield "fsq", lambda: FSQ(levels=[8, 5, 5, 5], dim=32), seq
    yield "residual_fsq", lambda: ResidualFSQ(dim=32, levels=[8, 5, 5], num_quantizers=2), seq
    yield "lfq", lambda: LFQ(codebook_size=256, dim=32, entropy_loss_weight=0.1), seq
    yield "residual_lfq", lambda: ResidualLFQ(dim=32, codebook_size=256, num_quantizers=2), seq
    yield "simvq", lambda: SimVQ(dim=32, codebook_size=64), seq


def child(arm: str, mode: str) -> dict:
    if arm == "mended":
        import graphmend

        graphmend.install(packages=["x_transformers", "vector_quantize_pytorch"])
    import torch

    from graphmend.judge import explain_calls

    out = {}
    for name, make, inp in models(torch):
        try:
            torch.manual_seed(0)
            model = make().train(mode == "train")
            x = inp()
            eager_model = copy.deepcopy(model)
            torch.manual_seed(7)
            ref = tensors(eager_model(x), torch)
            torch.manual_seed(7)
            report, outs = explain_calls(model, [((x,), {})])
            got = tensors(outs[0], torch)
            digest = hashlib.sha1()
            for t in ref:
                digest.update(t.detach().float().contiguous().numpy().tobytes())
            out[name] = {"graphs": report.graphs, "breaks": report.break_events,
                         "skipped": len(report.skipped_frames),
                         "bitwise": len(ref) == len(got) and all(
                             torch.equal(a.detach(), b.detach()) for a, b in zip(ref, got)),
                         "sha": digest.hexdigest()[:12],
                         "sites": sorted({s for r in report.reasons for s in r.sites[:1]})}
        except Exception as e:  # a configuration this version cannot build
            out[name] = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=2, metavar=("ARM", "MODE"))
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(*a.child)))
        return 0
    runs = {(arm, mode): subprocess.Popen([sys.executable, __file__, "--child", arm, mode],
                                          stdout=subprocess.PIPE, text=True)
            for mode in ("eval", "train") for arm in ("original", "mended")}
    res = {k: json.loads(p.communicate()[0].strip().splitlines()[-1]) for k, p in runs.items()}
    bad = 0
    print(f"{'module':16s} {'mode':5s} {'breaks orig -> mended':>22s}  compiled == eager  arms agree")
    for mode in ("eval", "train"):
        for name, o in res[("original", mode)].items():
            m = res[("mended", mode)][name]
            if "error" in o or "error" in m:
                print(f"{name:16s} {mode:5s} error: {o.get('error') or m.get('error')}")
                continue
            ok = o["bitwise"] and m["bitwise"] and o["sha"] == m["sha"]
            bad += not ok
            print(f"{name:16s} {mode:5s} {o['breaks']:>12d} -> {m['breaks']:<7d}  "
                  f"{str(o['bitwise']) + '/' + str(m['bitwise']):17s}  {o['sha'] == m['sha']}"
                  + (f"   remaining at {', '.join(s.split('site-packages/')[-1].split('xtpkg/')[-1] for s in m['sites'])}"
                     if m["breaks"] else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
