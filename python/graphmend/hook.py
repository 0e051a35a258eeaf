"""graphmend.hook: mend selected packages as they are imported.

``install(packages=["transformers"])`` puts a meta-path finder in front of
``sys.meta_path``. For every module of the selected packages (a package and
its submodules, selected by dotted-name prefix) that the normal machinery
would load from a ``.py`` file, the finder hands back the same spec with a
:class:`GraphmendLoader`, which applies graphmend's *safe* fixes
(:func:`graphmend.fix_source`) before compiling. Everything else (namespace
packages, extension modules, sourceless ``.pyc`` files, modules that other
finders load in their own way) is left to the normal machinery.

Modelled on pytest's assertion rewriting (see docs/hook.md):

* the mended code is compiled with the ORIGINAL file name, and its line
  numbers are mapped back to the original lines (the fixes add an import line;
  see :func:`_remap_positions`), so tracebacks, ``linecache`` and
  ``inspect.getsource`` point into the file on disk;
* the code is cached (``marshal``) keyed on the source's hash, graphmend's
  version, the C++ rule set and the configuration; written atomically; next
  to the source in ``__pycache__`` when writable, else in a user cache
  directory; never when ``sys.dont_write_bytecode`` is set;
* ``# graphmend: skip-file`` on a line of its own opts a module out;
* a module that cannot be mended loads unmodified, with one warning.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import re
import sys
import threading
import types
import warnings
from collections import Counter

__all__ = [
    "SKIP_FILE_MARKER",
    "GraphmendFinder",
    "GraphmendLoader",
    "HookWarning",
    "install",
    "installed",
    "uninstall",
    "user_cache_dir",
]

#: The opt-out comment: a line holding only this comment (any indentation,
#: any spacing after ``#`` and after the colon) keeps a module unmodified.
SKIP_FILE_MARKER = "# graphmend: skip-file"
_SKIP_RE = re.compile(rb"^[ \t\f]*#[ \t]*graphmend:[ \t]*skip-file[ \t]*\r?$", re.MULTILINE)

# Cache file layout: _CACHE_MAGIC, the interpreter's bytecode magic, the
# 32-byte key (sha256), one kind byte, then the payload:
#   b"M": marshal of the mended module's code object;
#   b"U": nothing (graphmend found nothing to change: load the module as usual).
_CACHE_MAGIC = b"GMH\x01"
_KIND_MENDED = b"M"
_KIND_UNCHANGED = b"U"
_HEADER = len(_CACHE_MAGIC) + len(importlib.util.MAGIC_NUMBER) + 32 + 1


class HookWarning(UserWarning):
    """Warnings of the import hook (already-imported packages, modules that
    could not be mended)."""


# Warnings already given in this process (each is given once).
_warned: set = set()
_warn_lock = threading.Lock()


def _warn_once(key, message: str, stacklevel: int = 2) -> None:
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(message, HookWarning, stacklevel=stacklevel + 1)


def user_cache_dir() -> str:
    """Where caches go when the source's own ``__pycache__`` is not writable:
    ``$XDG_CACHE_HOME/graphmend``, else ``~/.cache/graphmend`` (on macOS
    ``~/Library/Caches/graphmend``, on Windows ``%LOCALAPPDATA%\\graphmend``)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
            base = os.environ["LOCALAPPDATA"]
        elif sys.platform == "darwin":
            base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
        else:
            base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "graphmend")


def _ruleset_digest() -> bytes:
    """A digest of the C++ rule set: the bytes of the ``graphmend._core``
    extension (which holds every rule), so a rebuilt rule invalidates caches
    even when the version string did not change. Falls back to the rules'
    codes, names and summaries when the extension file cannot be read."""
    h = hashlib.sha256()
    try:
        spec = importlib.util.find_spec("graphmend._core")
        origin = spec.origin if spec is not None else None
        if not origin or not os.path.isfile(origin):
            raise OSError("no file")
        with open(origin, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
        h.update(b"\0file")
    except (OSError, ImportError, ValueError):
        from . import lint

        for r in lint.rules():
            h.update(f"{r['code']}\0{r['name']}\0{r['summary']}\0".encode())
        h.update(b"\0rules")
    return h.digest()


# --------------------------------------------------------------------------
# line numbers: map the mended code's positions back to the original file


def _lines(source: bytes) -> list[str]:
    # decode_source applies PEP 263 and universal newlines, which is how the
    # tokenizer counts lines (\n, \r\n and a lone \r each end one).
    return importlib.util.decode_source(source).split("\n")


def _line_map(original: list[str], mended: list[str]) -> tuple[list[int], list[int]]:
    """For each 1-based mended line: the 1-based original line it stands for,
    and how it relates to it (``_SAME``; ``_EDITED``: one line replaced by one
    line, columns can be mapped; ``_OTHER``: inserted, or part of a block
    replaced by a block of another length). The map never decreases: inserted
    lines stand for the original line before them, and the extra lines of a
    longer replacement for the block's last line."""
    import difflib

    n = len(mended)
    where = [1] * (n + 2)
    how = [_OTHER] * (n + 2)
    matcher = difflib.SequenceMatcher(None, original, mended, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                where[j + 1] = i1 + (j - j1) + 1
                how[j + 1] = _SAME
            elif tag == "replace":
                where[j + 1] = i1 + min(j - j1, i2 - i1 - 1) + 1
                if i2 - i1 == j2 - j1:
                    how[j + 1] = _EDITED
            else:  # insert: the original line before the insertion point
                where[j + 1] = max(i1, 1)
    where[n + 1] = where[n] if n else 1
    return where, how


_SAME, _EDITED, _OTHER = 0, 1, 2


def _column_map(original: bytes, mended: bytes):
    """A function mapping a UTF-8 column of the mended line to one of the
    original line: unchanged text maps exactly, inserted text to the point of
    insertion (``_graphmend_rt.print(`` → ``print(``)."""
    import difflib

    blocks = difflib.SequenceMatcher(None, original, mended, autojunk=False).get_opcodes()

    def column(c: int) -> int:
        for _tag, i1, i2, j1, j2 in blocks:
            if j1 <= c < j2 or (c == j2 and _tag == "equal"):
                return min(i1 + (c - j1), i2)
        return len(original) if c >= len(mended) else 0

    return column


def _remap_positions(tree, original: list[str], mended: list[str]) -> None:
    """Rewrite the positions of ``tree`` (parsed from ``mended``) in place so
    they name lines and columns of ``original``. Columns on a line that a fix
    rewrote are mapped through the line's character alignment; on lines that
    have no counterpart they widen to the whole original line, so a caret
    never points at the wrong characters."""
    import ast

    where, how = _line_map(original, mended)
    last = len(where) - 1
    enc = [line.encode("utf-8", "surrogatepass") for line in original]
    columns: dict[int, object] = {}

    def orig_width(line: int) -> int:
        return len(enc[line - 1]) if 0 < line <= len(enc) else 0

    def col_of(mline: int, col: int, end: bool) -> int:
        kind = how[mline]
        if kind == _SAME:
            return col
        oline = where[mline]
        if kind == _EDITED and 0 < mline <= len(mended):
            fn = columns.get(mline)
            if fn is None:
                fn = columns[mline] = _column_map(
                    enc[oline - 1], mended[mline - 1].encode("utf-8", "surrogatepass"))
            return fn(col)
        return orig_width(oline) if end else 0

    for node in ast.walk(tree):
        if "lineno" not in getattr(node, "_attributes", ()):
            continue
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            continue
        end = getattr(node, "end_lineno", None)
        a = min(max(lineno, 1), last)
        new_lineno = where[a]
        node.lineno = new_lineno
        node.col_offset = col_of(a, getattr(node, "col_offset", 0) or 0, False)
        if end is None:
            continue
        b = min(max(end, 1), last)
        new_end = max(where[b], new_lineno)
        node.end_lineno = new_end
        end_col = getattr(node, "end_col_offset", None)
        if end_col is not None:
            end_col = col_of(b, end_col, True)
            if new_end == new_lineno and end_col < node.col_offset:
                node.col_offset, end_col = 0, orig_width(new_end)
            node.end_col_offset = end_col


def compile_mended(original: bytes, mended: bytes | str, path: str):
    """Compile ``mended`` (the fixed text of ``original``) as code of the file
    ``path``: file name and line numbers are the original's."""
    import ast

    if isinstance(mended, str):
        mended_text = mended
        mended_lines = mended.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    else:
        mended_text = mended
        mended_lines = _lines(mended)
    tree = ast.parse(mended_text, filename=path)
    _remap_positions(tree, _lines(original), mended_lines)
    return compile(tree, path, "exec", dont_inherit=True, optimize=-1)


# --------------------------------------------------------------------------
# cache files


def _write_atomic(path: str, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the new
    one: a temporary file in the same directory, then ``os.replace``."""
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        os.makedirs(directory, mode=0o700 if mode & 0o077 == 0 else 0o777, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 mode & 0o666)
    try:
        with open(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read_cache(path: str, key: bytes):
    """``(kind, code)`` from a valid cache file for ``key``, else None."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    magic = importlib.util.MAGIC_NUMBER
    if (len(data) < _HEADER or not data.startswith(_CACHE_MAGIC)
            or data[4:8] != magic or data[8:40] != key):
        return None
    kind = data[40:41]
    if kind == _KIND_UNCHANGED:
        return kind, None
    if kind != _KIND_MENDED:
        return None
    try:
        code = marshal.loads(data[_HEADER:])
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(code, types.CodeType):
        return None
    return kind, code


def _fix_co_filename(code, path: str) -> None:
    # What the import system does for a .pyc: the file may have moved since.
    try:
        import _imp

        _imp._fix_co_filename(code, path)
    except (ImportError, AttributeError):  # pragma: no cover - not CPython
        pass


# --------------------------------------------------------------------------
# finder and loader


class _Config:
    __slots__ = ("cache_dir", "ignore", "packages", "regions", "select", "unsafe")

    def __init__(self, packages, unsafe, select, ignore, cache_dir, regions="all"):
        self.packages = packages
        self.unsafe = unsafe
        self.regions = regions
        self.select = select
        self.ignore = ignore
        self.cache_dir = cache_dir

    def astuple(self):
        return (self.packages, self.unsafe, self.select, self.ignore, self.cache_dir,
                self.regions)

    def __eq__(self, other):
        return isinstance(other, _Config) and self.astuple() == other.astuple()

    def __hash__(self):
        return hash(self.astuple())

    def __repr__(self):
        return (f"packages={list(self.packages)!r}, unsafe={self.unsafe!r}, "
                f"select={self.select!r}, ignore={self.ignore!r}, "
                f"regions={self.regions!r}, cache_dir={self.cache_dir!r}")


def _normalize_packages(packages) -> tuple[str, ...]:
    if isinstance(packages, str):
        packages = [packages]
    out: list[str] = []
    for item in packages:
        if not isinstance(item, str):
            raise TypeError(f"package names must be strings, not {type(item).__name__}")
        for name in item.replace(",", " ").split():
            parts = name.split(".")
            if not all(p.isidentifier() for p in parts):
                raise ValueError(f"invalid package name {name!r}")
            if parts[0] == "graphmend":
                raise ValueError("graphmend cannot mend itself")
            if name not in out:
                out.append(name)
    if not out:
        raise ValueError("install() needs at least one package name")
    return tuple(out)


def _selectors(value) -> tuple[str, ...] | None:
    if value is None:
        return None
    from . import lint

    return tuple(lint.normalize_selectors(value))


class GraphmendFinder(importlib.abc.MetaPathFinder):
    """Meta-path finder that mends the modules of ``packages``.

    It asks the finders behind it on ``sys.meta_path`` for each selected
    module; a spec for a plain ``.py`` file (loader
    ``importlib.machinery.SourceFileLoader``) comes back with a
    :class:`GraphmendLoader` in its place, any other spec is left to the
    normal machinery. ``stats`` counts what happened (``mended``,
    ``unchanged``, ``cache_hit``, ``cache_write``, ``skipped``, ``failed``).
    """

    def __init__(self, packages, *, unsafe=False, select=None, ignore=None, cache_dir=None,
                 regions="all"):
        from . import lint

        lint._all_regions(regions)  # validates
        self.config = _Config(
            _normalize_packages(packages), bool(unsafe), _selectors(select),
            _selectors(ignore),
            os.path.abspath(os.fspath(cache_dir)) if cache_dir is not None else None,
            regions)
        self.packages = self.config.packages
        self.stats: Counter = Counter()
        self._stats_lock = threading.Lock()
        self._tops = frozenset(p.split(".")[0] for p in self.packages)
        self._busy = threading.local()
        self._key_prefix: bytes | None = None
        self._key_lock = threading.Lock()

    def __repr__(self):
        return f"<GraphmendFinder {self.config!r}>"

    # -- selection

    def selects(self, fullname: str) -> bool:
        """Is ``fullname`` one of the selected packages or below one?"""
        if fullname.partition(".")[0] not in self._tops:
            return False
        return any(fullname == p or fullname.startswith(p + ".") for p in self.packages)

    # -- importlib protocol

    def find_spec(self, fullname, path=None, target=None):
        if not self.selects(fullname):
            return None
        busy = self._busy.__dict__.setdefault("names", set())
        if fullname in busy:  # a finder behind us asked the import system again
            return None
        busy.add(fullname)
        try:
            spec = None
            for finder in list(sys.meta_path):
                if isinstance(finder, GraphmendFinder):
                    continue
                find = getattr(finder, "find_spec", None)
                if find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
        finally:
            busy.discard(fullname)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return None  # namespace package, extension, .pyc, custom loader...
        origin = spec.origin
        if not origin or not origin.endswith(tuple(importlib.machinery.SOURCE_SUFFIXES)):
            return None
        spec.loader = GraphmendLoader(fullname, origin, self)
        return spec

    def invalidate_caches(self):
        pass

    # -- used by the loader

    def count(self, what: str) -> None:
        with self._stats_lock:
            self.stats[what] += 1

    def key(self, source: bytes) -> bytes:
        """The cache key of one module: its source and everything that
        decides how it is mended."""
        if self._key_prefix is None:
            with self._key_lock:
                if self._key_prefix is None:
                    from . import __version__

                    c = self.config
                    h = hashlib.sha256()
                    h.update(b"graphmend-hook\0" + __version__.encode() + b"\0")
                    h.update(_ruleset_digest())
                    h.update(repr((c.unsafe, c.select, c.ignore, c.regions,
                                   sys.version_info[:2], sys.flags.optimize)).encode())
                    self._key_prefix = h.digest()
        return hashlib.sha256(self._key_prefix + hashlib.sha256(source).digest()).digest()

    def cache_paths(self, fullname: str, origin: str) -> list[str]:
        """Where the cache of ``origin`` is looked for, in order (written to
        the first that works)."""
        from . import __version__

        tag = sys.implementation.cache_tag
        if tag is None:
            return []
        suffix = f".graphmend-{__version__}.pyc"
        where = hashlib.sha256(os.path.abspath(origin).encode("utf-8", "surrogatepass"))
        opt = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""
        flat = f"{fullname}.{where.hexdigest()[:16]}.{tag}{opt}{suffix}"
        if self.config.cache_dir is not None:
            return [os.path.join(self.config.cache_dir, flat)]
        paths = []
        try:
            standard = importlib.util.cache_from_source(origin)
        except (NotImplementedError, ValueError):
            standard = None
        if standard and standard.endswith(".pyc"):
            paths.append(standard[:-4] + suffix)
        paths.append(os.path.join(user_cache_dir(), flat))
        return paths

    def mend(self, source: bytes, path: str):
        from . import lint

        c = self.config
        return lint.fix_source(source, path=path, unsafe=c.unsafe, select=c.select,
                               ignore=c.ignore, regions=c.regions)


class GraphmendLoader(importlib.machinery.SourceFileLoader):
    """A ``SourceFileLoader`` whose code is the module's mended source.

    ``get_source`` still returns the file's own text (as tracebacks and
    ``linecache`` do); :meth:`get_mended_source` returns the mended text.
    A mended module gets ``__graphmend_mended__ = True`` and ``__cached__``
    naming graphmend's cache file.
    """

    def __init__(self, fullname, path, finder: GraphmendFinder):
        super().__init__(fullname, path)
        self.finder = finder

    def get_code(self, fullname):
        code, _, _ = self._code(fullname)
        return code

    def exec_module(self, module):
        code, mended, cached = self._code(module.__name__)
        if mended:
            module.__graphmend_mended__ = True
            if cached is not None:
                module.__cached__ = cached
                spec = getattr(module, "__spec__", None)
                if spec is not None and spec.origin == self.path:
                    spec.cached = cached
        else:
            module.__dict__.pop("__graphmend_mended__", None)
        exec(code, module.__dict__)  # noqa: S102 - what SourceLoader.exec_module does

    def get_mended_source(self, fullname=None) -> bytes:
        """The text graphmend makes of this module (the file's text when it
        is not mended), in the file's encoding."""
        data = self.get_data(self.path)
        if _SKIP_RE.search(data):
            return data
        try:
            result = self.finder.mend(data, self.path)
        except Exception:  # noqa: BLE001 - any failure: the module loads as is
            return data
        return result.source if result.status == "fixed" else data

    # -- internals

    def _unmodified(self, fullname):
        return super().get_code(fullname)

    def _code(self, fullname):
        """``(code, mended, cache_path)``."""
        finder = self.finder
        path = self.path
        try:
            data = self.get_data(path)
        except OSError:
            return self._unmodified(fullname), False, None  # raises ImportError as usual
        if _SKIP_RE.search(data):
            finder.count("skipped")
            return self._unmodified(fullname), False, None
        key = finder.key(data)
        paths = finder.cache_paths(fullname, path)
        for cache in paths:
            hit = _read_cache(cache, key)
            if hit is None:
                continue
            finder.count("cache_hit")
            kind, code = hit
            if kind == _KIND_UNCHANGED:
                return self._unmodified(fullname), False, None
            _fix_co_filename(code, path)
            return code, True, cache

        reason = None
        result = None
        try:
            result = finder.mend(data, path)
        except Exception as exc:  # noqa: BLE001 - syntax/encoding error or a graphmend bug
            reason = f"{type(exc).__name__}: {exc}"
        if result is not None:
            for err in result.rule_errors:
                _warn_once(("rule", fullname, err.get("code")),
                           f"graphmend: rule {err.get('code')} failed on {fullname} "
                           f"({path}): {err.get('message')}; its fixes were skipped "
                           "(a graphmend bug)")
            if result.status in ("fix-broke-syntax", "not-converged"):
                culprits = ", ".join(c.code for c in result.culprits)
                what = ("broke the syntax" if result.status == "fix-broke-syntax"
                        else "did not converge")
                reason = f"fixes {what} ({culprits or 'unknown rule'}; a graphmend bug)"
            elif result.status not in ("fixed", "unchanged"):
                reason = f"unexpected status {result.status!r}"
        code = None
        if reason is None and result.status == "fixed":
            try:
                code = compile_mended(data, result.source, path)
            except Exception as exc:  # noqa: BLE001
                reason = f"the mended text does not compile ({type(exc).__name__}: {exc})"
        if reason is not None:
            # CPython's own error (a real syntax error) propagates from here
            # exactly as without the hook; otherwise the module loads as is.
            code = self._unmodified(fullname)
            finder.count("failed")
            _warn_once(("failed", fullname, reason),
                       f"graphmend: could not mend {fullname} ({path}): {reason}; "
                       "loaded unmodified")
            return code, False, None

        if code is None:  # nothing to change
            finder.count("unchanged")
            self._store(paths, key, _KIND_UNCHANGED, b"")
            return self._unmodified(fullname), False, None
        finder.count("mended")
        written = self._store(paths, key, _KIND_MENDED, marshal.dumps(code))
        return code, True, written or (paths[0] if paths else None)

    def _store(self, paths, key, kind, payload) -> str | None:
        if sys.dont_write_bytecode or not paths:
            return None
        data = _CACHE_MAGIC + importlib.util.MAGIC_NUMBER + key + kind + payload
        try:
            mode = (os.stat(self.path).st_mode | 0o200) & 0o666
        except OSError:
            mode = 0o644
        user = user_cache_dir() if self.finder.config.cache_dir is None else None
        for cache in paths:
            private = user is not None and cache.startswith(user + os.sep)
            try:
                _write_atomic(cache, data, 0o600 if private else mode)
            except OSError:
                continue  # read-only directory, full disk...: try the next place
            self.finder.count("cache_write")
            return cache
        return None


# --------------------------------------------------------------------------
# public API


def installed() -> GraphmendFinder | None:
    """The installed hook, or None."""
    for finder in sys.meta_path:
        if isinstance(finder, GraphmendFinder):
            return finder
    return None


def _imported_without_hook(package: str) -> list[str]:
    out = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == package or name.startswith(package + ".")):
            continue
        spec = getattr(module, "__spec__", None)
        if spec is None or isinstance(spec.loader, GraphmendLoader):
            continue
        origin = spec.origin or ""
        if not origin.endswith(tuple(importlib.machinery.SOURCE_SUFFIXES)):
            continue  # namespace package, extension...: never mended anyway
        out.append(name)
    return sorted(out)


def install(packages, *, unsafe=False, select=None, ignore=None,
            cache_dir=None, regions="all") -> GraphmendFinder:
    """Mend the modules of ``packages`` as they are imported from now on.

    ``packages``: names (``"transformers"``, or a subpackage such as
    ``"transformers.models.bart"``; a list, or one comma-separated string);
    the package and every submodule below it are mended. ``unsafe``: also
    apply unsafe fixes. ``select`` / ``ignore``: rule selectors as on the
    command line. ``cache_dir``: keep the cached code there instead of next to
    each source (``__pycache__``, falling back to :func:`user_cache_dir`).
    ``regions``: ``"all"`` (default: library mode, every function of a mended
    module is treated as compiled code, because a package's helpers are
    reached from compiled ``forward``s in other modules, which a one-file
    analysis cannot see; every fix is exact when the code runs eagerly) or
    ``"reachable"`` (only what ``graphmend check`` reports by default).

    Installing with the same arguments again does nothing; with other
    arguments it replaces the previous hook. A selected package that was
    already imported (without the hook) is not mended: a :class:`HookWarning`
    says so, once per package. Returns the finder.
    """
    finder = GraphmendFinder(packages, unsafe=unsafe, select=select, ignore=ignore,
                             cache_dir=cache_dir, regions=regions)
    current = installed()
    if current is not None and current.config == finder.config:
        return current
    # Mended modules import it; make sure it resolves to this graphmend
    # whatever the hooked package's sys.path games.
    import graphmend.runtime  # noqa: F401

    for package in finder.packages:
        early = _imported_without_hook(package)
        if early:
            more = f" and {len(early) - 3} more" if len(early) > 3 else ""
            _warn_once(("imported", package),
                       f"graphmend.install: {package!r} was already imported "
                       f"({', '.join(early[:3])}{more}); modules imported before the hook "
                       "are not mended. Call graphmend.install() before importing "
                       f"{package!r}.")
    uninstall()
    sys.meta_path.insert(0, finder)
    return finder


def uninstall() -> bool:
    """Remove the hook. Modules already mended stay as they are; later
    imports and ``importlib.reload`` load the files unmodified. Returns
    whether a hook was installed."""
    found = False
    for finder in list(sys.meta_path):
        if isinstance(finder, GraphmendFinder):
            sys.meta_path.remove(finder)
            found = True
    return found
