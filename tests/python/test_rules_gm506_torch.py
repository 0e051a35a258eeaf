"""GM506 end to end with torch 2.13: a buffer kept on the input's device and
dtype by ``self.buf = self.buf.to(...)``, mended into
``graphmend.runtime.assign_to``.

The module is the C++ fixture tests/fixtures/rules/GM506/forms.py;
``graphmend.fix_source`` must give its snapshot.  With the counting backend
the original breaks the graph at the buffer store (``register_buffer``) and
the mended module is one graph with no break event; outputs (compiled with
the counting backend and Inductor, and eager) are bitwise the original's run
eagerly, and the module's buffers, their persistence and its state dict stay
as the original leaves them, on the dtype that needs no store and on one that
does (where the store happens, as in the original).
"""
from __future__ import annotations

import pathlib

import pytest

torch = pytest.importorskip("torch")
graphmend = pytest.importorskip("graphmend")

import graphmend.runtime as _graphmend_rt  # noqa: E402
from _torch_cases import breaks as _breaks, compiled as _compiled, load_fixture_pair  # noqa: E402

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "GM506"


def _pair(tmp_path):
    return load_fixture_pair(FIXTURES, "GM506", tmp_path)


def _state(model):
    return (
        {k: (v.dtype, v.clone()) for k, v in model.named_buffers()},
        sorted(model._non_persistent_buffers_set),
        sorted(model.state_dict()),
        model.table.dtype,
        model.offset.dtype,
    )


def _same_state(a, b) -> bool:
    return (a[1:] == b[1:] and a[0].keys() == b[0].keys()
            and all(a[0][k][0] == b[0][k][0] and torch.equal(a[0][k][1], b[0][k][1]) for k in a[0]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_buffer_store_one_graph_same_outputs_same_state(tmp_path, dtype):
    original_mod, mended_mod = _pair(tmp_path)
    x = torch.randn(5, 8, dtype=dtype)

    torch.manual_seed(0)
    reference = original_mod.Encoder()
    want = reference(x)  # eagerly: the reference outputs and state

    torch.manual_seed(0)
    fn, cnt = _compiled(original_mod.Encoder(), "count")
    fn(x)
    # The original breaks where the store changes nothing (float32: `.to()`
    # returns the nn.Buffer itself); a real conversion stores a plain tensor.
    assert (_breaks() > 0) == (dtype == torch.float32)

    for backend in ("count", "inductor", None):
        torch.manual_seed(0)
        model = mended_mod.Encoder()
        run, cnt = (model, None) if backend is None else _compiled(model, backend)
        got = run(x)
        assert got.dtype == want.dtype and torch.equal(got, want), backend
        assert _same_state(_state(model), _state(reference)), backend
        if backend == "count" and dtype == torch.float32:
            assert (len(cnt.graphs), _breaks()) == (1, 0)  # no store needed: no break
        got = run(x)  # a second call: buffers already converted
        assert torch.equal(got, want)


def test_store_that_changes_nothing_is_decided_exactly(monkeypatch):
    """``assign_to``'s tracing path, run eagerly: the store is skipped only
    when it leaves the module exactly as it is."""
    monkeypatch.setattr(_graphmend_rt, "_compiling", lambda: True)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", torch.zeros(3), persistent=False)

    m = M()
    before = m.b
    _graphmend_rt.assign_to(m, "b", dtype=torch.float32)
    assert m.b is before and "b" in m._non_persistent_buffers_set
    _graphmend_rt.assign_to(m, "b", dtype=torch.float64)
    assert m.b.dtype == torch.float64 and "b" in m._non_persistent_buffers_set

    seen = []
    handle = torch.nn.modules.module.register_module_buffer_registration_hook(
        lambda module, name, tensor: seen.append(name))
    try:
        _graphmend_rt.assign_to(m, "b", dtype=torch.float64)  # a hook must see the store
    finally:
        handle.remove()
    assert seen == ["b"]

    class Custom(M):
        def __setattr__(self, name, value):
            seen.append(("set", name))
            super().__setattr__(name, value)

    c = Custom()
    seen.clear()
    _graphmend_rt.assign_to(c, "b", dtype=torch.float32)
    assert seen == [("set", "b")]
