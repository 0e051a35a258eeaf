"""GM201/GM202/GM203 end to end with torch: the mended module compiles to one
graph with no break, computes the same outputs, and emits the same stdout,
log records and warnings (text and order) as the original run eagerly.

The original modules and their mended text are the C++ fixture snapshots
tests/fixtures/rules/GM2xx/torch_*.py and torch_*.fixed.py (the C++ tests
check that the rules produce exactly that text). When ``graphmend.fix_source``
is usable, it is also checked to produce the same mended text.
"""
from __future__ import annotations

import contextlib
import io
import logging
import pathlib
import warnings

import pytest
from _torch_cases import load_file

torch = pytest.importorskip("torch")

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "rules"

CASES = [
    ("GM201", "torch_print", "PrintNet"),
    ("GM202", "torch_logger", "LogNet"),
    ("GM203", "torch_warn", "WarnNet"),
    ("GM202", "torch_warning_once", "OnceNet"),  # needs transformers
]

# The logger torch_logger.py logs to.
_LOGGER_NAME = "gm2_torch_logger"


def _counting_backend():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return graphs, backend


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.seen = []

    def emit(self, record):
        self.seen.append((record.levelname, record.getMessage()))


@contextlib.contextmanager
def _capture():
    """stdout text, log records of the test logger, warnings (in order)."""
    out = io.StringIO()
    handler = _Records()
    log = logging.getLogger(_LOGGER_NAME)
    old_level, old_prop = log.level, log.propagate
    log.setLevel(logging.DEBUG)
    log.propagate = False
    log.addHandler(handler)
    got = {}
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            yield got
    finally:
        log.removeHandler(handler)
        log.setLevel(old_level)
        log.propagate = old_prop
    got["stdout"] = out.getvalue()
    got["logs"] = handler.seen
    got["warnings"] = [(w.category.__name__, str(w.message)) for w in caught]


def _run(model, x, compiled: bool):
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    graphs, backend = _counting_backend()
    fn = torch.compile(model, backend=backend, fullgraph=False) if compiled else model
    _clear_once_caches()
    with torch.no_grad(), _capture() as got:
        y = fn(x.clone())
        fn(x.clone())  # twice: once-only logging, and no recompile
    got["out"] = y
    got["graphs"] = len(graphs)
    got["breaks"] = sum(counters["graph_break"].values()) + sum(
        counters["unimplemented"].values())
    got["break_reasons"] = sorted({k.splitlines()[0] for k in counters["graph_break"]})
    return got


def _clear_once_caches():
    """transformers' warning_once/info_once are lru_caches on the Logger class."""
    for name in ("warning_once", "info_once"):
        clear = getattr(getattr(logging.Logger, name, None), "cache_clear", None)
        if clear is not None:
            clear()


def _fix_source():
    try:
        import graphmend

        fix = graphmend.fix_source
        fix("x = 1\n")
    except Exception:  # not built / not landed yet: the C++ snapshots cover it
        return None
    return fix


@pytest.mark.parametrize("code,stem,cls", CASES, ids=[c[1] for c in CASES])
def test_mended_module_has_one_graph_and_same_effects(code, stem, cls, tmp_path):
    original_text = (FIXTURES / code / f"{stem}.py").read_text()
    mended_text = (FIXTURES / code / f"{stem}.fixed.py").read_text()
    assert "import graphmend.runtime as _graphmend_rt" in mended_text

    if "transformers" in original_text:
        pytest.importorskip("transformers")
    fix = _fix_source()
    if fix is not None:  # the real fixer, through the Python API
        result = fix(original_text, select=[code])
        assert result.status == "fixed"
        assert result.source == mended_text
        mended_text = result.source

    original_path = tmp_path / f"{stem}_original.py"
    mended_path = tmp_path / f"{stem}_mended.py"
    original_path.write_text(original_text)
    mended_path.write_text(mended_text)

    original_mod = load_file(original_path)
    mended_mod = load_file(mended_path)
    torch.manual_seed(0)
    original = getattr(original_mod, cls)().eval()
    mended = getattr(mended_mod, cls)().eval()
    mended.load_state_dict(original.state_dict())

    for seed in (1, 2):
        torch.manual_seed(seed)
        x = torch.randn(4, 8)
        eager = _run(original, x, compiled=False)
        broken = _run(original, x, compiled=True)
        fixed = _run(mended, x, compiled=True)
        mended_eager = _run(mended, x, compiled=False)
        print(f"{stem}: original graphs={broken['graphs']} breaks={broken['breaks']} "
              f"{broken['break_reasons']}; mended graphs={fixed['graphs']} "
              f"breaks={fixed['breaks']} {fixed['break_reasons']}")

        assert broken["breaks"] >= 1
        assert fixed["graphs"] == 1
        assert fixed["breaks"] == 0, fixed["break_reasons"]

        # (The original compiled run is not compared: Dynamo adds its own
        # warnings about the break.)
        for run in (fixed, mended_eager):
            torch.testing.assert_close(run["out"], eager["out"])
            assert run["stdout"] == eager["stdout"]
            assert run["logs"] == eager["logs"]
            assert run["warnings"] == eager["warnings"]
        # Something was actually emitted.
        assert eager["stdout"] or eager["logs"] or eager["warnings"]
        if stem == "torch_warning_once":  # two forward calls, each message once
            assert [level for level, _ in eager["logs"]] == ["WARNING", "INFO"]


def test_fixture_snapshots_exist():
    for code, stem, _ in CASES:
        assert (FIXTURES / code / f"{stem}.py").is_file()
        assert (FIXTURES / code / f"{stem}.fixed.py").is_file()


@pytest.mark.parametrize("code,stem,cls", CASES[:3], ids=[c[1] for c in CASES[:3]])
def test_mended_module_under_inductor_emits_the_same(code, stem, cls, tmp_path):
    """The default backend (Inductor) too: the deferred print/log/warning is
    replayed after the compiled graph, with the same text and order."""
    mended_path = tmp_path / f"{stem}_mended.py"
    original_path = tmp_path / f"{stem}_original.py"
    mended_path.write_text((FIXTURES / code / f"{stem}.fixed.py").read_text())
    original_path.write_text((FIXTURES / code / f"{stem}.py").read_text())
    torch.manual_seed(0)
    original = getattr(load_file(original_path), cls)().eval()
    mended = getattr(load_file(mended_path), cls)().eval()
    mended.load_state_dict(original.state_dict())
    x = torch.randn(4, 8)
    with torch.no_grad(), _capture() as want:
        want_out = original(x.clone())
    torch._dynamo.reset()
    compiled = torch.compile(mended)  # default backend: Inductor
    with torch.no_grad(), _capture() as got:
        got_out = compiled(x.clone())
    torch.testing.assert_close(got_out, want_out)
    for key in ("stdout", "logs", "warnings"):
        assert got[key] == want[key], key
