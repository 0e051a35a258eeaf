"""GM301/GM302 end to end with torch 2.13: validation guards and asserts on
tensor data, mended into graphmend.runtime traps.

For each case the original module is the C++ fixture
tests/fixtures/rules/GM30x/<stem>.py. ``graphmend.fix_source`` mends it, and
the result must equal the fixture snapshot ``<stem>.fixed.py`` and keep every
line of the original in place (only the runtime import is added). Then:

* the counting backend sees the original break the graph (GM301) and the mended
  module compile to one graph with zero break events;
* on passing inputs (fresh random ones) the mended module, compiled and eager,
  returns what the original returns eagerly, with the same stdout and warnings;
* on failing inputs the mended module raises the same exception type and
  message as the original run eagerly, under ``backend="eager"`` and under the
  default backend (Inductor; older Inductor dropped ``_assert_async`` on CPU,
  PyTorch issue 147282), and when run eagerly.
"""
from __future__ import annotations

import contextlib
import io
import os
import pathlib
import sys
import uuid
import warnings

import pytest

torch = pytest.importorskip("torch")
graphmend = pytest.importorskip("graphmend")

import graphmend.runtime as _graphmend_rt  # noqa: E402
from _torch_cases import breaks as _breaks, compiled as _compile, load_file  # noqa: E402

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "rules"
IMPORT = "import graphmend.runtime as _graphmend_rt"


# ---------------------------------------------------------------------------
# harness


def _mend(code: str, stem: str) -> tuple[str, str]:
    """(original, mended) text of fixture `stem`, mended by graphmend.fix_source."""
    original = (FIXTURES / code / f"{stem}.py").read_text()
    result = graphmend.fix_source(original, select=[code])
    assert result.status == "fixed"
    assert result.source == (FIXTURES / code / f"{stem}.fixed.py").read_text()
    mended = result.source
    # No padding: one import added, no blank line, and the mended statements
    # take no more lines than black would give them.
    lines = mended.splitlines()
    assert lines.count(IMPORT) == 1
    blank = [line for line in lines if not line.strip()]
    assert len(blank) == len([line for line in original.splitlines() if not line.strip()])
    again = graphmend.fix_source(mended, select=[code])
    assert again.status == "unchanged"  # idempotent
    return original, mended


def _load(text: str, tmp_path: pathlib.Path, tag: str):
    path = tmp_path / f"{tag}_{uuid.uuid4().hex}.py"
    path.write_text(text)
    return load_file(path, "gm3_case")


def _pair(code, stem, cls, tmp_path):
    """Instances of the original and the mended class with the same weights."""
    original_text, mended_text = _mend(code, stem)
    torch.manual_seed(0)
    original = getattr(_load(original_text, tmp_path, "original"), cls)().eval()
    mended = getattr(_load(mended_text, tmp_path, "mended"), cls)().eval()
    mended.load_state_dict(original.state_dict())
    return original, mended


@contextlib.contextmanager
def _capture():
    out = io.StringIO()
    got = {}
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        yield got
    got["stdout"] = out.getvalue()
    # Warnings raised from the modules under test (not torch's own about
    # compilation).
    got["warnings"] = [
        (w.category.__name__, str(w.message)) for w in caught
        if f"{os.sep}torch{os.sep}" not in w.filename
    ]


def _outcome(fn, *args):
    """("ok", output) or (exception type, message, args)."""
    with torch.no_grad(), _capture() as got:
        try:
            result = ("ok", fn(*args))
        except Exception as e:  # noqa: BLE001
            result = (type(e), str(e), e.args)
    assert _graphmend_rt.pending() == 0  # nothing left queued
    return result, got


def _same(got, want):
    (g, g_io), (w, w_io) = got, want
    assert g[0] == w[0], (g, w)
    if w[0] == "ok":
        torch.testing.assert_close(g[1], w[1])
    else:
        assert g[1:] == w[1:]
    assert g_io == w_io


def _assert_one_graph(cnt):
    assert len(cnt.graphs) == 1, [g.code for g in cnt.graphs]
    assert _breaks() == 0


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    yield
    _graphmend_rt.flush()
    torch._dynamo.reset()


# ---------------------------------------------------------------------------
# GM301: if <tensor>: raise


def _guard_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(4, 8, generator=g), torch.rand(4, 8, generator=g)


GUARD_FAILURES = {
    "x out of range": lambda x, y: (x * 1000, y),
    "y must be non-negative": lambda x, y: (x, y - 2),
    "NaN after the projection": lambda x, y: (x.index_fill(1, torch.tensor([0]), float("nan")),
                                             y),
    # `or` lowered to `|`
    "y out of range": lambda x, y: (x, y + 100),
}


def test_guards_one_graph_same_outputs_same_errors(tmp_path):
    original, mended = _pair("GM301", "torch_guards", "GuardNet", tmp_path)
    x, y = _guard_inputs(1)

    fn, cnt = _compile(original, "count")
    _outcome(fn, x, y)
    assert len(cnt.graphs) > 1 and _breaks() >= 1  # the original breaks

    fn, cnt = _compile(mended, "count")
    for seed in (1, 2):  # passing inputs, fresh each time
        args = _guard_inputs(seed)
        _same(_outcome(fn, *args), _outcome(original, *args))
        _same(_outcome(mended, *args), _outcome(original, *args))
    for message, make in GUARD_FAILURES.items():
        args = make(*_guard_inputs(3))
        want = _outcome(original, *args)
        assert want[0][1] == message
        _same(_outcome(fn, *args), want)
        _same(_outcome(mended, *args), want)  # eagerly
    _assert_one_graph(cnt)  # no recompile, no break, failing inputs included

    fn, _ = _compile(mended, "eager")
    for make in GUARD_FAILURES.values():
        args = make(*_guard_inputs(4))
        _same(_outcome(fn, *args), _outcome(original, *args))


def test_guards_inductor_keeps_the_checks(tmp_path):
    original, mended = _pair("GM301", "torch_guards", "GuardNet", tmp_path)
    fn, _ = _compile(mended, "inductor")
    args = _guard_inputs(5)
    _same(_outcome(fn, *args), _outcome(original, *args))
    for make in GUARD_FAILURES.values():
        args = make(*_guard_inputs(6))
        _same(_outcome(fn, *args), _outcome(original, *args))
    assert _breaks() == 0


# ---------------------------------------------------------------------------
# GM301: the real grounding-dino guard (transformers 4.52.4)


def _dino_inputs(seed, shapes):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(2, 5, 8, generator=g)
    encoder = torch.randn(2, 12, 8, generator=g)
    return hidden, encoder, torch.tensor(shapes)


DINO_OK = [[2, 3], [3, 2]]  # 6 + 6 == sequence length 12
DINO_BAD = [[2, 2], [3, 2]]  # 4 + 6 != 12


def test_grounding_dino_guard(tmp_path):
    original, mended = _pair("GM301", "grounding_dino",
                             "GroundingDinoMultiscaleDeformableAttention", tmp_path)

    def call(m):
        return lambda h, e, s: m(h, encoder_hidden_states=e, spatial_shapes=s)

    fn, cnt = _compile(call(original), "count")
    _outcome(fn, *_dino_inputs(0, DINO_OK))
    assert len(cnt.graphs) > 1 and _breaks() >= 1

    want_bad = _outcome(call(original), *_dino_inputs(1, DINO_BAD))
    assert want_bad[0][0] is ValueError and "align the spatial shapes" in want_bad[0][1]
    for backend in ("count", "eager", "inductor"):
        fn, cnt = _compile(call(mended), backend)
        for seed in (2, 3):
            args = _dino_inputs(seed, DINO_OK)
            _same(_outcome(fn, *args), _outcome(call(original), *args))
        _same(_outcome(fn, *_dino_inputs(1, DINO_BAD)), want_bad)
        if cnt is not None:
            _assert_one_graph(cnt)
    _same(_outcome(call(mended), *_dino_inputs(1, DINO_BAD)), want_bad)


# ---------------------------------------------------------------------------
# GM301: a guard inlined into the caller's graph


def _probabilities(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(3, 5, generator=g), torch.randn(3, 5, generator=g).softmax(-1)


def test_inlined_guard_raises_at_the_region_boundary(tmp_path):
    original, mended = _pair("GM301", "torch_inlined", "Outer", tmp_path)
    logits, p = _probabilities(0)

    fn, cnt = _compile(original, "count")
    _outcome(fn, logits, p)
    assert len(cnt.graphs) > 1 and _breaks() >= 1

    failing = {
        "probabilities must lie in [0, 1]": p.index_fill(1, torch.tensor([0]), 1.5),
        "rows must sum to 1": p * 0.5,
    }
    fn, cnt = _compile(mended, "count")
    for seed in (1, 2):
        args = _probabilities(seed)
        _same(_outcome(fn, *args), _outcome(original, *args))
    for message, bad in failing.items():
        want = _outcome(original, logits, bad)
        assert want[0][:2] == (ValueError, message)
        _same(_outcome(fn, logits, bad), want)
    # One graph for Outer with the helper and Inner.forward inlined: the traps
    # are checked after it, when the compiled call returns.
    _assert_one_graph(cnt)

    fn, _ = _compile(mended, "eager")
    with pytest.raises(ValueError, match=r"^probabilities must lie in \[0, 1\]$") as info:
        fn(logits, failing["probabilities must lie in [0, 1]"])
    # Raised by the runtime's drain after the graph, not inside the helper.
    frames = [f.name for f in info.traceback]
    assert "check_probabilities" not in frames


# ---------------------------------------------------------------------------
# GM301: formatted messages, built only when the trap raises


MESSAGE_FAILURES = {
    ValueError: lambda x: x * 1000,  # the message formats x itself
    RuntimeError: lambda x: x.index_fill(1, torch.tensor([2]), float("nan")),
}


def test_formatted_messages_one_graph_same_text(tmp_path):
    original, mended = _pair("GM301", "torch_messages", "MessageNet", tmp_path)
    x, y = _guard_inputs(7)
    fn, cnt = _compile(original, "count")
    _outcome(fn, x, y)
    assert len(cnt.graphs) > 1 and _breaks() >= 1  # formatting breaks the graph

    for backend in ("count", "eager", "inductor"):
        fn, cnt = _compile(mended, backend)
        for seed in (8, 9):
            args = _guard_inputs(seed)
            _same(_outcome(fn, *args), _outcome(original, *args))
        for exc, make in MESSAGE_FAILURES.items():
            x, y = _guard_inputs(10)
            want = _outcome(original, make(x), y)
            assert want[0][0] is exc
            _same(_outcome(fn, make(x), y), want)
            _same(_outcome(mended, make(x), y), want)  # eagerly
        if cnt is not None:
            _assert_one_graph(cnt)


# ---------------------------------------------------------------------------
# GM301: a Python test before the tensor test stays a real `if`


def test_python_prefix_keeps_the_tensor_test_where_it_ran(tmp_path):
    original, mended = _pair("GM301", "python_prefix", "Head", tmp_path)
    x = torch.randn(3, 8)
    fn, cnt = _compile(original, "count")
    _outcome(fn, x, torch.tensor([1, 2, 3]))
    assert len(cnt.graphs) > 1 and _breaks() >= 1

    cases = [
        (x, None, None),  # no labels: the tensor test never runs
        (x, torch.tensor([1, 2, 3]), torch.ones(3, 2, dtype=torch.bool)),
    ]
    failing = [(x, torch.tensor([1, 12, 3]), None)]
    fn, cnt = _compile(mended, "count")
    for args in cases + failing:
        want = _outcome(original, *args)
        _same(_outcome(fn, *args), want)
        _same(_outcome(mended, *args), want)
    assert _outcome(original, *failing[0])[0][:2] == (ValueError, "Label values must be <= vocab_size: 10")
    assert _breaks() == 0  # one graph per (labels, mask) specialisation, no break
    mended.train()
    original.train()
    bad_mask = torch.zeros(3, 2, dtype=torch.bool)
    want = _outcome(original, x, None, bad_mask)
    assert want[0][:2] == (ValueError, "every row needs one token")
    fn, _ = _compile(mended, "count")
    _same(_outcome(fn, x, None, bad_mask), want)


# ---------------------------------------------------------------------------
# GM302: assert <tensor>


def _assert_inputs(seed):
    return torch.rand(4, 8, generator=torch.Generator().manual_seed(seed))


ASSERT_FAILURES = {
    "x out of range": lambda x: x * 1000,
    "": lambda x: x - 3,  # log1p is NaN; the assert has no message
    # `and`/`not` lowered to `&`/`~`: the second and the third operand fail it
    "degenerate rows": lambda x: x.index_fill(0, torch.tensor([1]), 0.0),
    # a `.format` message, built only when the trap raises
    "32 entries of torch.float32 reach 50": lambda x: x + 60,
}


def test_lowered_assert_fails_on_each_operand(tmp_path):
    original, mended = _pair("GM302", "torch_asserts", "AssertNet", tmp_path)
    fn, cnt = _compile(mended, "count")
    x = _assert_inputs(6)
    for bad in (x.index_fill(0, torch.tensor([2]), 0.0), x.index_fill(1, torch.tensor([3]), 0.5)):
        want = _outcome(original, bad)
        assert want[0][:2] == (AssertionError, "degenerate rows")
        _same(_outcome(fn, bad), want)
        _same(_outcome(mended, bad), want)
    _assert_one_graph(cnt)


def test_asserts_raise_assertion_error_when_compiled(tmp_path):
    original, mended = _pair("GM302", "torch_asserts", "AssertNet", tmp_path)

    # What the rule is about (torch 2.13): `assert not <tensor>` breaks the
    # graph (the `not` takes a truth value); `assert <tensor>, "literal"` does
    # not, Dynamo lowers it to torch._assert_async, so a failing one raises
    # RuntimeError instead of AssertionError; `assert a and not b` breaks at
    # each truth value it takes, an assert with a formatted message at its
    # test.
    fn, cnt = _compile(original, "count")
    _outcome(fn, _assert_inputs(0))
    assert len(cnt.graphs) == 5 and _breaks() >= 4
    got = _outcome(fn, ASSERT_FAILURES["x out of range"](_assert_inputs(0)))
    assert got[0][0] is RuntimeError and "x out of range" in got[0][1]

    fn, cnt = _compile(mended, "count")
    for seed in (1, 2):
        x = _assert_inputs(seed)
        _same(_outcome(fn, x), _outcome(original, x))
        _same(_outcome(mended, x), _outcome(original, x))
    for message, make in ASSERT_FAILURES.items():
        x = make(_assert_inputs(3))
        want = _outcome(original, x)
        assert want[0][:2] == (AssertionError, message)
        _same(_outcome(fn, x), want)
        _same(_outcome(mended, x), want)
    _assert_one_graph(cnt)

    for backend in ("eager", "inductor"):
        fn, _ = _compile(mended, backend)
        x = _assert_inputs(4)
        _same(_outcome(fn, x), _outcome(original, x))
        for make in ASSERT_FAILURES.values():
            x = make(_assert_inputs(5))
            _same(_outcome(fn, x), _outcome(original, x))


def test_assert_python_prefix_stays_an_assert(tmp_path):
    original, mended = _pair("GM302", "python_prefix", "Prefix", tmp_path)
    x = torch.rand(3, 4)
    ok = torch.ones(3, 4, dtype=torch.bool)
    fn, cnt = _compile(mended, "count")
    nan = x.index_fill(1, torch.tensor([2]), float("nan"))
    for args, failure in (((x, ok), None),
                          ((x, ok.index_fill(0, torch.tensor([1]), False)), "every row needs a token"),
                          ((nan, ok), "")):
        want = _outcome(original, *args)
        assert want[0][:2] == ((AssertionError, failure) if failure is not None else want[0][:2])
        _same(_outcome(fn, *args), want)
        _same(_outcome(mended, *args), want)
    _assert_one_graph(cnt)
    # the Python test fails first, as before: the tensor test never runs
    _same(_outcome(mended, x, None), _outcome(original, x, None))


def test_asserts_skipped_under_python_O(tmp_path):
    # `if __debug__:` keeps -O semantics: nothing is evaluated.
    import subprocess

    _, mended = _mend("GM302", "torch_asserts")
    path = tmp_path / "mended_O.py"
    path.write_text(mended + "\nm = AssertNet()\nprint(m(torch.full((2, 8), 1e6)).shape)\n")
    out = subprocess.run([sys.executable, "-O", str(path)], capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "torch.Size([2, 8])"


# ---------------------------------------------------------------------------
# GM303: torch._check_tensor_all / _check_tensor_all_with


def _check_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    shapes = torch.randint(1, 5, (3, 2), generator=g)
    value = torch.randn(2, int(shapes.prod(1).sum()), 4, generator=g)
    return value, shapes


CHECK_FAILURES = {
    "sizes do not add up": lambda v, s: (v[:, 1:], s),
    "negative size": lambda v, s: (v, s * torch.tensor([[1, 1], [-1, -1], [1, 1]])),
    "not finite": lambda v, s: (v.index_fill(1, torch.tensor([0]), float("inf")), s),
}


def test_tensor_checks_one_graph_same_errors(tmp_path):
    original, mended = _pair("GM303", "forms", "Deformable", tmp_path)
    args = _check_inputs(1)
    fn, cnt = _compile(original, "count")
    _outcome(fn, *args)
    assert len(cnt.graphs) > 1 and _breaks() >= 1  # each check breaks the original

    # Compiled, the original's own helper takes its tracing branch (RuntimeError
    # from torch._check_tensor_all); eagerly, the ValueError branch. The mended
    # program must do what the original does in the same mode.
    compiled_original, _ = _compile(original, "eager")
    fails = {k: make(*_check_inputs(3)) for k, make in CHECK_FAILURES.items()}
    want_compiled = {k: _outcome(compiled_original, *a) for k, a in fails.items()}
    want_eager = {k: _outcome(original, *a) for k, a in fails.items()}
    assert want_compiled["negative size"][0][1].startswith("negative size in [[")
    assert want_compiled["not finite"][0][0] is RuntimeError

    fn, cnt = _compile(mended, "count")
    for seed in (1, 2):
        args = _check_inputs(seed)
        _same(_outcome(fn, *args), _outcome(original, *args))
        _same(_outcome(mended, *args), _outcome(original, *args))
    for k, a in fails.items():
        _same(_outcome(fn, *a), want_compiled[k])
        _same(_outcome(mended, *a), want_eager[k])
    for backend in ("eager", "inductor"):
        compiled, _ = _compile(mended, backend)
        for k, a in fails.items():
            _same(_outcome(compiled, *a), want_compiled[k])
        args = _check_inputs(4)
        _same(_outcome(compiled, *args), _outcome(original, *args))


def test_tensor_check_keeps_torchs_static_errors():
    # A non-bool condition fails at the call as torch's own check fails there:
    # TypeError eagerly; while tracing, Dynamo's handling of torch's function
    # (on torch 2.13 a TorchRuntimeError from the fake-tensor `_is_all_true`).
    def f(x):
        _graphmend_rt.check_tensor_all(x)
        return x

    def g(x):
        torch._check_tensor_all(x)
        return x

    x = torch.ones(3)
    want = _outcome(torch.compile(g, backend="eager"), x)
    assert want[0][0] is not None and want[0][0] != "ok"
    got = _outcome(torch.compile(f, backend="eager"), x)
    assert got[0][0] is want[0][0]
    assert _outcome(g, x)[0][0] is TypeError
    _same(_outcome(f, x), _outcome(g, x))


# ---------------------------------------------------------------------------
# GM302 with `.item()` compared: `assert lengths.max().item() <= slen` (XLM, Flaubert)


def _lengths_inputs(seed, lengths=None):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, 16, (2, 6), generator=g)
    return (ids,) if lengths is None else (ids, torch.tensor(lengths))


ITEM_FAILURES = {
    "": [7, 3],  # longer than the sequence
    "empty sequence": [0, 3],
}


def test_item_comparisons_in_asserts_are_one_graph_same_errors(tmp_path):
    original, mended = _pair("GM302", "item_compare", "Lengths", tmp_path)
    fn, cnt = _compile(original, "count")
    _outcome(fn, *_lengths_inputs(1))
    assert len(cnt.graphs) > 1 and _breaks() >= 1  # each .item() breaks the original

    for arity in ("default", "given"):
        fn, cnt = _compile(mended, "count")
        for seed in (1, 2):
            args = _lengths_inputs(seed, None if arity == "default" else [6, 2 + seed])
            _same(_outcome(fn, *args), _outcome(original, *args))
            _same(_outcome(mended, *args), _outcome(original, *args))
        _assert_one_graph(cnt)
    for message, lengths in ITEM_FAILURES.items():
        args = _lengths_inputs(3, lengths)
        want = _outcome(original, *args)
        assert want[0][:2] == (AssertionError, message)
        for backend in ("count", "eager", "inductor"):
            fn, _ = _compile(mended, backend)
            _same(_outcome(fn, *args), want)
        _same(_outcome(mended, *args), want)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool, torch.float16,
                                   torch.bfloat16, torch.float32, torch.float64])
def test_compare_item_is_python_s_comparison(dtype, monkeypatch):
    # Values where comparing in the tensor's own dtype would round differently
    # from Python: 0.1 in float32 vs the double 0.1, 2**24 + 1, 2**53 + 1.
    if dtype == torch.bool:
        values = [False, True]
    elif dtype.is_floating_point:
        values = [0.1, 0.5, 2.0**24 + 1, -3.0, 1.0, 0.0, float("nan"), float("inf")]
    else:
        values = [0, 1, 7, 200] + ([-3] if dtype != torch.uint8 else [])
        values += [2**40 + 1, 2**53 + 1] if dtype == torch.int64 else []
    others = [0.1, 0.5, 16777217, 2**53 + 1, 2**63, -3, 1, True, 0, 7.0, 6.5, 200, float("nan")]
    # The tracing path, run eagerly (the same tensor ops the graph holds);
    # one compiled call below checks that Dynamo takes it without a break.
    monkeypatch.setattr(_graphmend_rt, "_compiling", lambda: True)
    for v in values:
        t = torch.tensor([v], dtype=dtype)
        for other in others:
            for op, fn in _graphmend_rt._COMPARISONS.items():
                got = _graphmend_rt.compare_item(t, op, other)
                got_r = _graphmend_rt.compare_item(other, op, t, item=1)
                assert bool(got) == fn(t.item(), other), (dtype, v, other, op)
                assert bool(got_r) == fn(other, t.item()), (dtype, v, other, op)
    monkeypatch.undo()

    def f(t, n):
        return _graphmend_rt.compare_item(t.max(), "<=", n) & _graphmend_rt.compare_item(0, "<", t.min(), item=1)

    fn, cnt = _compile(f, "count")
    t = torch.tensor(values[:2], dtype=dtype)
    assert bool(fn(t, 7)) == (t.max().item() <= 7 and 0 < t.min().item())
    _assert_one_graph(cnt)
