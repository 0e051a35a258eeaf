import pytest

from _cli_cases import PRINT_LINE, SAMPLE


def cpython_interpreters():
    """Every CPython 3.8–3.13 on the machine, by (major, minor)."""
    from graphmend._interpreters import cpython_interpreters as find

    return find()


@pytest.fixture(scope="session")
def interpreters():
    return cpython_interpreters()


@pytest.fixture(scope="module")
def print_code():
    """The code of the rule that flags SAMPLE's print (with a fix)."""
    import graphmend
    from graphmend import _core

    assert _core.rules(), "the build ships no rules (graphmend._core.rules() is empty)"
    diags = graphmend.check_source(SAMPLE)
    codes = [d.code for d in diags if d.line == PRINT_LINE and d.fix_applies]
    assert codes == ["GM201"], ("no shipped rule flags print() in forward with a fix; rules: "
                                + ", ".join(r["code"] for r in _core.rules()))
    return codes[0]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project directory (with an empty pyproject.toml so no
    configuration above tmp_path applies) as the working directory."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path
