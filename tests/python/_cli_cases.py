"""What the CLI tests share: a module whose `forward` prints (a GM201 finding
with a fix), a clean one, and running the CLI in-process."""

from __future__ import annotations

from graphmend import cli

SAMPLE = (
    "import torch\n"
    "\n"
    "\n"
    "class M(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        print(\"x\", x)\n"
    "        return x + 1\n"
)
CLEAN = "import torch\n\n\ndef f(x):\n    return x + 1\n"
PRINT_LINE = 6
PRINT_COL = 9


def run(capsys, *args):
    """(exit status, stdout, stderr) of `graphmend ARGS` run in this process."""
    try:
        rc = cli.main([str(a) for a in args])
    except SystemExit as exc:  # argparse usage errors
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err
