"""Issue 14 items 6 and 7 through the API and the CLI: nested fixes converge
instead of reverting the file, and fixes keep the user's identifier bytes
(UTF-8 `ﬁle`, latin-1 `µ`), never their NFKC form."""

from __future__ import annotations

import graphmend
from graphmend import cli

HEAD = "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        h = torch.relu(x)\n"


def nested_ifs(n: int) -> str:
    body = "".join(" " * (8 + 4 * i) + f"if h.sum() > {i}:\n" for i in range(n))
    return HEAD + body + " " * (8 + 4 * n) + "h = h * 2\n        return h\n"


def chained_ifexps(n: int) -> str:
    e = "".join(f"h * {i + 1} if h.sum() > {i} else " for i in range(n))
    return HEAD + f"        y = {e}h\n        return y\n"


def predicated(name: str) -> str:
    return (
        "import torch\n\n\nclass M(torch.nn.Module):\n"
        f"    def forward(self, {name}):\n"
        f"        h = torch.relu({name})\n"
        f"        if h.sum() > 0:\n            {name} = h * 2\n"
        f"        else:\n            {name} = h + 1\n"
        f"        return {name}\n"
    )


def test_nested_ifs_converge():
    r = graphmend.fix_source(nested_ifs(11), unsafe=True)
    assert r.status == "fixed"
    assert r.applied_per_code == {"GM101": 11}
    assert graphmend.check_source(r.source) == []


def test_chained_ifexps_converge():
    r = graphmend.fix_source(chained_ifexps(16), unsafe=True)
    assert r.status == "fixed"
    assert r.applied_per_code == {"GM102": 16}
    compile(r.source, "<fixed>", "exec")


def test_fix_keeps_ligature_spelling():
    r = graphmend.fix_source(predicated("ﬁle"), unsafe=True)
    assert r.status == "fixed"
    assert "file" not in r.source
    assert "ﬁle = _graphmend_rt.where(" in r.source


def test_fix_latin1_micro_sign(tmp_path, capsys):
    p = tmp_path / "m.py"
    data = ("# -*- coding: latin-1 -*-\n" + predicated("µ")).encode("latin-1")
    p.write_bytes(data)
    rc = cli.main(["fix", "--unsafe-fixes", str(p)])
    err = capsys.readouterr().err
    assert rc == 0, err
    out = p.read_bytes().decode("latin-1")
    assert "µ = _graphmend_rt.where(" in out
    compile(p.read_bytes(), str(p), "exec")
