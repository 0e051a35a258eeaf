"""Package-wide regions: `check`/`fix` on a directory see what compiled code
in one module reaches in another (a helper, a mixin method through a base in
another file), leave alone what no compiled code reaches, and a file checked
alone keeps the one-file behaviour.

The recall oracle is Python itself: every transformers function that runs
while a real model's forward runs must be a region of the package analysis
(bench/region_recall.py, whose measurement this test calls, prints the same
over more models)."""

from __future__ import annotations

import os
import sys

import pytest
from _cli_cases import run
from graphmend import lint

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import region_recall  # noqa: E402 - bench/region_recall.py: the same recall measurement

MODEL = (
    "import torch\n"
    "from torch import nn\n"
    "from .utils.helpers import scale, Mixin\n"
    "\n"
    "\n"
    "class Net(Mixin, nn.Module):\n"
    "    def forward(self, x):\n"
    "        return scale(x) + self.shift(x)\n"
)
HELPERS = (
    "def scale(x):\n"
    "    print(\"scaling\", x.shape)\n"
    "    return x * 2\n"
    "\n"
    "\n"
    "def unused(x):\n"
    "    print(\"never compiled\")\n"
    "    return x\n"
    "\n"
    "\n"
    "class Mixin:\n"
    "    def __init__(self):\n"
    "        print(\"init runs eagerly\")\n"
    "\n"
    "    def shift(self, x):\n"
    "        print(\"shift\")\n"
    "        return x + 1\n"
)


@pytest.fixture
def package(tmp_path):
    root = tmp_path / "mypkg"
    (root / "utils").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "utils" / "__init__.py").write_text("")
    (root / "model.py").write_text(MODEL)
    (root / "utils" / "helpers.py").write_text(HELPERS)
    return root


def test_directory_check_reaches_helpers_and_mixins_only(package, capsys):
    rc, out, _ = run(capsys, "check", "--output-format", "json", package)
    import json

    lines = sorted(d["line"] for d in json.loads(out))
    assert rc == 1
    # scale's print (line 2) and the mixin's shift (line 16); not unused
    # (line 7), not __init__ (line 13)
    assert lines == [2, 16]


def test_package_check_reads_and_checks_each_file_once(package, capsys, monkeypatch):
    # `check` on a package settles every file in the package analysis' own
    # pass (read once, no second run_check), and each file gets exactly what
    # run_check gives it alone with the package's roots: one with no region
    # (plain.py) nothing, one holding a suppression comment, one that does
    # not parse.
    (package / "plain.py").write_text("def f():\n    print('eager only')\n")
    (package / "quiet.py").write_text("x = 1  # graphmend: ignore[GM201]\n")
    (package / "broken.py").write_text("def f(:\n")
    files = sorted(str(p) for p in package.rglob("*.py"))
    scan = lint.package_scan(lint.read_sources(files))
    expected = set()
    for path in files:
        with open(path, "rb") as handle:
            res = lint.run_check(handle.read(), regions="package", extra_roots=scan[path][0])
        if res["syntax_error"] is not None:
            expected.add((os.path.basename(path), res["syntax_error"]["line"], "invalid-syntax"))
        expected.update((os.path.basename(path), d["line"], d["code"])
                        for d in res["diagnostics"])

    checked, reads = [], []
    real_check, real_read = lint.run_check, lint.read_regular
    monkeypatch.setattr(lint, "run_check", lambda data, **kw: checked.append(data)
                        or real_check(data, **kw))
    monkeypatch.setattr(lint, "read_regular", lambda path: reads.append(path)
                        or real_read(path))
    rc, out, _ = run(capsys, "check", "--output-format", "json", package)
    import json

    found = {(os.path.basename(d["path"]), d["line"], d["code"]) for d in json.loads(out)}
    assert rc == 1
    assert ("helpers.py", 2, "GM201") in found and ("broken.py", 1, "invalid-syntax") in found
    assert not any(name == "plain.py" for name, *_ in found)
    assert found == expected
    assert checked == []
    assert sorted(os.path.abspath(p) for p in reads) == files


def test_one_file_alone_keeps_the_one_file_regions(package, capsys):
    rc, out, _ = run(capsys, "check", package / "utils" / "helpers.py")
    assert rc == 0, out


def test_regions_reachable_and_all(package, capsys):
    rc, out, _ = run(capsys, "check", "--regions", "reachable", package)
    assert rc == 0, out
    rc, out, _ = run(capsys, "check", "--regions", "all", "--output-format", "json", package)
    import json

    assert len(json.loads(out)) == 4


def test_fix_directory_mends_what_is_reached(package, capsys):
    rc, _, err = run(capsys, "fix", package)
    text = (package / "utils" / "helpers.py").read_text()
    assert "_graphmend_rt.print(\"scaling\"" in text
    assert "print(\"never compiled\")" in text and "print(\"init runs eagerly\")" in text


def test_module_names(package):
    assert lint.module_name(str(package / "utils" / "helpers.py"))[1:] == ("mypkg.utils.helpers", False)
    assert lint.module_name(str(package / "utils" / "__init__.py"))[1:] == ("mypkg.utils", True)


def test_every_function_a_real_forward_runs_is_reached():
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    root = os.path.dirname(transformers.__file__)
    reached_set = region_recall.reached_functions(root, lint.read_sources(lint.python_files(root)))

    config = transformers.BartConfig(vocab_size=64, d_model=16, encoder_layers=1, decoder_layers=1,
                                     encoder_attention_heads=2, decoder_attention_heads=2,
                                     encoder_ffn_dim=32, decoder_ffn_dim=32,
                                     max_position_embeddings=64)
    torch.manual_seed(0)
    model = transformers.BartForConditionalGeneration(config).eval()
    ids = torch.randint(3, 64, (2, 8))
    ran = region_recall.ran_in_forward(model, {"input_ids": ids, "decoder_input_ids": ids}, root)
    assert len(ran) > 30
    assert sorted(ran - reached_set) == []
    # and it is not library mode: config validators and __init__s are left alone
    assert ("models/bart/modeling_bart.py", "BartAttention.__init__") not in reached_set


def test_import_hook_mends_the_package_regions(package, monkeypatch, tmp_path):
    import importlib

    import graphmend
    from graphmend import hook

    monkeypatch.syspath_prepend(str(package.parent))
    finder = graphmend.install(["mypkg"], cache_dir=tmp_path / "cache")
    try:
        model = importlib.import_module("mypkg.model")
        helpers = sys.modules["mypkg.utils.helpers"]
        mended = helpers.__spec__.loader.get_mended_source("mypkg.utils.helpers").decode()
        assert getattr(helpers, "__graphmend_mended__", False)
        assert "_graphmend_rt.print(\"scaling\"" in mended
        assert "print(\"never compiled\")" in mended and "print(\"init runs eagerly\")" in mended
        assert finder.extra_roots(helpers.__file__) == ["Mixin.shift", "scale"]
        assert model.Net is not None
    finally:
        hook.uninstall()
        for name in [m for m in sys.modules if m == "mypkg" or m.startswith("mypkg.")]:
            del sys.modules[name]
