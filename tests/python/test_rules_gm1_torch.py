"""GM101/GM102 end to end with torch: the mended module compiles with fewer
graphs and no break event where the original broke on a data-dependent `if`,
and computes exactly what the original computes eagerly, on fresh random
inputs that take each branch (and, where it matters, the same gradients).

Sources are mended with graphmend.fix_source (the C++ rules), so this checks
the real rewrite, not a hand-written copy of it.
"""
from __future__ import annotations

import ast
import pathlib
import textwrap

import pytest

torch = pytest.importorskip("torch")
import graphmend  # noqa: E402
from _torch_cases import load_module, same_tensors  # noqa: E402


def _module(source: str):
    return load_module(source, "gm1_case")


def _blank_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if not line.strip())


def _mend(source: str, codes: str) -> str:
    result = graphmend.fix_source(source, select=codes)
    assert result.status == "fixed", (result.status, [d.message for d in result.diagnostics])
    compile(result.source, "<mended>", "exec")  # re-parses
    again = graphmend.fix_source(result.source, select=codes)
    assert again.source == result.source  # idempotent
    # No padding: the mended code adds no blank line.
    assert _blank_lines(result.source) == _blank_lines(source)
    return result.source


def _count(fn, *args):
    report = graphmend.explain(fn, *args)
    return report.graphs, report.break_events


def _same(a, b):
    return same_tensors(a, b)


CLAMP = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Block(nn.Module):
        def forward(self, hidden_states: torch.Tensor):
            hidden_states = hidden_states * 2
            if hidden_states.dtype == torch.float16 and (
                torch.isinf(hidden_states).any() or torch.isnan(hidden_states).any()
            ):
                clamp_value = torch.finfo(hidden_states.dtype).max - 1000
                hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
            return hidden_states + 1
    """
)

IF_ELSE = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor):
            x = x + 1
            if (x > 0).all():
                z = x + y
                w = z * 2
            else:
                z = x - y
                w = z
            if not (y > 0).any():  # keep this comment
                x = x.clamp(min=0)
            k = x.relu() if x.sum() > 0 else y
            return z + w + x + k
    """
)

GRAD = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x: torch.Tensor):
            y = x * 3
            if y.sum() > 0:
                y = torch.log(y)
            return y * 2
    """
)


def test_fp16_overflow_clamp_is_one_graph_and_exact():
    orig = _module(CLAMP).Block()
    mended_src = _mend(CLAMP, "GM101")
    assert "if hidden_states.dtype == torch.float16:" in mended_src  # static part stays an if
    mended = _module(mended_src).Block()
    big = torch.full((2, 3), 60000.0, dtype=torch.float16)  # *2 overflows to inf
    for x in (big, torch.randn(2, 3, dtype=torch.float16), torch.randn(2, 3)):
        g0, b0 = _count(orig, x)
        g1, b1 = _count(mended, x)
        if x.dtype == torch.float16:
            assert b0 >= 1 and g0 >= 2
            assert (g1, b1) == (1, 0)
        else:  # fp32 folds the guard away in both
            assert (g1, b1) == (1, 0) and (g0, b0) == (1, 0)
        torch._dynamo.reset()
        compiled = torch.compile(mended, backend="eager")
        assert _same(compiled(x), orig(x))


def test_if_else_not_and_ternary_are_exact_on_both_branches():
    src = IF_ELSE
    mended_src = _mend(src, "GM101,GM102")
    assert "# keep this comment" in mended_src
    orig = _module(src).Net()
    mended = _module(mended_src).Net()
    x0 = torch.randn(3, 4)
    g0, b0 = _count(orig, x0, x0)
    assert b0 >= 3
    gen = torch.Generator().manual_seed(0)
    for trial in range(8):
        x = torch.randn(3, 4, generator=gen) + (2.0 if trial % 2 else -2.0)
        y = torch.randn(3, 4, generator=gen) + (2.0 if trial % 4 < 2 else -2.0)
        g1, b1 = _count(mended, x, y)
        assert (g1, b1) == (1, 0)
        torch._dynamo.reset()
        compiled = torch.compile(mended, backend="eager")
        assert _same(compiled(x, y), orig(x, y))
        assert _same(mended(x, y), orig(x, y))  # eager mended == eager original


MERGE_ORDER = (pathlib.Path(__file__).parent.parent / "fixtures/rules/GM101/merge_order.py").read_text()


def _where_targets(source: str) -> list[str]:
    """Target names of `name = _graphmend_rt.where(...)`, in order."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) == "_graphmend_rt.where"
        ):
            out.append(node.targets[0].id)
    return out


def test_merged_names_get_one_where_each_and_see_their_branch_values():
    mended_src = _mend(MERGE_ORDER, "GM101")
    targets = _where_targets(mended_src)
    # a, b, c, d once each; e/f and the twice-assigned g fall back to one
    # where per assignment (e, f: 2 each; g: 2).
    assert sorted(targets) == sorted(["a", "b", "c", "d", "e", "f", "e", "f", "g", "g"])
    # `a` reads the old `b`, so its where comes first; the comment stays with it.
    first = mended_src.index("a = _graphmend_rt.where(_graphmend_cond, b + 1, a)  # old b")
    assert first < mended_src.index("b = _graphmend_rt.where(_graphmend_cond, x - 1, b)")
    # `c`'s else arm reads the `d` its branch left: `d` first.
    assert mended_src.index("d = _graphmend_rt.where(") < mended_src.index("c = _graphmend_rt.where(")
    orig = _module(MERGE_ORDER).MergeOrder()
    mended = _module(mended_src).MergeOrder()
    gen = torch.Generator().manual_seed(0)
    for trial in range(16):
        x = torch.randn(3, 4, generator=gen) + (2.0 if trial % 2 else -2.0)
        y = torch.randn(3, 4, generator=gen) + (2.0 if trial % 4 < 2 else -2.0)
        assert _same(mended(x, y), orig(x, y))
        torch._dynamo.reset()
        compiled = torch.compile(mended, backend="eager")
        assert _same(compiled(x, y), orig(x, y))
    assert _count(mended, x, y) == (1, 0)


def test_inductor_backend_computes_the_same():
    mended = _module(_mend(IF_ELSE, "GM101,GM102")).Net()
    orig = _module(IF_ELSE).Net()
    torch._dynamo.reset()
    compiled = torch.compile(mended)  # default backend: Inductor
    gen = torch.Generator().manual_seed(1)
    for trial in range(4):
        x = torch.randn(3, 4, generator=gen) + (2.0 if trial % 2 else -2.0)
        y = torch.randn(3, 4, generator=gen) + (2.0 if trial < 2 else -2.0)
        torch.testing.assert_close(compiled(x, y), orig(x, y), rtol=1e-6, atol=1e-6)


def test_unbounded_gradient_falls_back_under_autograd_and_predicates_under_no_grad():
    mended_src = _mend(GRAD, "GM101")
    assert "grad_safe=False" in mended_src  # log has an unbounded derivative
    orig = _module(GRAD).Net()
    mended = _module(mended_src).Net()
    x = torch.tensor([-1.0, -2.0, 0.5])  # sum < 0: log not taken, log(negative) = NaN
    # Under autograd the arm not taken would put NaN into the gradient: the
    # runtime keeps the original branch (and its break).
    xa = x.clone().requires_grad_(True)
    xb = x.clone().requires_grad_(True)
    torch._dynamo.reset()
    out_m = torch.compile(mended, backend="eager")(xa)
    out_o = orig(xb)
    out_m.sum().backward()
    out_o.sum().backward()
    assert torch.equal(out_m, out_o)
    assert torch.equal(xa.grad, xb.grad) and not torch.isnan(xa.grad).any()
    # Without autograd it is one graph.
    with torch.no_grad():
        assert _count(mended, x) == (1, 0)
        assert _same(torch.compile(mended, backend="eager")(x), orig(x))


DECLINES = {
    "side effect": """
        def forward(self, x):
            if x.sum() > 0:
                self.count = 1
            return x
    """,
    "submodule": """
        def forward(self, x):
            if x.sum() > 0:
                x = self.fc(x)
            return x
    """,
    "indexing": """
        def forward(self, x, i):
            if x.sum() > 0:
                x = x[i]
            return x
    """,
    "bound only in branch": """
        def forward(self, x):
            if x.sum() > 0:
                y = x + 1
            return y
    """,
    "in place later": """
        def forward(self, x):
            y = x * 2
            if y.sum() > 0:
                y = y + 1
            y.add_(1)
            return y
    """,
    "python value": """
        def forward(self, x):
            flag = False
            if x.sum() > 0:
                flag = True
            return x, flag
    """,
    "random op": """
        def forward(self, x):
            if x.sum() > 0:
                x = x + torch.rand(3)
            return x
    """,
    "augmented": """
        def forward(self, x):
            if x.sum() > 0:
                x += 1
            return x
    """,
}


@pytest.mark.parametrize("case", sorted(DECLINES))
def test_declines_with_a_reason(case):
    body = textwrap.indent(textwrap.dedent(DECLINES[case]), "    ")
    src = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n" + body
    diags = [d for d in graphmend.check_source(src) if d.code == "GM101"]
    assert len(diags) == 1, (case, diags)
    assert not diags[0].fixable and diags[0].declined_reason, case
    assert graphmend.fix_source(src, select="GM101").source == src


def test_static_tests_are_not_reported():
    src = textwrap.dedent(
        """
        import torch
        from torch import nn


        class M(nn.Module):
            def forward(self, x: torch.Tensor, mask: torch.Tensor = None):
                if mask is not None and mask.dim() == 2:
                    x = x + 1
                if x.shape[0] > 1 and self.training:
                    x = x * 2
                return x
        """
    )
    assert [d.code for d in graphmend.check_source(src) if d.code.startswith("GM1")] == []


RETURNS = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x: torch.Tensor):
            y = x * 2
            if not y.isfinite().all():  # fall back
                return torch.zeros_like(y)
            if (y > 0).all():
                return y
            return -y
    """
)


def test_early_returns_are_one_graph_and_exact():
    mended_src = _mend(RETURNS, "GM103")
    orig = _module(RETURNS).Net()
    mended = _module(mended_src).Net()
    assert _count(orig, torch.randn(4))[1] >= 1
    cases = [torch.randn(4), torch.rand(4) + 0.1, torch.tensor([1.0, float("inf"), 2.0, 3.0])]
    for x in cases:
        assert _count(mended, x) == (1, 0)
        torch._dynamo.reset()
        assert _same(torch.compile(mended, backend="eager")(x), orig(x))
        assert _same(mended(x), orig(x))


# ---------------------------------------------------------------- GM104

EFFECT = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Tracker(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("last", torch.zeros(4), persistent=False)
            self.scale = torch.ones(())

        def forward(self, h: torch.Tensor):
            h = h * 2
            if h.mean() > 0:
                self.register_buffer("last", h.amax(0), persistent=False)
            else:
                self.register_buffer("last", h.amin(0), persistent=False)
            if not (h > 1).any():
                low = h.abs().mean()
                self.scale = low * 2
            else:
                high = h.abs().amax()
                self.scale = high
            return h * self.scale + self.last
    """
)

LONGROPE = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Config:
        original_max_position_embeddings = 8


    class LongRoPE(nn.Module):
        def __init__(self):
            super().__init__()
            self.config = Config()
            self.register_buffer("inv_freq", self.rope_init_fn(self.config, None), persistent=False)
            self.original_inv_freq = self.inv_freq

        def rope_init_fn(self, config, device, seq_len=None):
            factor = 2.0 if seq_len is not None and seq_len > config.original_max_position_embeddings else 1.0
            return 1.0 / (factor * 10000 ** (torch.arange(0, 8, 2, dtype=torch.float32, device=device) / 8))

        def forward(self, x: torch.Tensor, position_ids):
            seq_len = torch.max(position_ids) + 1
            original = self.config.original_max_position_embeddings
            if seq_len > original:
                if not hasattr(self, "long_inv_freq"):
                    self.long_inv_freq = self.rope_init_fn(self.config, x.device, seq_len=original + 1)
                self.register_buffer("inv_freq", self.long_inv_freq, persistent=False)
            else:
                self.original_inv_freq = self.original_inv_freq.to(x.device)
                self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)
            freqs = position_ids[:, :, None].float() * self.inv_freq
            return x * freqs.cos(), x * freqs.sin()
    """
)


def test_effect_if_is_one_graph_with_the_same_outputs_and_state():
    mended_src = _mend(EFFECT, "GM104")
    orig = _module(EFFECT).Tracker()
    mended = _module(mended_src).Tracker()
    h0 = torch.randn(3, 4)
    assert _count(orig, h0)[1] >= 2
    gen = torch.Generator().manual_seed(2)
    for trial in range(6):
        h = torch.rand(3, 4, generator=gen) * (3.0 if trial % 3 == 0 else 0.4) - (0.0 if trial % 2 else 0.3)
        assert _count(mended, h) == (1, 0)
        torch._dynamo.reset()
        compiled = torch.compile(mended, backend="eager")
        assert _same(compiled(h), orig(h))
        # the effect (the buffer, the attribute) is the one the original leaves
        assert _same(mended.last, orig.last) and _same(mended.scale, orig.scale)


def test_speculating_longrope_fix_is_unsafe_and_exact():
    # Without --unsafe-fixes nothing changes: the memo fill and the `.to()`
    # would now run on both paths.
    safe = graphmend.fix_source(LONGROPE, select="GM104")
    assert safe.status == "unchanged"
    assert [d.applicability for d in safe.diagnostics] == ["unsafe"]
    result = graphmend.fix_source(LONGROPE, select="GM104", unsafe=True)
    assert result.status == "fixed"
    compile(result.source, "<mended>", "exec")
    assert _blank_lines(result.source) == _blank_lines(LONGROPE)
    orig = _module(LONGROPE).LongRoPE()
    mended = _module(result.source).LongRoPE()
    x = torch.randn(1, 6, 4)
    short_ids = torch.arange(6)[None]
    assert _count(orig, x, short_ids)[1] >= 1
    for n in (6, 12, 5, 20):  # short, long, short again, long
        ids = torch.arange(n)[None]
        x = torch.randn(1, n, 4)
        assert _count(mended, x, ids) == (1, 0)
        torch._dynamo.reset()
        compiled = torch.compile(mended, backend="eager")
        assert _same(compiled(x, ids), orig(x, ids))
        assert _same(mended.inv_freq, orig.inv_freq)


# ------------------------------------------------- GM101 + GM20x: `if c: warn(...)`

EFFECTS_IF = textwrap.dedent(
    """
    import logging
    import warnings

    import torch
    from torch import nn

    logger = logging.getLogger("gm101_effects_if")


    class Net(nn.Module):
        def forward(self, x: torch.Tensor):
            x = x * 2
            if x.sum() < 0:
                warnings.warn("negative input", UserWarning)
            if torch.isnan(x).any():
                print("nan in x")
                logger.warning("nan seen")
            return x + 1
    """
)


def _effects(fn, x, capsys, caplog):
    import logging
    import warnings

    capsys.readouterr()
    caplog.clear()
    with warnings.catch_warnings(record=True) as w, caplog.at_level(logging.WARNING, "gm101_effects_if"):
        warnings.simplefilter("always")
        out = fn(x)
    records = [(r.name, r.levelno, r.getMessage()) for r in caplog.records if r.name == "gm101_effects_if"]
    warned = [(str(m.message), m.category) for m in w]
    return out, warned, capsys.readouterr().out, records, [m.lineno for m in w]


def _same_effects_eager_and_compiled(mended, x, expected, capsys, caplog, equal_nan=True):
    """`mended` run eagerly and compiled gives `expected` (the original's
    `_effects`): outputs bitwise (NaN equal to NaN when `equal_nan`),
    warnings, stdout and log records; returns the warnings' line numbers of
    each run."""
    torch._dynamo.reset()
    compiled = torch.compile(mended, backend="eager")
    lines = []
    for fn in (compiled, mended):
        got = _effects(fn, x, capsys, caplog)
        if equal_nan:
            torch.testing.assert_close(got[0], expected[0], rtol=0, atol=0, equal_nan=True)
        else:
            assert torch.equal(got[0], expected[0])
        assert got[1:4] == expected[1:4]
        lines.append(got[4])
    return lines


def test_if_guarding_deferred_side_effects_is_one_graph_with_the_same_effects(capsys, caplog):
    mended_src = _mend(EFFECTS_IF, "GM101,GM201,GM202,GM203")
    assert "_graphmend_rt.warn_if(x.sum() < 0, " in mended_src
    assert "_graphmend_rt.print_if(" in mended_src and "_graphmend_rt.log_if(" in mended_src
    orig = _module(EFFECTS_IF).Net()
    mended = _module(mended_src).Net()
    assert _count(orig, torch.randn(4))[1] >= 2
    nan = torch.tensor([1.0, float("nan"), 2.0, 3.0])
    ran = set()
    for x in (torch.rand(4), -torch.rand(4), nan, -nan):
        assert _count(mended, x) == (1, 0)
        expected = _effects(orig, x, capsys, caplog)
        # the original's effects are those of the branches its condition takes
        warned, saw_nan = bool(((x * 2).sum() < 0).item()), bool(torch.isnan(x).any().item())
        assert bool(expected[1]) == warned and bool(expected[2]) == bool(expected[3]) == saw_nan
        ran.add((warned, saw_nan))
        _same_effects_eager_and_compiled(mended, x, expected, capsys, caplog)
    assert ran == {(False, False), (True, False), (False, True)}  # each branch taken and not


MESSAGES_IF = textwrap.dedent(
    """
    import logging
    import warnings

    import torch
    from torch import nn

    logger = logging.getLogger("gm101_effects_if")


    class Tag:
        formatted = 0

        def __format__(self, spec):
            Tag.formatted += 1
            return format("tag", spec)


    class Net(nn.Module):
        def __init__(self, tag=None):
            super().__init__()
            self.step = 3
            self.name = "net"
            self.tag = tag

        def forward(self, x: torch.Tensor):
            loss = x.pow(2).mean()
            if torch.isnan(loss):
                print(f"nan at step {self.step!r:>4} {self.tag}")
            if loss > 2:
                warnings.warn(f"large loss {loss.item():.3f}")
            if loss < 0.5:
                logger.warning("small loss in %s: %s" % (self.name, loss))
                print("step {}".format(self.step), loss)
            return loss * 2
    """
)


def test_messages_under_a_tensor_if_are_formatted_only_when_it_holds(capsys, caplog):
    # An f-string, `%` and `str.format` message (and GM203's deferred
    # `.item()` of a one-element tensor) under a data-dependent `if`: the
    # `*_if` call gets `message(...)`, built only when the test holds, so
    # the values are taken on every call but formatted as the original did.
    mended_src = _mend(MESSAGES_IF, "GM101,GM201,GM202,GM203")
    assert mended_src.count("_graphmend_rt.print_if(") == 2
    assert mended_src.count("_graphmend_rt.message(") == 3
    assert "_graphmend_rt.message_percent(" in mended_src and "if loss" not in mended_src
    orig_mod, mended_mod = _module(MESSAGES_IF), _module(mended_src)
    nan = torch.tensor([1.0, float("nan"), 2.0])
    inputs = (torch.rand(3) * 0.5, torch.rand(3) + 2.0, torch.rand(3) * 0.2 + 1.0, nan)
    assert _count(orig_mod.Net(), inputs[0])[1] >= 2
    # Eagerly the message is built only when its test holds (Tag counts).
    for x in inputs:
        for mod in (orig_mod, mended_mod):
            mod.Tag.formatted = 0
            mod.Net(mod.Tag())(x)
        assert orig_mod.Tag.formatted == mended_mod.Tag.formatted == int(torch.isnan(x).any())
    # The warning's line: the original `warnings.warn` and the mended call
    # (which starts a line of its own; its arguments may be wrapped below).
    line = {t: next(i for i, s in enumerate(src.splitlines(), 1) if call in s)
            for t, src, call in (("orig", MESSAGES_IF, "warnings.warn("),
                                 ("mended", mended_src, "_graphmend_rt.warn_if("))}
    for x in inputs:
        orig, mended = orig_mod.Net(), mended_mod.Net()
        expected = _effects(orig, x, capsys, caplog)
        assert _count(mended, x) == (1, 0)
        for got_lines in _same_effects_eager_and_compiled(mended, x, expected, capsys, caplog):
            assert [line["orig"] if n == line["mended"] else n for n in got_lines] == expected[4]
    assert expected[1] or expected[2]


GM101_FORMS = (pathlib.Path(__file__).parent.parent / "fixtures/rules/GM101/forms.py").read_text()


def test_constant_factories_in_both_arms_are_predicated():
    # `torch.ones(())` / `x.new_zeros(2, 3)`: constant tensors of constant
    # shapes, so both arms run; the `if` on a size from the data stays.
    mended_src = _mend(GM101_FORMS, "GM101")
    orig = _module(GM101_FORMS).Flag()
    mended = _module(mended_src).Flag()
    x0 = torch.randn(6, 4)
    b0 = _count(orig, x0)[1]
    gen = torch.Generator().manual_seed(5)
    for shift in (-3.0, 0.0, 3.0):
        x = torch.randn(6, 4, generator=gen) * 0.1 + shift
        g1, b1 = _count(mended, x)
        assert b1 == b0 - 2  # the two constant `if`s no longer break
        assert _same(mended(x), orig(x))
        torch._dynamo.reset()
        assert _same(torch.compile(mended, backend="eager")(x), orig(x))


def test_a_proven_tensor_reaching_a_test_past_a_none_default_is_predicated():
    mended_src = _mend(BOUND_NAME, "GM101")
    orig = _module(BOUND_NAME).Loss()
    mended = _module(mended_src).Loss()
    gen = torch.Generator().manual_seed(6)
    labels = torch.tensor([0, 1, 2])
    assert _count(orig, torch.randn(3, 4), labels)[1] >= 1
    for scale in (0.1, 100.0):
        x = torch.randn(3, 4, generator=gen) * scale
        for lab in (labels, None):
            assert _count(mended, x, lab) == (1, 0)
            want = orig(x, lab)
            torch._dynamo.reset()
            for got in (mended(x, lab), torch.compile(mended, backend="eager")(x, lab)):
                assert (got[0] is None) == (want[0] is None)
                assert want[0] is None or _same(got[0], want[0])
                assert _same(got[1], want[1])


MASKED_THEN_WARN = textwrap.dedent(
    """
    import warnings

    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 4)

        def forward(self, x):
            ids = self.lin(x).argmax(-1)
            total = ids[ids > 0].sum()
            if total > 3:
                warnings.warn("many positive ids", UserWarning)
            return ids * 2
    """
)


def test_the_fix_loop_reads_its_own_masked_reduction_as_a_tensor(capsys, caplog):
    # Round 1 turns `ids[ids > 0].sum()` into `_graphmend_rt.masked_reduce`
    # (GM404) and defers the warning (GM203); round 2 must still see `total`
    # as tensor data and decide the warning after the graph (GM101), or the
    # mended forward keeps the original's break at `if total > 3:`.
    result = graphmend.fix_source(MASKED_THEN_WARN, select="GM101,GM203,GM404")
    assert result.status == "fixed"
    mended_src = result.source
    assert graphmend.fix_source(mended_src, select="GM101,GM203,GM404").source == mended_src
    # `import warnings` is gone with its only use, and the blank line under it
    assert _blank_lines(mended_src) == _blank_lines(MASKED_THEN_WARN) - 1
    assert "_graphmend_rt.masked_reduce(ids, ids > 0, \"sum\")" in mended_src
    assert "_graphmend_rt.warn_if(total > 3, " in mended_src
    torch.manual_seed(0)
    orig = _module(MASKED_THEN_WARN).Net()
    mended = _module(mended_src).Net()
    mended.load_state_dict(orig.state_dict())
    assert _count(orig, torch.randn(6, 8))[1] >= 2
    gen = torch.Generator().manual_seed(1)
    warned = set()
    for rows in (1, 6, 12, 30):
        x = torch.randn(rows, 8, generator=gen)
        assert _count(mended, x) == (1, 0)
        expected = _effects(orig, x, capsys, caplog)
        warned.add(bool(expected[1]))
        _same_effects_eager_and_compiled(mended, x, expected, capsys, caplog, equal_nan=False)
    assert warned == {False, True}  # the warning both given and not


SKIPPED_FRAME = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
            self.p = 0.0

        def forward(self, x):
            for layer in self.layers:
                # the draw is the comparison's own operand: GM105 declines,
                # the break stays and, in a loop, Dynamo skips the frame
                if self.training and torch.rand([]) < self.p:
                    continue
                y = layer(x)
                if y.norm() > 10:
                    y = y / y.norm()
                x = x + y
            return x
    """
)


def test_a_refused_where_in_a_skipped_frame_adds_no_graph_or_break():
    # In train mode the `where` must refuse (`/` has an unbounded derivative
    # and the arms require grad) and evaluate the branch. The frame it is
    # called from is skipped, so the helper runs eagerly, as the `if` did;
    # compiled as a frame of its own it would add a graph and a break.
    mended_src = _mend(SKIPPED_FRAME, "GM101")
    assert "grad_safe=False" in mended_src
    torch.manual_seed(0)
    orig = _module(SKIPPED_FRAME).Net()
    mended = _module(mended_src).Net()
    mended.load_state_dict(orig.state_dict())
    gen = torch.Generator().manual_seed(2)
    for scale in (0.1, 50.0):
        x = torch.randn(4, 8, generator=gen) * scale
        counts = _count(orig, x)
        assert counts[1] >= 1
        assert _count(mended, x) == counts
        torch.manual_seed(3)
        want = orig(x)
        torch.manual_seed(3)
        assert _same(mended(x), want)
        torch._dynamo.reset()
        torch.manual_seed(3)
        assert _same(torch.compile(mended, backend="eager")(x), want)


ELIF = (pathlib.Path(__file__).parent.parent / "fixtures/rules/GM101/elif_chains.py").read_text()


def _identity_proj(module):
    with torch.no_grad():
        module.proj.weight.copy_(torch.eye(8))
        module.proj.bias.zero_()
    return module


# Inputs that take each link of the chains (the projection is the identity).
ELIF_INPUTS = {
    "first": lambda g: torch.randn(2, 8, generator=g) * 0.1 + 5.0,
    "second": lambda g: torch.randn(2, 8, generator=g) * 0.1 - 5.0,
    "third": lambda g: torch.rand(2, 8, generator=g) * 0.004 + 0.001,
    "else": lambda g: torch.randn(2, 8, generator=g) * 0.05,
}


@pytest.mark.parametrize("cls", ["Piecewise", "NoElse", "StaticFirst"])
def test_elif_chains_are_one_graph_and_exact_on_every_link(cls):
    mended_src = _mend(ELIF, "GM101")
    tree = ast.parse(mended_src)
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    forward = next(n for n in body.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    tensor_ifs = [n for n in ast.walk(forward) if isinstance(n, ast.If) and "self.training" not in ast.unparse(n.test)]
    assert tensor_ifs == []  # every link on tensor data is predicated
    torch.manual_seed(0)
    orig = _identity_proj(getattr(_module(ELIF), cls)())
    mended = _identity_proj(getattr(_module(mended_src), cls)())
    mended.load_state_dict(orig.state_dict())
    x0 = ELIF_INPUTS["else"](torch.Generator().manual_seed(9))
    with torch.no_grad():
        g0, b0 = _count(orig.eval(), x0)
    assert b0 >= 1
    gen = torch.Generator().manual_seed(0)
    for mode in ("eval", "train"):
        orig.train(mode == "train")
        mended.train(mode == "train")
        torch._dynamo.reset()
        compiled = torch.compile(mended, backend="eager")
        for name, make in ELIF_INPUTS.items():
            x = make(gen)
            with torch.no_grad():
                assert _count(mended, x) == (1, 0), (mode, name)
                assert _same(compiled(x), orig(x)), (mode, name)
                assert _same(mended(x), orig(x)), (mode, name)
            # with autograd: the same values and the same input gradients
            xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
            orig(xa).sum().backward()
            compiled(xb).sum().backward()
            assert _same(xb.grad, xa.grad), (mode, name)
    torch._dynamo.reset()
    inductor = torch.compile(mended.eval())
    orig.eval()
    with torch.no_grad():
        for make in ELIF_INPUTS.values():
            x = make(gen)
            torch.testing.assert_close(inductor(x), orig(x), rtol=0, atol=0)


def test_an_elif_link_that_declines_keeps_the_chain_before_it():
    result = graphmend.fix_source(ELIF, select="GM101")
    by_line = {d.line: d for d in result.diagnostics if d.code == "GM101"}
    src = result.source.splitlines()  # the diagnostics left are of the mended text
    link = next(i for i, line in enumerate(src, 1) if "elif h.mean() < -1:" in line)
    head = next(i for i in range(link, 0, -1) if src[i - 1].strip() == "if h.sum() > 0:")
    assert "print" in by_line[link].declined_reason
    assert f"line {link}" in by_line[head].declined_reason
    assert "elif h.mean() < -1:" in result.source  # left as written


ITEM_COMPARE = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Gate(nn.Module):
        def forward(self, x, limit: float):
            h = torch.tanh(x)
            if h.sum().item() > 0:
                h = h * 2
            else:
                h = h / 2
            if limit < h.abs().amax().item():
                h = h.clamp(max=limit)
            return h
    """
)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_item_comparison_is_predicated_on_the_tensor(dtype):
    # `if t.item() > 0:` becomes `where(compare_item(t, ">", 0), ...)`: one
    # graph, and the branch Python's comparison of the number would take
    # (limits at and around the maximum, for float16 too).
    mended_src = _mend(ITEM_COMPARE, "GM101")
    assert "compare_item" in mended_src and ".item()" not in mended_src
    orig = _module(ITEM_COMPARE).Gate()
    mended = _module(mended_src).Gate()
    gen = torch.Generator().manual_seed(3)
    x0 = torch.randn(4, 6, generator=gen).to(dtype)
    assert _count(orig, x0, 0.5)[1] >= 2
    torch._dynamo.reset()
    compiled = torch.compile(mended, backend="eager")
    for sign in (1.0, -1.0):
        x = (torch.randn(4, 6, generator=gen).abs() * sign).to(dtype)
        top = float(torch.tanh(x).abs().amax()) * (2 if sign > 0 else 0.5)
        for limit in (0.5, top, top - 1e-3, top + 1e-3):
            assert _count(mended, x, limit) == (1, 0), (sign, limit)
            want = orig(x, limit)
            assert _same(compiled(x, limit), want), (sign, limit)
            assert _same(mended(x, limit), want), (sign, limit)


BOUND_NAME = (pathlib.Path(__file__).parent.parent / "fixtures/rules/GM101/bound_name.py").read_text()


def _one_graph_as_the_original(cls: str, inputs, min_breaks: int = 1):
    """BOUND_NAME's ``cls`` mended by GM101: the original breaks at least
    ``min_breaks`` times; the mended forward is one graph with no break on
    each of ``inputs`` and returns the original's outputs, eagerly and
    compiled."""
    mended_src = _mend(BOUND_NAME, "GM101")
    orig = getattr(_module(BOUND_NAME), cls)()
    mended = getattr(_module(mended_src), cls)()
    assert _count(orig, *inputs[0])[1] >= min_breaks
    for args in inputs:
        assert _count(mended, *args) == (1, 0)
        assert _same(mended(*args), orig(*args))
        torch._dynamo.reset()
        assert _same(torch.compile(mended, backend="eager")(*args), orig(*args))


def test_a_name_bound_to_a_tensor_method_call_is_predicated_without_annotations():
    # `total = x.sum()` then `if total > 1.0:` on unannotated parameters: the
    # name carries the call's evidence; both branches of each test are taken.
    # (The twice-bound `peak` stays a Python float compared with an int: no
    # break there in either program.)
    gen = torch.Generator().manual_seed(0)
    inputs = [(torch.randn(3, 4, generator=gen) * (0.01 if trial % 2 else 3.0),
               torch.randn(3, 4, generator=gen)) for trial in range(6)]
    _one_graph_as_the_original("BoundName", inputs, min_breaks=2)


def test_the_one_assignment_that_reaches_a_test_gives_it_tensor_evidence():
    # `s = x.std()` then an `if`/`elif` chain that rebinds `s` in its arms:
    # only the first assignment reaches either test, so the chain is
    # predicated; each arm's value on inputs that take it.
    gen = torch.Generator().manual_seed(4)
    _one_graph_as_the_original(
        "Rebound", [(torch.randn(3, 4, generator=gen) * scale,) for scale in (1.0, 1e-9, 1e5)])


MULTILINE_ARMS = (pathlib.Path(__file__).parent.parent / "fixtures/rules/GM101/multiline_arms.py").read_text()


def test_arms_over_several_lines_keep_their_indentation_and_values():
    mended_src = _mend(MULTILINE_ARMS, "GM101")
    # The hanging indent moved with the arm: `x` one level in from the line
    # `h * 3.0 + torch.tanh(` starts, `)` back at it.
    lines = mended_src.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == "h * 3.0 + torch.tanh(")
    indent = len(lines[at]) - len(lines[at].lstrip())
    assert lines[at + 1] == " " * (indent + 4) + "x"
    assert lines[at + 2] == " " * indent + "),"
    orig = _module(MULTILINE_ARMS).MultilineArms()
    mended = _module(mended_src).MultilineArms()
    gen = torch.Generator().manual_seed(3)
    for trial in range(8):
        x = torch.randn(3, 4, generator=gen) + (1.0 if trial % 2 else -1.0)
        assert _same(mended(x), orig(x))
        torch._dynamo.reset()
        compiled = torch.compile(mended, backend="eager")
        assert _same(compiled(x), orig(x))
    assert _count(mended, x) == (1, 0)
