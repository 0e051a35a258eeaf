"""GM409 end to end with torch 2.13: loops over the rows of ``nonzero()`` of
an expert mask (the eager mixture-of-experts loop), mended into
``graphmend.runtime.nonzero_rows``.

The modules are the C++ fixture tests/fixtures/rules/GM409/forms.py and its
unsafe snapshot (``graphmend.fix_source`` must give it).  With Dynamo's
``capture_dynamic_output_shape_ops`` and ``capture_scalar_outputs`` the
mended loop is traced into one graph (an ``index_add_`` per expert in it)
with no break event, where the original leaves the loop out of the graph or
breaks; without the switches the mended module breaks no more than the
original.  Outputs (counting backend, eager) are bitwise the
original's run eagerly on routings that leave experts out (Inductor, which
now fuses the experts' arithmetic, within float32 rounding), gradients too,
and with a forward hook installed the runtime keeps the original loop (the
hook sees the same calls).
"""
from __future__ import annotations

import pathlib

import pytest

torch = pytest.importorskip("torch")
graphmend = pytest.importorskip("graphmend")

from _torch_cases import breaks as _breaks, compiled as _compiled, load_fixture_pair  # noqa: E402

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "GM409"

# class -> (constructor args, number of mask classes, hidden size, top-k)
CASES = {
    "Experts": ((), 4, 8, 2),
    "GatedExperts": ((4, 8, 6), 5, 8, 2),
    "ItemExperts": ((3, 2, 8, 6), 5, 8, 2),
    "MethodExperts": ((), 8, 8, 1),
    "ListExperts": ((4, 8, 6), 4, 8, 2),
    "RowExperts": ((), 4, 8, 2),
    "DictExperts": ((4, 8, 6), 4, 8, 1),
    "ScaledExperts": ((0.25,), 4, 8, 2),
    "FusedExperts": ((4, 8, 6), 4, 8, 2),
    "GuardedExperts": ((4, 8), 6, 8, 2),
    "ColumnExperts": ((4, 8), 4, 8, 2),
    "SignedExperts": ((), 4, 8, 2),
    "InlineSignedExperts": ((), 4, 8, 2),
}


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    return load_fixture_pair(FIXTURES, "GM409", tmp_path_factory.mktemp("gm409"), unsafe=True)


@pytest.fixture
def switches():
    import torch._dynamo.config as dc

    saved = (dc.capture_scalar_outputs, dc.capture_dynamic_output_shape_ops)
    yield dc
    dc.capture_scalar_outputs, dc.capture_dynamic_output_shape_ops = saved


def _inputs(name, seed):
    _, classes, d, k = CASES[name]
    g = torch.Generator().manual_seed(seed)
    tokens = 7
    x = torch.randn(tokens, d, generator=g)
    # Routings that leave experts out: the first uses only two classes.
    high = 2 if seed == 0 else classes
    idx = torch.randint(0, high, (tokens, k), generator=g)
    if name == "MethodExperts":
        return x, idx, torch.randn(d, 2 * d, generator=g)
    if name == "RowExperts":
        return x, idx
    if name == "DictExperts":
        # Switch Transformers' router output: a one-hot choice per token
        # (tokens past an expert's capacity: an all-zero row), and its weight.
        kept = torch.rand(tokens, 1, 1, generator=g) < 0.8
        mask = torch.nn.functional.one_hot(idx, classes) * kept
        return x, mask, torch.rand(tokens, 1, generator=g)
    if name in ("SignedExperts", "InlineSignedExperts"):
        routing = torch.nn.functional.one_hot(idx, classes)
        if name == "SignedExperts":
            # The last class (unused by the first routing) gets +1 and -1:
            # its sum is 0, the original skips it, yet its row is not zero.
            routing[0, 0, classes - 1] += 1
            routing[1, 0, classes - 1] -= 1
        return x, routing, torch.rand(tokens, k, generator=g)
    return x, idx, torch.rand(tokens, k, generator=g)


def _model(module, name):
    torch.manual_seed(0)
    return getattr(module, name)(*CASES[name][0])


def _index_adds(cnt) -> int:
    return sum(1 for g in cnt.graphs for n in g.graph.nodes if "index_add" in str(n.target))


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_graph_with_the_switches_same_outputs(modules, switches, name):
    original, mended = modules
    switches.capture_scalar_outputs = switches.capture_dynamic_output_shape_ops = True
    reference = _model(original, name)

    fn, cnt = _compiled(_model(original, name), "count")
    try:
        fn(*_inputs(name, 0))
    except Exception as error:  # noqa: BLE001
        # transformers 4.5x's `.nonzero(as_tuple=True)[0].tolist()` does not
        # compile with the switches (GuardOnDataDependentSymNode in unbind).
        assert name == "ListExperts", error
        assert "data-dependent" in str(error)
    original_adds = _index_adds(cnt)

    for backend in ("count", "inductor", None):
        model = _model(mended, name)
        run, cnt = (model, None) if backend is None else _compiled(model, backend)
        for seed in range(3):
            args = _inputs(name, seed)
            want = reference(*args)
            got = run(*args)
            if backend == "inductor":
                # Inductor fuses the expert's arithmetic now in the graph (as
                # for any compiled code): float32 rounding, not bitwise.
                torch.testing.assert_close(got, want)
            else:
                assert got.dtype == want.dtype and torch.equal(got, want), (backend, seed)
        if backend == "count":
            assert len(cnt.graphs) == 1 and _breaks() == 0, name
            # The loop is in the graph: one index_add_ per expert it visits.
            assert _index_adds(cnt) > original_adds


@pytest.mark.parametrize("name", sorted(CASES))
def test_without_the_switches_no_more_breaks(modules, switches, name):
    original, mended = modules
    switches.capture_scalar_outputs = switches.capture_dynamic_output_shape_ops = False
    counts = []
    for module in (original, mended):
        fn, cnt = _compiled(_model(module, name), "count")
        args = _inputs(name, 1)
        got = fn(*args)
        assert torch.equal(got, _model(original, name)(*args))
        counts.append((len(cnt.graphs), _breaks()))
    assert counts[1][0] <= counts[0][0] and counts[1][1] <= counts[0][1], counts


def test_gradients_equal(modules, switches):
    original, mended = modules
    switches.capture_scalar_outputs = switches.capture_dynamic_output_shape_ops = True
    grads = []
    for module, backend in ((original, None), (mended, "count")):
        model = _model(module, "GatedExperts")
        run = model if backend is None else _compiled(model, backend)[0]
        x, idx, w = _inputs("GatedExperts", 2)
        x.requires_grad_(True)
        run(x, idx, w).square().sum().backward()
        grads.append([x.grad] + [p.grad for p in model.parameters()])
    for other in grads[1:]:
        assert all(torch.equal(a, b) for a, b in zip(grads[0], other))


def test_a_forward_hook_keeps_the_original_loop(modules, switches):
    original, mended = modules
    switches.capture_scalar_outputs = switches.capture_dynamic_output_shape_ops = True
    seen = {"original": [], "mended": []}
    outputs = {}
    for tag, module, backend in (("original", original, None), ("mended", mended, "count")):
        model = _model(module, "GatedExperts")
        model.act_fn.register_forward_hook(lambda m, i, o, tag=tag: seen[tag].append(i[0].shape[0]))
        run = model if backend is None else _compiled(model, backend)[0]
        outputs[tag] = run(*_inputs("GatedExperts", 0))
    assert torch.equal(outputs["original"], outputs["mended"])
    # The hook ran once per expert some token chose, with its rows: no call on zero rows.
    assert seen["mended"] == seen["original"] and 0 not in seen["mended"]


class _PlainSiLU(torch.nn.Module):
    """Computes as nn.SiLU, but is not a class the runtime knows."""

    def forward(self, x):
        return torch.nn.functional.silu(x)


def _counts(model, args):
    fn, cnt = _compiled(model, "count")
    out = fn(*args)
    return out, (len(cnt.graphs), _breaks())


def _outcome(model, args):
    """(graphs, break events) of the compiled call and its output, or the
    exception's type when compiling raises."""
    try:
        got, counts = _counts(model, args)
    except Exception as error:  # noqa: BLE001
        return type(error).__name__, None
    return counts, got


@pytest.mark.parametrize("change", ["activation", "short_weights", "expert_layer", "missing_key"])
def test_what_the_runtime_cannot_check_keeps_the_original_loop(modules, switches, change):
    """The safe fix holds because nonzero_rows checks, while compiling, what
    the body needs for an index no token chose: an activation it does not
    know (it might have effects, or fail on zero rows) and weights without an
    entry for every index (unrolled, `w[i]` would raise while compiling) make
    it loop as the original: the same graphs and breaks, the same values."""
    original, mended = modules
    switches.capture_scalar_outputs = switches.capture_dynamic_output_shape_ops = True
    name = {"expert_layer": "ListExperts", "missing_key": "DictExperts"}.get(change, "GatedExperts")
    args = _inputs(name, 0)  # routes to experts 0 and 1 only
    results = []
    for module in (original, mended):
        model = _model(module, name)
        if change == "activation":
            model.act_fn = _PlainSiLU()
        elif change == "short_weights":
            model.down_proj = torch.nn.Parameter(model.down_proj.detach()[:2].clone())
        elif change == "missing_key":  # an expert no token chose is not there
            del model["expert_3"]
        else:  # a layer of one expert the runtime does not know
            model.experts[3].w1 = torch.nn.Sequential(model.experts[3].w1, _PlainSiLU())
        want = model(*args)
        counts, got = _outcome(model, args)
        if got is not None:
            assert torch.equal(got, want)
        results.append(counts)
    assert results[1] == results[0], results


def test_entry_and_activation_checks():
    import graphmend.runtime as rt

    nn = torch.nn
    assert rt._has_entries(torch.zeros(4, 2), 4) and not rt._has_entries(torch.zeros(3, 2), 4)
    assert not rt._has_entries(torch.tensor(1.0), 1)
    assert rt._has_entries(nn.ModuleList([nn.Identity()] * 2), 2)
    assert not rt._has_entries(nn.ModuleDict({"0": nn.Identity()}), 1)  # keys, not indices
    assert not rt._has_entries(None, 1)
    named = nn.ModuleDict({f"expert_{i}": nn.Identity() for i in range(3)})
    assert rt._entry_keys(named, 3, "expert_{}") == ["expert_0", "expert_1", "expert_2"]
    assert rt._entry_keys(named, 4, "expert_{}") is None
    assert rt._entry_keys(nn.ModuleList([nn.Identity()]), 1, "expert_{}") is None  # not named entries
    assert rt._experts_of(named, nn.Identity, (), 3, "expert_{}")
    assert not rt._experts_of(named, nn.ReLU, (), 3, "expert_{}")
    # Dropout is a known layer only as the identity: a draw in training could move a generator
    assert rt._known_layer(nn.Dropout(0.1).eval()) and rt._known_layer(nn.Dropout(0.0).train())
    assert not rt._known_layer(nn.Dropout(0.1).train())
    assert rt._identity_dropout(nn.Dropout(0.1).eval()) and not rt._identity_dropout(nn.Dropout(0.1).train())
    assert not rt._identity_dropout(nn.AlphaDropout(0.1).eval())  # exactly Dropout
    for known in (nn.SiLU(), nn.GELU(), nn.Identity(), nn.ReLU()):
        assert rt._elementwise(known)
    hooked = nn.SiLU()
    hooked.register_forward_hook(lambda *a: None)
    for unknown in (_PlainSiLU(), nn.Dropout(), nn.Linear(2, 2), torch.nn.functional.silu, hooked):
        assert not rt._elementwise(unknown)
    activations = pytest.importorskip("transformers.activations")
    assert rt._elementwise(activations.ACT2FN["silu"])
    assert rt._elementwise(activations.ACT2FN["gelu"])


def test_eagerly_the_same_values_as_the_original(modules):
    import graphmend.runtime as rt

    rows = torch.tensor([[0], [2], [3]])
    assert [int(v) for v in rt.nonzero_rows(rows, 5)] == [0, 2, 3]
    assert all(v.dim() == 0 for v in rt.nonzero_rows(rows, 5))
    assert list(rt.nonzero_rows(rows, 5, item=True)) == [0, 2, 3]
    assert rt.nonzero_rows(rows, 5, row=True) is rows
