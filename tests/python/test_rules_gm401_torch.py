"""GM401 end to end with torch 2.13: ``.item()`` of a whole-tensor reduction
kept as the 0-d tensor (``.detach()``) where every use is arithmetic or a
comparison beside a tensor of the same dtype.

The modules are the C++ fixture tests/fixtures/rules/GM401/forms.py and its
fixed snapshot (``graphmend.fix_source`` must give it).  Compiled with the
counting backend, the mended module is one graph with no break event where
the original breaks at each ``.item()``; outputs are bitwise the original's
run eagerly, for float32, float64, float16 and bfloat16 inputs, eagerly and
compiled (Inductor: within rounding, as for any compiled code), and the
gradients are the same (the number carried none, nor does the detached
tensor).
"""
from __future__ import annotations

import pathlib

import pytest

torch = pytest.importorskip("torch")
graphmend = pytest.importorskip("graphmend")

from _torch_cases import breaks as _breaks, compiled as _compiled, load_fixture_pair, same_tensors  # noqa: E402

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "GM401"
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
# name -> every `.item()` of it is fixed (Inline keeps one it declines)
CASES = {"Threshold": True, "Center": True, "Closure": True, "Inline": False, "clipped": True}


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    return load_fixture_pair(FIXTURES, "GM401", tmp_path_factory.mktemp("gm401"))


def _callable(module, name):
    obj = getattr(module, name)
    if name == "clipped":  # @torch.compile: the plain function under it
        return obj._torchdynamo_orig_callable
    return obj()


def _inputs(name, seed, dtype):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(5, 6, generator=g) * 3).to(dtype)
    return (x, torch.randn(3, generator=g)) if name == "Center" else (x,)


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_graph_same_outputs(modules, name):
    original, mended = modules
    fn, cnt = _compiled(_callable(original, name), "count")
    fn(*_inputs(name, 0, torch.float32))
    original_breaks = _breaks()
    assert original_breaks > 0

    fn, cnt = _compiled(_callable(mended, name), "count")
    for dtype in DTYPES:
        for seed in range(3):
            args = _inputs(name, seed, dtype)
            want = _callable(original, name)(*args)
            assert same_tensors(fn(*args), want), (dtype, seed)
            assert same_tensors(_callable(mended, name)(*args), want), (dtype, seed)
    if CASES[name]:
        assert _breaks() == 0 and len(cnt.graphs) == len(DTYPES), name  # one graph per dtype
    else:
        assert 0 < _breaks() < original_breaks * len(DTYPES)


@pytest.mark.parametrize("name", ["Threshold", "Center", "clipped"])
def test_inductor_close(modules, name):
    original, mended = modules
    fn, _ = _compiled(_callable(mended, name), "inductor")
    args = _inputs(name, 1, torch.float32)
    torch.testing.assert_close(fn(*args), _callable(original, name)(*args))


@pytest.mark.parametrize("name", ["Threshold", "Center"])
def test_gradients_equal(modules, name):
    original, mended = modules
    grads = []
    for module, backend in ((original, None), (mended, "count")):
        model = _callable(module, name)
        run = model if backend is None else _compiled(model, backend)[0]
        args = _inputs(name, 2, torch.float64)
        args[0].requires_grad_(True)
        out = run(*args)
        (out[0] if isinstance(out, tuple) else out).square().sum().backward()
        grads.append(args[0].grad)
    assert torch.equal(grads[0], grads[1])
