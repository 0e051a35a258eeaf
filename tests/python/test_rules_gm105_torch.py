"""GM105 end to end with torch: LayerDrop's branch on a random draw.

With the layer-drop probability at 0 (the default of most configs) the
mended module traces as one graph in train mode (no break event, no skipped
frame, no ``unimplemented`` counter entry) where the original broke in every
layer loop; with a positive probability the break stays and the mended
module still computes exactly what the original computes (the same draws,
the same layers skipped). Outputs and gradients are compared bitwise with
the original run eagerly under the same seed, on fresh inputs.

The small model is the fixture tests/fixtures/rules/GM105/forms.py (every
form); the real ones are transformers 5.18 classes built from config with
random weights, their modeling file mended with graphmend.fix_source (the
C++ rule) and loaded beside the original in its package.
"""
from __future__ import annotations

import importlib
import importlib.util
import math
import random
import sys
import types
from fractions import Fraction
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import graphmend  # noqa: E402
import graphmend.runtime as rt  # noqa: E402
from graphmend.judge import explain_with_output  # noqa: E402
from _torch_cases import load_module, same_tensors  # noqa: E402

FORMS = Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "GM105" / "forms.py"


def _mend(source: str, **kw) -> str:
    result = graphmend.fix_source(source, select="GM105", **kw)
    assert result.status == "fixed", (result.status, [d.message for d in result.diagnostics])
    compile(result.source, "<mended>", "exec")
    assert graphmend.fix_source(result.source, select="GM105", **kw).source == result.source
    return result.source


def _seed(s: int) -> None:
    torch.manual_seed(s)
    random.seed(s)


def _grads(model):
    return tuple(p.grad.clone() for p in model.parameters() if p.grad is not None)


# ---------------------------------------------------------------- the guards


THRESHOLDS = [0, 0.0, -0.0, -1, -0.5, -math.inf, math.nan, 1e-30, 0.3, 1, 1.5, math.inf, True, False]


@pytest.mark.parametrize("q", THRESHOLDS, ids=repr)
def test_guards_keep_the_truth_value_for_every_number(q):
    # torch.rand's extremes (0.0 is possible) and inner points
    for v in (0.0, 2.0**-24, 0.5, 1.0 - 2.0**-24):
        p = torch.tensor(v)
        assert bool(rt.above(q, 0) and p < q) == bool(p < q)
        assert bool(rt.at_most(q, 0) or p >= q) == bool(p >= q)
    assert rt.above(q, 0) == (not (q <= 0) and not (isinstance(q, float) and math.isnan(q)))


@pytest.mark.parametrize("q", [torch.tensor(0.0), torch.tensor(0.3), Fraction(0), None, "0", (0,)],
                         ids=repr)
def test_guards_leave_anything_but_a_python_number_to_the_comparison(q):
    import numpy as np

    assert rt.above(q, 0) is True and rt.at_most(q, 0) is False
    assert rt.above(np.float64(0.0), 0) is True  # a float subclass: not folded, not changed
    p = torch.tensor(0.25)
    for guarded, plain in ((lambda: rt.above(q, 0) and p < q, lambda: p < q),
                           (lambda: rt.at_most(q, 0) or p >= q, lambda: p >= q)):
        try:
            expected = plain()
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)):
                guarded()
        else:
            assert same_tensors(guarded(), expected)


# ---------------------------------------------------------------- the fixture


def _forms(layerdrop: float):
    config = types.SimpleNamespace(layerdrop=layerdrop, encoder_layerdrop=layerdrop)
    source = FORMS.read_text()
    mended_src = _mend(source)
    assert mended_src == FORMS.with_name("forms.fixed.py").read_text()
    _seed(0)
    orig = load_module(source, "gm105_case").Encoder(config).train()
    mended = load_module(mended_src, "gm105_case").Encoder(config).train()
    mended.load_state_dict(orig.state_dict())
    return orig, mended


def _run(model, x, seed, compiled=None):
    _seed(seed)
    x = x.clone().requires_grad_(True)
    model.zero_grad(set_to_none=True)
    if compiled is None:
        out = model(x)
        report = None
    else:
        report, out = compiled(model, x)
    out.sum().backward()
    return report, out.detach(), x.grad.clone(), _grads(model)


@pytest.mark.parametrize("layerdrop", [0.0, 0.3])
def test_every_form_traces_as_one_graph_at_zero_and_is_exact(layerdrop):
    orig, mended = _forms(layerdrop)
    gen = torch.Generator().manual_seed(7)
    for seed in (1, 2, 3):
        x = torch.randn(2, 4, generator=gen)
        before = _run(orig, x, seed, compiled=explain_with_output)[0]
        assert before.break_events >= 1 or before.skipped_frames
        reference = _run(orig, x, seed)
        got = _run(mended, x, seed, compiled=explain_with_output)
        after = got[0]
        if layerdrop == 0.0:
            assert (after.graphs, after.break_events, after.skipped_frames) == (1, 0, [])
            assert after.counter_unimplemented == 0 and before.graphs != 1
        else:  # the draw decides: the break stays, on the same lines
            assert after.break_events >= 1 or after.skipped_frames
        for a, b in zip(got[1:], reference[1:]):
            assert same_tensors(a, b)
        # and eagerly
        for a, b in zip(_run(mended, x, seed)[1:], reference[1:]):
            assert same_tensors(a, b)
        # the RNG streams are where the original left them
        _run(orig, x, seed)
        after_orig = (torch.rand(3), random.random())
        _run(mended, x, seed, compiled=explain_with_output)
        assert same_tensors(torch.rand(3), after_orig[0]) and random.random() == after_orig[1]


def test_inductor_backend_computes_the_same():
    from torch._inductor import config as inductor_config

    orig, mended = _forms(0.0)
    gen = torch.Generator().manual_seed(3)
    with inductor_config.patch(fallback_random=True):
        torch._dynamo.reset()
        compiled = torch.compile(mended)  # default backend: Inductor
        for seed in (1, 2):
            x = torch.randn(2, 4, generator=gen)
            _seed(seed)
            got = compiled(x)
            _seed(seed)
            torch.testing.assert_close(got, orig(x), rtol=1e-6, atol=1e-6)
    torch._dynamo.reset()


# ---------------------------------------------------------------- transformers 5.18


def _mended_module(modname: str):
    """The original module and its GM105-mended copy, loaded beside it."""
    plain = importlib.import_module(modname)
    source = Path(plain.__file__).read_text(encoding="utf-8")
    mended_src = _mend(source, regions="all")
    pkg, _, base = modname.rpartition(".")
    name = f"{pkg}._gm105_{base}"
    spec = importlib.util.spec_from_loader(name, loader=None, origin=plain.__file__)
    mod = importlib.util.module_from_spec(spec)
    mod.__file__ = plain.__file__
    sys.modules[name] = mod
    exec(compile(mended_src, plain.__file__, "exec"), mod.__dict__)
    return plain, mod


TEXT = dict(vocab_size=64, max_position_embeddings=32)
CASES = {
    # encoder `to_drop` flag + decoder `continue`
    "bart": ("transformers.models.bart.modeling_bart", "BartForConditionalGeneration", "BartConfig",
             dict(TEXT, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                  decoder_attention_heads=2, encoder_ffn_dim=16, decoder_ffn_dim=16)),
    # decoder `continue`
    "opt": ("transformers.models.opt.modeling_opt", "OPTForCausalLM", "OPTConfig",
            dict(TEXT, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, ffn_dim=16,
                 word_embed_proj_dim=16)),
    # `continue` in a decoder-only model
    "biogpt": ("transformers.models.biogpt.modeling_biogpt", "BioGptForCausalLM", "BioGptConfig",
               dict(TEXT, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=16)),
}


@pytest.mark.parametrize("layerdrop", [0.0, 0.3])
@pytest.mark.parametrize("case", sorted(CASES))
def test_transformers_layerdrop_is_one_graph_at_zero_and_exact(case, layerdrop):
    pytest.importorskip("transformers")
    modname, cls, config_name, kw = CASES[case]
    plain, mended = _mended_module(modname)
    kw = dict(kw, layerdrop=layerdrop, encoder_layerdrop=layerdrop, decoder_layerdrop=layerdrop)
    config = getattr(plain, config_name)(**kw)
    _seed(0)
    orig_model = getattr(plain, cls)(config).train()
    mended_model = getattr(mended, cls)(config).train()
    mended_model.load_state_dict(orig_model.state_dict())
    gen = torch.Generator().manual_seed(11)

    def run(model, ids, seed, compiled):
        _seed(seed)
        model.zero_grad(set_to_none=True)
        if compiled:
            report, out = explain_with_output(model, input_ids=ids, labels=ids)
        else:
            report, out = None, model(input_ids=ids, labels=ids)
        out.loss.backward()
        return report, (out.loss.detach(), out.logits.detach()) + _grads(model)

    for seed in (1, 2):
        ids = torch.randint(3, 64, (2, 8), generator=gen)
        before, _ = run(orig_model, ids, seed, compiled=True)
        _, reference = run(orig_model, ids, seed, compiled=False)
        after, got = run(mended_model, ids, seed, compiled=True)
        assert before.break_events >= 1
        assert any("modeling_" + case in s for r in before.reasons for s in r.sites)
        if layerdrop == 0.0:
            assert (after.graphs, after.break_events, after.skipped_frames) == (1, 0, [])
            assert after.counter_unimplemented == 0
        else:
            assert after.break_events >= 1
        assert len(got) == len(reference) and all(same_tensors(a, b) for a, b in zip(got, reference))
