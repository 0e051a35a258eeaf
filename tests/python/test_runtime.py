"""graphmend.runtime: deferred side effects ([Defer]) and traps ([Trap]).

Each case pairs an ORIGINAL function with its MENDED form, written exactly as
docs/runtime.md says the rewriter emits it, and checks: the original breaks the
graph; the mended one compiles to one graph with zero break events; outputs,
stdout, log records, warnings and exceptions match the original run eagerly.
"""

import inspect
import logging
import os
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
from torch._dynamo.utils import counters  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
THIS = os.path.abspath(__file__)


import graphmend.runtime as _graphmend_rt  # noqa: E402
from _torch_cases import Count  # noqa: E402

# ---------------------------------------------------------------------------
# harness


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    counters.clear()
    yield
    _graphmend_rt.flush()
    torch._dynamo.reset()


def compiled(fn, backend=None):
    """Compile fn fresh; returns (compiled fn, counting backend or None)."""
    torch._dynamo.reset()
    counters.clear()
    cnt = Count() if backend is None else None
    return torch.compile(fn, backend=cnt if backend is None else backend), cnt


def breaks():
    return sum(counters["graph_break"].values())


def unimplemented():
    return sum(counters["unimplemented"].values())


def assert_one_graph(cnt):
    assert len(cnt.graphs) == 1, [g.code for g in cnt.graphs]
    assert breaks() == 0, dict(counters["graph_break"])
    assert unimplemented() == 0, dict(counters["unimplemented"])


def assert_breaks(cnt):
    assert breaks() >= 1 or len(cnt.graphs) > 1 or unimplemented() >= 1


def line_of(fn, needle):
    src, start = inspect.getsourcelines(fn)
    for i, line in enumerate(src):
        if needle in line:
            return start + i
    raise AssertionError(needle)


def same(a, b):
    assert type(a) is type(b)
    if isinstance(a, torch.Tensor):
        assert a.shape == b.shape and a.dtype == b.dtype
        torch.testing.assert_close(a, b)
    else:
        assert a == b


# ---------------------------------------------------------------------------
# [Defer] print


def print_original(x):
    y = x * 2
    print("y:", y, "n", 3, sep=" | ")
    y.add_(1)  # the print must show the value at the call, not at the end
    return y.sin()


def print_mended(x):
    y = x * 2
    _graphmend_rt.print("y:", y, "n", 3, sep=" | ")
    y.add_(1)  # the print must show the value at the call, not at the end
    return y.sin()


def test_print_one_graph_same_stdout(capsys):
    for _ in range(2):
        x = torch.randn(4)
        expected = print_original(x)
        eager_out = capsys.readouterr().out
        assert "y:" in eager_out

        fn, cnt = compiled(print_original)
        same(fn(x), expected)
        assert_breaks(cnt)
        capsys.readouterr()

        fn, cnt = compiled(print_mended)
        same(fn(x), expected)
        assert_one_graph(cnt)
        assert capsys.readouterr().out == eager_out
        assert _graphmend_rt.pending() == 0

        # eagerly the mended function is the original
        same(print_mended(x), expected)
        assert capsys.readouterr().out == eager_out


def test_print_fullgraph_and_second_call_no_recompile(capsys):
    cnt = Count()
    fn = torch.compile(print_mended, backend=cnt, fullgraph=True)
    x = torch.randn(3)
    fn(x)
    fn(x + 1)
    assert len(cnt.graphs) == 1
    out = capsys.readouterr().out
    assert out.count("y:") == 2


# ---------------------------------------------------------------------------
# [Defer] logging, inside an inlined submodule


log = logging.getLogger("graphmend.test.runtime")


class LogSubOriginal(torch.nn.Module):
    def forward(self, h):
        log.info("hidden %s scale=%d", h, 2)
        log.warning("done")
        return h * 2


class LogSubMended(torch.nn.Module):
    def forward(self, h):
        _graphmend_rt.log(log, "info", "hidden %s scale=%d", h, 2)
        _graphmend_rt.log(log, "warning", "done")
        return h * 2


class LogModel(torch.nn.Module):
    def __init__(self, sub):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.sub = sub

    def forward(self, x):
        return self.sub(self.lin(x)).relu()


def _ours(caplog):
    return [r for r in caplog.records if r.name.startswith("graphmend.test")]


def _records(caplog):
    return [(r.name, r.levelno, r.getMessage()) for r in _ours(caplog)]


def test_logging_one_graph_same_records(caplog):
    caplog.set_level(logging.DEBUG, logger=log.name)
    torch.manual_seed(0)
    orig = LogModel(LogSubOriginal())
    mended = LogModel(LogSubMended())
    mended.load_state_dict(orig.state_dict())
    x = torch.randn(2, 3)
    with torch.no_grad():
        expected = orig(x)
        eager = _records(caplog)
        eager_where = [(r.pathname, r.lineno, r.funcName) for r in _ours(caplog)]
        caplog.clear()
        assert [lvl for _, lvl, _ in eager] == [logging.INFO, logging.WARNING]

        fn, cnt = compiled(orig)
        same(fn(x), expected)
        assert_breaks(cnt)
        caplog.clear()

        fn, cnt = compiled(mended)
        same(fn(x), expected)
        assert_one_graph(cnt)
        assert _records(caplog) == eager
        caplog.clear()

        # eagerly: identical records, attributed to the mended call site
        same(mended(x), expected)
        assert _records(caplog) == eager
        got_where = [(r.pathname, r.lineno, r.funcName) for r in _ours(caplog)]
    assert [w[0] for w in eager_where] == [THIS, THIS]
    assert got_where == [
        (THIS, line_of(LogSubMended.forward, '"info"'), "forward"),
        (THIS, line_of(LogSubMended.forward, '"warning"'), "forward"),
    ]
    assert eager_where == [
        (THIS, line_of(LogSubOriginal.forward, "log.info"), "forward"),
        (THIS, line_of(LogSubOriginal.forward, "log.warning"), "forward"),
    ]


def test_logging_user_stacklevel_and_log_method(caplog):
    caplog.set_level(logging.DEBUG, logger=log.name)

    def helper_original():
        log.log(logging.ERROR, "via %s", "log", stacklevel=2)

    def helper_mended():
        _graphmend_rt.log(log, "log", logging.ERROR, "via %s", "log", stacklevel=2)

    helper_original()
    line_o = line_of(test_logging_user_stacklevel_and_log_method, "helper_original()\n")
    helper_mended()
    line_m = line_of(test_logging_user_stacklevel_and_log_method, "helper_mended()\n")
    (ro, rm) = _ours(caplog)
    assert (
        (ro.levelno, ro.getMessage())
        == (rm.levelno, rm.getMessage())
        == (logging.ERROR, "via log")
    )
    assert (ro.pathname, ro.lineno) == (THIS, line_o)
    assert (rm.pathname, rm.lineno) == (THIS, line_m)


def test_transformers_warning_once(caplog):
    hf_logging = pytest.importorskip("transformers.utils.logging")
    hf_log = hf_logging.get_logger("graphmend.test.hf")
    hf_log.propagate = True
    caplog.set_level(logging.INFO, logger=hf_log.name)

    def original(x):
        hf_log.warning_once("graphmend-once: deprecated path")
        hf_log.info_once("graphmend-once: info")
        return x + 1

    def mended(x):
        _graphmend_rt.log(hf_log, "warning_once", "graphmend-once: deprecated path")
        _graphmend_rt.log(hf_log, "info_once", "graphmend-once: info")
        return x + 1

    x = torch.randn(2)
    fn, cnt = compiled(original)
    fn(x)
    assert_breaks(cnt)

    type(hf_log).warning_once.cache_clear()
    type(hf_log).info_once.cache_clear()
    caplog.clear()
    for _ in range(2):
        original(x)
    eager = _records(caplog)
    assert len(eager) == 2

    type(hf_log).warning_once.cache_clear()
    type(hf_log).info_once.cache_clear()
    caplog.clear()
    fn, cnt = compiled(mended)
    for _ in range(3):
        same(fn(x), x + 1)
    assert_one_graph(cnt)
    assert _records(caplog) == eager


# ---------------------------------------------------------------------------
# [Defer] warnings


def warn_original(x):
    y = x.cos()
    warnings.warn("graphmend: deprecated input", DeprecationWarning, stacklevel=1)
    return y * 2


def warn_mended(x):
    y = x.cos()
    _graphmend_rt.warn("graphmend: deprecated input", DeprecationWarning, stacklevel=1)
    return y * 2


def _warned(fn, *args, action="always"):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter(action)
        out = fn(*args)
    return out, got


def test_warnings_one_graph_same_warnings():
    x = torch.randn(3)
    expected, eager = _warned(warn_original, x)
    assert [(type(w.message), str(w.message)) for w in eager] == [
        (DeprecationWarning, "graphmend: deprecated input")
    ]
    assert (eager[0].filename, eager[0].lineno) == (
        THIS,
        line_of(warn_original, "warnings.warn"),
    )

    fn, cnt = compiled(warn_original)
    _warned(fn, x)
    assert_breaks(cnt)

    fn, cnt = compiled(warn_mended)
    out, got = _warned(fn, x)
    same(out, expected)
    assert_one_graph(cnt)
    assert [(w.category, str(w.message)) for w in got] == [
        (w.category, str(w.message)) for w in eager
    ]
    assert got[0].filename == THIS  # attributed to the compiled frame

    out, got = _warned(warn_mended, x)
    same(out, expected)
    assert [(w.category, str(w.message)) for w in got] == [
        (w.category, str(w.message)) for w in eager
    ]
    assert (got[0].filename, got[0].lineno) == (
        THIS,
        line_of(warn_mended, "_graphmend_rt.warn"),
    )


def test_warnings_once_filter_kept():
    x = torch.randn(3)
    fn, cnt = compiled(warn_mended)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("once")
        for _ in range(3):
            fn(x)
    assert len(got) == 1
    assert_one_graph(cnt)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("error")
        with pytest.raises(DeprecationWarning, match="deprecated input"):
            fn(x)


# ---------------------------------------------------------------------------
# order across kinds, and flush when the region raises


def mixed_original(x):
    print("first", x.sum() > 100)
    log.warning("second %s", "w")
    warnings.warn("third")
    print("fourth")
    return x + 1


def mixed_mended(x):
    _graphmend_rt.print("first", x.sum() > 100)
    _graphmend_rt.log(log, "warning", "second %s", "w")
    _graphmend_rt.warn("third")
    _graphmend_rt.print("fourth")
    return x + 1


def _events(fn, x, capsys):
    """Run fn with print, logging and warnings all going to stdout, in order."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("LOG %(levelname)s %(message)s"))
    log.addHandler(handler)

    def show(message, category, filename, lineno, file=None, line=None):
        print("WARN", category.__name__, message)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = show  # restored by catch_warnings
            out = fn(x)
    finally:
        log.removeHandler(handler)
    return out, capsys.readouterr().out


def test_order_across_kinds(capsys):
    x = torch.randn(4)
    expected, eager = _events(mixed_original, x, capsys)
    assert eager.splitlines() == [
        "first tensor(False)",
        "LOG WARNING second w",
        "WARN UserWarning third",
        "fourth",
    ]
    fn, cnt = compiled(mixed_mended)
    out, got = _events(fn, x, capsys)
    same(out, expected)
    assert_one_graph(cnt)
    assert got == eager


def raise_original(x):
    y = x * 3
    print("before", y)
    if (y > 0).any():
        raise ValueError("positive entries")
    print("after")
    return y


def raise_mended(x):
    y = x * 3
    _graphmend_rt.print("before", y)
    _graphmend_rt.trap_if((y > 0).any(), ValueError, "positive entries")
    _graphmend_rt.print("after")
    return y


def raise_mended_unmended_raise(x):
    # a deferred print followed by a raise graphmend did not mend
    y = x * 3
    _graphmend_rt.print("before", y)
    if (y > 0).any():
        raise ValueError("positive entries")
    _graphmend_rt.print("after")
    return y


@pytest.mark.parametrize("mended", [raise_mended, raise_mended_unmended_raise])
def test_flush_when_region_raises(capsys, mended):
    x = torch.tensor([1.0, -2.0])
    with pytest.raises(ValueError, match="^positive entries$"):
        raise_original(x)
    eager = capsys.readouterr().out
    assert eager.startswith("before") and "after" not in eager
    fn, cnt = compiled(mended)
    with pytest.raises(ValueError, match="^positive entries$"):
        fn(x)
    assert capsys.readouterr().out == eager
    if mended is raise_mended:
        assert_one_graph(cnt)
    assert _graphmend_rt.pending() == 0
    ok = -torch.ones(2)
    same(fn(ok), raise_original(ok))
    assert capsys.readouterr().out.count("after") == 2


# ---------------------------------------------------------------------------
# [Trap]


# Functions with `assert` are compiled from source so that pytest's assertion
# rewriting (which rewrites this test module) does not change them.
_GUARD_SRC = """
import torch
import graphmend.runtime as _graphmend_rt


def guard_original(a, b):
    if not torch.equal(a, b):
        raise ValueError("a and b must match")
    if (a < 0).any():
        raise KeyError("negative")
    assert (b < 100).all(), "too large"
    return a * b


def guard_mended(a, b):
    _graphmend_rt.trap_unless(_graphmend_rt.equal(a, b), ValueError, "a and b must match")
    _graphmend_rt.trap_if((a < 0).any(), KeyError, "negative")
    if __debug__:
        _graphmend_rt.trap_unless((b < 100).all(), AssertionError, "too large")
    return a * b


def assert_original(b):
    assert (b < 100).all(), "too large"
    return b + 1


def assert_mended(b):
    if __debug__:
        _graphmend_rt.trap_unless((b < 100).all(), AssertionError, "too large")
    return b + 1
"""
_guards = {"__name__": "graphmend_test_guards"}
exec(compile(_GUARD_SRC, "<graphmend_test_guards>", "exec"), _guards)  # noqa: S102
guard_original = _guards["guard_original"]
guard_mended = _guards["guard_mended"]


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001
        return (type(e), str(e), e.args)


GUARD_CASES = {
    "ok": (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])),
    "not_equal": (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0])),
    "negative": (torch.tensor([-1.0, 2.0]), torch.tensor([-1.0, 2.0])),
    "assert": (torch.tensor([1.0, 200.0]), torch.tensor([1.0, 200.0])),
    "nan": (torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0])),
}


def test_trap_original_breaks():
    fn, cnt = compiled(guard_original)
    _outcome(fn, *GUARD_CASES["ok"])
    assert_breaks(cnt)


def test_assert_alone_changes_exception_type_under_dynamo():
    # Dynamo rewrites `assert tensor` to torch._assert_async: no break, but the
    # user sees RuntimeError instead of AssertionError.  The mended form fixes that.
    original, mended = _guards["assert_original"], _guards["assert_mended"]
    bad = torch.tensor([500.0])
    with pytest.raises(AssertionError, match="^too large$"):
        original(bad)
    with pytest.raises(AssertionError, match="^too large$"):
        mended(bad)
    fn, _ = compiled(original)
    with pytest.raises(RuntimeError):
        fn(bad)
    fn, cnt = compiled(mended)
    with pytest.raises(AssertionError, match="^too large$"):
        fn(bad)
    assert_one_graph(cnt)
    same(fn(torch.ones(1)), original(torch.ones(1)))


def test_trap_counting_backend():
    fn, cnt = compiled(guard_mended)
    for name, args in GUARD_CASES.items():
        want = _outcome(guard_original, *args)
        got = _outcome(fn, *args)
        if isinstance(want, torch.Tensor):
            same(got, want)
        else:
            assert got == want, name
        if not isinstance(want, torch.Tensor):
            assert _outcome(guard_mended, *args) == want  # eagerly too
    assert len(cnt.graphs) == 1
    assert breaks() == 0 and unimplemented() == 0


def test_trap_shape_mismatch_is_static():
    a, b = torch.ones(2), torch.ones(3)
    want = _outcome(guard_original, a, b)
    assert want[0] is ValueError
    for backend in (None, "eager"):
        # decided at trace time: raised where the original raised
        fn, _ = compiled(guard_mended, backend=backend)
        assert _outcome(fn, a, b) == want
    # dtype promotion as in torch.equal
    a, b = torch.ones(2), torch.ones(2, dtype=torch.int64)
    fn, _ = compiled(guard_mended)
    same(fn(a, b), guard_original(a, b))


def test_trap_inductor_keeps_checks():
    fn = torch.compile(guard_mended, backend="inductor")
    for name, args in GUARD_CASES.items():
        want = _outcome(guard_original, *args)
        got = _outcome(fn, *args)
        if isinstance(want, torch.Tensor):
            same(got, want)
        else:
            assert got == want, name
    assert breaks() == 0


def test_trap_gradients_match():
    torch.manual_seed(0)

    def original(w, x):
        y = (w * x).tanh()
        if (y.abs() > 10).any():
            raise ValueError("blew up")
        print("loss", y.sum() > 1e9)
        return y.pow(2).sum()

    def mended(w, x):
        y = (w * x).tanh()
        _graphmend_rt.trap_if((y.abs() > 10).any(), ValueError, "blew up")
        _graphmend_rt.print("loss", y.sum() > 1e9)
        return y.pow(2).sum()

    x = torch.randn(5)
    w0 = torch.randn(5, requires_grad=True)
    original(w0, x).backward()
    w1 = w0.detach().clone().requires_grad_(True)
    fn, cnt = compiled(mended, backend="aot_eager")
    fn(w1, x).backward()
    torch.testing.assert_close(w1.grad, w0.grad)
    w2 = w0.detach().clone().requires_grad_(True)
    fn, cnt = compiled(mended)
    fn(w2, x).backward()
    assert_one_graph(cnt)
    torch.testing.assert_close(w2.grad, w0.grad)


# ---------------------------------------------------------------------------
# the module itself


def test_import_is_light_and_torch_free():
    code = (
        "import sys\n"
        "import graphmend.runtime as m\n"
        "m.print('hi', 1)\n"
        "try:\n    m.trap_if(True, KeyError, 'k')\nexcept KeyError as e:\n    print('raised', repr(e))\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "hi 1\nraised KeyError('k')\n"


def test_public_api():
    for name in _graphmend_rt.__all__:
        assert callable(getattr(_graphmend_rt, name))
    assert _graphmend_rt.API_VERSION == 1
    with pytest.raises(AttributeError):
        _graphmend_rt.no_such_function  # noqa: B018


# --- message: a trap's argument formatted only when it raises


class _Loud:
    """An object whose text the trap cannot snapshot (its __format__ could
    read state that changes after the call)."""

    def __init__(self):
        self.calls = 0

    def __format__(self, spec):
        self.calls += 1
        return "loud"


def _message_original(x, n):
    if (x > 1).any():
        raise ValueError(f"{n} entries above one in {x}")
    return x * 2


def _message_mended(x, n):
    _graphmend_rt.trap_if((x > 1).any(), ValueError, _graphmend_rt.message("{} entries above one in {}", n, x))
    return x * 2


def test_message_formats_only_when_raising():
    loud = _Loud()
    _message_mended(torch.zeros(2), loud)  # passes: never formatted
    assert loud.calls == 0
    for x in (torch.zeros(3), torch.tensor([0.5, 2.0, 3.0])):
        want = _outcome(_message_original, x, 7)
        fn, cnt = compiled(_message_mended)
        for got in (_outcome(_message_mended, x, 7), _outcome(fn, x, 7)):  # eagerly, compiled
            if isinstance(want, torch.Tensor):
                same(got, want)
            else:
                assert got == want  # the same text, from the values at the call
        assert_one_graph(cnt)
    percent = _graphmend_rt.message_percent("%d of %s", (3, "x"))
    with pytest.raises(ValueError, match="^3 of x$"):
        _graphmend_rt.trap_unless(False, ValueError, percent)


def test_message_value_it_cannot_keep_decides_at_the_call():
    # An object the runtime cannot snapshot: the trap takes the condition's
    # truth value at the call, as the original did (a graph break), and the
    # text is the original's.
    bad = torch.tensor([2.0])
    fn, _ = compiled(_message_mended)
    want = _outcome(_message_original, bad, _Loud())
    assert want[0] is ValueError and _outcome(fn, bad, _Loud()) == want
    same(fn(torch.zeros(1), _Loud()), _message_original(torch.zeros(1), _Loud()))
