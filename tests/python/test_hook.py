"""The import hook (``graphmend.install``) and ``graphmend run``.

A throwaway package is written to ``tmp_path`` for each test: the GM201-GM203
torch fixtures (print, logger and ``warnings.warn`` inside ``forward``), a
module opting out with ``# graphmend: skip-file``, one with a syntax error, a
subpackage and a namespace package. In-process tests import it under a unique
name; the cache and ``graphmend run`` tests run fresh interpreters with a
ten-line stand-in for ``torch`` first on ``sys.path`` (mending is static, and
importing the real torch costs seconds per process); the in-process tests and
the transformers test use the real one.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import io
import json
import logging
import os
import pathlib
import re
import shutil
import subprocess
import sys
import traceback
import uuid
import warnings

import graphmend
import pytest
from graphmend import hook

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "rules"

NETS = [("printing", "GM201/torch_print.py", "PrintNet"),
        ("logging_", "GM202/torch_logger.py", "LogNet"),
        ("warning", "GM203/torch_warn.py", "WarnNet")]

TRACE_SOURCE = '''\
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        print("shape", x.shape)
        return x


def boom():
    raise ValueError("boom")
'''

LIGHT_SOURCE = '''\
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        print("light", x)
        return x + 1
'''

SKIP_SOURCE = '''\
import torch.nn as nn

# graphmend: skip-file


class Net(nn.Module):
    def forward(self, x):
        print("not mended", x)
        return x
'''

STUB_TORCH = {
    "torch/__init__.py": '"""A stand-in for torch: enough for graphmend.runtime and nn.Module."""\n'
                         "from . import compiler, nn\n",
    "torch/compiler.py": "def is_compiling():\n    return False\n",
    "torch/nn/__init__.py": "class Module:\n"
                            "    def __call__(self, *args, **kwargs):\n"
                            "        return self.forward(*args, **kwargs)\n",
}


def _write(root: pathlib.Path, files: dict) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def make_package(root: pathlib.Path, name: str) -> pathlib.Path:
    files = {f"{name}/__init__.py": "VALUE = 1\n",
             f"{name}/trace.py": TRACE_SOURCE,
             f"{name}/light.py": LIGHT_SOURCE,
             f"{name}/light2.py": LIGHT_SOURCE,
             f"{name}/skipped.py": SKIP_SOURCE,
             f"{name}/broken.py": "import torch.nn as nn\n\ndef f(:\n    pass\n",
             f"{name}/sub/__init__.py": "",
             f"{name}/sub/deep.py": LIGHT_SOURCE,
             f"{name}/ns/inner.py": LIGHT_SOURCE}  # ns: a namespace package
    for mod, fixture, _ in NETS:
        files[f"{name}/{mod}.py"] = (FIXTURES / fixture).read_text()
    _write(root, files)
    return root / name


def _unique() -> str:
    return f"gmhook_{uuid.uuid4().hex[:10]}"


def _forget(name: str) -> None:
    for mod in list(sys.modules):
        if mod == name or mod.startswith(name + "."):
            del sys.modules[mod]


@pytest.fixture
def pkg(tmp_path, monkeypatch):
    """A fresh package on sys.path; the hook and its modules are removed after."""
    name = _unique()
    root = tmp_path / "src"
    directory = make_package(root, name)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    hook.uninstall()
    yield type("Pkg", (), {"name": name, "root": root, "dir": directory,
                           "cache": tmp_path / "cache"})
    hook.uninstall()
    _forget(name)


def _line_of(path: pathlib.Path, text: str) -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def _import(name: str):
    return importlib.import_module(name)


# --------------------------------------------------------------------------
# mended behaviour, in process (real torch)


def _load_plain(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _capture(logger_name: str):
    out = io.StringIO()
    records = []

    class Handler(logging.Handler):
        def emit(self, record):
            records.append((record.levelname, record.getMessage()))

    log = logging.getLogger(logger_name)
    handler = Handler(logging.DEBUG)
    old = log.level, log.propagate
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
        log.setLevel(old[0])
        log.propagate = old[1]
    got["effects"] = (out.getvalue(), records,
                      [(w.category.__name__, str(w.message)) for w in caught])


def _run(model, x, compiled: bool):
    import torch

    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    fn = torch.compile(model, backend=backend) if compiled else model
    with torch.no_grad(), _capture("gm2_torch_logger") as got:
        y = fn(x.clone())
    return y, len(graphs), got["effects"]


@pytest.mark.parametrize("mod,fixture,cls", NETS, ids=[n[0] for n in NETS])
def test_hooked_module_is_mended_one_graph_same_effects(pkg, mod, fixture, cls):
    torch = pytest.importorskip("torch")
    graphmend.install([pkg.name], cache_dir=pkg.cache)
    hooked = _import(f"{pkg.name}.{mod}")
    assert hooked.__graphmend_mended__ is True
    assert hooked._graphmend_rt is sys.modules["graphmend.runtime"]
    assert b"_graphmend_rt" in hooked.__loader__.get_mended_source()
    assert hooked.__loader__.get_source(hooked.__name__) == (pkg.dir / f"{mod}.py").read_text()
    plain = _load_plain(pkg.dir / f"{mod}.py", f"{pkg.name}_plain_{mod}")
    try:
        assert not hasattr(plain, "__graphmend_mended__")
        torch.manual_seed(0)
        a = getattr(plain, cls)().eval()
        b = getattr(hooked, cls)().eval()
        b.load_state_dict(a.state_dict())
        x = torch.randn(4, 8)
        eager_out, _, eager_effects = _run(a, x, compiled=False)
        _, plain_graphs, _ = _run(a, x, compiled=True)
        out, graphs, effects = _run(b, x, compiled=True)
    finally:
        del sys.modules[f"{pkg.name}_plain_{mod}"]
    assert plain_graphs > 1
    assert graphs == 1
    torch.testing.assert_close(out, eager_out)
    assert effects == eager_effects
    assert any(eager_effects)


def test_traceback_keeps_file_and_original_lines(pkg):
    graphmend.install([pkg.name], cache_dir=pkg.cache)
    mod = _import(f"{pkg.name}.trace")
    path = pkg.dir / "trace.py"
    assert mod.__graphmend_mended__
    mended = mod.__loader__.get_mended_source().decode().splitlines()
    raise_line = _line_of(path, 'raise ValueError("boom")')
    print_line = _line_of(path, 'print("shape", x.shape)')
    # The fix inserted an import line, so without the remapping every line
    # below it would be off by one.
    assert mended.index('    raise ValueError("boom")') + 1 == raise_line + 1

    with pytest.raises(ValueError) as info:
        mod.boom()
    frame = traceback.extract_tb(info.value.__traceback__)[-1]
    assert (frame.filename, frame.lineno, frame.name) == (str(path), raise_line, "boom")
    assert frame.line == 'raise ValueError("boom")'  # linecache: the file on disk

    class NoShape:
        @property
        def shape(self):
            raise RuntimeError("no shape")

    with pytest.raises(RuntimeError) as info:
        mod.Net().forward(NoShape())  # eager: the mended call still evaluates x.shape
    frames = [f for f in traceback.extract_tb(info.value.__traceback__)
              if f.filename == str(path)]
    assert [(f.lineno, f.line) for f in frames] == [(print_line, 'print("shape", x.shape)')]
    if hasattr(frames[0], "colno"):  # 3.11+: the caret range is x.shape in the original line
        original = path.read_text().splitlines()[print_line - 1]
        assert original[frames[0].colno:frames[0].end_colno] == "x.shape"
    assert inspect.getsource(mod.boom) == 'def boom():\n    raise ValueError("boom")\n'
    assert mod.Net.forward.__code__.co_firstlineno == _line_of(path, "def forward")


GUARDED_EFFECTS_SOURCE = '''\
import logging
import warnings

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Net(nn.Module):
    def forward(self, x):
        loss = x.pow(2).mean()
        if loss > 2:
            warnings.warn(f"large loss {loss.item():.3f}")
        if loss < 0.5:
            logger.warning("small loss %s", loss)
            print("small", loss)
        return loss * 2
'''


def test_guarded_deferred_effects_report_the_original_calls_lines(pkg):
    """`if c: warnings.warn(m)` becomes one `_graphmend_rt.warn_if(c, ...)`
    statement (and `log_if`/`print_if`); the warning and the log record
    name the line of the original `warnings.warn`/`logger.warning` call,
    not that of the `if` that guarded it."""
    import torch

    path = pkg.dir / "guarded.py"
    path.write_text(GUARDED_EFFECTS_SOURCE)
    graphmend.install([pkg.name], cache_dir=pkg.cache)
    mod = _import(f"{pkg.name}.guarded")
    mended = mod.__loader__.get_mended_source().decode()
    assert "_graphmend_rt.warn_if(" in mended and "_graphmend_rt.log_if(" in mended
    assert "if loss" not in mended

    class Records(logging.Handler):
        def __init__(self):
            super().__init__()
            self.lines = []

        def emit(self, record):
            self.lines.append((record.pathname, record.lineno, record.funcName))

    handler = Records()
    mod.logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("always")
            mod.Net()(torch.full((3,), 2.0))
            mod.Net()(torch.full((3,), 0.1))
    finally:
        mod.logger.removeHandler(handler)
    assert [(w.filename, w.lineno) for w in caught] == [
        (str(path), _line_of(path, "warnings.warn("))]
    assert handler.lines == [(str(path), _line_of(path, "logger.warning("), "forward")]


GUARD_SOURCE = '''\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        y = x * 2
        if (y < 0).any():
            raise ValueError("negative input")
        return y + 1
'''


def test_trap_traceback_names_the_original_raise(pkg):
    """GM301 makes the guard one `_graphmend_rt.trap_if(...)` statement; the
    traceback of the error it raises names the `raise` line, as the
    original's does, not the `if` line."""
    import torch

    path = pkg.dir / "guard.py"
    path.write_text(GUARD_SOURCE)
    graphmend.install([pkg.name], cache_dir=pkg.cache)
    mod = _import(f"{pkg.name}.guard")
    assert "_graphmend_rt.trap_if(" in mod.__loader__.get_mended_source().decode()
    with pytest.raises(ValueError, match="negative input") as info:
        mod.Net()(torch.full((3,), -1.0))
    frames = [f for f in traceback.extract_tb(info.value.__traceback__) if f.filename == str(path)]
    raise_line = _line_of(path, "raise ValueError(")
    assert [(f.lineno, f.name) for f in frames] == [(raise_line, "forward")]
    assert frames[0].line == 'raise ValueError("negative input")'


MERGED_SOURCE = '''\
import torch
from torch import nn


class Net(nn.Module):
    def update(self, a, b, tag):
        self.seen = (a, b, tag)

    def forward(self, x):
        h = x * 2
        if h.sum() > 0:
            h = h / 10.0
        else:
            h = h * 3.0
        if x.mean() > 0:
            self.update(x.amax(), h, tag="t")
        else:
            self.update(x.amin(), h, tag="t")
        return h
'''


def test_values_merged_into_where_keep_their_own_lines_and_columns(pkg):
    """GM101 merges the branch values into one `where`, GM104 the two
    `update` calls into one; the code that computes each copied value (and
    the merged call) is positioned at that value's original line and
    columns, not at the `if` line the rewrite replaced."""
    path = pkg.dir / "merged.py"
    path.write_text(MERGED_SOURCE)
    graphmend.install([pkg.name], cache_dir=pkg.cache)
    mod = _import(f"{pkg.name}.merged")
    mended = mod.__loader__.get_mended_source().decode()
    assert "if h.sum()" not in mended and "if x.mean()" not in mended
    lines = MERGED_SOURCE.splitlines()
    spans = {(p[0], p[2], p[3]) for p in mod.Net.forward.__code__.co_positions()
             if p[0] is not None and p[0] == p[1] and p[2] is not None}
    for value in ["h / 10.0", "h * 3.0", "x.amax()", "x.amin()", "self.update"]:
        line = _line_of(path, value)
        col = lines[line - 1].index(value)
        assert (line, col, col + len(value)) in spans, value


def _statements(tree):
    import ast

    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]


RAISES_SOURCE = '''\
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x, d):
        print("inputs", x, d); y = d + 1
        print("ratio", x.size / d)
        return y
'''


@pytest.mark.parametrize("route", ["code", "code-python", "ast"])
def test_mended_module_raising_points_to_original_line_and_column(pkg, monkeypatch, route):
    """The fixes rewrite both print lines (and insert the runtime import
    above them); the ZeroDivisionError's line and caret columns are the
    original file's. Routes: location tables rewritten by the C++
    extension, by the Python reference, or the AST remapped."""
    if route == "ast":
        monkeypatch.setattr(hook, "_CODE_LINETABLE", False)
    if route == "code-python":
        monkeypatch.setattr(hook, "_remap_linetable", None)
    (pkg.dir / "raises.py").write_text(RAISES_SOURCE)
    graphmend.install([pkg.name], cache_dir=pkg.cache)
    mod = _import(f"{pkg.name}.raises")
    assert mod.__graphmend_mended__
    mended = mod.__loader__.get_mended_source().decode()
    assert '_graphmend_rt.print("ratio", x.size / d)' in mended
    path = pkg.dir / "raises.py"
    line = _line_of(path, 'print("ratio"')

    class X:
        size = 1

    with pytest.raises(ZeroDivisionError) as info, contextlib.redirect_stdout(io.StringIO()):
        mod.Net().forward(X(), 0)
    frame = traceback.extract_tb(info.value.__traceback__)[-1]
    assert (frame.filename, frame.lineno, frame.name) == (str(path), line, "forward")
    original = path.read_text().splitlines()[line - 1]
    if hasattr(frame, "colno"):
        assert original[frame.colno:frame.end_colno] == "x.size / d"
    # A statement the fix did not touch, on a line it did.
    code = mod.Net.forward.__code__
    first = _line_of(path, "y = d + 1")
    cols = {(p[0], p[2], p[3]) for p in code.co_positions() if p[0] == first}
    text = path.read_text().splitlines()[first - 1]
    assert any(text[a:b] == "d + 1" for _, a, b in cols if a is not None)
    assert code.co_firstlineno == _line_of(path, "def forward")


def _code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, type(code)):
            yield from _code_objects(const)


def _source_tokens(text: str):
    """(line, col, token text) of every NAME/NUMBER/STRING/OP token."""
    import tokenize

    out = {}
    lines = text.splitlines(keepends=True)
    for tok in tokenize.generate_tokens(iter(lines).__next__):
        if tok.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING, tokenize.OP):
            out[tok.start] = tok.string
    return out


def test_positions_come_from_the_engine_map_and_name_original_tokens():
    """Every fixture the rules mend: the mended code compiles with the
    engine's map; every position lies inside the original file; a code unit
    whose (mended) position starts at a token the fixes kept starts at the
    same token in the original; function first lines are the original's."""
    import ast

    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        if path.name.endswith(".fixed.py"):
            continue
        data = path.read_bytes()
        try:
            result = graphmend.fix_source(data, path=str(path))
        except SyntaxError:
            continue
        if result.status != "fixed":
            continue
        assert result.source_map
        original = data.decode("utf-8")
        mended_text = result.source.decode("utf-8")
        orig_lines = original.splitlines()
        mended_code = compile(result.source, str(path), "exec", dont_inherit=True)
        code = hook.compile_mended(result.source, str(path), result.source_map)
        pmap = hook.PositionMap(result.source_map)
        orig_tokens = _source_tokens(original)
        mended_tokens = _source_tokens(mended_text)
        kept = 0
        for before, after in zip(_code_objects(mended_code), _code_objects(code)):
            assert before.co_code == after.co_code
            for p, q in zip(before.co_positions(), after.co_positions()):
                if q[0] is None or p[0] == 0:  # 0: a module's RESUME
                    assert q[0] == p[0]
                    continue
                assert 1 <= q[0] <= q[1] <= len(orig_lines), (path, p, q)
                if p[2] is None:
                    continue
                token = mended_tokens.get((p[0], p[2]))
                if token is not None and pmap.shift(p[0], p[0]) is not None:
                    assert orig_tokens.get((q[0], q[2])) == token, (path, p, q)
                    kept += 1
        assert kept > 0
        defs = [(n.name, n.lineno) for n in ast.walk(ast.parse(data))
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and not n.decorator_list]
        names = [name for name, _ in defs]
        for c in _code_objects(code):
            if names.count(c.co_name) == 1:
                assert c.co_firstlineno == dict(defs)[c.co_name], (path, c.co_name)
        checked += 1
    assert checked >= 10


def test_location_tables_from_the_extension_equal_the_python_reference():
    """_core.remap_linetable (the route the hook takes) gives every code
    object of every mended fixture the positions and first line that the
    Python reference (_remap_code without it) gives."""
    if hook._remap_linetable is None:
        pytest.skip("location tables are rewritten on CPython 3.11-3.13 only")
    compared = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        if path.name.endswith(".fixed.py"):
            continue
        try:
            result = graphmend.fix_source(path.read_bytes(), path=str(path), regions="all")
        except SyntaxError:
            continue
        if result.status != "fixed":
            continue
        code = compile(result.source, str(path), "exec", dont_inherit=True)
        pmap = hook.PositionMap(result.source_map)
        fast = hook._remap_code(code, pmap)
        saved, hook._remap_linetable = hook._remap_linetable, None
        try:
            slow = hook._remap_code(code, pmap)
        finally:
            hook._remap_linetable = saved
        for a, b in zip(_code_objects(fast), _code_objects(slow)):
            assert (a.co_firstlineno, list(a.co_positions())) == \
                (b.co_firstlineno, list(b.co_positions())), (path, a.co_name)
            compared += 1
    assert compared >= 50


def test_skip_file_marker_loads_module_unmodified(pkg):
    finder = graphmend.install([pkg.name], cache_dir=pkg.cache)
    mod = _import(f"{pkg.name}.skipped")
    assert not hasattr(mod, "__graphmend_mended__")
    assert "_graphmend_rt" not in vars(mod)
    assert finder.stats["skipped"] == 1
    assert hook.SKIP_FILE_MARKER in (pkg.dir / "skipped.py").read_text()


def test_syntax_error_propagates_as_without_the_hook(pkg):
    path = pkg.dir / "broken.py"
    with pytest.raises(SyntaxError) as plain:
        compile(path.read_bytes(), str(path), "exec")
    graphmend.install([pkg.name], cache_dir=pkg.cache)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(SyntaxError) as info:
            _import(f"{pkg.name}.broken")
        assert _import(f"{pkg.name}.light").__graphmend_mended__  # others unaffected
    assert (info.value.filename, info.value.lineno, info.value.msg) == \
        (plain.value.filename, plain.value.lineno, plain.value.msg)
    # CPython's own error says it all; no graphmend warning on top of it.
    assert not [w for w in caught if issubclass(w.category, hook.HookWarning)]


def test_mend_failure_loads_unmodified_with_one_warning(pkg, monkeypatch):
    def broken_mend(self, source, path, roots=None):
        raise RuntimeError("engine exploded")

    monkeypatch.setattr(hook.GraphmendFinder, "mend", broken_mend)
    finder = graphmend.install([pkg.name], cache_dir=pkg.cache)
    with pytest.warns(hook.HookWarning) as caught:
        mod = _import(f"{pkg.name}.light")
    messages = [str(w.message) for w in caught if issubclass(w.category, hook.HookWarning)]
    # one, for light: the package's __init__ holds no region, so it is not mended
    assert len(messages) == 1 and finder.stats["region_free"] == 1
    assert f"mend {pkg.name}.light (" in messages[0]
    assert "RuntimeError: engine exploded" in messages[0]
    assert not hasattr(mod, "__graphmend_mended__")
    assert mod.Net()(1) == 2
    assert finder.stats["failed"] == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", hook.HookWarning)
        importlib.reload(mod)  # the same failure is not reported twice


def test_already_imported_package_warns_once(pkg):
    _import(f"{pkg.name}.light")
    with pytest.warns(hook.HookWarning, match=f"'{pkg.name}' was already imported"):
        graphmend.install([pkg.name], cache_dir=pkg.cache)
    with warnings.catch_warnings():
        warnings.simplefilter("error", hook.HookWarning)
        graphmend.install([pkg.name], cache_dir=pkg.cache, unsafe=True)  # replaced, no warning
        # modules the hook itself loaded do not count as "imported before"
        other = _unique()
        make_package(pkg.root, other)
        try:
            graphmend.install([other], cache_dir=pkg.cache)
            _import(f"{other}.light")
            graphmend.install([other], cache_dir=pkg.cache, unsafe=True)
        finally:
            hook.uninstall()
            _forget(other)


def test_install_idempotent_uninstall_reload_and_module_attributes(pkg):
    first = graphmend.install([pkg.name], cache_dir=pkg.cache)
    assert graphmend.install([pkg.name], cache_dir=pkg.cache) is first
    assert sum(isinstance(f, hook.GraphmendFinder) for f in sys.meta_path) == 1
    assert sys.meta_path[0] is first

    package = _import(pkg.name)
    assert package.__path__ == [str(pkg.dir)]
    assert package.__file__ == str(pkg.dir / "__init__.py")
    deep = _import(f"{pkg.name}.sub.deep")
    assert deep.__graphmend_mended__
    assert deep.__file__ == deep.__spec__.origin == str(pkg.dir / "sub" / "deep.py")
    assert deep.__cached__ == deep.__spec__.cached
    assert pathlib.Path(deep.__cached__).parent == pkg.cache and os.path.isfile(deep.__cached__)
    # A namespace package is left to the normal machinery; its modules are mended.
    ns = _import(f"{pkg.name}.ns")
    assert ns.__spec__.origin in (None, "namespace") and list(ns.__path__) == [str(pkg.dir / "ns")]
    assert _import(f"{pkg.name}.ns.inner").__graphmend_mended__

    light = _import(f"{pkg.name}.light")
    assert light.__graphmend_mended__
    assert importlib.reload(light) is light and light.__graphmend_mended__
    assert hook.uninstall() is True
    assert hook.uninstall() is False
    importlib.reload(light)  # the file as it is (reload keeps old globals, as always)
    assert "_graphmend_rt" not in light.Net.forward.__code__.co_names
    assert light.__cached__ == importlib.util.cache_from_source(light.__file__)
    with pytest.warns(hook.HookWarning, match="already imported"), graphmend_installed(pkg):
        importlib.reload(light)
        assert "_graphmend_rt" in light.Net.forward.__code__.co_names
        assert light.__cached__ == light.__spec__.cached != \
            importlib.util.cache_from_source(light.__file__)


@contextlib.contextmanager
def graphmend_installed(pkg):
    graphmend.install([pkg.name], cache_dir=pkg.cache)
    try:
        yield
    finally:
        hook.uninstall()


def test_cache_key_source_and_configuration(pkg):
    finder = graphmend.install([pkg.name], cache_dir=pkg.cache)
    _import(f"{pkg.name}.light")
    # the __init__ holds no region: neither mended nor cached
    assert (finder.stats["mended"], finder.stats["cache_write"]) == (1, 1)
    assert finder.stats["region_free"] == 1
    files = sorted(p.name for p in pkg.cache.iterdir() if p.suffix == ".pyc")
    assert len(files) == 1 and not [p for p in pkg.cache.iterdir() if p.suffix == ".tmp"]
    # the package analysis' result (regions="package", the default), once
    assert len([p for p in pkg.cache.iterdir() if p.name.startswith("package-roots.")]) == 1

    def again(**kwargs):
        hook.uninstall()
        _forget(pkg.name)
        f = graphmend.install([pkg.name], cache_dir=pkg.cache, **kwargs)
        _import(f"{pkg.name}.light")
        return f

    f = again(unsafe=True)  # another configuration: another key
    assert f.stats["mended"] == 1 and f.stats["cache_hit"] == 0
    f = again(unsafe=True)
    assert f.stats["mended"] == 0 and f.stats["cache_hit"] == 1
    with open(pkg.dir / "light.py", "a") as handle:  # another source: another key
        handle.write("# edited\n")
    f = again(unsafe=True)
    assert f.stats["mended"] == 1 and f.stats["cache_hit"] == 0
    f = again(select="GM203")  # nothing to mend in light.py with GM203 alone
    assert f.stats["unchanged"] == 1 and not hasattr(sys.modules[f"{pkg.name}.light"],
                                                     "__graphmend_mended__")


def test_modules_with_no_region_are_loaded_as_they_are(pkg, monkeypatch):
    # The package analysis finds no compiled region in eager.py (its print is
    # in a function no forward reaches), so it is not mended, analysed or
    # cached; light.py, whose forward is one, is.
    (pkg.dir / "eager.py").write_text("def report(x):\n    print('eager', x)\n    return x\n")
    finder = graphmend.install([pkg.name], cache_dir=pkg.cache)
    mended = []
    real = hook.GraphmendFinder.mend

    def spy(self, source, path, roots=None):
        mended.append(os.path.basename(path))
        return real(self, source, path, roots)

    monkeypatch.setattr(hook.GraphmendFinder, "mend", spy)
    eager = _import(f"{pkg.name}.eager")
    light = _import(f"{pkg.name}.light")
    assert not hasattr(eager, "__graphmend_mended__") and eager.report(3) == 3
    assert light.__graphmend_mended__
    assert finder.modules[f"{pkg.name}.eager"] == "region free"
    assert finder.modules[pkg.name] == "region free"  # its __init__: VALUE = 1
    assert mended == ["light.py"]
    assert not [p for p in pkg.cache.iterdir() if p.name.startswith(f"{pkg.name}.eager.")]
    # graphmend fix on the package leaves eager.py alone too
    assert graphmend.fix_source((pkg.dir / "eager.py").read_text(), regions="all").status \
        == "fixed"  # in library mode it would be mended: the skip is the package's


def test_rejects_bad_arguments():
    with pytest.raises(ValueError):
        graphmend.install([])
    with pytest.raises(ValueError):
        graphmend.install(["graphmend"])
    with pytest.raises(ValueError):
        graphmend.install(["not-a-name"])
    with pytest.raises(ValueError):
        graphmend.install(["json"], select="XYZ")
    assert hook.installed() is None


# --------------------------------------------------------------------------
# fresh interpreters: the cache on disk


def _proc(args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=False, capture_output=True, text=True, **kwargs)


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("GRAPHMEND_PACKAGES", None)
    env.update(extra)
    return env


CHILD = '''\
import importlib, json, os, sys
sys.path[:0] = [{stubs!r}, {root!r}]
import graphmend
finder = graphmend.install([{name!r}]{kwargs})
out = {{}}
for step in {steps!r}:
    if step[0] == "xdg":
        os.environ["XDG_CACHE_HOME"] = step[1]
        continue
    mod = importlib.import_module({name!r} + "." + step[1])
    out[step[1]] = {{"mended": getattr(mod, "__graphmend_mended__", False),
                    "cached": mod.__cached__, "value": mod.Net()(1)}}
out["stats"] = dict(finder.stats)
print(json.dumps(out))
'''


def _child(tmp_path, root, name, steps, kwargs="", **env):
    stubs = tmp_path / "stubs"
    if not stubs.exists():
        _write(stubs, STUB_TORCH)
    script = CHILD.format(stubs=str(stubs), root=str(root), name=name, steps=steps,
                          kwargs=kwargs)
    proc = _proc([sys.executable, "-c", script], env=_env(**env), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _graphmend_caches(*roots) -> list[pathlib.Path]:
    return sorted(p for root in roots for p in pathlib.Path(root).rglob("*graphmend-*.pyc"))


def test_cache_written_next_to_source_and_reused_by_a_fresh_process(tmp_path):
    name = _unique()
    root = tmp_path / "src"
    directory = make_package(root, name)
    xdg = tmp_path / "xdg"
    first = _child(tmp_path, root, name, [("import", "light")], XDG_CACHE_HOME=str(xdg))
    assert first["light"]["mended"] and first["light"]["value"] == 2
    cached = pathlib.Path(first["light"]["cached"])
    assert cached.parent == directory / "__pycache__" and cached.is_file()
    assert cached.name.startswith("light.") and "graphmend-" in cached.name
    assert first["stats"]["mended"] == 1 and first["stats"]["cache_write"] == 1
    stamp = cached.stat().st_mtime_ns

    second = _child(tmp_path, root, name, [("import", "light")], XDG_CACHE_HOME=str(xdg))
    assert second["light"]["mended"] and second["light"]["cached"] == str(cached)
    assert second["stats"] == {"cache_hit": 1, "region_free": 1}
    assert cached.stat().st_mtime_ns == stamp
    assert not xdg.exists()


def test_no_cache_with_pythondontwritebytecode(tmp_path):
    name = _unique()
    root = tmp_path / "src"
    make_package(root, name)
    xdg = tmp_path / "xdg"
    out = _child(tmp_path, root, name, [("import", "light")], XDG_CACHE_HOME=str(xdg),
                 PYTHONDONTWRITEBYTECODE="1")
    assert out["light"]["mended"] and out["light"]["value"] == 2
    assert "cache_write" not in out["stats"]
    assert _graphmend_caches(root, tmp_path) == []


def test_read_only_source_directory_falls_back_or_skips(tmp_path):
    name = _unique()
    root = tmp_path / "src"
    directory = make_package(root, name)
    # __pycache__ cannot be created: a plain file is in the way (this also
    # holds for root, whom permissions do not stop) ...
    (directory / "__pycache__").write_text("")
    read_only = hasattr(os, "geteuid") and os.geteuid() != 0
    if read_only:  # ... and, where it means something, a read-only directory
        directory.chmod(0o555)
    blocked = tmp_path / "file"
    blocked.write_text("")
    xdg = tmp_path / "xdg"
    try:
        out = _child(tmp_path, root, name, [
            ("xdg", str(blocked / "no")), ("import", "light"),  # no cache anywhere
            ("xdg", str(xdg)), ("import", "light2")],  # the user cache directory
            XDG_CACHE_HOME=str(xdg))
    finally:
        directory.chmod(0o755)
    assert out["light"]["mended"] and out["light2"]["mended"]
    assert out["light"]["value"] == out["light2"]["value"] == 2
    assert _graphmend_caches(directory) == []
    in_xdg = _graphmend_caches(xdg)
    assert [p.name.split(".")[:2] for p in in_xdg] == [[name, "light2"]]
    assert in_xdg[0].parent == xdg / "graphmend"
    assert out["stats"]["cache_write"] == 1 and out["stats"]["mended"] == 2


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_explicit_cache_dir_is_written_under_pythondontwritebytecode(tmp_path, how):
    name = _unique()
    root = tmp_path / "src"
    make_package(root, name)
    cache = tmp_path / "explicit"
    kwargs = f", cache_dir={str(cache)!r}" if how == "argument" else ""
    env = {"PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    if how == "environment":
        env[hook.CACHE_DIR_ENV] = str(cache)
    first = _child(tmp_path, root, name, [("import", "light")], kwargs=kwargs, **env)
    assert first["light"]["mended"] and first["stats"]["cache_write"] == 1
    assert pathlib.Path(first["light"]["cached"]).parent == cache
    second = _child(tmp_path, root, name, [("import", "light")], kwargs=kwargs, **env)
    assert second["stats"] == {"cache_hit": 1, "region_free": 1}
    assert second["light"]["value"] == 2
    assert _graphmend_caches(root) == [] and not (tmp_path / "xdg").exists()


def test_damaged_cache_entries_are_mended_afresh_and_rewritten(pkg):
    """One flipped bit anywhere (header, key, lengths, checksum, metadata,
    marshalled code) or a truncated file: never loaded, never an error; the
    module is mended again and the entry rewritten."""
    def load():
        hook.uninstall()
        _forget(pkg.name)
        finder = graphmend.install([pkg.name], cache_dir=pkg.cache)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mod = _import(f"{pkg.name}.light")
        assert mod.__graphmend_mended__ and mod.Net()(1) == 2
        return finder

    assert load().stats["mended"] == 1
    entry = next(p for p in pkg.cache.iterdir() if p.name.startswith(f"{pkg.name}.light."))
    good = entry.read_bytes()
    assert load().stats == {"cache_hit": 1, "region_free": 1}
    size = len(good)
    offsets = sorted({0, 5, 9, 40, 41, 46, 50, 80, hook._HEADER, hook._HEADER + 3,
                      size // 2, size - 2, size - 1})
    damaged = [good[:k] + bytes([good[k] ^ (1 << (k % 8))]) + good[k + 1:] for k in offsets]
    damaged += [good[:n] for n in (0, 3, 45, hook._HEADER, size // 2, size - 1)]
    damaged.append(good + b"\0")
    for data in damaged:
        entry.write_bytes(data)
        finder = load()
        assert finder.stats["mended"] == 1 and finder.stats["cache_write"] == 1, len(data)
        assert entry.read_bytes() == good
    assert load().stats == {"cache_hit": 1, "region_free": 1}


def test_cached_entries_keep_the_fixes_by_rule(pkg):
    first = graphmend.install([pkg.name], cache_dir=pkg.cache)
    _import(f"{pkg.name}.printing")
    assert first.fixes["GM201"] >= 1
    assert first.modules[f"{pkg.name}.printing"] == "mended"
    hook.uninstall()
    _forget(pkg.name)
    again = graphmend.install([pkg.name], cache_dir=pkg.cache)
    _import(f"{pkg.name}.printing")
    assert again.modules[f"{pkg.name}.printing"] == "mended (cached)"
    assert again.fixes == first.fixes


SWITCHES = '''\
import json, sys
import graphmend
graphmend.install(["json_not_imported"], dynamo_switches=True)
assert "torch" not in sys.modules
import torch._dynamo.config as config
out = {"on": [config.capture_scalar_outputs, config.capture_dynamic_output_shape_ops]}
graphmend.uninstall()
out["off"] = [config.capture_scalar_outputs, config.capture_dynamic_output_shape_ops]
graphmend.install(["json_not_imported"], dynamo_switches=True)  # torch already imported
out["again"] = [config.capture_scalar_outputs, config.capture_dynamic_output_shape_ops]
graphmend.install(["json_not_imported"])  # replaced by a hook without them
out["replaced"] = [config.capture_scalar_outputs, config.capture_dynamic_output_shape_ops]
print(json.dumps(out))
'''


def test_dynamo_switches_set_on_import_and_restored_by_uninstall(tmp_path):
    pytest.importorskip("torch")
    proc = _proc([sys.executable, "-c", SWITCHES], env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got == {"on": [True, True], "off": [False, False], "again": [True, True],
                   "replaced": [False, False]}


# --------------------------------------------------------------------------
# graphmend run


RUN_SCRIPT = '''\
import sys
import {name}.light as light

print("mended", light.__graphmend_mended__,
      "rt", "_graphmend_rt" in light.Net.forward.__code__.co_names,
      "argv", sys.argv[1:], "name", __name__, "path0", sys.path[0])
sys.exit(int(sys.argv[1]) + light.Net()(1))
'''


def _graphmend_exe() -> str | None:
    exe = shutil.which("graphmend", path=os.path.dirname(sys.executable))
    return exe


def test_graphmend_run_script_and_exit_code(tmp_path):
    exe = _graphmend_exe()
    if exe is None:
        pytest.skip("the graphmend console script is not installed next to this Python")
    name = _unique()
    root = tmp_path / "src"
    make_package(root, name)
    script = root / "main.py"
    script.write_text(RUN_SCRIPT.format(name=name))
    _write(tmp_path / "stubs", STUB_TORCH)
    proc = _proc([exe, "run", "--package", name, str(script), "5", "--flag"],
                 timeout=120, cwd=str(tmp_path), env=_env(PYTHONPATH=str(tmp_path / "stubs")))
    assert proc.returncode == 7, proc.stderr
    assert f"mended True rt True argv ['5', '--flag'] name __main__ path0 {root}" in proc.stdout
    assert proc.stdout.endswith("light 1\n")  # the mended print, run eagerly

    # An uncaught exception: Python's traceback (no graphmend frames), status 1.
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    raise KeyError('nope')\n\n\nf()\n")
    proc = _proc([exe, "run", str(bad)], env=_env(), timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.startswith("Traceback") and "KeyError: 'nope'" in proc.stderr
    assert "runpy" not in proc.stderr and "cli.py" not in proc.stderr
    assert f'File "{bad}", line 2, in f' in proc.stderr


def test_python_m_graphmend_run_module_with_env_packages(tmp_path):
    name = _unique()
    root = tmp_path / "src"
    make_package(root, name)
    _write(tmp_path / "stubs", STUB_TORCH)
    (root / "mainmod.py").write_text(RUN_SCRIPT.format(name=name))
    proc = _proc([sys.executable, "-m", "graphmend", "run", "-m", "mainmod", "3"],
                 cwd=str(root), timeout=120,
                 env=_env(GRAPHMEND_PACKAGES=f"{name},not_imported_anywhere",
                          PYTHONPATH=str(tmp_path / "stubs")))
    assert proc.returncode == 5, proc.stderr
    assert f"mended True rt True argv ['3'] name __main__ path0 {root}" in proc.stdout

    usage = _proc([sys.executable, "-m", "graphmend", "run", "--bogus", "x.py"],
                  timeout=60, env=_env())
    assert usage.returncode == 2 and "unknown option '--bogus'" in usage.stderr
    missing = _proc([sys.executable, "-m", "graphmend", "run", "nowhere.py"],
                    timeout=60, env=_env())
    assert missing.returncode == 2 and "can't open file" in missing.stderr


REPORT_MODEL = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        print("in forward", x.shape)
        y = x * 2
        torch._dynamo.graph_break()
        return y + 1
'''

REPORT_SCRIPT = '''\
import sys
import torch
from {name}.model import Net

fn = torch.compile(Net(), backend="eager")
fn(torch.ones(3))
if sys.argv[1] == "exit":
    sys.exit(3)
raise RuntimeError("the program failed")
'''


def test_graphmend_run_report_says_what_was_mended_and_what_dynamo_saw(tmp_path):
    """A compiled model whose print the hook mends and whose explicit graph
    break stays: --report names the mended module, the fixes by rule, the
    graphs and the break left with its GB id and original file:line, also
    when the program ends by sys.exit or an exception."""
    pytest.importorskip("torch")
    name = _unique()
    root = tmp_path / "src"
    _write(root, {f"{name}/__init__.py": "", f"{name}/model.py": REPORT_MODEL})
    script = root / "main.py"
    script.write_text(REPORT_SCRIPT.format(name=name))
    model = root / name / "model.py"
    for how, status in (("exit", 3), ("raise", 1)):
        proc = _proc([sys.executable, "-m", "graphmend", "run", "--report", "-p", name,
                      "--cache-dir", str(tmp_path / "c"), str(script), how],
                     timeout=300, cwd=str(tmp_path), env=_env())
        assert proc.returncode == status, proc.stderr
        err = proc.stderr
        assert "graphmend run report" in err, err
        assert f"hook ({name}): 2 modules imported: 1 mended" in err
        assert "GM201 x1" in err
        assert "dynamo: 2 graphs, 1 graph-break events, 0 skipped frames" in err, err
        assert re.search(r"1\. \[GB\d{4}", err), err
        assert f"at {model}:{_line_of(model, 'graph_break()')}" in err, err
        assert "in forward" in proc.stdout
    assert "from the cache" in err and "(1 from the cache)" in err
    assert "RuntimeError: the program failed" in err
    assert err.index("RuntimeError") < err.index("graphmend run report")


# --------------------------------------------------------------------------
# the real transformers


BART = '''\
import importlib.util, json, os, sys
os.environ["HF_HUB_OFFLINE"] = "1"
import graphmend
finder = graphmend.install(["transformers"], cache_dir=sys.argv[1])
import torch
import transformers.models.bart.modeling_bart as mb
from graphmend.judge import explain_with_output

# The same file loaded without the hook, beside it in its package (so its
# relative imports resolve), as the baseline.
spec = importlib.util.spec_from_file_location("transformers.models.bart._plain_bart", mb.__file__)
plain = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = plain
spec.loader.exec_module(plain)

config = mb.BartConfig(vocab_size=64, d_model=16, encoder_layers=1, decoder_layers=1,
                       encoder_attention_heads=2, decoder_attention_heads=2,
                       encoder_ffn_dim=16, decoder_ffn_dim=16, max_position_embeddings=32)
ids = torch.randint(3, 64, (1, 8), generator=torch.Generator().manual_seed(1))
out = {"has_rt": b"_graphmend_rt" in mb.__loader__.get_mended_source(), "file": mb.__file__}
for name, module in (("hooked", mb), ("plain", plain)):
    torch.manual_seed(0)
    model = module.BartForConditionalGeneration(config).eval()
    # labels with use_cache: BART logs a warning in forward (a graph break unmended)
    report, res = explain_with_output(model, ids, labels=ids, use_cache=True)
    out[name] = {"mended": getattr(module, "__graphmend_mended__", False),
                 "graphs": report.graphs, "breaks": report.break_events,
                 "sites": [s for r in report.reasons for s in r.sites],
                 "loss": float(res.loss.detach())}
out["stats"] = dict(finder.stats)
print(json.dumps(out))
'''


def test_hooking_the_installed_transformers(tmp_path):
    pytest.importorskip("torch")
    if importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed")
    script = tmp_path / "bart.py"
    script.write_text(BART)
    proc = _proc([sys.executable, str(script), str(tmp_path / "c")],
                 timeout=300, env=_env(HF_HUB_OFFLINE="1"))
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    plain, hooked = got["plain"], got["hooked"]
    assert hooked["mended"] and got["has_rt"] and not plain["mended"]
    assert got["stats"]["mended"] >= 1 and got["stats"].get("failed", 0) == 0
    assert plain["breaks"] >= 1
    assert [s for s in plain["sites"] if s.startswith(got["file"] + ":")]
    assert hooked["breaks"] < plain["breaks"]
    assert not [s for s in hooked["sites"] if s.startswith(got["file"] + ":")]
    assert hooked["graphs"] <= plain["graphs"]
    assert hooked["loss"] == pytest.approx(plain["loss"], rel=1e-6)
