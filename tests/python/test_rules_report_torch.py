"""GM4xx / GM5xx: Dynamo (torch 2.13, counting backend) agrees with the rules.

Each snippet marks the lines where the rule reports with ``# BREAK``. The
test compiles the snippet's entry (each break follows some traced work: a
break before the first op yields no graph, and ``explain`` then lists no
reason, see BENCHMARKS.md §1) with a counting backend (no Inductor) via
``torch._dynamo.explain`` and asserts that Dynamo reports a graph break whose
user stack ends at every marked line of the snippet's file (or, for patterns
that make Dynamo skip the whole frame, that no graph is compiled and the
frame's reason is counted as unimplemented). When the installed graphmend
has the rule, ``graphmend.check_source`` must flag exactly the marked lines.
Negative snippets (``# OK`` patterns that were verified not to break on
2.13) must compile to one graph with no break, and graphmend must stay quiet.
"""
from __future__ import annotations

import importlib.util
import sys
import textwrap
import warnings

import pytest

torch = pytest.importorskip("torch")

from torch._dynamo.utils import counters  # noqa: E402

PRELUDE = "import copy\nimport importlib\nimport pkgutil\nimport threading\nimport torch\nfrom torch import nn\n\n"

# code, snippet (class M with forward(self, x)), expect: "break" | "skip" | "none"
CASES = [
    ("GM401", """
class M(nn.Module):
    def forward(self, x):
        s = x.sum().item()  # BREAK
        return x * s
""", "break"),
    ("GM402", """
class M(nn.Module):
    def forward(self, x):
        y = x * 2
        n = len(y.tolist())  # BREAK
        return y * n
""", "break"),
    ("GM403", """
class M(nn.Module):
    def forward(self, x):
        i = torch.nonzero(x > 0)  # BREAK
        return i.float().sum() + x.sum()
""", "break"),
    ("GM403", """
class M(nn.Module):
    def forward(self, x):
        i = torch.where(x > 0)  # BREAK
        return i[0].float().sum() + x.sum()
""", "break"),
    ("GM404", """
class M(nn.Module):
    def forward(self, x: torch.Tensor):
        y = x * 2
        return y[y > 0].sum() + 1  # BREAK
""", "break"),
    ("GM404", """
class M(nn.Module):
    def forward(self, x):
        y = x.clone()
        y[y > 0] = 0.0
        return y * 2
""", "none"),
    ("GM405", """
class M(nn.Module):
    def forward(self, x):
        r = torch.ones(x.shape[0], dtype=torch.long)
        return x.repeat_interleave(r).sum() * 2  # BREAK
""", "break"),
    ("GM405", """
class M(nn.Module):
    def forward(self, x):
        r = torch.ones(x.shape[0], dtype=torch.long)
        return x.repeat_interleave(r, output_size=8).sum() * 2
""", "none"),
    ("GM406", """
class M(nn.Module):
    def forward(self, x):
        y = x * 2
        return torch.unique(y).sum() * 2  # BREAK
""", "break"),
    ("GM407", """
class M(nn.Module):
    def forward(self, x: torch.Tensor):
        y = x
        while y.sum() > 0:  # BREAK
            y = y - 1
        return y * 2
""", "break"),
    ("GM501", """
class M(nn.Module):
    def forward(self, x):
        y = x * 2
        m = importlib.import_module("math")  # BREAK
        return y * m.pi
""", "break"),
    ("GM501", """
import importlib.util
class M(nn.Module):
    def forward(self, x):
        spec = importlib.util.find_spec("math")
        return x * 2 + (1 if spec else 0)
""", "none"),
    ("GM502", """
class M(nn.Module):
    def forward(self, x):
        y = x * 2
        z = copy.deepcopy(y)  # BREAK
        return z * 2
""", "break"),
    ("GM503", """
class M(nn.Module):
    def forward(self, x):
        try:
            y = x * 2
        except Exception:
            y = x
        return y + 1
""", "none"),
    ("GM504", """
class M(nn.Module):
    def forward(self, x):
        with threading.Lock():  # SKIP
            y = x * 2
        return y + 1
""", "skip"),
    ("GM504", """
import contextlib
class M(nn.Module):
    def forward(self, x):
        with torch.no_grad(), torch.autocast("cpu"), contextlib.nullcontext():
            y = x * 2
        return y + 1
""", "none"),
    ("GM505", """
class M(nn.Module):
    def forward(self, x):
        y = x * 2
        y.requires_grad = True  # BREAK
        return y + 1
""", "break"),
]


def _load(tmp_path, idx, code, snippet):
    src = PRELUDE + textwrap.dedent(snippet).lstrip("\n")
    path = tmp_path / f"snippet_{code.lower()}_{idx}.py"
    path.write_text(src)
    name = f"_gm45_snippet_{idx}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    marked = [i for i, line in enumerate(src.splitlines(), 1)
              if line.rstrip().endswith(("# BREAK", "# SKIP"))]
    return src, path, mod, marked


def _graphmend_codes():
    try:
        import graphmend
        return {r["code"] if isinstance(r, dict) else r.code for r in graphmend.rules()}
    except Exception:  # noqa: BLE001 - extension not built
        return set()


@pytest.mark.parametrize("idx", range(len(CASES)), ids=[f"{c[0]}-{i}-{c[2]}" for i, c in enumerate(CASES)])
def test_dynamo_agrees(tmp_path, idx):
    code, snippet, expect = CASES[idx]
    src, path, mod, marked = _load(tmp_path, idx, code, snippet)
    torch._dynamo.reset()
    counters.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = torch._dynamo.explain(mod.M().forward)(torch.randn(8))
    # The innermost frame of the snippet's file (a break inside a library
    # function, e.g. copy.deepcopy, has library frames below it).
    break_lines = set()
    for r in out.break_reasons:
        own = [f.lineno for f in r.user_stack if f.filename == str(path)]
        if own:
            break_lines.add(own[-1])
    if expect == "break":
        assert out.graph_break_count >= 1, out
        assert set(marked) <= break_lines, (marked, [r.reason for r in out.break_reasons])
    elif expect == "skip":
        # Dynamo gives up on the frame: no graph, the reason counted.
        assert out.graph_count == 0
        assert sum(counters["unimplemented"].values()) >= 1
    else:
        assert out.graph_count == 1 and out.graph_break_count == 0, out.break_reasons
        assert not marked

    if code in _graphmend_codes():
        import graphmend
        diags = graphmend.check_source(src, str(path), select=[code])
        assert sorted(d.line for d in diags) == marked, diags
        for d in diags:
            # A finding either carries a fix (GM404's masked reductions) or
            # says why it declines.
            assert (d.fix is None) == bool(d.declined_reason), d
