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
  lines and columns are mapped back to the original's through the engine's
  own edit map (:class:`PositionMap`), so tracebacks, ``linecache`` and
  ``inspect.getsource`` point into the file on disk;
* the code is cached (``marshal``) keyed on the source's hash, graphmend's
  version, the C++ rule set and the configuration; written atomically; next
  to the source in ``__pycache__`` when writable, else in a user cache
  directory, or in an explicit ``cache_dir`` (also under
  ``sys.dont_write_bytecode``, which otherwise stops the writes); every
  entry carries a checksum and a damaged one is mended afresh;
* ``# graphmend: skip-file`` on a line of its own opts a module out;
* a module that cannot be mended loads unmodified, with one warning.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import operator
import os
import re
import struct
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


def _skips(data: bytes) -> bool:
    # The substring test first: the multi-line regex alone scans every line.
    return b"skip-file" in data and _SKIP_RE.search(data) is not None

# Cache file layout: _CACHE_MAGIC, the interpreter's bytecode magic, the
# 32-byte key (sha256), one kind byte, the lengths of the metadata and of the
# payload (4 bytes each, little-endian), a SHA-256 over all of the above and
# both bodies, then the metadata (JSON: the fixes applied, by rule) and the
# payload:
#   b"M": marshal of the mended module's code object;
#   b"U": nothing (graphmend found nothing to change: load the module as usual).
# A file that fails any check (truncated, a flipped bit, another layout) is
# ignored: the module is mended afresh and the entry rewritten.
_CACHE_MAGIC = b"GMH\x02"
_KIND_MENDED = b"M"
_KIND_UNCHANGED = b"U"
_PREFIX = len(_CACHE_MAGIC) + len(importlib.util.MAGIC_NUMBER) + 32 + 1 + 8
_HEADER = _PREFIX + 32

#: Where an explicit cache directory can also come from (install's
#: ``cache_dir`` and ``graphmend run --cache-dir`` take precedence).
CACHE_DIR_ENV = "GRAPHMEND_CACHE_DIR"


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
# positions: map the mended code's lines and columns back to the original
# file, through the engine's own edit map (FixResult.source_map)


class PositionMap:
    """Mended ``(line, col)`` → original ``(line, col)``, from the engine's
    source map: one ``(line, col, end_line, end_col, orig_line, orig_col,
    orig_end_line, orig_end_col)`` marker per edited region, in order
    (1-based lines, 0-based UTF-8 byte columns, as CPython's positions).

    Text between markers is the original's, so it maps by a shift. A
    position inside a region's new text has no counterpart: a start maps to
    the start of the text the region replaced, an end to its end (an
    inserted ``_graphmend_rt.`` maps to the point of insertion)."""

    __slots__ = ("_line_shifts", "_markers", "_segments", "_starts", "packed")

    def __init__(self, markers):
        self._markers = [tuple(m) for m in markers]
        self._starts = [(m[0], m[1]) for m in self._markers]
        # Line segments: (first mended line, last, line shift), with shift
        # None where an edit touches the line (columns change there).
        segments = []
        line, shift = 1, 0
        for m in self._markers:
            if m[0] > line:
                segments.append((line, m[0] - 1, shift))
            if m[2] >= line:
                segments.append((max(line, m[0]), m[2], None))
                line = m[2] + 1
            shift = m[6] - m[2]
        segments.append((line, 1 << 62, shift))
        self._segments = segments
        self._line_shifts: dict = {}
        #: The markers as 8 native int64 each (for _core.remap_linetable).
        self.packed = struct.pack(f"={8 * len(self._markers)}q",
                                  *(v for m in self._markers for v in m))

    def begin(self, line: int, col: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._starts, (line, col)) - 1
        if i < 0:
            return line, col
        m = self._markers[i]
        if (line, col) < (m[2], m[3]):
            return m[4], m[5]
        return self._after(m, line, col)

    def end(self, line: int, col: int) -> tuple[int, int]:
        i = bisect.bisect_left(self._starts, (line, col)) - 1
        if i < 0:
            return line, col
        m = self._markers[i]
        if (line, col) <= (m[2], m[3]):
            return m[6], m[7]
        return self._after(m, line, col)

    @staticmethod
    def _after(m, line, col):
        if line == m[2]:
            return m[6], m[7] + (col - m[3])
        return m[6] + (line - m[2]), col

    def line(self, line: int) -> int:
        """The original line of a mended one (a line no edit touches maps
        exactly; one an edit touches, through its start)."""
        return self.begin(line, 0)[0]

    def line_shift(self, line: int):
        """``shift(line, line)``, remembered."""
        try:
            return self._line_shifts[line]
        except KeyError:
            value = self._line_shifts[line] = self.shift(line, line)
            return value

    def shift(self, first: int, last: int):
        """The line shift shared by mended lines ``first..last`` when no edit
        touches them (their columns are unchanged), else None."""
        segments = self._segments
        lo, hi = 0, len(segments) - 1
        while lo < hi:  # the segment holding `first`
            mid = (lo + hi + 1) // 2
            if segments[mid][0] <= first:
                lo = mid
            else:
                hi = mid - 1
        _, stop, shift = segments[lo]
        return shift if last <= stop else None


def _varint(out: bytearray, value: int) -> None:
    while value >= 64:
        out.append(0x40 | (value & 63))
        value >>= 6
    out.append(value)


def _linetable(positions: list, firstlineno: int) -> bytes:
    """CPython 3.11-3.13's location table (Objects/locations.md) for one
    ``(line, end_line, col, end_col)`` per code unit, in the long form
    (code 14), "no columns" (13) and "no location" (15) entries."""
    out = bytearray()
    append = out.append
    line = firstlineno
    n = len(positions)
    i = 0
    while i < n:
        p = positions[i]
        j = i + 1
        while j < n and j - i < 8 and positions[j] == p:
            j += 1
        size = j - i - 1
        start, end, col, end_col = p
        if start is None:
            append(0xF8 | size)  # 0x80 | 15 << 3
            i = j
            continue
        delta = start - line
        line = start
        if col is None and (end is None or end == start):
            append(0xE8 | size)  # 0x80 | 13 << 3
            values = ((-delta << 1) | 1 if delta < 0 else delta << 1,)
        else:
            append(0xF0 | size)  # 0x80 | 14 << 3
            values = ((-delta << 1) | 1 if delta < 0 else delta << 1,
                      max((end if end is not None else start) - start, 0),
                      0 if col is None else col + 1,
                      0 if end_col is None else end_col + 1)
        for value in values:  # varints: 6-bit chunks, 0x40 = more follow
            while value >= 64:
                append(0x40 | (value & 63))
                value >>= 6
            append(value)
        i = j
    return bytes(out)


_CODE_LINETABLE = sys.version_info[:2] in ((3, 11), (3, 12), (3, 13))
_START, _END = operator.itemgetter(0), operator.itemgetter(1)


def _core_remap():
    # The same remapping as _remap_code's Python route, in the C++ extension.
    if not _CODE_LINETABLE:
        return None
    try:
        from . import _core
    except ImportError:  # pragma: no cover - a broken install: mend() fails first
        return None
    return getattr(_core, "remap_linetable", None)


_remap_linetable = _core_remap()


def _remap_code(code: types.CodeType, pmap: PositionMap) -> types.CodeType:
    """``code`` (compiled from mended text) with the original file's
    positions. A code object no edit touches keeps its location table, which
    is relative to ``co_firstlineno``: only that moves. Others get a new
    table, every code unit's position mapped."""
    consts = code.co_consts
    new_consts = None
    for i, const in enumerate(consts):
        if type(const) is types.CodeType:
            fixed = _remap_code(const, pmap)
            if fixed is not const:
                if new_consts is None:
                    new_consts = list(consts)
                new_consts[i] = fixed
    changes = {} if new_consts is None else {"co_consts": tuple(new_consts)}
    if _remap_linetable is not None:
        try:
            first, table = _remap_linetable(code.co_linetable, code.co_firstlineno, pmap.packed)
        except ValueError:
            pass  # a table the C++ reader does not know: the Python route below
        else:
            if first != code.co_firstlineno:
                changes["co_firstlineno"] = first
            if table is not None:
                changes["co_linetable"] = table
            return code.replace(**changes) if changes else code
    lines = set(map(_START, code.co_positions()))
    lines.update(map(_END, code.co_positions()))
    lines.discard(None)
    lines.add(code.co_firstlineno)
    shift = pmap.shift(min(lines), max(lines))
    if shift is not None:
        if shift:
            changes["co_firstlineno"] = code.co_firstlineno + shift
        return code.replace(**changes) if changes else code
    positions = list(code.co_positions())
    mapped = []
    cache: dict = {}
    line_shift = pmap.line_shift
    for p in positions:
        got = cache.get(p)
        if got is None:
            start, end, col, end_col = p
            if start is None:
                got = p
            elif (shift := line_shift(start)) is not None and (
                    end is None or end == start or line_shift(end) == shift):
                got = (start + shift, (start if end is None else end) + shift, col, end_col)
            elif col is None:
                line = pmap.line(start)
                got = (line, line if end in (None, start) else max(pmap.line(end), line), None, None)
            else:
                a = pmap.begin(start, col)
                b = pmap.end(end if end is not None else start,
                             end_col if end_col is not None else col)
                b = max(b, a)
                got = (a[0], b[0], a[1], None if end_col is None else b[1])
            cache[p] = got
        mapped.append(got)
    first = pmap.line(code.co_firstlineno)
    changes["co_firstlineno"] = first
    changes["co_linetable"] = _linetable(mapped, first)
    return code.replace(**changes)


def _remap_tree(tree, pmap: PositionMap) -> None:
    """The AST route, for interpreters whose location tables
    :func:`_linetable` does not write (3.9, 3.10): every node's position."""
    import ast

    for node in ast.walk(tree):
        lineno = getattr(node, "lineno", None)
        if lineno is None or "lineno" not in node._attributes:
            continue
        a = pmap.begin(lineno, node.col_offset)
        node.lineno, node.col_offset = a
        end_lineno = getattr(node, "end_lineno", None)
        if end_lineno is None:
            continue
        b = pmap.end(end_lineno, node.end_col_offset)
        b = max(b, a)
        node.end_lineno, node.end_col_offset = b


def compile_mended(mended: bytes | str, path: str, source_map):
    """Compile ``mended`` (the engine's fixed text of the file ``path``,
    with the engine's ``source_map``) as code of that file: the file name,
    lines and columns are the original's."""
    pmap = PositionMap(source_map)
    if _CODE_LINETABLE:
        code = compile(mended, path, "exec", dont_inherit=True, optimize=-1)
        return _remap_code(code, pmap)
    import ast

    tree = compile(mended, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True, optimize=-1)
    _remap_tree(tree, pmap)
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


def _cache_entry(key: bytes, kind: bytes, meta: bytes, payload: bytes) -> bytes:
    prefix = (_CACHE_MAGIC + importlib.util.MAGIC_NUMBER + key + kind
              + len(meta).to_bytes(4, "little") + len(payload).to_bytes(4, "little"))
    digest = hashlib.sha256(prefix)
    digest.update(meta)
    digest.update(payload)
    return prefix + digest.digest() + meta + payload


def _read_cache(path: str, key: bytes):
    """``(kind, code, fixes)`` from a valid cache file for ``key``, else
    None. Everything read is checked (layout, key, lengths, checksum) before
    it is unmarshalled, so a damaged file is never loaded."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if (len(data) < _HEADER or not data.startswith(_CACHE_MAGIC)
            or data[4:8] != importlib.util.MAGIC_NUMBER or data[8:40] != key):
        return None
    kind = data[40:41]
    meta_len = int.from_bytes(data[41:45], "little")
    payload_len = int.from_bytes(data[45:49], "little")
    if len(data) != _HEADER + meta_len + payload_len or kind not in (_KIND_MENDED,
                                                                     _KIND_UNCHANGED):
        return None
    digest = hashlib.sha256(memoryview(data)[:_PREFIX])
    digest.update(memoryview(data)[_HEADER:])
    if digest.digest() != data[_PREFIX:_HEADER]:
        return None
    try:
        import json

        fixes = json.loads(data[_HEADER:_HEADER + meta_len]) if meta_len else {}
        if not isinstance(fixes, dict):
            return None
        if kind == _KIND_UNCHANGED:
            return kind, None, fixes
        code = marshal.loads(memoryview(data)[_HEADER + meta_len:])
    except Exception:  # noqa: BLE001 - whatever it holds, it is not ours
        return None
    if not isinstance(code, types.CodeType):
        return None
    return kind, code, fixes


def _fix_co_filename(code, path: str) -> None:
    # What the import system does for a .pyc: the file may have moved since.
    try:
        import _imp

        _imp._fix_co_filename(code, path)
    except (ImportError, AttributeError):  # pragma: no cover - not CPython
        pass


# --------------------------------------------------------------------------
# finder and loader


@dataclasses.dataclass(frozen=True)
class _Config:
    packages: tuple
    unsafe: bool
    select: tuple | None
    ignore: tuple | None
    cache_dir: str | None
    regions: str = "package"
    dynamo_switches: bool = False

    def __repr__(self):
        return (f"packages={list(self.packages)!r}, unsafe={self.unsafe!r}, "
                f"select={self.select!r}, ignore={self.ignore!r}, "
                f"regions={self.regions!r}, cache_dir={self.cache_dir!r}, "
                f"dynamo_switches={self.dynamo_switches!r}")


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
    ``unchanged``, ``region_free``, ``cache_hit``, ``cache_write``,
    ``skipped``, ``failed``).
    """

    def __init__(self, packages, *, unsafe=False, select=None, ignore=None, cache_dir=None,
                 regions="package", dynamo_switches=False):
        from . import lint

        lint._all_regions(regions)  # validates
        if cache_dir is None:
            cache_dir = os.environ.get(CACHE_DIR_ENV) or None
        self.config = _Config(
            _normalize_packages(packages), bool(unsafe), _selectors(select),
            _selectors(ignore),
            os.path.abspath(os.fspath(cache_dir)) if cache_dir is not None else None,
            regions, bool(dynamo_switches))
        self.packages = self.config.packages
        self.stats: Counter = Counter()
        #: Fixes applied, by rule, over the modules this finder mended (from
        #: the cache too).
        self.fixes: Counter = Counter()
        #: How each selected module was loaded: "mended", "mended (cached)",
        #: "unchanged", "unchanged (cached)", "region free", "skipped", "failed".
        self.modules: dict = {}
        self._stats_lock = threading.Lock()
        self._tops = frozenset(p.split(".")[0] for p in self.packages)
        self._busy = threading.local()
        self._key_prefix: bytes | None = None
        self._switches: _Switches | None = None
        self._key_lock = threading.Lock()
        # package root directory -> ({path: [extra roots]}, {paths with no region})
        self._roots: dict = {}
        self._roots_lock = threading.Lock()

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

    def record(self, fullname: str, how: str, fixes=None) -> None:
        with self._stats_lock:
            self.modules[fullname] = how
            if fixes:
                self.fixes.update(fixes)

    def extra_roots(self, path: str) -> list[str]:
        """Package mode: the functions of ``path`` that compiled code in the
        rest of its package reaches (lint.package_scan over every module of
        the installed package, computed once per process and cached on disk
        next to the modules' caches, keyed on the package's files: names,
        sizes and modification times)."""
        scan = self._package(path)
        return scan[0].get(os.path.abspath(path), []) if scan else []

    def region_free(self, path: str) -> bool:
        """Package mode: the package analysis found no compiled region in
        ``path``, neither its own nor one its package makes. Every rule looks
        only inside regions, so mending it could change nothing."""
        scan = self._package(path)
        return bool(scan) and os.path.abspath(path) in scan[1]

    def _package(self, path: str):
        if self.config.regions != "package":
            return None
        from . import lint

        root, module, _ = lint.module_name(path)
        top = os.path.join(root, module.split(".")[0])
        with self._roots_lock:
            if top not in self._roots:
                self._roots[top] = self._package_scan(top)
        return self._roots[top]

    def _package_scan(self, top: str) -> tuple[dict, frozenset]:
        import json

        from . import __version__, lint

        files = lint.python_files(top)
        h = hashlib.sha256(f"graphmend-package\0{__version__}\0".encode())
        h.update(_ruleset_digest())
        h.update(repr(sys.version_info[:2]).encode())
        for f in files:
            try:
                st = os.stat(f)
            except OSError:
                continue
            h.update(f"{os.path.relpath(f, top)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode(
                "utf-8", "surrogatepass"))
        name = f"package-roots.{os.path.basename(top)}.{h.hexdigest()[:32]}.json"
        # As for the modules: an explicit cache_dir, else the package's own
        # __pycache__, else the user's cache directory.
        if self.config.cache_dir is not None:
            where = [os.path.join(self.config.cache_dir, name)]
        else:
            where = [os.path.join(top, "__pycache__", name), os.path.join(user_cache_dir(), name)]
        for cache in where:
            try:
                with open(cache, encoding="utf-8") as handle:
                    data = json.load(handle)
                if isinstance(data, dict) and data.get("key") == h.hexdigest():
                    return ({os.path.join(top, k): v for k, v in data["roots"].items()},
                            frozenset(os.path.join(top, k) for k in data["region_free"]))
            except (OSError, ValueError, KeyError, TypeError):
                pass
        roots, free = {}, set()
        for p, (r, regions) in lint.package_scan(lint.read_sources(files)).items():
            if r:
                roots[os.path.abspath(p)] = r
            elif regions is False:
                free.add(os.path.abspath(p))
        payload = {"key": h.hexdigest(),
                   "roots": {os.path.relpath(p, top): r for p, r in roots.items()},
                   "region_free": sorted(os.path.relpath(p, top) for p in free)}
        # Written where the modules' caches are, under the same rule (an
        # explicit cache_dir even under sys.dont_write_bytecode).
        if not (sys.dont_write_bytecode and self.config.cache_dir is None):
            for cache in where:
                try:
                    _write_atomic(cache, json.dumps(payload).encode(), 0o644)
                    break
                except OSError:
                    continue
        return roots, frozenset(free)

    def key(self, source: bytes, roots=()) -> bytes:
        """The cache key of one module: its source and everything that
        decides how it is mended (package mode: its extra roots too)."""
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
        digest = hashlib.sha256(self._key_prefix + hashlib.sha256(source).digest())
        if roots:
            digest.update("\0".join(roots).encode("utf-8", "surrogatepass"))
        return digest.digest()

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

    def mend(self, source: bytes, path: str, roots=None):
        """fix_source with this finder's options; ``roots``: the module's
        extra_roots when the caller already has them."""
        from . import lint

        c = self.config
        return lint.fix_source(source, path=path, unsafe=c.unsafe, select=c.select,
                               ignore=c.ignore, regions=c.regions,
                               extra_roots=self.extra_roots(path) if roots is None else roots)


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
        if _skips(data):
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
        if _skips(data):
            finder.count("skipped")
            finder.record(fullname, "skipped")
            return self._unmodified(fullname), False, None
        if finder.region_free(path):
            finder.count("region_free")
            finder.record(fullname, "region free")
            return self._unmodified(fullname), False, None
        roots = finder.extra_roots(path)
        key = finder.key(data, roots)
        paths = finder.cache_paths(fullname, path)
        for cache in paths:
            hit = _read_cache(cache, key)
            if hit is None:
                continue
            finder.count("cache_hit")
            kind, code, fixes = hit
            if kind == _KIND_UNCHANGED:
                finder.record(fullname, "unchanged (cached)")
                return self._unmodified(fullname), False, None
            finder.record(fullname, "mended (cached)", fixes)
            _fix_co_filename(code, path)
            return code, True, cache

        reason = None
        result = None
        try:
            result = finder.mend(data, path, roots)
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
                code = compile_mended(result.source, path, result.source_map)
            except Exception as exc:  # noqa: BLE001
                reason = f"the mended text does not compile ({type(exc).__name__}: {exc})"
        if reason is not None:
            # CPython's own error (a real syntax error) propagates from here
            # exactly as without the hook; otherwise the module loads as is.
            code = self._unmodified(fullname)
            finder.count("failed")
            finder.record(fullname, "failed")
            _warn_once(("failed", fullname, reason),
                       f"graphmend: could not mend {fullname} ({path}): {reason}; "
                       "loaded unmodified")
            return code, False, None

        if code is None:  # nothing to change
            finder.count("unchanged")
            finder.record(fullname, "unchanged")
            self._store(paths, key, _KIND_UNCHANGED, {}, b"")
            return self._unmodified(fullname), False, None
        finder.count("mended")
        fixes = dict(result.applied_per_code)
        finder.record(fullname, "mended", fixes)
        written = self._store(paths, key, _KIND_MENDED, fixes, marshal.dumps(code))
        return code, True, written or (paths[0] if paths else None)

    def _store(self, paths, key, kind, fixes, payload) -> str | None:
        # An explicit cache directory is written even under
        # sys.dont_write_bytecode: the user asked for it by name.
        if not paths or (sys.dont_write_bytecode and self.finder.config.cache_dir is None):
            return None
        import json

        meta = json.dumps(fixes, sort_keys=True).encode() if fixes else b""
        data = _cache_entry(key, kind, meta, payload)
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


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs callbacks once a module's own code has run (the first time it is
    imported): how ``dynamo_switches`` reach ``torch._dynamo.config`` and
    ``graphmend run --report`` reaches Dynamo, without importing torch
    before the program does. It finds nothing itself: it asks the finders
    behind it and wraps the loader's ``exec_module``."""

    def __init__(self):
        self.callbacks: dict = {}
        self._busy = threading.local()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.callbacks:
            return None
        busy = self._busy.__dict__.setdefault("names", set())
        if fullname in busy:
            return None
        busy.add(fullname)
        try:
            spec = None
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
        finally:
            busy.discard(fullname)
        loader = getattr(spec, "loader", None)
        if loader is None or isinstance(loader, type) or not hasattr(loader, "__dict__") \
                or not hasattr(loader, "exec_module"):
            return spec  # a loader shared by many modules (a class): not wrapped
        run = loader.exec_module

        def exec_module(module):
            run(module)
            for callback in self.callbacks.pop(fullname, ()):
                callback(module)
            if not self.callbacks and self in sys.meta_path:
                sys.meta_path.remove(self)

        loader.exec_module = exec_module
        return spec

    def invalidate_caches(self):
        pass


_after_import = _AfterImport()


def when_imported(name: str, callback) -> None:
    """Call ``callback(module)`` once ``name`` is imported: now if it already
    is, else right after its code has run."""
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
        return
    _after_import.callbacks.setdefault(name, []).append(callback)
    if _after_import not in sys.meta_path:
        sys.meta_path.insert(0, _after_import)


def _forget_callback(name: str, callback) -> None:
    callbacks = _after_import.callbacks.get(name)
    if callbacks and callback in callbacks:
        callbacks.remove(callback)
        if not callbacks:
            del _after_import.callbacks[name]
    if not _after_import.callbacks and _after_import in sys.meta_path:
        sys.meta_path.remove(_after_import)


#: The Dynamo settings ``dynamo_switches=True`` turns on (see docs/hook.md).
DYNAMO_SWITCHES = ("capture_scalar_outputs", "capture_dynamic_output_shape_ops")


class _Switches:
    """Turns DYNAMO_SWITCHES on in ``torch._dynamo.config`` when it is
    imported, and back to their earlier values on :meth:`restore`."""

    def __init__(self):
        self.saved: dict | None = None

    def __call__(self, config) -> None:
        self.saved = {name: getattr(config, name) for name in DYNAMO_SWITCHES}
        for name in DYNAMO_SWITCHES:
            setattr(config, name, True)

    def restore(self) -> None:
        _forget_callback("torch._dynamo.config", self)
        config = sys.modules.get("torch._dynamo.config")
        if self.saved is not None and config is not None:
            for name, value in self.saved.items():
                setattr(config, name, value)
        self.saved = None


def install(packages, *, unsafe=False, select=None, ignore=None,
            cache_dir=None, regions="package", dynamo_switches=False) -> GraphmendFinder:
    """Mend the modules of ``packages`` as they are imported from now on.

    ``packages``: names (``"transformers"``, or a subpackage such as
    ``"transformers.models.bart"``; a list, or one comma-separated string);
    the package and every submodule below it are mended. ``unsafe``: also
    apply unsafe fixes. ``select`` / ``ignore``: rule selectors as on the
    command line. ``cache_dir`` (default: ``$GRAPHMEND_CACHE_DIR``): keep the
    cached code there instead of next to each source (``__pycache__``,
    falling back to :func:`user_cache_dir`); an explicit directory is written
    even under ``sys.dont_write_bytecode`` (``PYTHONDONTWRITEBYTECODE=1``),
    which otherwise stops all cache writes.
    ``regions``: ``"package"`` (default: the functions compiled code
    anywhere in the installed package reaches, since a package's helpers are
    mostly reached from compiled ``forward``s in other modules: the package
    analysis of ``graphmend check DIR``, run over every module of the
    package once and cached like the modules), ``"all"`` (library mode:
    every function of a mended module; every fix is exact when the code runs
    eagerly) or ``"reachable"`` (each module's own one-file regions).
    ``dynamo_switches``: also turn on ``torch._dynamo.config``'s
    ``capture_scalar_outputs`` and ``capture_dynamic_output_shape_ops`` (when
    torch._dynamo is imported, or now if it already is; :func:`uninstall`
    puts back the earlier values). They trade graph breaks for unbacked
    symbols, runtime asserts and recompiles: see docs/hook.md.

    Installing with the same arguments again does nothing; with other
    arguments it replaces the previous hook. A selected package that was
    already imported (without the hook) is not mended: a :class:`HookWarning`
    says so, once per package. Returns the finder.
    """
    finder = GraphmendFinder(packages, unsafe=unsafe, select=select, ignore=ignore,
                             cache_dir=cache_dir, regions=regions,
                             dynamo_switches=dynamo_switches)
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
    if finder.config.dynamo_switches:
        finder._switches = _Switches()
        when_imported("torch._dynamo.config", finder._switches)
    return finder


def uninstall() -> bool:
    """Remove the hook. Modules already mended stay as they are; later
    imports and ``importlib.reload`` load the files unmodified. Returns
    whether a hook was installed."""
    found = False
    for finder in list(sys.meta_path):
        if isinstance(finder, GraphmendFinder):
            sys.meta_path.remove(finder)
            if finder._switches is not None:
                finder._switches.restore()
                finder._switches = None
            found = True
    return found
