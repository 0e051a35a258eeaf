"""Helpers shared by the rules' end-to-end torch tests (test_rules_gm*_torch.py)."""
from __future__ import annotations

import importlib.util
import sys
import uuid


def load_module(source: str, prefix: str = "case"):
    """Executes `source` as a fresh module (registered in sys.modules, so that
    Dynamo and pickling can find it) and returns it."""
    name = f"{prefix}_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def load_file(path, prefix: str = "case"):
    """Imports the file at `path` as a fresh module (its code objects name
    that file, so warnings and log records point into it) and returns it."""
    name = f"{prefix}_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_fixture_pair(fixtures, code: str, directory, unsafe: bool = False):
    """The rule fixture ``fixtures/forms.py`` and graphmend's fix of it (rule
    ``code`` only), each loaded from its own file under ``directory``; the
    fix must be the committed snapshot (``forms.fixed.py``, or
    ``forms.unsafe.fixed.py`` with ``unsafe``)."""
    import pathlib
    import uuid

    import graphmend

    fixtures, directory = pathlib.Path(fixtures), pathlib.Path(directory)
    original_text = (fixtures / "forms.py").read_text()
    result = graphmend.fix_source(original_text, unsafe=unsafe, select=[code])
    assert result.status == "fixed"
    snapshot = "forms.unsafe.fixed.py" if unsafe else "forms.fixed.py"
    assert result.source == (fixtures / snapshot).read_text()
    modules = []
    for tag, text in (("original", original_text), ("mended", result.source)):
        path = directory / f"{tag}_{uuid.uuid4().hex}.py"
        path.write_text(text)
        modules.append(load_file(path, f"{code.lower()}_case"))
    return modules


def same_tensors(a, b) -> bool:
    """Bitwise equality of tensors or (nested) tuples of them, dtype and shape included."""
    import torch

    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same_tensors(x, y) for x, y in zip(a, b))
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def breaks() -> int:
    """Graph-break events and unimplemented entries Dynamo counted since the
    last ``compiled()``."""
    from torch._dynamo.utils import counters

    return sum(counters["graph_break"].values()) + sum(counters["unimplemented"].values())


class Count:
    """A counting backend: keeps every graph Dynamo hands it, runs it as is."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward


def compiled(model, backend):
    """A fresh compiled ``model`` (Dynamo reset, counters cleared) and its
    counting backend when ``backend == "count"`` (else None; ``"inductor"``
    is the default backend)."""
    import torch
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    if backend == "count":
        cnt = Count()
        return torch.compile(model, backend=cnt), cnt
    if backend == "inductor":
        return torch.compile(model), None
    return torch.compile(model, backend=backend), None
