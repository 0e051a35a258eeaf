"""Issue 14's command-line and file-handling items: non-regular files,
permissions and ownership, lost updates, interrupted runs, Ruff's exit-code
convention, configuration and name errors, multibyte encodings, `--diff`
that applies with `patch` / `git apply`, and the options a Ruff user reaches
for (--version, stdin, --quiet, --statistics, excludes, .gitignore, check
--fix, --show-fixes, pre-commit hooks).

Findings come from the rule that flags `print(...)` in an `nn.Module.forward`
(GM201 today); see test_cli_check_fix.py.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading

import graphmend
import pytest
from graphmend import cli, lint

from _cli_cases import CLEAN, SAMPLE, run

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_cli(*args, cwd, input=None, timeout=60, env=None):
    """graphmend in a subprocess; bytes out."""
    return subprocess.run([sys.executable, "-m", "graphmend", *map(str, args)], cwd=cwd,
                          input=input, capture_output=True, timeout=timeout, env=env,
                          check=False)


def fixed(source: bytes) -> bytes:
    return graphmend.fix_source(source).source


# ---------------------------------------------------------------- item 2: FIFOs

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("command", [["check"], ["fix"], ["fix", "--diff"], ["dump-ast"]])
def test_fifo_named_is_reported_not_waited_on(project, command):
    os.mkfifo(project / "pipe.py")
    proc = run_cli(*command, "pipe.py", cwd=project, timeout=30)
    assert proc.returncode == 2
    assert b"pipe.py" in proc.stderr and b"not a regular file" in proc.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("command", [["check"], ["fix"]])
def test_fifo_met_in_a_walk_is_skipped(project, print_code, command):
    (project / "pkg").mkdir()
    os.mkfifo(project / "pkg" / "pipe.py")
    (project / "pkg" / "m.py").write_text(SAMPLE)
    proc = run_cli(*command, ".", cwd=project, timeout=30)
    assert b"pkg/pipe.py: not a regular file; skipped" in proc.stderr
    if command == ["check"]:
        assert proc.returncode == 1 and f"m.py:6:9: {print_code}".encode() in proc.stdout
    else:
        assert proc.returncode == 0
        assert (project / "pkg" / "m.py").read_bytes() == fixed(SAMPLE.encode())


# ---------------------------------------------------------------- item 4: rights

def _nobody_ids():
    import grp
    import pwd

    try:
        return pwd.getpwnam("nobody").pw_uid, grp.getgrnam("nogroup").gr_gid
    except KeyError:
        pytest.skip("no user nobody / group nogroup")


needs_setpriv = pytest.mark.skipif(
    shutil.which("setpriv") is None or os.name != "posix" or os.geteuid() != 0,
    reason="runs graphmend as nobody: needs root and setpriv")


@pytest.fixture
def shared_dir():
    """A directory (outside pytest's 0700 tmp tree) that nobody owns."""
    uid, gid = _nobody_ids()
    d = pathlib.Path(tempfile.mkdtemp(prefix="graphmend-rights-"))
    d.chmod(0o755)
    (d / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    os.chown(d, uid, gid)
    yield d
    shutil.rmtree(d)


def _as_nobody(*args, cwd):
    return subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
         sys.executable, "-m", "graphmend", *args], cwd=cwd, capture_output=True,
        timeout=60, env={**os.environ, "HOME": str(cwd)}, check=False)


@needs_setpriv
def test_fix_refuses_a_read_only_file_of_ones_own(shared_dir, print_code):
    uid, gid = _nobody_ids()
    f = shared_dir / "m.py"
    f.write_text(SAMPLE)
    os.chown(f, uid, gid)
    f.chmod(0o444)
    proc = _as_nobody("fix", "m.py", cwd=shared_dir)
    assert proc.returncode == 2, proc.stderr
    assert b"m.py: error: cannot write" in proc.stderr and b"Permission denied" in proc.stderr
    assert f.read_text() == SAMPLE and stat.S_IMODE(f.stat().st_mode) == 0o444
    assert sorted(p.name for p in shared_dir.iterdir()) == ["m.py", "pyproject.toml"]


@needs_setpriv
def test_fix_refuses_someone_elses_file_in_a_writable_directory(shared_dir, print_code):
    f = shared_dir / "m.py"
    f.write_text(SAMPLE)  # root:root 0644 in nobody's directory
    f.chmod(0o644)
    proc = _as_nobody("fix", "m.py", cwd=shared_dir)
    assert proc.returncode == 2, proc.stderr
    assert b"Permission denied" in proc.stderr
    st = f.stat()
    assert f.read_text() == SAMPLE and (st.st_uid, st.st_gid) == (0, 0)


@needs_setpriv
def test_fix_as_user_keeps_mode(shared_dir, print_code):
    uid, gid = _nobody_ids()
    f = shared_dir / "m.py"
    f.write_text(SAMPLE)
    os.chown(f, uid, gid)
    f.chmod(0o640)
    proc = _as_nobody("fix", "m.py", cwd=shared_dir)
    assert proc.returncode == 0, proc.stderr
    st = f.stat()
    assert f.read_bytes() == fixed(SAMPLE.encode())
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, gid, 0o640)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="chown needs root")
def test_fix_keeps_owner_group_and_mode(project, print_code):
    uid, gid = _nobody_ids()
    f = project / "m.py"
    f.write_text(SAMPLE)
    os.chown(f, uid, gid)
    f.chmod(0o604)
    rc = cli.main(["fix", "m.py"])
    assert rc == 0
    st = f.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (uid, gid, 0o604)


def test_fix_refuses_when_owner_cannot_be_kept(project, capsys, print_code, monkeypatch):
    """The rename would give the file a new owner: refused, file untouched."""
    f = project / "m.py"
    f.write_text(SAMPLE)
    real_stat = os.stat

    def foreign(path, *a, **kw):
        st = real_stat(path, *a, **kw)
        if str(path).endswith("m.py"):
            fields = list(st)
            fields[stat.ST_UID] = st.st_uid + 4242
            return os.stat_result(fields)
        return st

    def no_chown(*a, **kw):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(lint.os, "stat", foreign)
    monkeypatch.setattr(lint.os, "fchown", no_chown)
    rc, _, err = run(capsys, "fix", "m.py")
    monkeypatch.setattr(lint.os, "stat", real_stat)
    assert rc == 2
    assert "cannot keep its owner and group" in err
    assert f.read_text() == SAMPLE
    assert sorted(p.name for p in project.iterdir()) == ["m.py", "pyproject.toml"]


# ---------------------------------------------------------------- item 5: lost update

@pytest.mark.parametrize("command", [["fix"], ["check", "--fix"]])
def test_edit_saved_while_fix_runs_is_kept(project, capsys, print_code, monkeypatch, command):
    f = project / "m.py"
    f.write_text(SAMPLE)
    (project / "n.py").write_text(SAMPLE)
    real_fix = lint.run_fix

    def fix_while_user_saves(data, **kw):
        res = real_fix(data, **kw)
        with open(f, "a") as handle:  # the editor saves m.py meanwhile
            handle.write("# my edit\n")
        return res

    monkeypatch.setattr(lint, "run_fix", fix_while_user_saves)
    rc, _, err = run(capsys, *command, "-j", "1", "m.py")
    assert rc == 2
    assert "m.py: error: the file changed while graphmend was working on it" in err
    assert f.read_text() == SAMPLE + "# my edit\n"
    monkeypatch.setattr(lint, "run_fix", real_fix)
    rc, _, err = run(capsys, *command, "n.py")
    assert rc == 0, err  # unchanged files are still fixed
    assert (project / "n.py").read_bytes() == fixed(SAMPLE.encode())


def test_same_size_same_mtime_edit_is_caught_by_the_hash(project, capsys, print_code,
                                                        monkeypatch):
    f = project / "m.py"
    f.write_text(SAMPLE)
    before = f.stat()
    real_fix = lint.run_fix

    def edit_in_place(data, **kw):
        res = real_fix(data, **kw)
        f.write_bytes(SAMPLE.replace("x + 1", "x + 2").encode())
        os.utime(f, ns=(before.st_atime_ns, before.st_mtime_ns))
        return res

    monkeypatch.setattr(lint, "run_fix", edit_in_place)
    rc, _, err = run(capsys, "fix", "m.py")
    assert rc == 2 and "changed while graphmend" in err
    assert "x + 2" in f.read_text()


# ---------------------------------------------------------------- item 8: interrupts

def test_no_named_temporary_file_exists_before_the_rename(project, print_code, monkeypatch):
    """What a kill -9 in the middle of a write leaves: the new contents live
    in an unnamed file until the moment of the rename."""
    (project / "m.py").write_text(SAMPLE)
    seen = []
    real_fsync = os.fsync

    def spy(fd):
        seen.append(sorted(p for p in os.listdir(project) if p.startswith(".graphmend-")))
        return real_fsync(fd)

    monkeypatch.setattr(lint.os, "fsync", spy)
    assert cli.main(["fix", "m.py"]) == 0
    if not hasattr(os, "O_TMPFILE"):
        pytest.skip("no O_TMPFILE: a named temporary file is used")
    assert seen == [[]]


def test_interrupt_during_write_leaves_no_temporary_file(project, print_code, monkeypatch):
    (project / "m.py").write_text(SAMPLE)

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(lint.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        lint.write_atomically(str(project / "m.py"), b"x = 1\n")
    assert sorted(os.listdir(project)) == ["m.py", "pyproject.toml"]
    assert (project / "m.py").read_text() == SAMPLE


def test_ctrl_c_says_which_files_were_changed(project, capsys, print_code, monkeypatch):
    names = [f"m{i}.py" for i in range(8)]
    for n in names:
        (project / n).write_text(SAMPLE)
    real_write = lint.write_atomically
    count = []
    states = []

    class Recorded(cli.RunState):
        def __init__(self):
            super().__init__()
            states.append(self)

    def write_then_ctrl_c(path, data, **kw):
        real_write(path, data, **kw)
        count.append(path)
        if len(count) == 2:
            # Ctrl-C, handled by the main thread: send it there (a signal
            # sent to the process may land on this worker thread), and wait
            # until the main thread has taken it (the run's stop flag) before
            # this worker goes on, as a user's Ctrl-C arrives while the run is
            # still busy.
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            states[0].stop.wait(5.0)

    monkeypatch.setattr(cli, "RunState", Recorded)
    monkeypatch.setattr(lint, "write_atomically", write_then_ctrl_c)
    # Python's own Ctrl-C handler, as in a terminal: a test run started in
    # the background (`cmd &`) inherits SIGINT ignored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        rc, out, err = run(capsys, "fix", "-j", "1", ".")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert rc == 130
    changed = [n for n in names if (project / n).read_text() != SAMPLE]
    assert 2 <= len(changed) < len(names)
    assert f"graphmend: interrupted; {len(changed)} files had already been rewritten:" in err
    listed = [line.strip() for line in err.splitlines() if line.startswith("  ")]
    assert listed == changed
    assert not [p for p in os.listdir(project) if p.startswith(".graphmend-")]


@pytest.mark.parametrize("sig, status, word", [(signal.SIGINT, 130, "interrupted"),
                                               (signal.SIGTERM, 143, "terminated")])
def test_signal_mid_run_lists_the_rewritten_files(tmp_path, print_code, sig, status, word):
    """A real signal to a real run: the status, the list of files rewritten
    (exactly those that changed) and no temporary file left. The signal is
    sent once the first file has changed; what is asserted holds whenever
    it lands."""
    import time

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    names = [f"m{i:03d}.py" for i in range(400)]
    for n in names:
        (tmp_path / n).write_text(SAMPLE)
    proc = subprocess.Popen([sys.executable, "-m", "graphmend", "fix", "-j", "2", "."],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline and \
            (tmp_path / names[0]).read_text() == SAMPLE:
        time.sleep(0.005)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    if proc.returncode in (0, 1):
        pytest.skip("the run ended before the signal")
    err = err.decode()
    assert proc.returncode == status, err
    changed = [n for n in names if (tmp_path / n).read_text() != SAMPLE]
    assert 0 < len(changed) < len(names)
    assert f"graphmend: {word}; {len(changed)} file" in err
    listed = [line.strip() for line in err.splitlines() if line.startswith("  ")]
    assert sorted(listed) == changed
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".graphmend-")]


# ---------------------------------------------------------------- item 10: exit codes

@pytest.fixture
def broken(project):
    (project / "bad.py").write_text("x = 1\ndef f(:\n    pass\n")
    return project


def test_syntax_error_is_a_finding_with_exit_one(broken, capsys):
    rc, out, err = run(capsys, "check", ".")
    assert rc == 1
    assert "bad.py:2:7: invalid-syntax SyntaxError: invalid syntax" in out
    assert "All checks passed!" not in out and err == ""
    assert run(capsys, "check", "--exit-zero", ".")[0] == 0
    assert run(capsys, "fix", ".")[0] == 1
    assert run(capsys, "fix", "--exit-zero", ".")[0] == 0
    assert run(capsys, "fix", "--diff", "--exit-zero", ".")[0] == 0


def test_syntax_error_in_every_output_format(broken, capsys):
    rc, out, _ = run(capsys, "check", "--output-format", "json", ".")
    assert rc == 1
    (entry,) = json.loads(out)
    assert (entry["path"], entry["code"], entry["line"], entry["column"]) == \
        ("bad.py", "invalid-syntax", 2, 7)
    assert entry["message"] == "SyntaxError: invalid syntax"
    rc, out, _ = run(capsys, "check", "--output-format", "github", ".")
    assert rc == 1
    assert out.startswith("::error file=bad.py,line=2,col=7,")
    assert "title=invalid-syntax::SyntaxError: invalid syntax" in out
    rc, out, _ = run(capsys, "check", "--output-format", "sarif", ".")
    assert rc == 1
    log = json.loads(out)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "invalid-syntax" and result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (2, 7)
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_exit_two_only_for_usage_config_and_io(project, capsys):
    (project / "ok.py").write_text(CLEAN)
    assert run(capsys, "check", "--exit-zero", "nope.py", "ok.py")[0] == 2
    assert run(capsys, "check", "--exit-zero", "--select", "FOO", "ok.py")[0] == 2
    (project / "pyproject.toml").write_text("[tool.graphmend]\nselect = 5\n")
    assert run(capsys, "check", "--exit-zero", "ok.py")[0] == 2


# ---------------------------------------------------------------- item 11: config, names

@pytest.mark.parametrize("toml, key", [
    ('tool = "x"\n', "'tool'"),
    ("[[tool]]\nname = 1\n", "'tool'"),
    ("tool = 5\n", "'tool'"),
    ("[tool]\ngraphmend = [1]\n", "'tool.graphmend'"),
    ("[tool.graphmend]\nselect = 5\n", "select"),
    ("[tool.graphmend]\nexclude = [1]\n", "exclude"),
    ("[tool.graphmend]\nextend-exclude = {a = 1}\n", "extend-exclude"),
    ('[tool.graphmend]\npython-version = "2.7"\n', "python-version"),
    ('[tool.graphmend]\nselect = ["GM999"]\n', "select"),
])
def test_bad_pyproject_names_file_and_key(project, capsys, toml, key):
    (project / "pyproject.toml").write_text(toml)
    (project / "ok.py").write_text(CLEAN)
    for command in ("check", "fix"):
        rc, _, err = run(capsys, command, "ok.py")
        assert rc == 2, err
        assert str(project / "pyproject.toml") in err and key in err, err
        assert "Traceback" not in err


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file names are UTF-8")
def test_non_utf8_file_name_in_json_and_sarif(project, print_code):
    raw = os.fsencode(str(project)) + b"/bad\xffname.py"
    with open(raw, "wb") as handle:
        handle.write(SAMPLE.encode())
    for fmt in ("json", "sarif"):
        proc = run_cli("check", "--output-format", fmt, ".", cwd=project)
        assert proc.returncode == 1, proc.stderr
        assert b"Traceback" not in proc.stderr
        text = proc.stdout.decode("utf-8")  # valid UTF-8
        data = json.loads(text)
        if fmt == "json":
            assert os.fsencode(data[0]["path"]) == b"bad\xffname.py"
        else:
            uri = data["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
                "artifactLocation"]["uri"]
            assert uri == "bad%FFname.py"


def test_name_the_terminal_cannot_show_is_escaped(project, print_code):
    (project / "é.py").write_text(SAMPLE)
    proc = run_cli("check", "é.py", cwd=project, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert proc.stdout.startswith(b"\\xe9.py:6:9: ")


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_unknown_selector_names_the_closest_code(project, capsys, print_code, flag):
    (project / "m.py").write_text(SAMPLE)
    typo = print_code[:-1] + str((int(print_code[-1]) + 5) % 10)
    while typo in {r["code"] for r in graphmend.rules()}:
        typo = typo[:-1] + str((int(typo[-1]) + 1) % 10)
    rc, _, err = run(capsys, "check", flag, typo, "m.py")
    assert rc == 2
    assert f"unknown rule selector '{typo}'" in err and "did you mean GM" in err
    rc, _, err = run(capsys, "check", flag, "GM999", "m.py")
    assert rc == 2 and "did you mean GM" in err
    with pytest.raises(ValueError, match="unknown rule selector"):
        graphmend.check_source(SAMPLE, select="GM999")


@pytest.mark.parametrize("version", [(2, 7), (3, -1), (3, 7), (3, 14), (3, 99), (4, 11), (3,),
                                     (3, 11, 0), "2.7", "3.99"])
def test_dump_ast_rejects_unsupported_versions(version):
    with pytest.raises(ValueError):
        graphmend.dump_ast("x = 1\n", python_version=version)


def test_dump_ast_accepts_versions_in_range():
    expected = graphmend.dump_ast("x = 1\n", python_version=(3, 11))
    assert graphmend.dump_ast("x = 1\n", python_version="3.11") == expected
    assert graphmend.dump_ast("x = 1\n", python_version=[3, 8]).startswith("Module(")
    with pytest.raises(TypeError):
        graphmend.dump_ast("x = 1\n", python_version=3.11)


# ---------------------------------------------------------------- item 12: encodings

MULTIBYTE = ["shift_jis", "cp932", "euc_jp", "euc-kr", "gb2312", "gbk", "gb18030", "big5",
             "iso2022_jp"]


def _multibyte_sample(encoding: str) -> tuple[bytes, str]:
    word = {"euc-kr": "한국어"}.get(encoding, "日本")
    if encoding in ("gb2312", "gbk", "gb18030", "big5"):
        word = "中文"
    text = (f"# -*- coding: {encoding} -*-\n" + SAMPLE.replace(
        '        print("x", x)\n', f'        s = "{word}"; print("{word}", x)  # {word}\n'))
    return text.encode(encoding), text


@pytest.mark.parametrize("encoding", MULTIBYTE)
def test_multibyte_encodings_checked_with_cpython_positions(project, capsys, print_code,
                                                            encoding):
    import ast

    data, text = _multibyte_sample(encoding)
    compile(data, "m.py", "exec")  # CPython reads it
    (project / "m.py").write_bytes(data)
    rc, out, err = run(capsys, "check", "--output-format", "json", "m.py")
    assert rc == 1, err
    (d,) = [d for d in json.loads(out) if d["code"] == print_code]
    call = next(n for n in ast.walk(ast.parse(data)) if isinstance(n, ast.Call))
    line = text.splitlines()[call.lineno - 1]
    assert (d["line"], d["col_offset"], d["end_col_offset"]) == \
        (call.lineno, call.col_offset, call.end_col_offset)
    assert d["column"] == line.index("print(") + 1  # code points


@pytest.mark.parametrize("encoding", MULTIBYTE)
def test_multibyte_encodings_fixed_in_their_encoding(project, capsys, print_code, encoding):
    data, text = _multibyte_sample(encoding)
    (project / "m.py").write_bytes(data)
    rc, _, err = run(capsys, "fix", "m.py")
    assert rc == 0, err
    out = (project / "m.py").read_bytes()
    mended = out.decode(encoding)
    assert mended.startswith(f"# -*- coding: {encoding} -*-\n")
    assert "_graphmend_rt.print(" in mended
    assert graphmend.check_source(out) == []
    compile(out, "m.py", "exec")
    # Lines no fix touched keep their bytes.
    kept = [line for line in data.split(b"\n") if b"print" not in line]
    assert all(line in out.split(b"\n") for line in kept)
    r = graphmend.fix_source(data)
    assert r.status == "fixed" and r.encoding and r.source == out
    assert graphmend.dump_ast(data) == graphmend.dump_ast(text)


def test_multibyte_decode_error_is_a_syntax_error(project, capsys):
    (project / "m.py").write_bytes(b"# coding: shift_jis\nx = '\x81'\n")
    with pytest.raises(SyntaxError):
        compile((project / "m.py").read_bytes(), "m.py", "exec")
    rc, out, _ = run(capsys, "check", "m.py")
    assert rc == 1 and "m.py:2:" in out and "shift_jis" in out


@pytest.mark.parametrize("codec, bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                                        ("utf-32-le", b"\xff\xfe\x00\x00")])
def test_utf16_utf32_are_rejected_as_cpython_does(project, capsys, codec, bom):
    """CPython reads no UTF-16/32 source (null bytes): neither does graphmend,
    and it says so as a finding of that file, not a crash."""
    data = bom + CLEAN.encode(codec)
    with pytest.raises(SyntaxError):
        compile(data, "m.py", "exec")
    (project / "m.py").write_bytes(data)
    rc, out, _ = run(capsys, "check", "m.py")
    assert rc == 1 and "invalid-syntax" in out and "null bytes" in out


# ---------------------------------------------------------------- item 13: --diff applies

def _variants() -> dict[str, bytes]:
    src = SAMPLE.encode()
    lines = src.split(b"\n")
    sjis = ("# -*- coding: shift_jis -*-\n" + SAMPLE.replace('"x"', '"日本"')).encode("shift_jis")
    return {
        "bom.py": b"\xef\xbb\xbf" + src,
        "crlf.py": src.replace(b"\n", b"\r\n"),
        "cr.py": src.replace(b"\n", b"\r"),
        "mixed.py": b"\r\n".join(lines[:3]) + b"\r" + b"\n".join(lines[3:]),
        "latin1.py": b"# -*- coding: latin-1 -*-\n" + src.replace(b'"x"', b'"\xe9"'),
        "cookie2.py": b"#!/usr/bin/env python\n# vim: set fileencoding=koi8-r :\n"
                      + src.replace(b'"x"', b'"\xc1\xc2"'),
        "sjis.py": sjis,
        "no newline.py": src.rstrip(b"\n"),
    }


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("patch") is None,
                    reason="needs git and patch")
def test_diff_applies_with_patch_and_git_apply(tmp_path, print_code):
    work = tmp_path / "work"
    work.mkdir()
    (work / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for name, data in _variants().items():
        (work / name).write_bytes(data)
    proc = run_cli("fix", "--diff", ".", cwd=work)
    assert proc.returncode == 1, proc.stderr
    patch = tmp_path / "fix.patch"
    patch.write_bytes(proc.stdout)
    copies = {}
    for tool in ("patch", "git"):
        copies[tool] = tmp_path / tool
        shutil.copytree(work, copies[tool])
    subprocess.run(["patch", "-p1", "-s", "-i", str(patch)], cwd=copies["patch"], check=True)
    subprocess.run(["git", "init", "-q"], cwd=copies["git"], check=True)
    subprocess.run(["git", "apply", str(patch)], cwd=copies["git"], check=True)
    assert run_cli("fix", ".", cwd=work).returncode == 0
    for name in _variants():
        want = (work / name).read_bytes()
        assert want != _variants()[name], name  # each was fixed
        assert (copies["patch"] / name).read_bytes() == want, ("patch", name)
        assert (copies["git"] / name).read_bytes() == want, ("git apply", name)


def test_diff_keeps_the_files_bytes(project, print_code):
    data = b"\xef\xbb\xbf# coding: utf-8\n" + SAMPLE.encode().replace(b"\n", b"\r\n")
    (project / "m.py").write_bytes(data)
    proc = run_cli("fix", "--diff", "m.py", cwd=project)
    assert b" \xef\xbb\xbf# coding: utf-8\n import torch\r\n" in proc.stdout
    assert b"+        _graphmend_rt.print(\"x\", x)\r\n" in proc.stdout


# ---------------------------------------------------------------- item 14: the options

def test_version(capsys):
    rc, out, _ = run(capsys, "--version")
    assert rc == 0 and out.strip() == f"graphmend {graphmend.__version__}"


def test_check_stdin(project, print_code):
    proc = run_cli("check", "-", "--stdin-filename", "pkg/m.py", cwd=project,
                   input=SAMPLE.encode())
    assert proc.returncode == 1
    assert f"pkg/m.py:6:9: {print_code}".encode() in proc.stdout
    proc = run_cli("check", "-", cwd=project, input=CLEAN.encode())
    assert proc.returncode == 0


def test_fix_stdin_writes_the_mended_source(project, print_code):
    proc = run_cli("fix", "-", "--stdin-filename", "m.py", cwd=project, input=SAMPLE.encode())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == fixed(SAMPLE.encode())
    assert b"Fixed 1 finding" in proc.stderr
    proc = run_cli("fix", "-", cwd=project, input=CLEAN.encode())
    assert proc.returncode == 0 and proc.stdout == CLEAN.encode()
    proc = run_cli("fix", "-", cwd=project, input=b"def f(:\n")
    assert proc.returncode == 1 and proc.stdout == b"def f(:\n"
    proc = run_cli("fix", "--diff", "-", "--stdin-filename", "m.py", cwd=project,
                   input=SAMPLE.encode())
    assert proc.returncode == 1 and proc.stdout.startswith(b"--- a/m.py\n+++ b/m.py\n")
    assert not (project / "m.py").exists()


def test_stdin_filename_picks_the_configuration(project, print_code):
    (project / "sub").mkdir()
    (project / "sub" / "pyproject.toml").write_text(
        f'[tool.graphmend]\nignore = ["{print_code}"]\n')
    proc = run_cli("check", "-", "--stdin-filename", "sub/m.py", cwd=project,
                   input=SAMPLE.encode())
    assert proc.returncode == 0


def test_stdin_usage_errors(project, capsys):
    (project / "ok.py").write_text(CLEAN)
    assert run(capsys, "check", "-", "ok.py")[0] == 2
    assert run(capsys, "check", "--stdin-filename", "x.py", "ok.py")[0] == 2


def test_quiet(project, capsys, print_code):
    (project / "ok.py").write_text(CLEAN)
    rc, out, err = run(capsys, "check", "-q", "ok.py")
    assert (rc, out, err) == (0, "", "")
    (project / "m.py").write_text(SAMPLE)
    rc, out, _ = run(capsys, "check", "--quiet", "m.py")
    assert rc == 1 and "m.py:6:9:" in out and "Found" not in out
    rc, out, _ = run(capsys, "fix", "-q", "m.py")
    assert rc == 0 and out == ""


def test_statistics(project, capsys, print_code):
    for i in range(3):
        (project / f"m{i}.py").write_text(SAMPLE)
    (project / "bad.py").write_text("def f(:\n")
    rc, out, _ = run(capsys, "check", "--statistics", ".")
    assert rc == 1
    lines = out.splitlines()
    assert lines[0].split("\t")[:2] == ["3", print_code.ljust(len("invalid-syntax"))]
    assert lines[0].endswith("[*] " + {r["code"]: r["name"] for r in graphmend.rules()}[
        print_code])
    assert lines[1].split("\t")[:2] == ["1", "invalid-syntax"]
    assert "m0.py:" not in out
    assert lines[-1].startswith("Found 4 findings")


def test_exclude_and_extend_exclude_on_the_command_line(project, capsys, print_code):
    for d in ("gen", "vendor", "src"):
        (project / d).mkdir()
        (project / d / "m.py").write_text(SAMPLE)
    (project / "pyproject.toml").write_text('[tool.graphmend]\nexclude = ["vendor"]\n')

    def reported(*flags):
        _, out, _ = run(capsys, "check", *flags, ".")
        return sorted({line.split("/")[0] for line in out.splitlines() if ":6:9:" in line})

    assert reported() == ["gen", "src"]
    assert reported("--extend-exclude", "gen") == ["src"]
    assert reported("--exclude", "gen") == ["src", "vendor"]  # replaces pyproject's exclude
    assert reported("--exclude", "gen,src") == ["vendor"]
    assert reported("--exclude", "gen", "--extend-exclude", "src") == ["vendor"]
    # A file named on the command line: processed, unless --force-exclude.
    assert run(capsys, "check", "--exclude", "gen", "gen/m.py")[0] == 1
    assert run(capsys, "check", "--exclude", "gen", "--force-exclude", "gen/m.py")[0] == 0


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_gitignore_is_respected(project, capsys, print_code):
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("build/\n*_pb2.py\n")
    (project / "pkg").mkdir()
    (project / "pkg" / ".gitignore").write_text("local.py\n")
    for rel in ("build/m.py", "pkg/a_pb2.py", "pkg/local.py", "pkg/m.py", "m.py"):
        (project / rel).parent.mkdir(exist_ok=True)
        (project / rel).write_text(SAMPLE)

    def reported(*flags):
        _, out, _ = run(capsys, "check", *flags, ".")
        return sorted(line.split(":")[0] for line in out.splitlines() if ":6:9:" in line)

    assert reported() == ["m.py", "pkg/m.py"]
    assert reported("--no-respect-gitignore") == \
        ["build/m.py", "m.py", "pkg/a_pb2.py", "pkg/local.py", "pkg/m.py"]
    assert run(capsys, "check", "pkg/local.py")[0] == 1  # named: processed
    assert run(capsys, "check", "--force-exclude", "pkg/local.py")[0] == 0
    assert run(capsys, "fix", ".")[0] == 0
    assert (project / "build" / "m.py").read_text() == SAMPLE
    # A directory named on the command line is walked even where git ignores it.
    _, out, _ = run(capsys, "check", "build")
    assert f"build/m.py:6:9: {print_code}" in out


def test_check_fix_and_show_fixes(project, capsys, print_code):
    (project / "m.py").write_text(SAMPLE)
    (project / "bad.py").write_text("def f(:\n")
    rc, out, _ = run(capsys, "check", "--fix", "--show-fixes", ".")
    assert rc == 1  # the syntax error is left
    assert (project / "m.py").read_bytes() == fixed(SAMPLE.encode())
    name = {r["code"]: r["name"] for r in graphmend.rules()}[print_code]
    assert f"Fixed 1 finding:\n- m.py:\n    1 \u00d7 {print_code} ({name})\n" in out
    assert "bad.py:1:7: invalid-syntax" in out
    assert "Found 2 findings (1 fixed, 1 remaining)." in out
    (project / "bad.py").unlink()
    (project / "n.py").write_text(SAMPLE)
    rc, out, _ = run(capsys, "check", "--fix", "--output-format", "json", ".")
    assert rc == 0 and json.loads(out) == []
    (project / "o.py").write_text(SAMPLE)
    rc, out, _ = run(capsys, "fix", "--show-fixes", "o.py")
    assert rc == 0 and f"- o.py:\n    1 \u00d7 {print_code} ({name})" in out


# ---------------------------------------------------------------- pre-commit

def _pre_commit():
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        pytest.skip("pre-commit is not installed (requirements/dev.txt)")
    if shutil.which("git") is None:
        pytest.skip("needs git")


def test_pre_commit_hooks_manifest():
    import yaml

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"graphmend-check", "graphmend-fix"}
    assert hooks["graphmend-check"]["entry"].startswith("graphmend check")
    assert hooks["graphmend-fix"]["entry"].startswith("graphmend fix")


SHIM_BACKEND = '''\
import base64, hashlib, os, zipfile

NAME = "graphmend_hooks-0"
FILES = {{
    f"{{NAME}}.dist-info/METADATA": "Metadata-Version: 2.1\\nName: graphmend-hooks\\n"
                                   "Version: 0\\nRequires-Dist: graphmend=={version}\\n",
    f"{{NAME}}.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: shim\\n"
                                "Root-Is-Purelib: true\\nTag: py3-none-any\\n",
}}


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = f"{{NAME}}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as whl:
        for path, text in FILES.items():
            data = text.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{{path}},sha256={{digest.decode()}},{{len(data)}}")
            whl.writestr(path, data)
        record.append(f"{{NAME}}.dist-info/RECORD,,")
        whl.writestr(f"{{NAME}}.dist-info/RECORD", "\\n".join(record) + "\\n")
    return name
'''


def test_pre_commit_try_repo(tmp_path, print_code):
    """pre-commit's own `try-repo` runs both hooks on a scratch repository.

    pre-commit installs a `language: python` hook repository with `pip
    install .` in a fresh virtualenv; building graphmend's C++ core there
    takes minutes and needs the network, so the hook repository here is
    this checkout's .pre-commit-hooks.yaml (verbatim) beside a two-line
    package that depends on graphmend, which pip takes, offline, from a
    wheel of this checkout (built with its existing build directory). What
    is exercised is the manifest itself: hook ids, entries, language, file
    types, and how pre-commit passes files and reads the exit status."""
    _pre_commit()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUALENV_"))}
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation",
                    "--no-deps", "--disable-pip-version-check", "-w", str(wheels), str(ROOT)],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels),
               PRE_COMMIT_HOME=str(tmp_path / "cache"), GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", hooks)
    # An in-tree build backend: pip builds the package without installing
    # any build requirement (offline, in seconds).
    (hooks / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "shim_backend"\nbackend-path = ["."]\n')
    (hooks / "shim_backend.py").write_text(SHIM_BACKEND.format(version=graphmend.__version__))
    git = ["git", "-c", "init.defaultBranch=main"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "hooks"]):
        subprocess.run([*git, *cmd], cwd=hooks, check=True, env=env)
    project = tmp_path / "project"
    project.mkdir()
    (project / "m.py").write_text(SAMPLE)
    (project / "ok.py").write_text(CLEAN)
    for cmd in (["init", "-q"], ["add", "-A"]):
        subprocess.run([*git, *cmd], cwd=project, check=True, env=env)

    def try_repo(hook):
        return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hooks), hook,
                               "--all-files"], cwd=project, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=300, check=False)

    proc = try_repo("graphmend-check")
    assert proc.returncode == 1, proc.stdout.decode()
    assert f"m.py:6:9: {print_code}".encode() in proc.stdout
    proc = try_repo("graphmend-fix")
    assert proc.returncode == 1, proc.stdout.decode()  # files were modified
    assert (project / "m.py").read_bytes() == fixed(SAMPLE.encode())
    assert (project / "ok.py").read_text() == CLEAN
