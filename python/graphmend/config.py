"""``[tool.graphmend]`` in ``pyproject.toml``.

Keys (all optional)::

    [tool.graphmend]
    select = ["GM1", "GM201"]     # rule selectors (default: ALL)
    ignore = ["GM105"]
    unsafe-fixes = false
    exclude = ["build/*", "tests/fixtures/**"]   # glob patterns
    extend-exclude = ["generated"]               # more of them
    python-version = "3.11"

The nearest ``pyproject.toml`` that has a ``[tool.graphmend]`` table wins,
found by walking up from each checked path (or from the current directory).
Command-line flags override it: ``--select`` replaces the file's
``select`` and drops its ``ignore``; ``--ignore`` alone adds to the file's
``ignore``; ``--python-version`` and ``--[no-]unsafe-fixes`` replace;
``--exclude`` replaces ``exclude`` (``extend-exclude`` still applies) and
``--extend-exclude`` adds patterns (both relative to the working directory).
A ``tool`` or ``tool.graphmend`` that is not a table, or a key of the wrong
type, is a ConfigError naming the file and key (exit status 2).
``exclude`` patterns are matched against the
path relative to the directory of that ``pyproject.toml`` and against each
file or directory name (``fnmatch``). On Python < 3.11 without ``tomli``,
configuration files are ignored with a warning.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from functools import lru_cache

try:  # Python 3.11+
    import tomllib as _toml
except ImportError:  # pragma: no cover - older interpreters
    try:
        import tomli as _toml  # type: ignore[no-redef]
    except ImportError:
        _toml = None

KNOWN_KEYS = {"select", "ignore", "unsafe-fixes", "exclude", "python-version",
              "extend-exclude", "regions"}


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Config:
    root: str | None = None  # directory of the pyproject.toml (None: no file)
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool | None = None
    exclude: tuple[str, ...] = ()
    python_version: str | None = None
    regions: str | None = None  # "package" | "reachable" | "all"
    extend_exclude: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=(), compare=False)


def _toml_type(value) -> str:
    if isinstance(value, list):
        return "an array of tables ([[...]])" if value and all(
            isinstance(v, dict) for v in value) else "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


def _list(value, key: str, path: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.graphmend] {key} must be a list of strings")
    return tuple(value)


def load(pyproject: str) -> Config | None:
    """The [tool.graphmend] table of one file, or None when it has none."""
    try:
        st = os.stat(pyproject)
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        key = None
    return _load(os.path.abspath(pyproject), key)


@lru_cache(maxsize=256)
def _load(pyproject: str, _stamp) -> Config | None:
    if _toml is None:
        try:
            with open(pyproject, "rb") as handle:
                if b"tool.graphmend" not in handle.read():
                    return None
        except OSError:
            return None
        return Config(root=os.path.dirname(pyproject), warnings=(
            f"{pyproject}: cannot read TOML on Python {sys.version_info[0]}."
            f"{sys.version_info[1]} without the 'tomli' package; configuration ignored",))
    try:
        with open(pyproject, "rb") as handle:
            data = _toml.load(handle)
    except OSError as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{pyproject}: key 'tool' must be a table ([tool]), not "
                          f"{_toml_type(tool)}")
    table = tool.get("graphmend")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: key 'tool.graphmend' must be a table "
                          f"([tool.graphmend]), not {_toml_type(table)}")
    warnings = tuple(f"{pyproject}: unknown key [tool.graphmend] {k!r}"
                     for k in table if k not in KNOWN_KEYS)
    unsafe = table.get("unsafe-fixes")
    if unsafe is not None and not isinstance(unsafe, bool):
        raise ConfigError(f"{pyproject}: [tool.graphmend] unsafe-fixes must be true or false")
    regions = table.get("regions")
    if regions is not None and regions not in ("package", "reachable", "all"):
        raise ConfigError(f"{pyproject}: [tool.graphmend] regions must be \"package\", "
                          "\"reachable\" or \"all\"")
    version = table.get("python-version")
    if version is not None and not isinstance(version, str):
        raise ConfigError(f"{pyproject}: [tool.graphmend] python-version must be a string "
                          "like \"3.11\"")
    return Config(
        root=os.path.dirname(pyproject),
        select=_list(table["select"], "select", pyproject) if "select" in table else None,
        ignore=_list(table.get("ignore", []), "ignore", pyproject),
        unsafe_fixes=unsafe,
        exclude=_list(table.get("exclude", []), "exclude", pyproject),
        extend_exclude=_list(table.get("extend-exclude", []), "extend-exclude", pyproject),
        python_version=version,
        regions=regions,
        warnings=warnings)


def find(start: str, cache: dict[str, Config] | None = None,
         is_file: bool | None = None) -> Config:
    """The configuration that applies to ``start`` (a file or directory):
    the nearest enclosing pyproject.toml with a [tool.graphmend] table.
    ``cache``: a dict kept for one run (directory -> its configuration), so
    a tree of thousands of files looks each directory up once. ``is_file``:
    what the caller knows ``start`` is (None: look)."""
    directory = os.path.abspath(start)
    if is_file or (is_file is None and not os.path.isdir(directory)):
        directory = os.path.dirname(directory)
    visited = []
    found = None
    while True:
        if cache is not None and directory in cache:
            found = cache[directory]
            break
        visited.append(directory)
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            cfg = load(candidate)
            if cfg is not None:
                found = cfg
                break
        parent = os.path.dirname(directory)
        if parent == directory:
            found = Config()
            break
        directory = parent
    if cache is not None:
        for d in visited:
            cache[d] = found
    return found


def is_excluded(path: str, cfg: Config) -> bool:
    """Does an ``exclude`` / ``extend-exclude`` pattern of ``cfg`` match
    ``path``?"""
    patterns = cfg.exclude + cfg.extend_exclude
    if not patterns:
        return False
    absolute = os.path.abspath(path)
    candidates = [os.path.basename(absolute)]
    if cfg.root:
        rel = os.path.relpath(absolute, cfg.root)
        if not rel.startswith(os.pardir):
            rel = rel.replace(os.sep, "/")
            candidates.append(rel)
            # Every leading directory, so "build" or "build/" excludes its tree.
            parts = rel.split("/")
            candidates.extend("/".join(parts[:i]) for i in range(1, len(parts)))
    for pattern in patterns:
        pat = pattern.rstrip("/")
        for c in candidates:
            if fnmatch.fnmatchcase(c, pat) or fnmatch.fnmatchcase(c, pat.replace("**/", "")):
                return True
    return False
