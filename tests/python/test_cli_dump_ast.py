"""`graphmend dump-ast`: the user-facing front end, against CPython's `ast`."""

import ast
import subprocess
import sys

import pytest

ORACLE = ("import ast,sys;"
          "sys.stdout.write(ast.dump(ast.parse(sys.stdin.buffer.read()),"
          "include_attributes=True))")


def graphmend(*args, stdin=b"", timeout=120):
    return subprocess.run([sys.executable, "-m", "graphmend", *args], input=stdin,
                          capture_output=True, timeout=timeout)


def oracle(python, source: bytes):
    return subprocess.run([python, "-c", ORACLE], input=source, capture_output=True)


SNIPPETS = [
    b"x = 1\n",
    b"def f(a, /, b=2, *c, d, **e) -> int:\n    return u's'\n",
    b"f(x for x in y)\na[1:2, 3]\nb'x' b'y'\n",
    b"async def g():\n    async with a as b, c:\n        await x\n",
    b"class C(B, metaclass=M):\n    @dec\n    def m(self): ...\n",
    b"try:\n    pass\nexcept (A, B) as e:\n    raise X from e\nelse:\n    pass\nfinally:\n    del a[0], b.c\n",
    b"x = [i ** 2 for i in range(10) if i % 2] + {k: v for k, v in d.items()}\n",
    b"lambda *a, k=1, **kw: (yield)\n",
    b"0x_ff + 1_000.5e-3j + 0o17 + 0b1\n",
    b"print(f'{x!r:>{w}} and {y=}')\n",
]


@pytest.mark.parametrize("source", SNIPPETS)
def test_dump_matches_cpython_in_every_version(source, interpreters, tmp_path):
    path = tmp_path / "snippet.py"
    path.write_bytes(source)
    for (major, minor), python in interpreters.items():
        expected = oracle(python, source)
        result = graphmend("dump-ast", "--python-version", f"{major}.{minor}", str(path))
        if expected.returncode != 0:
            assert result.returncode == 2, (minor, result.stdout)
            continue
        assert result.returncode == 0, (minor, result.stderr.decode())
        assert result.stdout.decode().rstrip("\n") == expected.stdout.decode(), minor


def test_reads_standard_input():
    result = graphmend("dump-ast", "-", stdin=b"x\n")
    assert result.returncode == 0
    assert result.stdout.decode().rstrip("\n") == ast.dump(ast.parse("x\n"), include_attributes=True) \
        or sys.version_info[:2] > (3, 13)


def test_version_gating_rejects_newer_syntax(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"match x:\n    case 1:\n        pass\n")
    assert graphmend("dump-ast", "--python-version", "3.9", str(path)).returncode == 2
    assert graphmend("dump-ast", "--python-version", "3.10", str(path)).returncode == 0
    path.write_bytes(b"try:\n    pass\nexcept* E:\n    pass\n")
    assert graphmend("dump-ast", "--python-version", "3.10", str(path)).returncode == 2
    assert graphmend("dump-ast", "--python-version", "3.11", str(path)).returncode == 0
    path.write_bytes(b"def f[T](x: T) -> T: ...\n")
    assert graphmend("dump-ast", "--python-version", "3.11", str(path)).returncode == 2
    assert graphmend("dump-ast", "--python-version", "3.12", str(path)).returncode == 0
    path.write_bytes(b"type A[T = int] = list[T]\n")
    assert graphmend("dump-ast", "--python-version", "3.12", str(path)).returncode == 2
    assert graphmend("dump-ast", "--python-version", "3.13", str(path)).returncode == 0
    path.write_bytes(b"f'{'a'}'\n")
    assert graphmend("dump-ast", "--python-version", "3.11", str(path)).returncode == 2
    assert graphmend("dump-ast", "--python-version", "3.12", str(path)).returncode == 0


@pytest.mark.parametrize("name,data", [
    ("empty", b""),
    ("only comments", b"# one\n# two\n"),
    ("bom", b"\xef\xbb\xbfx = 1\n"),
    ("latin-1 cookie", b"# -*- coding: latin-1 -*-\ns = '\xe9'\n"),
    ("crlf", b"if x:\r\n    y = 1\r\n"),
    ("cr", b"if x:\r    y = 1\r"),
])
def test_accepts_unusual_but_valid_files(name, data, tmp_path):
    path = tmp_path / "f.py"
    path.write_bytes(data)
    result = graphmend("dump-ast", str(path))
    assert result.returncode == 0, result.stderr
    expected = ast.dump(ast.parse(data), include_attributes=True)
    if sys.version_info[:2] <= (3, 13):
        assert result.stdout.decode().rstrip("\n") == expected


@pytest.mark.parametrize("name,data", [
    ("nul byte", b"x = 1\x00\n"),
    ("invalid utf-8", b"s = '\xff\xfe'\n"),
    ("unterminated string", b"s = 'abc"),
    ("unterminated triple-quoted string", b's = """abc\n'),
    ("unterminated f-string", b"s = f'{x"),
    ("inconsistent tabs", b"if x:\n\ty = 1\n        z = 2\n"),
    ("100,000 nested brackets", b"(" * 100_000),
    ("deeply nested unary", b"-" * 100_000 + b"x\n"),
    ("deeply nested blocks", b"".join(b"    " * i + b"if x:\n" for i in range(200)) + b"    " * 200 + b"pass\n"),
    ("unknown encoding", b"# coding: klingon\nx = 1\n"),
])
def test_rejects_bad_input_cleanly(name, data, tmp_path):
    path = tmp_path / "bad.py"
    path.write_bytes(data)
    result = graphmend("dump-ast", str(path))
    assert result.returncode == 2, (name, result.stdout[:200])
    assert result.stdout == b""
    message = result.stderr.decode()
    assert message.startswith(f"{path}:"), message
    line, col = message.split(":")[1:3]
    assert line.isdigit() and col.isdigit(), message
    assert "Traceback" not in message


def test_unreadable_path_is_a_clear_error(tmp_path):
    result = graphmend("dump-ast", str(tmp_path / "missing.py"))
    assert result.returncode == 2
    assert "cannot read" in result.stderr.decode()


def test_bad_version_is_a_usage_error(tmp_path):
    path = tmp_path / "f.py"
    path.write_bytes(b"x\n")
    result = graphmend("dump-ast", "--python-version", "2.7", str(path))
    assert result.returncode == 2
    assert "3.8 to 3.13" in result.stderr.decode()


def test_large_file_is_linear(tmp_path):
    # 5 MB of ordinary code parses (no quadratic behaviour, no crash).
    chunk = b"def f(a, b=1):\n    return [a * i + b for i in range(10)]  # comment\n"
    path = tmp_path / "big.py"
    path.write_bytes(chunk * (5_000_000 // len(chunk)))
    result = graphmend("dump-ast", str(path), timeout=600)
    assert result.returncode == 0, result.stderr[:500]
