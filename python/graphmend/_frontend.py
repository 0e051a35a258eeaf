"""Python side of the C++ front end: version selection and error mapping."""

from __future__ import annotations

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


def dump_ast(source: bytes | str, version: tuple[int, int] | None = None,
             filename: str | None = None) -> str:
    if isinstance(source, str):
        source = source.encode("utf-8", "surrogatepass")
    major, minor = version or default_version()
    ok, text, kind, line, col = _core.dump_ast(source, minor)
    if not ok:
        raise GraphmendSyntaxError(kind or "SyntaxError", text, filename, line, col)
    return text
