"""A fixed sample of the differential sweep (tests/differential), run through
graphmend's real front end: the Python extension
(graphmend._frontend.dump_ast) when it is importable, else the gm_dump tool
from a build directory. Every file of the sample is compared under every
CPython 3.8–3.13 on the machine; any difference fails (at this size the
0.1% f-string-position allowance of the full sweep is zero files).

The full sweep: python tests/differential/differential.py --show-diffs 20
"""

import importlib.util
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DIFFERENTIAL = os.path.join(HERE, "..", "differential")
sys.path.insert(0, DIFFERENTIAL)

import differential  # noqa: E402

SAMPLE = int(os.environ.get("GRAPHMEND_DIFF_SAMPLE", "240"))
SEED = 20240


def _backend_args():
    if importlib.util.find_spec("graphmend") is not None:
        try:
            import graphmend._core  # noqa: F401
            return ["--use-extension", "--extension-python", sys.executable]
        except ImportError:
            pass
    exe = differential.default_gm_dump()
    if exe:
        return ["--gm-dump", exe]
    return None


def test_differential_sample(capsys):
    if not differential.find_interpreters():
        pytest.skip("no CPython 3.8–3.13 under " + differential.PYENV)
    backend = _backend_args()
    if backend is None:
        pytest.skip("neither the graphmend extension nor a built gm_dump is available")
    rc = differential.main(backend + ["--sample", str(SAMPLE), "--seed", str(SEED), "--show-diffs", "10",
                                      "--jobs", str(min(4, os.cpu_count() or 1)), "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0, "graphmend differs from CPython on the fixed sample:\n" + out


def test_dumper_replay_on_tricky_snippets(tmp_path, capsys):
    """dump.cpp/repr.cpp alone: CPython's own trees of the tricky snippets
    (every code point, floats, 3.8 slices, ...) rebuilt and dumped in C++."""
    exe = differential.default_gm_dump()
    if exe is None or not differential.find_interpreters():
        pytest.skip("needs a built gm_dump and pyenv CPythons")
    import tricky

    tricky.write_snippets(str(tmp_path))
    rc = differential.main(["--gm-dump", exe, "--check-dumper", "--paths", str(tmp_path), "--no-cache",
                            "--show-diffs", "10", "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0, out
