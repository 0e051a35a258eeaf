"""The Python API: graphmend.check_source / fix_source / rules."""

from __future__ import annotations

import dataclasses
import threading

import graphmend
import pytest
from graphmend import _core, lint

from _cli_cases import SAMPLE

CLEAN = "def f(x):\n    return x + 1\n"


@pytest.fixture(scope="module")
def print_code():
    """The code of the rule that flags SAMPLE's print with a fix; a broken
    registry fails the tests that use it instead of skipping them."""
    assert _core.rules(), "the build ships no rules (graphmend._core.rules() is empty)"
    codes = [d.code for d in graphmend.check_source(SAMPLE) if d.line == 6 and d.fix_applies]
    assert codes == ["GM201"], "no shipped rule flags print() in forward with a fix"
    return codes[0]


def test_public_names():
    for name in ("check_source", "fix_source", "rules", "Diagnostic", "FixResult",
                 "GraphmendSyntaxError", "dump_ast", "explain"):
        assert hasattr(graphmend, name), name
        assert name in graphmend.__all__
    assert graphmend.check_source.__doc__ and graphmend.fix_source.__doc__
    with pytest.raises(AttributeError):
        graphmend.no_such_thing  # noqa: B018


def test_rules_shape():
    for r in graphmend.rules():
        assert set(r) == {"code", "name", "summary", "documentation"}


def test_check_clean():
    assert graphmend.check_source(CLEAN) == []
    assert graphmend.check_source(CLEAN.encode()) == []
    assert graphmend.check_source("") == []


def test_check_diagnostic_fields(print_code):
    (d,) = [d for d in graphmend.check_source(SAMPLE, "m.py") if d.code == print_code]
    assert isinstance(d, graphmend.Diagnostic)
    assert dataclasses.is_dataclass(d)
    assert d.path == "m.py"
    assert (d.line, d.col, d.char_col) == (6, 8, 9)
    assert d.end_line == 6 and d.end_col == len('        print("x", x)')
    assert d.end_char_col == d.end_col + 1
    assert SAMPLE.encode()[d.begin:d.end] == b'print("x", x)'
    assert d.message and d.why
    assert d.applicability == "safe" and d.fixable and d.fix_applies
    assert d.fix.description and d.fix.edits
    for e in d.fix.edits:
        assert 0 <= e.begin <= e.end <= len(SAMPLE.encode())
        assert e.line >= 1 and e.char_col >= 1
    assert d.declined_reason == ""
    assert d.to_dict()["code"] == print_code



def test_core_dicts_hold_exactly_the_dataclass_fields(print_code):
    """lint._frozen fills the frozen dataclasses straight from the core's
    dicts: a key added or renamed on one side only would pass silently."""
    names = {cls: {f.name for f in dataclasses.fields(cls)}
             for cls in (lint.Diagnostic, lint.Fix, lint.Edit)}
    res = lint.run_check(SAMPLE.encode(), version=(3, 11))
    (d,) = [d for d in res["diagnostics"] if d["code"] == print_code]
    assert set(d) == names[lint.Diagnostic] - {"path"}
    assert set(d["fix"]) == names[lint.Fix]
    assert d["fix"]["edits"] and all(set(e) == names[lint.Edit] for e in d["fix"]["edits"])
    made = lint.diagnostic_from_dict(d, "m.py")
    assert made == lint.Diagnostic(**{**d, "path": "m.py", "fix": lint.Fix(
        d["fix"]["description"], d["fix"]["applicability"],
        tuple(lint.Edit(**e) for e in d["fix"]["edits"]))})
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.code = "GM000"

def test_check_str_and_bytes_agree(print_code):
    a = graphmend.check_source(SAMPLE)
    b = graphmend.check_source(SAMPLE.encode())
    assert a == b


def test_check_select_ignore(print_code):
    assert graphmend.check_source(SAMPLE, ignore=[print_code]) == []
    assert graphmend.check_source(SAMPLE, ignore=print_code[:3]) == []
    with pytest.raises(ValueError, match="unknown rule selector 'GM9'.*did you mean"):
        graphmend.check_source(SAMPLE, select="GM9")  # selects no rule
    assert [d.code for d in graphmend.check_source(SAMPLE, select=[print_code])] == [print_code]
    assert [d.code for d in graphmend.check_source(SAMPLE, select=f"GM, {print_code}")] == \
        [print_code]
    with pytest.raises(ValueError, match="E501"):
        graphmend.check_source(SAMPLE, select=["E501"])


def test_check_suppression_comment(print_code):
    src = SAMPLE.replace('print("x", x)', f'print("x", x)  # graphmend: ignore[{print_code}]')
    assert graphmend.check_source(src) == []


def test_check_syntax_error():
    with pytest.raises(graphmend.GraphmendSyntaxError) as info:
        graphmend.check_source("x = 1\ndef f(:\n", "bad.py")
    err = info.value
    assert isinstance(err, SyntaxError)
    assert err.filename == "bad.py" and err.lineno == 2
    with pytest.raises(SyntaxError):
        graphmend.check_source(b"x = '\xff'\n")


def test_check_python_version():
    src = "match x:\n    case 1:\n        pass\n"
    assert graphmend.check_source(src, python_version=(3, 10)) == []
    assert graphmend.check_source(src, python_version="3.13") == []
    with pytest.raises(SyntaxError):
        graphmend.check_source(src, python_version="3.9")
    with pytest.raises(ValueError):
        graphmend.check_source(src, python_version="3.99")


def test_check_type_error():
    with pytest.raises(TypeError):
        graphmend.check_source(42)


def test_fix_str_returns_str(print_code):
    r = graphmend.fix_source(SAMPLE)
    assert isinstance(r, graphmend.FixResult)
    assert isinstance(r.source, str)
    assert r.status == "fixed" and r.changed
    assert r.source != SAMPLE
    assert [a.code for a in r.applied] == [print_code]
    assert r.applied_per_code == {print_code: 1}
    assert [d for d in r.diagnostics if d.code == print_code] == []
    again = graphmend.fix_source(r.source)
    assert again.status == "unchanged" and again.source == r.source


def test_fix_bytes_returns_bytes(print_code):
    r = graphmend.fix_source(SAMPLE.encode())
    assert isinstance(r.source, bytes)
    assert r.source.decode() == graphmend.fix_source(SAMPLE).source


def test_fix_unchanged_returns_input():
    r = graphmend.fix_source(CLEAN)
    assert r.status == "unchanged" and r.source is CLEAN and r.applied == []
    rb = graphmend.fix_source(CLEAN.encode())
    assert rb.status == "unchanged" and rb.source == CLEAN.encode()


def test_fix_bytes_latin1_round_trip(print_code):
    src = "# -*- coding: latin-1 -*-\n" + SAMPLE.replace('"x"', '"café"')
    r = graphmend.fix_source(src.encode("latin-1"))
    assert r.status == "fixed" and r.encoding == "latin-1"
    assert b"caf\xe9" in r.source
    assert r.source.decode("latin-1").startswith("# -*- coding: latin-1 -*-\n")


def test_fix_bytes_bom_and_crlf(print_code):
    src = b"\xef\xbb\xbf" + SAMPLE.replace("\n", "\r\n").encode()
    r = graphmend.fix_source(src)
    assert r.status == "fixed"
    assert r.source.startswith(b"\xef\xbb\xbf") and r.source.count(b"\xef\xbb\xbf") == 1
    assert r.source.count(b"\n") == r.source.count(b"\r\n")


def test_fix_respects_selection(print_code):
    r = graphmend.fix_source(SAMPLE, ignore=[print_code])
    assert r.status == "unchanged" and r.source == SAMPLE
    r = graphmend.fix_source(SAMPLE, select=[print_code])
    assert r.status == "fixed"


def test_fix_syntax_error_raises():
    with pytest.raises(graphmend.GraphmendSyntaxError):
        graphmend.fix_source("def f(:\n", "x.py")


def test_threads_agree(print_code):
    """The C++ releases the GIL: many threads, same answers."""
    sources = [SAMPLE if i % 2 else CLEAN for i in range(64)]
    expected = [graphmend.check_source(s) for s in sources]
    results = [None] * len(sources)

    def work(i):
        results[i] = graphmend.check_source(sources[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(sources))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected


def test_normalize_selectors():
    assert lint.normalize_selectors(None) == []
    assert lint.normalize_selectors("gm1, GM201 GM3") == ["GM1", "GM201", "GM3"]
    assert lint.normalize_selectors(["ALL"]) == ["ALL"]
    with pytest.raises(ValueError):
        lint.normalize_selectors("GM1234")


def test_library_mode_reaches_every_function():
    """regions="all": a helper only reached from another module's forward
    (a mixin method, a decorator's wrapper) is mended too; the default
    reports only what this one file shows to be compiled."""
    import graphmend

    src = (
        "import warnings\n\n\n"
        "class Mixin:\n"
        "    def get_mask(self, mask, device=None):\n"
        "        if device is not None:\n"
        "            warnings.warn('deprecated', FutureWarning)\n"
        "        return mask\n"
    )
    assert graphmend.check_source(src) == []
    found = graphmend.check_source(src, regions="all")
    assert [d.code for d in found] == ["GM203"]
    mended = graphmend.fix_source(src, regions="all")
    assert mended.status == "fixed" and "_graphmend_rt.warn(" in mended.source
    with pytest.raises(ValueError):
        graphmend.check_source(src, regions="everything")
