"""The Python side of ``check`` and ``fix``: typed results over the C++ engine.

Everything here is presentation and file handling; analysis happens in the C++
core (``graphmend._core.check`` / ``fix``, which release the GIL, so files can
be processed on several threads).

Positions follow two conventions, as in the C++ ``lint::Location``:

- ``line`` / ``end_line``: 1-based;
- ``col`` / ``end_col``: 0-based UTF-8 byte offsets in the line (CPython's
  ``col_offset``);
- ``char_col`` / ``end_char_col``: 1-based code-point columns (what editors and
  the text output show).
"""

from __future__ import annotations

import codecs
import dataclasses
import errno
import hashlib
import os
import secrets
import stat
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Union

from . import _core, _frontend
from ._frontend import GraphmendSyntaxError

__all__ = [
    "Diagnostic", "Edit", "Fix", "AppliedFix", "FixResult", "EncodingError",
    "check_source", "fix_source", "rules", "normalize_selectors",
]

Selectors = Union[str, Iterable[str], None]


class EncodingError(ValueError):
    """Mended text cannot be written back in the file's own encoding (for
    example a fix inserted a character that latin-1 cannot represent)."""


@dataclass(frozen=True)
class Edit:
    """Replace bytes ``[begin, end)`` of the UTF-8 text with ``replacement``."""

    begin: int
    end: int
    replacement: str
    line: int
    col: int
    char_col: int
    end_line: int
    end_col: int
    end_char_col: int


@dataclass(frozen=True)
class Fix:
    description: str
    applicability: str  # "safe" | "unsafe" | "display-only"
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Diagnostic:
    """One finding of one rule.

    ``fix`` is the attached fix (or None); ``fix_applies`` says whether
    ``graphmend fix`` would apply it with the options used (safe fixes, or
    unsafe ones under ``unsafe_fixes``). ``declined_reason`` is set when the
    rule found the problem but could not prove its fix legal. ``begin`` /
    ``end`` (and the edits' offsets) are byte offsets into the source as
    UTF-8 (a latin-1, code-page or multibyte file such as shift_jis is
    transcoded first; a UTF-8 BOM counts). ``line`` and the columns are
    CPython's (``col`` / ``end_col`` as its UTF-8 ``col_offset``).
    """

    code: str
    message: str
    why: str
    line: int
    col: int
    char_col: int
    end_line: int
    end_col: int
    end_char_col: int
    begin: int
    end: int
    applicability: str
    declined_reason: str = ""
    fix: Fix | None = None
    fix_applies: bool = False
    path: str | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class AppliedFix:
    code: str
    description: str
    round: int


@dataclass
class FixResult:
    """What :func:`fix_source` did.

    - ``source``: the mended source, the same type as the input (``str`` →
      ``str``; ``bytes`` → ``bytes`` in the input's own encoding, BOM and line
      endings kept). The input itself unless ``status == "fixed"``.
    - ``diagnostics``: what is left in ``source`` (the input's findings when
      the fixes were reverted).
    - ``applied``: every fix applied, in order.
    - ``status``: ``"unchanged"``, ``"fixed"``, ``"fix-broke-syntax"`` (a rule
      bug: reverted, see ``culprits``) or ``"not-converged"`` (reverted).
    """

    source: str | bytes
    diagnostics: list[Diagnostic]
    applied: list[AppliedFix]
    status: str
    applied_per_code: dict[str, int] = field(default_factory=dict)
    culprits: list[AppliedFix] = field(default_factory=list)
    encoding: str = "utf-8"
    rule_errors: list[dict] = field(default_factory=list)
    #: ``status == "fixed"``: the engine's edit map, one ``(line, col,
    #: end_line, end_col, orig_line, orig_col, orig_end_line, orig_end_col)``
    #: per edited region of ``source`` (all rounds composed; 1-based lines,
    #: 0-based UTF-8 byte columns); text between regions is the input's.
    source_map: tuple = ()

    @property
    def changed(self) -> bool:
        return self.status == "fixed"


# ---------------------------------------------------------------- helpers

def normalize_selectors(value: Selectors) -> list[str]:
    """``"GM1, GM201"`` or ``["GM1", "GM201"]`` → ``["GM1", "GM201"]``;
    raises ValueError for a malformed selector or one that selects no
    shipped rule (naming the closest code)."""
    if value is None:
        return []
    items = value.replace(",", " ").split() if isinstance(value, str) else list(value)
    out = []
    for item in items:
        for part in str(item).replace(",", " ").split():
            sel = part.strip().upper()
            if not _core.is_valid_selector(sel):
                raise ValueError(f"invalid rule selector {part!r}: "
                                 "expected ALL or GM followed by up to 3 digits")
            if sel not in ("ALL", "GM") and not any(c.startswith(sel) for c in _codes()):
                raise ValueError(_unknown_selector(part, sel))
            out.append(sel)
    return out


def _codes() -> list[str]:
    return [r["code"] for r in _core.rules()]


def _unknown_selector(part: str, sel: str) -> str:
    import difflib

    codes = _codes()
    prefixes = sorted({c[:i] for c in codes for i in range(3, len(c))})
    pool = codes if len(sel) >= 5 else prefixes + codes
    close = difflib.get_close_matches(sel, pool, n=1, cutoff=0.0)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown rule selector {part!r}: no rule has that code{hint}; " \
           "see `graphmend rules`"


def resolve_version(python_version) -> tuple[int, int]:
    if python_version is None:
        return _frontend.default_version()
    return _frontend.check_version(python_version)


def _frozen(cls, fields: dict, **more):
    """An instance of the frozen dataclass ``cls`` from the core's dict of
    its fields (and ``more``), without the generated ``__init__``, which sets
    each field through ``object.__setattr__`` (about 6% of a check over a
    file with tens of thousands of findings). The dicts' keys are the fields
    exactly (tests/python/test_api.py checks it)."""
    obj = object.__new__(cls)
    obj.__dict__.update(fields)
    if more:
        obj.__dict__.update(more)
    return obj


def diagnostic_from_dict(d: dict, path: str | None = None) -> Diagnostic:
    fix = None
    if d["fix"] is not None:
        f = d["fix"]
        fix = _frozen(Fix, f, edits=tuple(_frozen(Edit, e) for e in f["edits"]))
    return _frozen(Diagnostic, d, fix=fix, path=path)


def _applied(items: Sequence[dict]) -> list[AppliedFix]:
    return [AppliedFix(a["code"], a["description"], a["round"]) for a in items]


def syntax_error_from_dict(e: dict, path: str | None) -> GraphmendSyntaxError:
    err = GraphmendSyntaxError(e["kind"] or "SyntaxError", e["message"], path, e["line"], e["col"])
    err.char_col = e["char_col"]
    return err


def encode_back(text_utf8: bytes, encoding: str, original: bytes | None = None) -> bytes:
    """Mended UTF-8 text (BOM kept) → bytes in the file's encoding. With
    ``original`` (the file's bytes), refuses (EncodingError) an encoding in
    which those bytes do not survive decoding and encoding again, so the
    lines no fix touched keep their bytes."""
    if codecs.lookup(encoding).name == "utf-8":
        return text_utf8
    if original is not None:
        try:
            same = original.decode(encoding).encode(encoding) == original
        except (UnicodeError, LookupError):
            same = False
        if not same:
            raise EncodingError(
                f"this file's {encoding} bytes do not survive decoding and encoding again, "
                "so unchanged lines could change; file left unchanged")
    text = text_utf8.decode("utf-8")
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        bad = text[exc.start:exc.end]
        line = text.count("\n", 0, exc.start) + 1
        raise EncodingError(
            f"the mended text cannot be encoded as {encoding} (line {line}: {bad!r}); "
            "file left unchanged") from None


def _prepare(source: str | bytes) -> tuple[bytes, bool]:
    if isinstance(source, str):
        return source.encode("utf-8", "surrogatepass"), True
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), False
    raise TypeError(f"source must be str or bytes, not {type(source).__name__}")


REGIONS = ("reachable", "package", "all")


def _all_regions(regions: str) -> bool:
    if regions not in REGIONS:
        raise ValueError(f"regions must be one of {REGIONS}, not {regions!r}")
    return regions == "all"


def _via_python_codec(data: bytes, is_text: bool, res: dict, call) -> dict:
    """The core decodes UTF-8, latin-1, ASCII and single-byte code pages;
    a file whose cookie names another codec CPython has (shift_jis, euc-kr,
    gb18030, cp932, iso2022_jp, ...) is decoded here and handed over as
    UTF-8 text (positions: lines and code points as CPython's, byte offsets
    into that UTF-8 text, as for a latin-1 file). ``res["encoding"]`` names
    the codec so the mended text is written back in it."""
    err = res["syntax_error"]
    if is_text or err is None:
        return res
    info = _frontend.python_codec(err["message"])
    if info is None:
        return res
    try:
        text = _frontend.decode_with(data, info)
    except GraphmendSyntaxError as exc:
        return dict(res, syntax_error=dict(err, message=exc.msg, line=exc.lineno, col=exc.col,
                                           char_col=exc.col + 1))
    res = call(text.encode("utf-8", "surrogatepass"), True)
    res = dict(res)
    res["encoding"] = info.name
    return res


def run_check(data: bytes, *, is_text: bool = False, select=(), ignore=(),
              version=(3, 11), unsafe_fixes: bool = False, regions: str = "reachable",
              extra_roots=()) -> dict:
    def call(d: bytes, text: bool) -> dict:
        return _core.check(d, version[1], list(select), list(ignore), unsafe_fixes, text,
                           _all_regions(regions), list(extra_roots))
    return _via_python_codec(data, is_text, call(data, is_text), call)


def run_fix(data: bytes, *, is_text: bool = False, select=(), ignore=(),
            version=(3, 11), unsafe_fixes: bool = False, regions: str = "reachable",
            extra_roots=()) -> dict:
    def call(d: bytes, text: bool) -> dict:
        return _core.fix(d, version[1], list(select), list(ignore), unsafe_fixes, text,
                         _all_regions(regions), list(extra_roots))
    return _via_python_codec(data, is_text, call(data, is_text), call)


def module_name(path: str, packages: dict[str, bool] | None = None) -> tuple[str, str, bool]:
    """(package root directory, absolute module name, is a package's
    __init__) of a file: the directories above it that hold an __init__.py
    make up its package; a file outside any package is a top-level module
    named after its stem, with its directory as the root. ``packages``: a
    dict kept over many calls (directory -> holds an __init__.py)."""
    path = os.path.abspath(path)
    directory, base = os.path.split(path)
    stem = base[:-3] if base.endswith(".py") else base
    is_package = stem == "__init__"
    parts = [] if is_package else [stem]

    def holds_init(d: str) -> bool:
        if packages is None:
            return os.path.isfile(os.path.join(d, "__init__.py"))
        if d not in packages:
            packages[d] = os.path.isfile(os.path.join(d, "__init__.py"))
        return packages[d]

    while holds_init(directory):
        directory, name = os.path.split(directory)
        parts.insert(0, name)
        if not name:
            break
    return directory, ".".join(parts) or stem, is_package


def python_files(top: str) -> list[str]:
    """Every ``.py`` file below the directory ``top`` (``__pycache__`` left
    out), sorted: the modules of an installed package."""
    out = []
    for d, dirs, names in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        out.extend(os.path.join(d, n) for n in sorted(names) if n.endswith(".py"))
    return out


def read_sources(paths) -> list[tuple[str, bytes]]:
    """``[(path, bytes)]`` of the files that can be read (for
    :func:`package_roots`); the others are left out."""
    out = []
    for p in paths:
        try:
            with open(p, "rb") as handle:
                out.append((p, handle.read()))
        except OSError:
            pass
    return out


def package_roots(files, version=(3, 11), include_own: bool = False,
                  jobs: int | None = None) -> dict[str, list[str]]:
    """Package-wide regions for ``files``, ``[(path, source bytes)]``: per
    path, the dotted names of its functions that compiled code in another of
    the files reaches (pass them to run_check/run_fix as ``extra_roots``).
    Files are grouped by package root; each group is analysed on its own.
    ``include_own``: every function compiled code reaches, each file's
    own regions too. ``jobs``: threads (default: the CPUs)."""
    return {path: roots for path, (roots, _) in
            package_scan(files, version, include_own, jobs).items()}


def package_scan(files, version=(3, 11), include_own: bool = False,
                 jobs: int | None = None) -> dict[str, tuple[list[str], bool | None]]:
    """:func:`package_roots` with, per path, whether the file holds any
    compiled region (its own or one the package makes): ``(roots,
    regions)``. ``regions`` is None when that is not known: the file does
    not decode or parse, or it is alone in its package (not analysed)."""
    jobs = jobs or os.cpu_count() or 1
    out: dict[str, tuple[list[str], bool | None]] = {}
    for members in _package_groups(files):
        if len(members) < 2 and not include_own:
            out.update((path, ([], None)) for path, *_ in members)
            continue
        scanned = _core.package_roots([(m, p, d) for _, m, p, d in members], version[1],
                                      include_own, jobs)
        out.update((path, r) for (path, *_), r in zip(members, scanned))
    return out


def package_check(files, version=(3, 11), jobs: int | None = None
                  ) -> dict[str, tuple[list[str], bool | None, dict | None]]:
    """:func:`package_scan` and :func:`run_check` (regions "package") in one
    pass, each file parsed once: ``files`` is ``[(path, source bytes, select,
    ignore, unsafe_fixes)]``; per path ``(roots, regions, result)``, where
    ``result`` is what ``run_check(data, ..., regions="package",
    extra_roots=roots)`` returns, or None when the file was not checked here
    (alone in its package, or in an encoding only Python decodes: check it
    alone)."""
    jobs = jobs or os.cpu_count() or 1
    options = {path: rest for path, _, *rest in files}
    out: dict[str, tuple[list[str], bool | None, dict | None]] = {}
    for members in _package_groups((path, data) for path, data, *_ in files):
        if len(members) < 2:
            out.update((path, ([], None, None)) for path, *_ in members)
            continue
        checked = _core.package_check(
            [(m, p, d, list(options[path][0]), list(options[path][1]), options[path][2])
             for path, m, p, d in members], version[1], jobs)
        out.update((path, r) for (path, *_), r in zip(members, checked))
    return out


def _package_groups(files) -> list[list[tuple[str, str, bool, bytes]]]:
    """``[(path, bytes)]`` grouped by package root: ``[(path, module,
    is_package, bytes)]`` per package, in the order first seen."""
    groups: dict[str, list[tuple[str, str, bool, bytes]]] = {}
    packages: dict[str, bool] = {}
    for path, data in files:
        root, module, is_package = module_name(path, packages)
        groups.setdefault(root, []).append((path, module, is_package, data))
    return list(groups.values())


# ---------------------------------------------------------------- public API

def check_source(source: str | bytes, path: str | None = None, *, select: Selectors = None,
                 ignore: Selectors = None, python_version=None,
                 unsafe_fixes: bool = False, regions: str = "reachable") -> list[Diagnostic]:
    """Lint one module's source and return its diagnostics, sorted by position.

    ``source``: ``str`` (already decoded: a coding cookie is ignored, as
    ``compile()`` does) or ``bytes`` (decoded per PEP 263: BOM, coding cookie,
    UTF-8 by default). ``path`` is only used in messages and
    ``Diagnostic.path``. ``select`` / ``ignore``: rule selectors as on the
    command line (``"GM1"`` selects GM1xx; a list or a comma-separated
    string); default: every rule. ``python_version``: ``(3, 11)`` or
    ``"3.11"``; default: the running interpreter's (clamped to 3.8–3.13).
    Suppression comments (``# graphmend: ignore[GM201]``) are honoured.
    ``regions``: ``"reachable"`` (default: rules fire in functions Dynamo
    compiles as far as this one file shows: ``forward`` of modules,
    ``torch.compile``d functions and what they call) or ``"all"`` (library
    mode: every function, for modules whose functions are reached from
    compiled code elsewhere; every fix is exact when run eagerly).

    Raises :class:`graphmend.GraphmendSyntaxError` (a ``SyntaxError``) when
    the source cannot be decoded or parsed, ``ValueError`` for a bad selector
    or version.
    """
    data, is_text = _prepare(source)
    res = run_check(data, is_text=is_text, select=normalize_selectors(select),
                    ignore=normalize_selectors(ignore), version=resolve_version(python_version),
                    unsafe_fixes=unsafe_fixes, regions=regions)
    if res["syntax_error"] is not None:
        raise syntax_error_from_dict(res["syntax_error"], path)
    return [diagnostic_from_dict(d, path) for d in res["diagnostics"]]


def fix_source(source: str | bytes, path: str | None = None, unsafe: bool = False, *,
               select: Selectors = None, ignore: Selectors = None,
               python_version=None, regions: str = "reachable",
               extra_roots: Sequence[str] = ()) -> FixResult:
    """Apply every applicable fix to a fixpoint and return a :class:`FixResult`.

    Safe fixes always; unsafe ones too when ``unsafe`` is true. The result's
    ``source`` has the input's type: ``str`` in, ``str`` out; ``bytes`` in,
    ``bytes`` out, re-encoded to the input's declared encoding (BOM, coding
    cookie and line endings kept). A fix that would break the syntax, or
    fixes that do not converge, are reverted (``status`` says so and
    ``source`` is the input).

    Raises :class:`graphmend.GraphmendSyntaxError` when the input cannot be
    decoded or parsed, :class:`EncodingError` when mended bytes cannot be
    represented in the input's encoding, ``ValueError`` for a bad selector or
    version. ``extra_roots``: with ``regions="package"``, the functions of
    this module that compiled code elsewhere in its package reaches
    (:func:`package_roots`). Other arguments: see :func:`check_source`.
    """
    data, is_text = _prepare(source)
    res = run_fix(data, is_text=is_text, select=normalize_selectors(select),
                  ignore=normalize_selectors(ignore), version=resolve_version(python_version),
                  unsafe_fixes=unsafe, regions=regions, extra_roots=extra_roots)
    if res["status"] == "input-syntax-error":
        raise syntax_error_from_dict(res["syntax_error"], path)
    if res["status"] != "fixed":
        mended: str | bytes = source if is_text else bytes(source)
    elif is_text:
        mended = res["text"].decode("utf-8", "surrogatepass")
    else:
        mended = encode_back(res["text"], res["encoding"], bytes(source))
    return FixResult(
        source=mended,
        diagnostics=[diagnostic_from_dict(d, path) for d in res["diagnostics"]],
        applied=_applied(res["applied"]), status=res["status"],
        applied_per_code=dict(res["applied_per_code"]), culprits=_applied(res["culprits"]),
        encoding=res["encoding"], rule_errors=list(res["rule_errors"]),
        source_map=tuple(res["source_map"]) if res["status"] == "fixed" else ())


def rules() -> list[dict]:
    """Every shipped rule: ``[{"code", "name", "summary", "documentation"}]``,
    sorted by code."""
    return list(_core.rules())


# ---------------------------------------------------------------- files

class FileChangedError(OSError):
    """The file changed (size, mtime, inode or content) between reading it and
    replacing it: someone saved an edit while graphmend worked on it."""


def read_regular(path: str) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``path`` (a symbolic link is followed) and
    its ``fstat``. Opens without blocking, so a FIFO, socket or device is
    refused (OSError) instead of waited on."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise OSError(errno.EINVAL, f"{kind}; skipped", path)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns) == \
        (b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns)


def _unchanged_since(path: str, original: bytes, original_stat: os.stat_result) -> bool:
    try:
        now, st = read_regular(path)
    except OSError:
        return False
    return _same_file(st, original_stat) and \
        hashlib.sha256(now).digest() == hashlib.sha256(original).digest()


def _temp_file(directory: str) -> tuple[int, str | None]:
    """A file for the new contents: unnamed (O_TMPFILE, Linux) where the file
    system allows, so a killed run leaves nothing behind; else a named
    ``.graphmend-*.tmp``. Returns (fd, name or None)."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag and os.path.isdir("/proc/self/fd"):
        try:
            return os.open(directory, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600), \
                None
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
                raise
    return tempfile.mkstemp(prefix=".graphmend-", suffix=".tmp", dir=directory)


def write_atomically(path: str, data: bytes, *, original: bytes | None = None,
                     original_stat: os.stat_result | None = None) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old or the new file,
    never a half-written one: a temporary file in the same directory, flushed
    and fsynced, given the original's mode, owner and group, then renamed over
    it. Raises OSError (the original untouched) when any step fails:

    - ``PermissionError`` when the process may not write the file itself (a
      0444 file, someone else's file in a directory we can write: a rename
      only needs the directory's permission) or cannot give the new file the
      original's owner and group;
    - :class:`FileChangedError` when ``original`` / ``original_stat`` (what was
      read) no longer match the file just before the rename (an edit saved
      meanwhile is never overwritten).

    A symbolic link is followed (its target is replaced, the link kept). As
    with any rename, other hard links to the old file keep the old text."""
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", path)
    effective = os.access in os.supports_effective_ids
    if not os.access(path, os.W_OK, effective_ids=effective):
        raise PermissionError(errno.EACCES, "Permission denied", path)
    fd, tmp = _temp_file(directory)
    linked = tmp
    try:
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.fchmod(fd, stat.S_IMODE(st.st_mode))
        if hasattr(os, "fchown"):
            now = os.fstat(fd)
            if (now.st_uid, now.st_gid) != (st.st_uid, st.st_gid):
                try:
                    os.fchown(fd, st.st_uid, st.st_gid)
                except OSError:
                    raise PermissionError(
                        errno.EPERM, "cannot keep its owner and group (a rewrite would "
                        "change them)", path) from None
                os.fchmod(fd, stat.S_IMODE(st.st_mode))  # chown clears set-id bits
        if original is not None and original_stat is not None and \
                not _unchanged_since(path, original, original_stat):
            raise FileChangedError(errno.EAGAIN, "changed while graphmend was working on it",
                                   path)
        if tmp is None:
            # Give the unnamed file a name just before the rename (a kill in
            # between is the only way one can be left behind). A dir_fd
            # makes os.link use linkat(AT_SYMLINK_FOLLOW), which /proc needs.
            linked = os.path.join(directory, f".graphmend-{secrets.token_hex(6)}.tmp")
            dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                os.link(f"/proc/self/fd/{fd}", linked, src_dir_fd=dir_fd, follow_symlinks=True)
            except BaseException:
                linked = None
                raise
            finally:
                os.close(dir_fd)
        os.replace(linked, path)
        linked = None
    except BaseException:
        if linked is not None:
            try:
                os.unlink(linked)
            except OSError:
                pass
        raise
    finally:
        os.close(fd)
