"""GM404 end to end with torch 2.13: whole reductions of a boolean-mask
selection, mended into ``graphmend.runtime.masked_reduce``.

The modules are the C++ fixtures tests/fixtures/rules/GM404/{forms,floating}.py;
``graphmend.fix_source`` must give their snapshots.  Then, with the counting
backend, the original breaks the graph (Dynamic shape operator) and the mended
module is one graph with no break event; its outputs, compiled (counting
backend and Inductor) and eager, are bitwise those of the original run eagerly
on fresh inputs, an all-false mask included (where ``amax``/``min`` raise, the
same exception).  The runtime itself is checked against ``x[mask].R()`` for
every reduction, dtype and mask shape.
"""
from __future__ import annotations

import itertools
import pathlib
import uuid

import pytest

torch = pytest.importorskip("torch")
graphmend = pytest.importorskip("graphmend")

import graphmend.runtime as _graphmend_rt  # noqa: E402
from _torch_cases import breaks as _breaks, compiled as _compiled, load_file  # noqa: E402

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "GM404"


def _mend(stem: str, unsafe: bool = False) -> tuple[str, str]:
    original = (FIXTURES / f"{stem}.py").read_text()
    result = graphmend.fix_source(original, unsafe=unsafe, select=["GM404"])
    assert result.status == "fixed"
    snapshot = f"{stem}.unsafe.fixed.py" if unsafe else f"{stem}.fixed.py"
    assert result.source == (FIXTURES / snapshot).read_text()
    return original, result.source


def _load(text: str, tmp_path: pathlib.Path, tag: str):
    path = tmp_path / f"{tag}_{uuid.uuid4().hex}.py"
    path.write_text(text)
    return load_file(path, "gm404_case")


def _outcome(fn, *args):
    try:
        with torch.no_grad():
            return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - compared with the original's
        return (type(e).__name__, str(e))


def _same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] != "ok":
        return a[1] == b[1]
    x, y = a[1], b[1]
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if not x.is_floating_point():
        return torch.equal(x, y)
    # Bitwise for floats: the same NaNs, values and signs of zero.
    return (torch.equal(x.isnan(), y.isnan()) and torch.equal(x.nan_to_num(0), y.nan_to_num(0))
            and torch.equal(x.signbit(), y.signbit()))


def _counts_inputs(seed: int, empty: bool):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(-3, 6, (4, 5), generator=g)
    if empty:
        ids = -ids.abs() - 1  # no id > 0: the selections of amax are empty
    x = torch.randint(-4, 5, (4, 5), generator=g).to(torch.int32)
    return ids, x


def test_integer_reductions_one_graph_same_outputs(tmp_path):
    original_text, mended_text = _mend("forms")
    original = _load(original_text, tmp_path, "original").Counts()
    mended = _load(mended_text, tmp_path, "mended").Counts()

    fn, cnt = _compiled(original, "count")
    fn(*_counts_inputs(0, False))
    assert _breaks() > 0  # the original breaks at the masked reads

    fn, cnt = _compiled(mended, "count")
    fn(*_counts_inputs(0, False))
    assert (len(cnt.graphs), _breaks()) == (1, 0)
    inductor, _ = _compiled(mended, "inductor")
    for seed, empty in itertools.product(range(4), (False, True)):
        args = _counts_inputs(seed, empty)
        want = _outcome(original, *args)
        assert want[0] == ("RuntimeError" if empty else "ok")
        for run in (mended, fn, inductor):
            assert _same(want, _outcome(run, *args)), (seed, empty, run)


def _positions_inputs(seed: int):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 8, generator=g)
    patch_mask = torch.rand(3, 2, 4, generator=g) > 0.3
    pos_ids = torch.randint(0, 50, (3, 8), generator=g)
    return x, patch_mask, pos_ids


def test_masked_copies_one_graph_same_outputs(tmp_path):
    original_text, mended_text = _mend("copies")
    original = _load(original_text, tmp_path, "original").Positions()
    mended = _load(mended_text, tmp_path, "mended").Positions()
    fn, cnt = _compiled(original, "count")
    fn(*_positions_inputs(0))
    assert _breaks() > 0
    fn, cnt = _compiled(mended, "count")
    fn(*_positions_inputs(0))
    assert (len(cnt.graphs), _breaks()) == (1, 0)
    inductor, _ = _compiled(mended, "inductor")
    for seed in range(4):
        args = _positions_inputs(seed)
        want = _outcome(original, *args)
        assert want[0] == "ok"
        for run in (mended, fn, inductor):
            assert _same(want, _outcome(run, *args)), (seed, run)


def test_masked_copy_is_the_statement_s_write(monkeypatch):
    """The tracing path, run eagerly, writes what ``y[mask] = x[mask]`` writes
    (or runs exactly that, raising the same errors) for dtypes, broadcast
    masks, dtype mismatches, non-contiguous targets and bad shapes."""
    def original(y, mask, x):
        y[mask] = x[mask]
        return y

    def traced(y, mask, x):
        _graphmend_rt.masked_copy(y, mask, x)
        return y

    monkeypatch.setattr(_graphmend_rt, "_compiling", lambda: True)
    g = torch.Generator().manual_seed(5)
    for ydt, xdt, yshape, mshape, xshape, transposed in [
        (torch.int64, torch.int64, (3, 8), (3, 8), (3, 8), False),
        (torch.float32, torch.float32, (4, 3, 2), (4, 3), (4, 3, 2), False),
        (torch.float16, torch.float32, (5, 2), (5,), (5, 2), False),  # dtypes differ
        (torch.bool, torch.bool, (6,), (6,), (6,), False),
        (torch.float32, torch.float32, (3, 3), (3, 3), (3, 3), True),  # y not contiguous
        (torch.float32, torch.float32, (3, 4), (3,), (3, 1), False),  # x broadcasts
        (torch.int32, torch.int32, (3, 4), (4,), (3, 4), False),  # mask shape wrong
    ]:
        for empty in (False, True):
            y = (torch.randn(yshape, generator=g) * 9).to(ydt)
            if transposed:
                y = y.t()
            x = (torch.randn(xshape, generator=g) * 9).to(xdt)
            mask = torch.rand(mshape, generator=g) > 0.5
            if empty:
                mask[...] = False
            want = _outcome(original, y.clone(), mask, x)
            got = _outcome(traced, y.clone(), mask, x)
            assert _same(want, got), (ydt, xdt, yshape, mshape, xshape, transposed, want, got)


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_masked_update_is_the_statement_s_write(op, monkeypatch):
    """The tracing path of ``masked_update``, run eagerly, writes what
    ``x[mask] OP= value`` writes, or raises what it raises, for every dtype and
    Python or 0-d tensor value (incl. ones that cannot be cast back)."""
    import operator

    fn = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv}[op]

    def original(x, mask, value):
        t = x[mask]
        t = fn(t, value)
        x[mask] = t
        return x

    def traced(x, mask, value):
        _graphmend_rt.masked_update(x, mask, op, value)
        return x

    monkeypatch.setattr(_graphmend_rt, "_compiling", lambda: True)
    g = torch.Generator().manual_seed(7)
    for dtype in DTYPES:
        for value in (3, -2, 0.5, True, torch.tensor(2.5), torch.tensor(3), float("inf")):
            for mshape in ((4, 3), (4,)):
                x = (torch.randn(4, 3, generator=g) * 9).to(dtype)
                mask = torch.rand(mshape, generator=g) > 0.5
                want = _outcome(original, x.clone(), mask, value)
                got = _outcome(traced, x.clone(), mask, value)
                assert _same(want, got), (dtype, value, mshape, want, got)


def test_floating_reductions_unsafe_within_rounding(tmp_path):
    original_text, mended_text = _mend("floating", unsafe=True)
    # The safe pass leaves floating reductions alone (they are unsafe fixes).
    assert graphmend.fix_source(original_text, select=["GM404"]).status == "unchanged"
    original = _load(original_text, tmp_path, "original").Pool()
    mended = _load(mended_text, tmp_path, "mended").Pool()
    fn, cnt = _compiled(mended, "count")
    g = torch.Generator().manual_seed(1)
    h = torch.randn(6, 7, generator=g)
    mask = torch.rand(6, 7, generator=g) > 0.5
    got = fn(h, mask)
    assert (len(cnt.graphs), _breaks()) == (1, 0)
    want = original(h, mask)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    assert torch.equal(mended(h, mask), want)  # eagerly: the original itself


def test_floating_sum_gradient_is_the_original_s():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(5, 3, generator=g, requires_grad=True)
    mask = torch.rand(5, generator=g) > 0.4

    def mended(x, mask):
        return _graphmend_rt.masked_reduce(x, mask, "mean", exact=False)

    fn, cnt = _compiled(mended, "count")
    fn(x, mask).backward()
    assert (len(cnt.graphs), _breaks()) == (1, 0)
    got = x.grad.clone()
    x.grad = None
    x[mask].mean().backward()
    torch.testing.assert_close(got, x.grad, rtol=0, atol=1e-7)


OPS = ["sum", "nansum", "prod", "mean", "amax", "amin", "max", "min", "any", "all", "count_nonzero"]
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _cases(op):
    for dtype, (shape, mdim), empty in itertools.product(
            DTYPES, [((4, 3), 2), ((4, 3), 1), ((7,), 1), ((2, 0), 1)], (False, True)):
        g = torch.Generator().manual_seed(OPS.index(op) * 1000 + DTYPES.index(dtype) * 10 + mdim)
        x = (torch.randn(shape, generator=g) * 4).to(dtype)
        if dtype.is_floating_point and x.numel():
            x.view(-1)[0] = float("nan")  # NaN propagates the same in both forms
        mask = torch.rand(shape[:mdim], generator=g) > 0.4
        if empty:
            mask[...] = False
        yield x, mask


def _traced_now(x, mask, op):
    """masked_reduce's tracing path, then what runs after the graph (the
    deferred error of an empty selection)."""
    try:
        return _graphmend_rt.masked_reduce(x, mask, op)
    finally:
        _graphmend_rt._drain()


@pytest.mark.parametrize("op", OPS)
def test_masked_reduce_is_the_selection_s_reduction(op, monkeypatch):
    """Exact mode: the tracing path, run eagerly (the same tensor ops the graph
    holds; an empty selection's trap drains at once), is bitwise
    ``x[mask].op()`` with the same exceptions, for every dtype and mask shape;
    one compiled call checks that Dynamo takes the masked form with no break."""
    original = lambda x, mask: getattr(x[mask], op)()  # noqa: E731
    masked = 0
    monkeypatch.setattr(_graphmend_rt, "_compiling", lambda: True)
    for x, mask in _cases(op):
        want = _outcome(original, x, mask)
        got = _outcome(_traced_now, x, mask, op)
        assert _same(want, got), (x.dtype, x.shape, mask.shape, want, got)
        masked += _graphmend_rt._masked_full(torch, x, mask, op, True) is not None
        _graphmend_rt._QUEUE.clear()  # that call's trap, if any: already checked above
    monkeypatch.undo()
    assert masked > 0 or op == "mean"  # mean is floating only: never exact

    def mended(x, mask):
        return _graphmend_rt.masked_reduce(x, mask, op, exact=op != "mean")

    x = torch.arange(12.0 if op == "mean" else 12).reshape(4, 3) - 5
    fn, cnt = _compiled(mended, "count")
    got = fn(x, x > 0)
    assert (len(cnt.graphs), _breaks()) == (1, 0)
    assert _same(_outcome(original, x, x > 0), ("ok", got))
