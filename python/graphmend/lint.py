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
import os
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
    UTF-8 (a latin-1 file is transcoded first; a UTF-8 BOM counts).
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
    raises ValueError for a malformed selector."""
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
            out.append(sel)
    return out


def resolve_version(python_version) -> tuple[int, int]:
    if python_version is None:
        return _frontend.default_version()
    if isinstance(python_version, str):
        return _frontend.parse_version(python_version)
    major, minor = python_version
    return _frontend.parse_version(f"{major}.{minor}")


def _edit(d: dict) -> Edit:
    return Edit(d["begin"], d["end"], d["replacement"], d["line"], d["col"], d["char_col"],
                d["end_line"], d["end_col"], d["end_char_col"])


def diagnostic_from_dict(d: dict, path: str | None = None) -> Diagnostic:
    fix = None
    if d["fix"] is not None:
        f = d["fix"]
        fix = Fix(f["description"], f["applicability"], tuple(_edit(e) for e in f["edits"]))
    return Diagnostic(
        code=d["code"], message=d["message"], why=d["why"], line=d["line"], col=d["col"],
        char_col=d["char_col"], end_line=d["end_line"], end_col=d["end_col"],
        end_char_col=d["end_char_col"], begin=d["begin"], end=d["end"],
        applicability=d["applicability"], declined_reason=d["declined_reason"], fix=fix,
        fix_applies=d["fix_applies"], path=path)


def _applied(items: Sequence[dict]) -> list[AppliedFix]:
    return [AppliedFix(a["code"], a["description"], a["round"]) for a in items]


def syntax_error_from_dict(e: dict, path: str | None) -> GraphmendSyntaxError:
    err = GraphmendSyntaxError(e["kind"] or "SyntaxError", e["message"], path, e["line"], e["col"])
    err.char_col = e["char_col"]
    return err


def encode_back(text_utf8: bytes, encoding: str) -> bytes:
    """Mended UTF-8 text (BOM kept) → bytes in the file's encoding."""
    if codecs.lookup(encoding).name == "utf-8":
        return text_utf8
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


REGIONS = ("reachable", "all")


def _all_regions(regions: str) -> bool:
    if regions not in REGIONS:
        raise ValueError(f"regions must be one of {REGIONS}, not {regions!r}")
    return regions == "all"


def run_check(data: bytes, *, is_text: bool = False, select=(), ignore=(),
              version=(3, 11), unsafe_fixes: bool = False, regions: str = "reachable") -> dict:
    return _core.check(data, version[1], list(select), list(ignore), unsafe_fixes, is_text,
                       _all_regions(regions))


def run_fix(data: bytes, *, is_text: bool = False, select=(), ignore=(),
            version=(3, 11), unsafe_fixes: bool = False, regions: str = "reachable") -> dict:
    return _core.fix(data, version[1], list(select), list(ignore), unsafe_fixes, is_text,
                     _all_regions(regions))


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
               python_version=None, regions: str = "reachable") -> FixResult:
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
    version. Other arguments: see :func:`check_source`.
    """
    data, is_text = _prepare(source)
    res = run_fix(data, is_text=is_text, select=normalize_selectors(select),
                  ignore=normalize_selectors(ignore), version=resolve_version(python_version),
                  unsafe_fixes=unsafe, regions=regions)
    if res["status"] == "input-syntax-error":
        raise syntax_error_from_dict(res["syntax_error"], path)
    if res["status"] != "fixed":
        mended: str | bytes = source if is_text else bytes(source)
    elif is_text:
        mended = res["text"].decode("utf-8", "surrogatepass")
    else:
        mended = encode_back(res["text"], res["encoding"])
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

def write_atomically(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old or the new file,
    never a half-written one: a temporary file in the same directory, flushed
    and fsynced, given the original's mode, then ``os.replace``d over it.
    Raises OSError (the original untouched) when any step fails.

    A symbolic link is followed (its target is replaced, the link kept); the
    owner is kept where the process may set it. As with any rename, other
    hard links to the old file keep the old text."""
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    st = os.stat(path)
    fd, tmp = tempfile.mkstemp(prefix=".graphmend-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if hasattr(os, "chown"):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
