"""graphmend.explain: Dynamo's own count of graphs and graph breaks."""

import json
import os
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

try:
    from graphmend import explain_cli
    from graphmend.judge import explain, explain_calls, gb_registry, lookup_gb_id
except ImportError:  # running from a source tree without an install
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
    from graphmend import explain_cli
    from graphmend.judge import explain, explain_calls, gb_registry, lookup_gb_id

THIS = os.path.abspath(__file__)


def _line_of(fn, needle):
    import inspect

    src, start = inspect.getsourcelines(fn)
    for i, line in enumerate(src):
        if needle in line:
            return start + i
    raise AssertionError(needle)


def print_in_middle(x):
    y = x * 2
    print("graphmend-test")
    return y + 1


def data_dependent(x):
    y = x.sin()
    if x.sum() > 0:
        return y.cos()
    return y - 1


def clean(x):
    return torch.relu(x.sin() + 1) * 2


def break_in_loop(x):
    for i in range(3):
        x = x + 1
        print("graphmend-loop", i)
    return x


class TwoBreaks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        x = self.lin(x)
        n = x.sum().item()
        x = x * 2
        print("graphmend-module")
        return x + n


def test_print_in_middle_two_graphs_one_break(capsys):
    rep = explain(print_in_middle, torch.randn(4))
    assert capsys.readouterr().out.count("graphmend-test") == 1  # ran once
    assert rep.graphs == 2
    assert rep.break_events == 1
    assert rep.counter_graph_break == 1
    assert len(rep.reasons) == 1
    r = rep.reasons[0]
    assert r.count == 1
    assert r.sites == [f"{THIS}:{_line_of(print_in_middle, 'print(')}"]
    assert "print" in r.context
    assert not rep.skipped_frames
    assert rep.ops_per_graph == [1, 1]
    assert not rep.fully_fixed


def test_data_dependent_branch():
    rep = explain(data_dependent, torch.ones(4))
    assert rep.graphs == 2
    assert rep.break_events == 1
    (r,) = rep.reasons
    assert r.gb_type == "Data-dependent branching"
    assert r.sites == [f"{THIS}:{_line_of(data_dependent, 'if x.sum()')}"]
    # Dynamo (2.13) leaves this break under counters["unimplemented"], not
    # counters["graph_break"]: the hook is what counts it.
    assert rep.counter_graph_break + rep.counter_unimplemented >= 1


def test_clean_function_one_graph_no_breaks():
    rep = explain(clean, torch.randn(3, 3))
    assert rep.graphs == 1
    assert rep.break_events == 0
    assert rep.reasons == []
    assert rep.skipped_frames == []
    assert rep.recompiles == 0
    assert rep.fully_fixed
    assert "fully traced" in rep.format_text()


def test_break_in_loop_skips_the_frame(capsys):
    rep = explain(break_in_loop, torch.zeros(2))
    assert capsys.readouterr().out.count("graphmend-loop") == 3
    assert rep.graphs == 0  # the whole frame ran eagerly
    assert len(rep.skipped_frames) == 1
    s = rep.skipped_frames[0]
    assert s.function == "break_in_loop"
    assert s.site == f"{THIS}:{_line_of(break_in_loop, 'print(')}"
    assert not rep.fully_fixed


def test_module_item_and_print():
    m = TwoBreaks()
    rep = explain(m, torch.randn(2, 4))
    assert rep.name == "TwoBreaks"
    assert rep.graphs == 3
    assert rep.break_events == 2
    lines = {s for r in rep.reasons for s in r.sites}
    assert lines == {f"{THIS}:{_line_of(TwoBreaks.forward, '.item()')}",
                     f"{THIS}:{_line_of(TwoBreaks.forward, 'print(')}"}


def test_gb_ids_from_registry():
    if not gb_registry():
        pytest.skip("this torch ships no graph_break_registry.json")
    rep = explain(print_in_middle, torch.randn(4))
    gid = rep.reasons[0].gb_id
    assert gid and gid.startswith("GB") and gid in gb_registry()
    assert any(e["Gb_type"] == rep.reasons[0].gb_type for e in gb_registry()[gid])
    rep = explain(data_dependent, torch.ones(4))
    assert rep.reasons[0].gb_id in gb_registry()
    assert lookup_gb_id("Data-dependent branching") == rep.reasons[0].gb_id
    assert lookup_gb_id("no such graph break type, surely") is None


def test_report_serialises():
    rep = explain(data_dependent, torch.ones(4))
    d = json.loads(rep.to_json())
    assert d["graphs"] == 2 and d["break_events"] == 1 and d["distinct_reasons"] == 1
    assert d["reasons"][0]["sites"][0].endswith(f":{_line_of(data_dependent, 'if x.sum()')}")
    assert d["events"][0]["site"] == d["reasons"][0]["sites"][0]
    assert set(d) >= {"skipped_frames", "recompiles", "frames", "ops_per_graph", "counters", "torch_version"}
    text = rep.format_text()
    assert "graphs compiled : 2" in text and "Data-dependent branching" in text


def test_dynamo_state_is_reset_between_calls():
    a = explain(print_in_middle, torch.randn(4))
    b = explain(print_in_middle, torch.randn(4))
    assert (a.graphs, a.break_events) == (b.graphs, b.break_events) == (2, 1)


def test_explain_calls_counts_the_first_call_and_returns_every_output():
    xs = [torch.randn(4) for _ in range(3)]
    seen = []
    rep, outs = explain_calls(data_dependent, [((x,), {}) for x in xs], before_call=seen.append)
    one = explain(data_dependent, xs[0])
    assert (rep.graphs, rep.break_events) == (one.graphs, one.break_events) == (2, 1)
    assert seen == [0, 1, 2]
    for x, y in zip(xs, outs):
        assert torch.equal(y, data_dependent(x))
    assert rep.later_recompiles == 0
    # a later call of another shape recompiles: counted apart from the first call's report
    rep, _ = explain_calls(clean, [((torch.randn(4),), {}), ((torch.randn(2, 3),), {})])
    assert (rep.graphs, rep.recompiles, rep.later_recompiles) == (1, 0, 1)


def test_explain_calls_before_call_context_wraps_the_call():
    with_grad = []

    def f(x):
        with_grad.append(torch.is_grad_enabled())
        return x + 1

    explain_calls(f, [((torch.ones(2),), {})] * 2, before_call=lambda i: torch.no_grad() if i else None)
    assert with_grad[0] is True and with_grad[-1] is False


# ------------------------------------------------------------------- CLI

FACTORY = textwrap.dedent(
    """
    import torch

    def f(x, scale=1.0):
        y = x * scale
        print("factory-print")
        return y + 1

    def make():
        return f, (torch.randn(3),), {"scale": 2.0}

    def make2():
        return torch.nn.Linear(3, 3), [torch.randn(2, 3)]

    def wrong():
        return 42
    """
)


@pytest.fixture()
def factory_file(tmp_path):
    p = tmp_path / "gm_factory_mod.py"
    p.write_text(FACTORY)
    return p


def test_cli_text(factory_file, capsys):
    rc = explain_cli.main([f"{factory_file}:make"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "graphs compiled : 2" in out
    assert f"{factory_file}:6" in out


def test_cli_json_keeps_stdout_clean(factory_file, capsys):
    rc = explain_cli.main([f"{factory_file}:make", "--json"])
    cap = capsys.readouterr()
    assert rc == 0
    d = json.loads(cap.out)
    assert d["graphs"] == 2 and d["break_events"] == 1
    assert "factory-print" in cap.err


def test_cli_module_spec(factory_file, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(factory_file.parent))
    rc = explain_cli.main(["gm_factory_mod:make2", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["graphs"] == 1 and d["break_events"] == 0


@pytest.mark.parametrize(
    "argv, msg",
    [
        (["no_colon_here"], "expected MODULE:FACTORY"),
        (["surely_not_a_module_xyz:make"], "cannot import module"),
        (["{f}:missing"], "has no attribute"),
        (["{f}:wrong"], "must return"),
        (["/nonexistent/dir/x.py:make"], "no such file"),
        ([], "required"),
    ],
)
def test_cli_usage_errors(argv, msg, factory_file, capsys):
    argv = [a.replace("{f}", str(factory_file)) for a in argv]
    rc = explain_cli.main(argv)
    assert rc == 2
    assert msg in capsys.readouterr().err


def test_package_level_explain_stays_callable():
    # graphmend.explain is a function; importing the implementation module
    # must not replace it with a module object (it did once: the module was
    # named graphmend/explain.py).
    torch = pytest.importorskip("torch")
    import graphmend

    def fn(x):
        return x + 1

    first = graphmend.explain(fn, torch.ones(2))
    second = graphmend.explain(fn, torch.ones(2))
    assert callable(graphmend.explain)
    assert first.graphs == second.graphs == 1
