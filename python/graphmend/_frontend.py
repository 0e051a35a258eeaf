"""Python side of the C++ front end: version selection and error mapping."""

from __future__ import annotations

import codecs
import re
import sys

from . import _core

SUPPORTED_VERSIONS = [(3, minor) for minor in range(8, 14)]


def default_version() -> tuple[int, int]:
    current = sys.version_info[:2]
    if current < SUPPORTED_VERSIONS[0]:
        return SUPPORTED_VERSIONS[0]
    if current > SUPPORTED_VERSIONS[-1]:
        return SUPPORTED_VERSIONS[-1]
    return current


def parse_version(text: str) -> tuple[int, int]:
    try:
        major, minor = (int(part) for part in text.split("."))
    except ValueError:
        raise ValueError(f"invalid Python version {text!r}: expected X.Y, e.g. 3.11") from None
    if (major, minor) not in SUPPORTED_VERSIONS:
        raise ValueError(f"unsupported Python version {text}: graphmend reads 3.8 to 3.13")
    return major, minor


class GraphmendSyntaxError(SyntaxError):
    """A syntax error found by graphmend's parser (kind: SyntaxError,
    IndentationError or TabError, as CPython would name it)."""

    def __init__(self, kind: str, message: str, filename: str | None, line: int, col: int):
        super().__init__(message, (filename, line, col + 1, None))
        self.kind = kind
        self.col = col


def check_version(version) -> tuple[int, int]:
    """``(3, 11)``, ``[3, 11]`` or ``"3.11"`` → ``(3, 11)``; ValueError for
    anything else or a version outside 3.8–3.13 (TypeError for a non-version
    type)."""
    if isinstance(version, str):
        return parse_version(version)
    if not isinstance(version, (tuple, list)) or len(version) != 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in version):
        if isinstance(version, (tuple, list)):
            raise ValueError(f"invalid Python version {version!r}: expected (3, Y) or "
                             "\"3.Y\", e.g. (3, 11)")
        raise TypeError(f"python_version must be a (major, minor) tuple or a \"X.Y\" "
                        f"string, not {type(version).__name__}")
    major, minor = version
    if (major, minor) not in SUPPORTED_VERSIONS:
        raise ValueError(f"unsupported Python version {major}.{minor}: "
                         "graphmend reads 3.8 to 3.13")
    return major, minor


# PEP 263: a comment line (line 1 or 2) holding coding[:=]NAME.
_COOKIE = re.compile(r"^([ \t\f]*#.*?coding[:=][ \t]*)([-\w.]+)")


def _cookie_to_utf8(text: str) -> str:
    """``text`` with the coding cookie of line 1 or 2 (if any) naming utf-8:
    for handing already-decoded text to the core's byte decoder. The cookie
    is inside a comment that ends its line, so no position changes."""
    lines = text.split("\n", 2)
    for i in range(min(2, len(lines))):
        m = _COOKIE.match(lines[i])
        if m:
            lines[i] = m.group(1) + "utf-8" + lines[i][m.end(2):]
            break
        if lines[i].strip() and not lines[i].lstrip().startswith("#"):
            break
    return "\n".join(lines)


UNKNOWN_ENCODING = "unknown encoding: "


def python_codec(message: str) -> codecs.CodecInfo | None:
    """For the core's ``unknown encoding: NAME`` error (it decodes UTF-8,
    latin-1, ASCII and the single-byte code pages itself): Python's text
    codec NAME (shift_jis, euc-kr, gb18030, cp932, ...), or None."""
    if not message.startswith(UNKNOWN_ENCODING):
        return None
    try:
        info = codecs.lookup(message[len(UNKNOWN_ENCODING):])
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True):
        return None
    return info


def decode_with(data: bytes, info: codecs.CodecInfo) -> str:
    """``data`` decoded with a Python codec, as CPython reads a file with that
    cookie; GraphmendSyntaxError (with line and column) when it cannot."""
    try:
        return data.decode(info.name)
    except UnicodeDecodeError as exc:
        start = exc.start
        line = data.count(b"\n", 0, start) + 1
        col = start - (data.rfind(b"\n", 0, start) + 1)
        raise GraphmendSyntaxError("SyntaxError", f"(unicode error) {exc}", None, line,
                                   col) from None


def dump_ast(source: bytes | str, version: tuple[int, int] | None = None,
             filename: str | None = None) -> str:
    if isinstance(source, str):
        # compile() ignores the cookie of a str.
        source = _cookie_to_utf8(source).encode("utf-8", "surrogatepass")
    elif not isinstance(source, (bytes, bytearray, memoryview)):
        raise TypeError(f"source must be str or bytes, not {type(source).__name__}")
    source = bytes(source)
    _, minor = check_version(version) if version is not None else default_version()
    ok, text, kind, line, col = _core.dump_ast(source, minor)
    if not ok:
        info = python_codec(text)
        if info is not None:
            try:
                decoded = decode_with(source, info)
            except GraphmendSyntaxError as exc:
                exc.filename = filename
                raise
            ok, text, kind, line, col = _core.dump_ast(
                _cookie_to_utf8(decoded).encode("utf-8", "surrogatepass"), minor)
    if not ok:
        raise GraphmendSyntaxError(kind or "SyntaxError", text, filename, line, col)
    return text
