"""`graphmend check` / `fix` / `rules` / `rule`: exit codes, formats, atomic
writes, encodings, configuration, bad input, parallel determinism.

Findings come from the shipped print rule: the `print_code` fixture finds
the rule that flags `print(...)` in an `nn.Module.forward` with a fix
(GM201) and fails when the build has none (a broken registry must fail these
tests, not skip them).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import graphmend
import pytest
from graphmend import _core, lint

from _cli_cases import CLEAN, PRINT_COL, PRINT_LINE, SAMPLE, run


# ---------------------------------------------------------------- check

def test_check_clean_exits_zero(project, capsys):
    (project / "ok.py").write_text(CLEAN)
    rc, out, err = run(capsys, "check", "ok.py")
    assert rc == 0, err
    assert "All checks passed!" in out
    assert err == ""


def test_check_finding_text(project, capsys, print_code):
    (project / "m.py").write_text(SAMPLE)
    rc, out, err = run(capsys, "check", "m.py")
    assert rc == 1, err
    first = out.splitlines()[0]
    assert first.startswith(f"m.py:{PRINT_LINE}:{PRINT_COL}: {print_code} [*] ")
    assert "  why: " in out
    assert "  fix: " in out
    assert out.splitlines()[-1].startswith("Found 1 finding")
    assert "1 fixable with `graphmend fix`" in out


def test_check_exit_zero(project, capsys, print_code):
    (project / "m.py").write_text(SAMPLE)
    rc, out, _ = run(capsys, "check", "--exit-zero", "m.py")
    assert rc == 0
    assert print_code in out


def test_check_char_column_counts_code_points(project, capsys, print_code):
    src = SAMPLE.replace('        print("x", x)', '        y = "é"; print("x", x)')
    (project / "m.py").write_text(src, encoding="utf-8")
    rc, out, _ = run(capsys, "check", "--output-format", "json", "m.py")
    assert rc == 1
    (d,) = [d for d in json.loads(out) if d["code"] == print_code]
    assert d["column"] == PRINT_COL + len('y = "é"; ')          # code points, 1-based
    assert d["col_offset"] == PRINT_COL - 1 + len('y = "é"; '.encode())  # bytes, 0-based


def test_check_json(project, capsys, print_code):
    (project / "m.py").write_text(SAMPLE)
    (project / "ok.py").write_text(CLEAN)
    rc, out, _ = run(capsys, "check", "--output-format", "json", ".")
    assert rc == 1
    data = json.loads(out)
    assert isinstance(data, list) and len(data) == 1
    d = data[0]
    for key in ("path", "code", "message", "why", "line", "column", "end_line", "end_column",
                "applicability", "fixable", "fix", "declined_reason"):
        assert key in d
    assert d["code"] == print_code
    assert os.path.basename(d["path"]) == "m.py"
    assert (d["line"], d["column"]) == (PRINT_LINE, PRINT_COL)
    assert d["fixable"] is True
    assert d["fix"]["edits"] and "replacement" in d["fix"]["edits"][0]


def test_check_json_empty(project, capsys):
    (project / "ok.py").write_text(CLEAN)
    rc, out, _ = run(capsys, "check", "--output-format", "json", "ok.py")
    assert rc == 0
    assert json.loads(out) == []


def test_check_sarif(project, capsys, print_code):
    (project / "m.py").write_text(SAMPLE)
    rc, out, _ = run(capsys, "check", "--output-format", "sarif", "m.py")
    assert rc == 1
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    assert "$schema" in log
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "graphmend"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert print_code in rule_ids
    rule = driver["rules"][rule_ids.index(print_code)]
    assert rule["shortDescription"]["text"]
    assert rule["help"]["text"]
    (result,) = run_["results"]
    assert result["ruleId"] == print_code
    assert driver["rules"][result["ruleIndex"]]["id"] == print_code
    assert result["message"]["text"]
    loc = result["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "m.py"
    assert loc["region"]["startLine"] == PRINT_LINE
    assert loc["region"]["startColumn"] == PRINT_COL
    fix = result["fixes"][0]
    change = fix["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "m.py"
    for rep in change["replacements"]:
        assert {"startLine", "startColumn"} <= set(rep["deletedRegion"])
        assert "text" in rep["insertedContent"]


def test_check_sarif_lists_rules_without_findings(project, capsys):
    (project / "ok.py").write_text(CLEAN)
    rc, out, _ = run(capsys, "check", "--output-format", "sarif", "ok.py")
    assert rc == 0
    log = json.loads(out)
    assert [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]] == \
        [r["code"] for r in _core.rules()]
    assert log["runs"][0]["results"] == []


def test_check_github(project, capsys, print_code):
    (project / "m.py").write_text(SAMPLE)
    rc, out, _ = run(capsys, "check", "--output-format", "github", "m.py")
    assert rc == 1
    (line,) = out.splitlines()
    assert line.startswith(f"::warning file=m.py,line={PRINT_LINE},col={PRINT_COL},")
    assert f",title={print_code}::" in line


@pytest.mark.parametrize("flags, expected", [
    (["--select", "GM1"], 0),
    (["--select", "GM9"], 2),  # selects no rule: a usage error
    (["--ignore", "GM"], 0),
    (["--select", "ALL", "--ignore", "{code}"], 0),
    (["--select", "{fam}", "--ignore", "{code}"], 0),
    (["--select", "{code}", "--ignore", "{fam}"], 1),  # the more specific select wins
    (["--select", "{fam}"], 1),
    (["--select", "{code}"], 1),
    (["--select", "gm1,{code}"], 1),
    (["--ignore", "GM1"], 1),
])
def test_check_select_ignore_by_prefix(project, capsys, print_code, flags, expected):
    assert not print_code.startswith("GM1")  # the cases below assume so
    (project / "m.py").write_text(SAMPLE)
    fam = print_code[:3]
    args = [f.format(code=print_code, fam=fam) for f in flags]
    rc, out, err = run(capsys, "check", *args, "m.py")
    assert rc == expected, (args, out, err)


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_check_bad_selector_is_usage_error(project, capsys, flag):
    (project / "ok.py").write_text(CLEAN)
    rc, _, err = run(capsys, "check", flag, "E501", "ok.py")
    assert rc == 2
    assert "E501" in err


def test_check_bad_python_version(project, capsys):
    (project / "ok.py").write_text(CLEAN)
    rc, _, err = run(capsys, "check", "--python-version", "2.7", "ok.py")
    assert rc == 2
    assert "2.7" in err


def test_check_python_version_selects_grammar(project, capsys):
    (project / "m.py").write_text("match x:\n    case 1:\n        pass\n")
    assert run(capsys, "check", "--python-version", "3.10", "m.py")[0] == 0
    rc, out, _ = run(capsys, "check", "--python-version", "3.9", "m.py")
    assert rc == 1  # a syntax error is a finding of that file (as Ruff)
    assert "m.py:1:" in out and "SyntaxError" in out


def test_check_missing_path(project, capsys):
    (project / "ok.py").write_text(CLEAN)
    rc, out, err = run(capsys, "check", "nope.py", "ok.py")
    assert rc == 2
    assert "nope.py" in err
    assert "All checks passed!" not in out
    assert "No findings in the files processed." in out  # ok.py still processed


def test_bad_files_reported_others_processed(project, capsys, print_code):
    (project / "a_syntax.py").write_text("def f(:\n    pass\n")
    (project / "b_bytes.py").write_bytes(b"x = '\xff\xfe'\n")
    (project / "c_cookie.py").write_bytes(b"# -*- coding: klingon -*-\nx = 1\n")
    (project / "d_nul.py").write_bytes(b"x = 1\x00\n")
    os.symlink(project / "does-not-exist.py", project / "e_dangling.py")
    (project / "z.py").write_text(SAMPLE)
    rc, out, err = run(capsys, "check", ".")
    assert rc == 2  # the dangling link cannot be read: an I/O failure
    assert f"z.py:{PRINT_LINE}:{PRINT_COL}: {print_code}" in out
    # What CPython rejects is a finding of that file, on stdout.
    lines = out.splitlines()
    assert any(l.startswith("a_syntax.py:1:") and "SyntaxError" in l for l in lines), out
    assert any(l.startswith("b_bytes.py:") and "utf-8" in l for l in lines), out
    assert any(l.startswith("c_cookie.py:") and "klingon" in l for l in lines), out
    assert any(l.startswith("d_nul.py:") and "null" in l for l in lines), out
    assert any(l.startswith("e_dangling.py:") and "cannot read" in l
               for l in err.splitlines()), err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root reads files whatever their mode")
def test_unreadable_file(project, capsys):
    f = project / "secret.py"
    f.write_text(CLEAN)
    f.chmod(0)
    (project / "ok.py").write_text(CLEAN)
    try:
        rc, out, err = run(capsys, "check", ".")
    finally:
        f.chmod(0o644)
    assert rc == 2
    assert "secret.py" in err and "cannot read" in err


def test_directory_walk_skips(project, capsys, print_code):
    for d in (".git", "__pycache__", "venv", ".tox", "env1", "pkg/sub"):
        (project / d).mkdir(parents=True)
    (project / "env1" / "pyvenv.cfg").write_text("home = /usr\n")
    for d in (".git", "__pycache__", "venv", ".tox", "env1"):
        (project / d / "m.py").write_text(SAMPLE)
    (project / "pkg" / "notes.txt").write_text(SAMPLE)
    (project / "pkg" / "sub" / "m.py").write_text(SAMPLE)
    rc, out, _ = run(capsys, "check", "--output-format", "json", ".")
    assert rc == 1
    paths = sorted(os.path.normpath(d["path"]) for d in json.loads(out))
    assert paths == [os.path.join("pkg", "sub", "m.py")]


def test_explicit_file_and_duplicates(project, capsys, print_code):
    (project / "m.py").write_text(SAMPLE)
    rc, out, _ = run(capsys, "check", "--output-format", "json", "m.py", "./m.py", ".")
    assert rc == 1
    assert len(json.loads(out)) == 1


# ---------------------------------------------------------------- configuration

def test_config_select_ignore(project, capsys, print_code):
    (project / "pyproject.toml").write_text(f'[tool.graphmend]\nignore = ["{print_code}"]\n')
    (project / "m.py").write_text(SAMPLE)
    assert run(capsys, "check", "m.py")[0] == 0
    # --ignore adds to the file's ignore; --select replaces select and ignore.
    assert run(capsys, "check", "--ignore", "GM1", "m.py")[0] == 0
    assert run(capsys, "check", "--select", "ALL", "m.py")[0] == 1
    (project / "pyproject.toml").write_text('[tool.graphmend]\nselect = ["GM1"]\n')
    assert run(capsys, "check", "m.py")[0] == (1 if print_code.startswith("GM1") else 0)
    assert run(capsys, "check", "--select", print_code, "m.py")[0] == 1


def test_config_found_walking_up(project, capsys, print_code, monkeypatch):
    (project / "pyproject.toml").write_text(f'[tool.graphmend]\nignore = ["{print_code}"]\n')
    sub = project / "a" / "b"
    sub.mkdir(parents=True)
    (sub / "m.py").write_text(SAMPLE)
    monkeypatch.chdir(sub)
    assert run(capsys, "check", "m.py")[0] == 0
    monkeypatch.chdir("/")
    assert run(capsys, "check", str(sub / "m.py"))[0] == 0
    assert run(capsys, "check", str(project))[0] == 0


def test_config_exclude(project, capsys, print_code):
    (project / "pyproject.toml").write_text(
        '[tool.graphmend]\nexclude = ["generated", "*_pb2.py", "legacy/**"]\n')
    for rel in ("generated/m.py", "x_pb2.py", "legacy/deep/m.py", "src/m.py"):
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SAMPLE)
    rc, out, _ = run(capsys, "check", "--output-format", "json", ".")
    assert rc == 1
    assert [os.path.normpath(d["path"]) for d in json.loads(out)] == [os.path.join("src", "m.py")]


def test_config_invalid(project, capsys):
    (project / "pyproject.toml").write_text('[tool.graphmend]\nselect = ["E501"]\n')
    (project / "ok.py").write_text(CLEAN)
    rc, _, err = run(capsys, "check", "ok.py")
    assert rc == 2
    assert "E501" in err and "pyproject.toml" in err
    (project / "pyproject.toml").write_text('[tool.graphmend\n')
    rc, _, err = run(capsys, "check", "ok.py")
    assert rc == 2
    assert "pyproject.toml" in err


def test_config_python_version(project, capsys):
    (project / "pyproject.toml").write_text('[tool.graphmend]\npython-version = "3.9"\n')
    (project / "m.py").write_text("match x:\n    case 1:\n        pass\n")
    assert run(capsys, "check", "m.py")[0] == 1
    assert run(capsys, "check", "--python-version", "3.12", "m.py")[0] == 0


# ---------------------------------------------------------------- fix

def test_fix_in_place(project, capsys, print_code):
    f = project / "m.py"
    f.write_text(SAMPLE)
    f.chmod(0o640)
    rc, out, err = run(capsys, "fix", "m.py")
    assert rc == 0, (out, err)
    mended = f.read_text()
    assert mended != SAMPLE
    assert "print(" in mended  # the call is kept, rerouted
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    assert f"Fixed 1 finding in 1 file ({print_code}: 1)" in out
    assert graphmend.check_source(mended, select=print_code) == []
    assert not [p for p in os.listdir(project) if p.startswith(".graphmend-")]
    # Idempotent.
    rc, out, _ = run(capsys, "fix", "m.py")
    assert rc == 0
    assert f.read_text() == mended
    assert "Fixed 0 findings in 0 files" in out


def test_fix_through_symlink_keeps_link(project, capsys, print_code):
    real = project / "real.py"
    real.write_text(SAMPLE)
    link = project / "link.py"
    os.symlink("real.py", link)
    rc, _, err = run(capsys, "fix", "link.py")
    assert rc == 0, err
    assert link.is_symlink() and os.readlink(link) == "real.py"
    assert real.read_text() != SAMPLE


def test_fix_diff_writes_nothing(project, capsys, print_code):
    f = project / "m.py"
    f.write_text(SAMPLE)
    before = f.stat().st_mtime_ns
    rc, out, err = run(capsys, "fix", "--diff", "m.py")
    assert rc == 1
    assert f.read_text() == SAMPLE
    assert f.stat().st_mtime_ns == before
    assert out.startswith("--- a/m.py\n+++ b/m.py\n")
    assert "\n-        print(" in out and "\n+" in out
    assert "Would fix 1 finding in 1 file" in err
    # What --diff shows is what fix writes.
    import difflib
    rc, _, _ = run(capsys, "fix", "m.py")
    expected = "".join(difflib.unified_diff(SAMPLE.splitlines(True), f.read_text().splitlines(True),
                                            "a/m.py", "b/m.py"))
    assert out == expected


def test_fix_diff_nothing_to_do(project, capsys):
    (project / "ok.py").write_text(CLEAN)
    rc, out, _ = run(capsys, "fix", "--diff", "ok.py")
    assert rc == 0
    assert out == ""


def test_fix_keeps_crlf(project, capsys, print_code):
    f = project / "m.py"
    f.write_bytes(SAMPLE.replace("\n", "\r\n").encode())
    rc, _, err = run(capsys, "fix", "m.py")
    assert rc == 0, err
    data = f.read_bytes()
    assert data != SAMPLE.replace("\n", "\r\n").encode()
    assert data.count(b"\n") == data.count(b"\r\n")


def test_fix_keeps_latin1(project, capsys, print_code):
    src = ("# -*- coding: latin-1 -*-\n" + SAMPLE.replace('print("x", x)', 'print("café", x)'))
    f = project / "m.py"
    f.write_bytes(src.encode("latin-1"))
    rc, _, err = run(capsys, "fix", "m.py")
    assert rc == 0, err
    data = f.read_bytes()
    assert b"caf\xe9" in data  # still latin-1, not UTF-8
    text = data.decode("latin-1")
    assert text != src and text.startswith("# -*- coding: latin-1 -*-\n")
    assert graphmend.check_source(data, select=print_code) == []


def test_fix_keeps_utf8_bom(project, capsys, print_code):
    f = project / "m.py"
    f.write_bytes(b"\xef\xbb\xbf" + SAMPLE.encode())
    rc, _, err = run(capsys, "fix", "m.py")
    assert rc == 0, err
    data = f.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
    assert data[3:].decode() != SAMPLE


def test_encode_back_refuses_unrepresentable():
    with pytest.raises(lint.EncodingError, match="latin-1"):
        lint.encode_back("x = '€'\n".encode(), "latin-1")
    assert lint.encode_back("x = 'é'\n".encode(), "latin-1") == b"x = '\xe9'\n"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into read-only directories")
def test_fix_read_only_directory(project, capsys, print_code):
    d = project / "ro"
    d.mkdir()
    f = d / "m.py"
    f.write_text(SAMPLE)
    d.chmod(0o555)
    try:
        rc, _, err = run(capsys, "fix", "ro")
    finally:
        d.chmod(0o755)
    assert rc == 2
    assert "m.py" in err and "cannot write" in err
    assert f.read_text() == SAMPLE


def test_fix_write_failure_leaves_file_untouched(project, capsys, print_code, monkeypatch):
    """The read-only-directory case, also under root: the temporary file
    cannot be created, or the rename fails; either way the original stays
    and no temporary file is left behind."""
    (project / "m.py").write_text(SAMPLE)
    (project / "n.py").write_text(SAMPLE)

    def deny(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(project))

    monkeypatch.setattr(lint, "_temp_file", deny)
    rc, out, err = run(capsys, "fix", "m.py")
    assert rc == 2
    assert "m.py: error: cannot write" in err and "Permission denied" in err
    assert (project / "m.py").read_text() == SAMPLE
    monkeypatch.undo()

    monkeypatch.setattr(lint.os, "replace", deny)
    rc, out, err = run(capsys, "fix", "n.py")
    assert rc == 2
    assert (project / "n.py").read_text() == SAMPLE
    assert sorted(os.listdir(project)) == ["m.py", "n.py", "pyproject.toml"]


def test_fix_bad_files_reported_others_fixed(project, capsys, print_code):
    (project / "a.py").write_text("def f(:\n")
    (project / "b.py").write_text(SAMPLE)
    rc, out, _ = run(capsys, "fix", ".")
    assert rc == 1  # the syntax error is a finding left
    assert "a.py:1:" in out and "SyntaxError" in out
    assert (project / "b.py").read_text() != SAMPLE
    assert (project / "a.py").read_text() == "def f(:\n"


def test_fix_select_ignore(project, capsys, print_code):
    (project / "m.py").write_text(SAMPLE)
    rc, _, _ = run(capsys, "fix", "--ignore", print_code, "m.py")
    assert rc == 0
    assert (project / "m.py").read_text() == SAMPLE
    (project / "pyproject.toml").write_text(f'[tool.graphmend]\nignore = ["{print_code}"]\n')
    run(capsys, "fix", "m.py")
    assert (project / "m.py").read_text() == SAMPLE
    run(capsys, "fix", "--select", print_code, "m.py")
    assert (project / "m.py").read_text() != SAMPLE


# ---------------------------------------------------------------- parallelism

def test_parallel_output_is_deterministic(project, capsys, print_code):
    for i in range(40):
        sub = project / f"p{i % 4}"
        sub.mkdir(exist_ok=True)
        (sub / f"m{i:02d}.py").write_text(SAMPLE if i % 3 else CLEAN)
    (project / "p1" / "broken.py").write_text("def f(:\n")
    outs = set()
    for jobs in ("1", "8", "16"):
        rc, out, err = run(capsys, "check", "-j", jobs, ".")
        assert rc == 1
        outs.add((out, err))
    assert len(outs) == 1
    out, _ = outs.pop()
    paths = [line.split(":")[0] for line in out.splitlines() if print_code in line
             and not line.startswith("Found")]
    assert paths == sorted(paths) and len(paths) == 26


def test_parallel_fix_matches_serial(project, capsys, print_code):
    for i in range(12):
        (project / f"m{i:02d}.py").write_text(SAMPLE)
    rc, diff_serial, _ = run(capsys, "fix", "--diff", "-j", "1", ".")
    rc2, diff_parallel, _ = run(capsys, "fix", "--diff", "-j", "8", ".")
    assert rc == rc2 == 1
    assert diff_serial == diff_parallel
    assert run(capsys, "fix", "-j", "8", ".")[0] == 0
    assert all((project / f"m{i:02d}.py").read_text() != SAMPLE for i in range(12))


LEAK_X = (
    "import torch\n"
    "from torch import nn\n"
    "\n"
    "\n"
    "class Block(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.scale = 2.0\n"
    "\n"
    "    def forward(self, h):\n"
    "        if h.sum() > 0:\n"
    "            h = h / self.scale\n"
    "        return h\n"
)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_file_results_do_not_depend_on_other_files(project, capsys, jobs):
    # issue 11: y/m.py reads self.scale but assigns only self.scalf; checked
    # after x/m.py (which assigns self.scale) on the same thread it used to
    # get a *safe* GM101 fix, because "which attributes does this file
    # assign" was cached by the tree's address.
    (project / "x").mkdir()
    (project / "y").mkdir()
    (project / "x" / "m.py").write_text(LEAK_X)
    (project / "y" / "m.py").write_text(LEAK_X.replace("self.scale = ", "self.scalf = "))

    def per_file(*paths, command="check"):
        rc, out, err = run(capsys, command, "--jobs", jobs, *paths)
        assert rc == 1, err
        return {p: [line for line in out.splitlines() if line.startswith(p)] for p in paths}

    alone = {p: per_file(p)[p] for p in ("x/m.py", "y/m.py")}
    assert "[*]" in alone["x/m.py"][0]
    assert "[*]" not in alone["y/m.py"][0]
    rc, out, _ = run(capsys, "check", "--jobs", jobs, "y/m.py")
    assert "reads `self.scale`, which this file never assigns" in out
    assert per_file("x/m.py", "y/m.py") == alone
    assert per_file("y/m.py", "x/m.py") == alone
    diff_alone = run(capsys, "fix", "--diff", "--jobs", jobs, "x/m.py")[1]
    diff_alone += run(capsys, "fix", "--diff", "--jobs", jobs, "y/m.py")[1]
    for order in (("x/m.py", "y/m.py"), ("y/m.py", "x/m.py")):
        rc, diff, _ = run(capsys, "fix", "--diff", "--jobs", jobs, *order)
        assert "+++ y/m.py" not in diff and "+++ b/y/m.py" not in diff
        assert diff == diff_alone


# ---------------------------------------------------------------- rules

def test_rules_listing(capsys):
    rc, out, _ = run(capsys, "rules")
    assert rc == 0
    for r in _core.rules():
        assert r["code"] in out and r["summary"] in out
    rc, out, _ = run(capsys, "rules", "--output-format", "json")
    assert rc == 0
    assert [r["code"] for r in json.loads(out)] == [r["code"] for r in _core.rules()]


def test_rule_documentation(capsys):
    rules = _core.rules()
    assert rules
    for r in rules:
        rc, out, _ = run(capsys, "rule", r["code"].lower())
        assert rc == 0
        assert r["code"] in out and r["documentation"].strip().splitlines()[-1] in out


def test_rule_unknown(capsys):
    rc, _, err = run(capsys, "rule", "GM999")
    assert rc == 2
    assert "GM999" in err


def test_rules_are_sorted_and_documented():
    rules = _core.rules()
    assert [r["code"] for r in rules] == sorted(r["code"] for r in rules)
    for r in rules:
        assert _core.is_valid_selector(r["code"]) and len(r["code"]) == 5
        assert r["name"] and r["summary"] and r["documentation"]


# ---------------------------------------------------------------- end to end

def test_console_script_end_to_end(project, print_code):
    (project / "m.py").write_text(SAMPLE)
    proc = subprocess.run([sys.executable, "-m", "graphmend", "check", "--output-format",
                           "json", "m.py"], capture_output=True, text=True, cwd=project, check=False)
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)[0]["code"] == print_code
    proc = subprocess.run([sys.executable, "-m", "graphmend", "check", "--bogus", "m.py"],
                          capture_output=True, text=True, cwd=project, check=False)
    assert proc.returncode == 2


def test_usage_errors_exit_two(capsys):
    assert run(capsys, "check")[0] == 2
    assert run(capsys, "fix")[0] == 2
    assert run(capsys, "check", "--output-format", "xml", ".")[0] == 2


def test_declined_fix_is_explained_and_left(project, capsys, print_code):
    src = SAMPLE.replace('print("x", x)', 'print("x", x, **kw)').replace(
        "def forward(self, x):", "def forward(self, x, **kw):")
    declined = [d for d in graphmend.check_source(src) if d.declined_reason and not d.fix_applies]
    assert [d.code for d in declined] == [print_code], "the print rule must decline print(..., **kw)"
    (project / "m.py").write_text(src)
    rc, out, _ = run(capsys, "check", "m.py")
    assert rc == 1
    assert f"  no fix: {declined[0].declined_reason}" in out
    assert "[*]" not in out.splitlines()[0]
    rc, out, _ = run(capsys, "fix", "m.py")
    assert rc == 1  # findings remain
    assert (project / "m.py").read_text() == src
    assert f"m.py:{PRINT_LINE}:{PRINT_COL}: {declined[0].code}" in out
    assert "Fixed 0 findings in 0 files; " in out


def test_config_without_toml_reader_warns(project, capsys, print_code, monkeypatch):
    """Python < 3.11 without tomli: the file is ignored with a warning."""
    from graphmend import config

    monkeypatch.setattr(config, "_toml", None)
    (project / "pyproject.toml").write_text(f'[tool.graphmend]\nignore = ["{print_code}"]\n')
    (project / "m.py").write_text(SAMPLE)
    rc, _, err = run(capsys, "check", "m.py")
    assert rc == 1  # the ignore was not read
    assert "warning" in err and "tomli" in err


def test_internal_error_in_one_file_reported_others_processed(project, capsys, print_code,
                                                             monkeypatch):
    (project / "a.py").write_text(SAMPLE)
    (project / "b.py").write_text(SAMPLE)
    real = lint.run_check

    def flaky(data, **kwargs):
        if b"boom" in data:
            raise RuntimeError("boom")
        return real(data, **kwargs)

    (project / "a.py").write_text(SAMPLE + "# boom\n")
    monkeypatch.setattr(lint, "run_check", flaky)
    # regions "reachable": each file is checked by run_check on a worker
    # (in package mode the package analysis checks them all in one call)
    rc, out, err = run(capsys, "check", "--regions", "reachable", ".")
    assert rc == 2
    assert "a.py: error: internal error (RuntimeError: boom)" in err
    assert f"b.py:{PRINT_LINE}:{PRINT_COL}: {print_code}" in out
