"""Long expression chains and `elif` chains (issue 14 item 1): check, fix,
check_source and fix_source finish (they used to die with SIGSEGV), in the
main thread at 20,000 terms and in a 256 KB thread at 1,000, and one such
file in a directory does not stop the others from being reported.

Each case runs in a child interpreter, so a crash fails the test instead of
killing pytest.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHAINS = {
    "sum": ("x", "+x"),
    "attr": ("a", ".b"),
    "call": ("f()", "()"),
    "subscript": ("a[0]", "[0]"),
}


def chain_source(kind: str, n: int) -> str:
    first, more = CHAINS[kind]
    c = first + more * (n - 1)
    return (
        "import torch\n"
        f"y = {c}\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        x = torch.relu(x)\n"
        f"        y = {c}\n"
        f"        if {c}:\n"
        "            print(y)\n"
        "        return y\n"
    )


def elif_source(n: int) -> str:
    lines = [
        "import torch",
        "class M(torch.nn.Module):",
        "    def forward(self, x):",
        "        h = torch.relu(x).sum()",
        "        if h > 0:",
        "            x = x + 1",
    ]
    for i in range(1, n):
        lines += [f"        elif h > {i}:", f"            x = x + {i}"]
    lines.append("        return x")
    return "\n".join(lines) + "\n"


SCRIPT = textwrap.dedent(
    """
    import sys, threading
    import graphmend
    src = open(sys.argv[1], encoding="utf-8").read()
    stack = int(sys.argv[2])
    result = {}

    def work():
        d = graphmend.check_source(src)
        f = graphmend.fix_source(src)
        assert f.status in ("fixed", "unchanged"), f.status
        if stack:  # CPython compiles 1,000 terms in this thread (not 20,000 at all)
            compile(f.source, "<fixed>", "exec")
        result["n"] = len(d)

    if stack:
        threading.stack_size(stack)
        t = threading.Thread(target=work)
        t.start()
        t.join()
    else:
        work()
    print("ok", result["n"])
    """
)


def run_api(tmp_path, source: str, stack: int) -> subprocess.CompletedProcess:
    p = tmp_path / "deep.py"
    p.write_text(source, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(p), str(stack)],
        capture_output=True, text=True, timeout=600,
    )


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphmend", *map(str, args)],
        capture_output=True, text=True, timeout=600,
    )


@pytest.mark.parametrize("kind", sorted(CHAINS))
def test_chain_20000_main_thread(tmp_path, kind):
    r = run_api(tmp_path, chain_source(kind, 20000), 0)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("ok")


@pytest.mark.parametrize("kind", sorted(CHAINS))
def test_chain_1000_small_thread(tmp_path, kind):
    r = run_api(tmp_path, chain_source(kind, 1000), 256 * 1024)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("ok")


def test_elif_20000_main_thread(tmp_path):
    r = run_api(tmp_path, elif_source(20000), 0)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[0] == "ok" and int(r.stdout.split()[1]) > 0


def test_elif_1000_small_thread(tmp_path):
    r = run_api(tmp_path, elif_source(1000), 256 * 1024)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[0] == "ok" and int(r.stdout.split()[1]) > 0


def test_cli_check_and_fix(tmp_path):
    p = tmp_path / "deep.py"
    p.write_text(chain_source("sum", 20000), encoding="utf-8")
    r = run_cli("check", p)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    r = run_cli("fix", p)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert "did not converge" not in r.stderr


def test_directory_with_one_deep_file_reports_the_others(tmp_path):
    model = (
        "import torch\n\n\nclass M(torch.nn.Module):\n"
        "    def forward(self, x):\n        print(x)\n        return x + 1\n"
    )
    (tmp_path / "a_model.py").write_text(model, encoding="utf-8")
    (tmp_path / "b_deep.py").write_text(chain_source("attr", 20000), encoding="utf-8")
    (tmp_path / "c_model.py").write_text(model, encoding="utf-8")
    r = run_cli("check", "--output-format", "json", tmp_path)
    assert r.returncode == 1, r.stderr[-2000:]
    assert "a_model.py" in r.stdout and "c_model.py" in r.stdout
