"""A file's diagnostics and fixes never depend on what else was processed.

For every ``.py`` file of transformers 4.52.4 (the paper's version, in
``.venv-tf452``, created by scripts/setup.sh; or $GRAPHMEND_TF452_PYTHON) and
of the transformers in this environment (5.x), the results (diagnostics with
their safe and unsafe fixes, and the mended text with safe and with unsafe
fixes, under the default regions and under ``regions="all"`` as the import
hook uses) are hashed per file in four runs, each a fresh process
(_order_worker.py): every file alone on a fresh thread, all of them in
sorted order on one thread, in reverse order on one thread, and shuffled
(fixed seed) on two threads. All four must agree file by file.

The import hook mends modules one after another on one thread; issue 11
found a legality fact cached by the tree's address that leaked from one file
into the next and made an unsafe rewrite look safe.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("_order_worker.py")
MODES = ("alone", "forward", "reverse", "shuffled")

_FIND = ("import importlib.metadata as md, importlib.util as u; "
         "s = u.find_spec('transformers'); "
         "print(md.version('transformers')); print(s.submodule_search_locations[0])")


def _transformers(python: str) -> tuple[str, Path]:
    p = subprocess.run([python, "-c", _FIND], capture_output=True, text=True, check=False)
    assert p.returncode == 0, f"{python} has no transformers:\n{p.stderr[-2000:]}"
    version, where = p.stdout.split("\n")[:2]
    return version, Path(where)


def _tf452_python() -> str:
    py = os.environ.get("GRAPHMEND_TF452_PYTHON") or str(REPO / ".venv-tf452" / "bin" / "python")
    if not os.path.exists(py):
        pytest.fail(f"no transformers 4.52.4 environment at {py}: run scripts/setup.sh (it creates "
                    ".venv-tf452) or set GRAPHMEND_TF452_PYTHON")
    return py


@pytest.fixture(scope="module")
def corpora() -> dict[str, Path]:
    old_version, old = _transformers(_tf452_python())
    new_version, new = _transformers(sys.executable)
    assert old_version == "4.52.4", old_version
    assert new_version.split(".")[0] == "5", new_version
    return {old_version: old, new_version: new}


def _run(root: Path, mode: str) -> dict[str, str]:
    p = subprocess.run([sys.executable, str(WORKER), str(root), mode], capture_output=True,
                       text=True, cwd=REPO, check=False)
    assert p.returncode == 0, f"{mode} over {root}:\n{p.stderr[-3000:]}"
    return json.loads(p.stdout)


def test_results_do_not_depend_on_order_or_threads(corpora):
    jobs = [(version, root, mode) for version, root in corpora.items() for mode in MODES]
    with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        runs = list(pool.map(lambda j: _run(j[1], j[2]), jobs))
    by_version: dict[str, dict[str, dict[str, str]]] = {}
    for (version, _, mode), digests in zip(jobs, runs):
        by_version.setdefault(version, {})[mode] = digests
    for version, modes in by_version.items():
        alone = modes["alone"]
        assert len(alone) > 1000, (version, len(alone))  # the whole package, not a stub
        for mode in MODES[1:]:
            assert modes[mode].keys() == alone.keys(), (version, mode)
            differ = sorted(f for f in alone if modes[mode][f] != alone[f])
            assert not differ, (f"transformers {version}: {len(differ)} files get other results "
                                f"when run {mode} than alone, e.g. {differ[:5]}")
