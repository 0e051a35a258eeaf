"""GM408 end to end with torch: the loop over a tensor of sizes is handed the
Python list the tensor was built from, so Dynamo traces it without reading
tensor data, and the mended module computes exactly what the original does.

The fixture is the rule's own (tests/fixtures/rules/GM408/proposals.py: a
Deformable-DETR-style encoder and proposal generator with a sizes tensor
passed down two levels of calls); it is mended with graphmend.fix_source, so
this checks the real rewrite.
"""
from __future__ import annotations

import pathlib

import pytest

torch = pytest.importorskip("torch")
import graphmend  # noqa: E402
from _torch_cases import load_module, same_tensors  # noqa: E402

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "GM408" / "proposals.py"


def _module(source: str):
    return load_module(source, "gm408_case")


def _inputs(seed: int):
    g = torch.Generator().manual_seed(seed)
    shapes = [(6, 5), (3, 3), (2, 1)] if seed % 2 else [(4, 4), (2, 3)]
    feature_maps = [torch.randn(2, 4, h, w, generator=g) for h, w in shapes]
    total = sum(h * w for h, w in shapes)
    masks = torch.rand(2, total, generator=g) > 0.5
    valid_ratios = torch.rand(2, len(shapes), 2, generator=g) + 0.5
    return feature_maps, masks, valid_ratios


def _same(a, b):
    return same_tensors(a, b)


def test_fix_is_unsafe_only():
    source = FIXTURE.read_text()
    safe = graphmend.fix_source(source, select="GM408")
    assert safe.source == source
    assert [d.applicability for d in safe.diagnostics] == ["unsafe"] * 3


def test_sizes_loop_traces_without_breaks_and_computes_the_same():
    source = FIXTURE.read_text()
    result = graphmend.fix_source(source, select="GM408", unsafe=True)
    assert result.status == "fixed"
    compile(result.source, "<mended>", "exec")
    assert graphmend.fix_source(result.source, select="GM408", unsafe=True).source == result.source
    original, mended = _module(source), _module(result.source)

    torch._dynamo.reset()
    before = graphmend.explain(original.Model(), *_inputs(1))
    torch._dynamo.reset()
    after = graphmend.explain(mended.Model(), *_inputs(1))
    # both loops broke the graph and made Dynamo skip their frames
    assert before.break_events > 0 and before.graphs > 1
    assert {f.function for f in before.skipped_frames} == {"get_reference_points", "generate_proposals"}
    assert after.break_events == 0 and after.graphs == 1 and not after.skipped_frames

    for seed in range(4):  # fresh shapes and values, eager and compiled
        want = original.Model()(*_inputs(seed))
        assert _same(mended.Model()(*_inputs(seed)), want)
        torch._dynamo.reset()
        compiled = torch.compile(mended.Model(), backend="eager")
        assert _same(compiled(*_inputs(seed)), want)


def test_local_list_loop():
    source = FIXTURE.read_text()
    mended = _module(graphmend.fix_source(source, select="GM408", unsafe=True).source)
    original = _module(source)
    x = torch.randn(3, 40)
    sizes = [(2, 3), (4, 5), (1, 1)]
    torch._dynamo.reset()
    assert graphmend.explain(mended.Local(), x, sizes).break_events == 0
    assert _same(mended.Local()(x, sizes), original.Local()(x, sizes))


FILL_LENGTHS = '''
import torch
from torch import nn


class Padding(nn.Module):
    def forward(self, x, lengths):
        mask = torch.zeros(x.shape[0], x.shape[1], dtype=torch.bool)
        for i, n in enumerate(lengths.tolist()):
            mask[i, :n] = True
        out = x.clone()
        for b, length in enumerate((lengths - 1).tolist()):
            out[b, length:] = -1.0
        return x.masked_fill(~mask[..., None], 0.0) + out
'''


def test_rows_filled_up_to_their_lengths_are_one_graph_with_the_same_values():
    import graphmend
    from _torch_cases import load_module

    result = graphmend.fix_source(FILL_LENGTHS, select=["GM402"])
    assert result.status == "fixed"
    assert result.source.count("_graphmend_rt.fill_lengths(") == 2 and "tolist" not in result.source
    orig = load_module(FILL_LENGTHS, "gm402_orig").Padding()
    mended = load_module(result.source, "gm402_mended").Padding()
    gen = torch.Generator().manual_seed(4)
    for rows, lengths in ((3, [2, 0, 5]), (4, [-1, 7, 3]), (3, [-9, 1]), (2, [])):
        x = torch.randn(rows, 5, 2, generator=gen)
        lengths = torch.tensor(lengths, dtype=torch.long)
        want = orig(x, lengths)
        report = graphmend.explain(mended, x, lengths)
        assert (report.graphs, report.break_events, report.skipped_frames) == (1, 0, [])
        if lengths.numel():  # `.tolist()` of no element traces
            assert graphmend.explain(orig, x, lengths).break_events >= 1
        torch._dynamo.reset()
        for got in (mended(x, lengths), torch.compile(mended, backend="eager")(x, lengths)):
            assert torch.equal(got, want)
