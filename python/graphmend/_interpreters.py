"""The CPython 3.8–3.13 interpreters on this machine: the parser oracles.

Used by the demo (scripts/demo.py), the tests (tests/python/conftest.py) and
the differential sweep (tests/differential/differential.py), which compare
graphmend's tree with each version's own ``ast``.
"""

from __future__ import annotations

import glob
import os
import sys

#: Where pyenv keeps its versions (override with $GRAPHMEND_PYENV).
PYENV = os.environ.get("GRAPHMEND_PYENV", os.path.expanduser("~/.pyenv/versions"))


def cpython_interpreters(include_current: bool = True) -> dict[tuple[int, int], str]:
    """{(3, minor): python executable}, sorted, for every CPython 3.8–3.13 under
    pyenv (the newest patch release of each minor; plain ``3.X.Y`` directories
    only, not free-threaded or other variants), plus this interpreter when its
    version is missing and ``include_current``."""
    found: dict[tuple[int, int], str] = {}
    for minor in range(8, 14):
        cands = [c for c in glob.glob(os.path.join(PYENV, f"3.{minor}.*", "bin", "python"))
                 if _release(c) is not None]
        if cands:
            found[(3, minor)] = max(cands, key=_release)
    here = sys.version_info[:2]
    if include_current and (3, 8) <= here <= (3, 13):
        found.setdefault(here, sys.executable)
    return dict(sorted(found.items()))


def full_version(exe: str) -> str:
    """"3.12.1" for an executable under pyenv's 3.12.1 directory."""
    return os.path.basename(os.path.dirname(os.path.dirname(exe)))


def _release(exe: str):
    parts = full_version(exe).split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)
