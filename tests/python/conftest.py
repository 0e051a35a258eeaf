import pytest


def cpython_interpreters():
    """Every CPython 3.8–3.13 on the machine, by (major, minor)."""
    from graphmend._interpreters import cpython_interpreters as find

    return find()


@pytest.fixture(scope="session")
def interpreters():
    return cpython_interpreters()
