import glob
import os
import sys

import pytest


def cpython_interpreters():
    """Every CPython 3.8–3.13 on the machine, by (major, minor)."""
    found = {}
    for path in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))):
        parts = path.split("/")[-3].split(".")
        version = (int(parts[0]), int(parts[1]))
        if (3, 8) <= version <= (3, 13):
            found[version] = path
    found.setdefault(sys.version_info[:2], sys.executable)
    return dict(sorted(found.items()))


@pytest.fixture(scope="session")
def interpreters():
    return cpython_interpreters()
