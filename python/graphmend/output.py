"""Output formats of ``graphmend check``: text, json, sarif, github.

``json``: a list (sorted by path, then position) of objects::

    {
      "path": "pkg/model.py",            # as given / discovered
      "code": "GM201",
      "message": "...", "why": "...",
      "line": 3, "column": 9,            # 1-based; column in code points
      "end_line": 3, "end_column": 20,
      "col_offset": 8, "end_col_offset": 19,   # 0-based UTF-8 bytes (CPython)
      "applicability": "safe" | "unsafe" | "display-only",
      "fixable": true,                   # `graphmend fix` would apply the fix
      "fix": null | {"description": "...", "applicability": "...",
                     "edits": [{"line", "column", "end_line", "end_column",
                                "begin", "end", "replacement"}]},
                                # begin/end: byte offsets in the UTF-8 text
      "declined_reason": ""              # why the rule did not offer a fix
    }

A file that cannot be decoded or parsed is one diagnostic with code
``invalid-syntax`` (message ``SyntaxError: ...``) at the error, in every
format (SARIF and ``github``: level error). A file name that is not valid
UTF-8 is written with ``\\udcXX`` escapes in JSON and percent-encoded bytes in
SARIF URIs, so the output stays valid UTF-8.

``sarif``: SARIF 2.1.0, one run; ``tool.driver.rules`` holds every selected
rule with its documentation as help text; columns are code points
(``columnKind: unicodeCodePoints``); fixes as ``artifactChanges``.

``github``: GitHub Actions workflow commands, one per finding::

    ::warning file=PATH,line=L,col=C,endLine=L2,endColumn=C2,title=CODE::MESSAGE
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import urllib.parse
from collections.abc import Iterable, Sequence

from .lint import Diagnostic

FORMATS = ("text", "json", "sarif", "github")


def _fix_hint(d: Diagnostic, unsafe_enabled: bool) -> str | None:
    if d.fix is not None and d.fix.edits and d.fix_applies:
        return f"fix: {d.fix.description}"
    if d.fix is not None and d.fix.applicability == "unsafe" and not unsafe_enabled:
        return f"fix (unsafe, enable with --unsafe-fixes): {d.fix.description}"
    if d.fix is not None and d.fix.applicability == "display-only":
        return f"suggestion: {d.fix.description}"
    if d.declined_reason:
        return f"no fix: {d.declined_reason}"
    return None


def text(diags: Sequence[Diagnostic], *, unsafe_enabled: bool = False,
         show_summary: bool = True) -> str:
    """Ruff-like: ``path:line:col: CODE [*] message``, then ``why`` and the fix
    hint or the reason no fix is offered, indented; a summary line."""
    lines: list[str] = []
    for d in diags:
        marker = " [*]" if d.fix_applies else ""
        lines.append(f"{d.path}:{d.line}:{d.char_col}: {d.code}{marker} {d.message}")
        if d.why:
            lines.append(f"  why: {d.why}")
        hint = _fix_hint(d, unsafe_enabled)
        if hint:
            lines.append(f"  {hint}")
    if show_summary:
        lines.append(summary(diags, unsafe_enabled=unsafe_enabled))
    return "\n".join(lines) + "\n"


def summary(diags: Sequence[Diagnostic], *, unsafe_enabled: bool = False) -> str:
    if not diags:
        return "All checks passed!"
    n = len(diags)
    fixable = sum(1 for d in diags if d.fix_applies)
    hidden = sum(1 for d in diags if not d.fix_applies and d.fix is not None
                 and d.fix.applicability == "unsafe" and not unsafe_enabled)
    codes = sorted({d.code for d in diags})
    out = f"Found {n} finding{'s' if n != 1 else ''} ({', '.join(codes)})"
    extras = []
    if fixable:
        extras.append(f"{fixable} fixable with `graphmend fix`")
    if hidden:
        extras.append(f"{hidden} more with `graphmend fix --unsafe-fixes`")
    if extras:
        out += "; " + "; ".join(extras)
    return out + "."


def _json_obj(d: Diagnostic) -> dict:
    fix = None
    if d.fix is not None:
        fix = {
            "description": d.fix.description,
            "applicability": d.fix.applicability,
            "edits": [{"line": e.line, "column": e.char_col, "end_line": e.end_line,
                       "end_column": e.end_char_col, "begin": e.begin, "end": e.end,
                       "replacement": e.replacement} for e in d.fix.edits],
        }
    return {
        "path": d.path, "code": d.code, "message": d.message, "why": d.why,
        "line": d.line, "column": d.char_col, "end_line": d.end_line,
        "end_column": d.end_char_col, "col_offset": d.col, "end_col_offset": d.end_col,
        "applicability": d.applicability, "fixable": d.fix_applies, "fix": fix,
        "declined_reason": d.declined_reason,
    }


SYNTAX_CODE = "invalid-syntax"  # a file that cannot be parsed (see cli.py)

_SURROGATE = re.compile("[\ud800-\udfff]")


def _dumps(obj) -> str:
    """JSON text that is valid UTF-8 even when a file name is not: the lone
    surrogates that stand for its undecodable bytes (os.fsdecode) are written
    as ``\\udcXX`` escapes (``json.loads`` + ``os.fsencode`` give the name's
    bytes back). Only strings can hold them, so the escapes are in strings."""
    text = json.dumps(obj, indent=2, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_output(diags: Sequence[Diagnostic]) -> str:
    return _dumps([_json_obj(d) for d in diags]) + "\n"


def _uri(path: str) -> str:
    """A URI reference for ``path``: its bytes percent-encoded (so a
    non-UTF-8 name stays exact)."""
    p = pathlib.PurePath(path)
    raw = os.fsencode(p.as_posix())
    if p.is_absolute():
        return "file://" + urllib.parse.quote(raw)
    return urllib.parse.quote(raw)


def _region(line, col, end_line, end_col) -> dict:
    return {"startLine": max(line, 1), "startColumn": max(col, 1),
            "endLine": max(end_line, 1), "endColumn": max(end_col, 1)}


def sarif(diags: Sequence[Diagnostic], rules: Iterable[dict], *, version: str,
          errors: Sequence[str] = ()) -> str:
    """A SARIF 2.1.0 log with one run."""
    rule_list = sorted(rules, key=lambda r: r["code"])
    index = {r["code"]: i for i, r in enumerate(rule_list)}
    driver_rules = []
    for r in rule_list:
        entry = {
            "id": r["code"],
            "name": r["name"],
            "shortDescription": {"text": r["summary"] or r["name"]},
            "help": {"text": r["documentation"] or r["summary"],
                     "markdown": r["documentation"] or r["summary"]},
            "defaultConfiguration": {"level": "warning"},
        }
        if r["documentation"]:
            entry["fullDescription"] = {"text": r["documentation"]}
        driver_rules.append(entry)
    results = []
    for d in diags:
        message = d.message + (f" ({d.why})" if d.why else "")
        result = {
            "ruleId": d.code,
            "level": "error" if d.code == SYNTAX_CODE else "warning",
            "message": {"text": message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": _uri(d.path or "<string>")},
                "region": _region(d.line, d.char_col, d.end_line, d.end_char_col)}}],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.fix is not None and d.fix.edits and d.fix.applicability != "display-only":
            result["fixes"] = [{
                "description": {"text": d.fix.description},
                "artifactChanges": [{
                    "artifactLocation": {"uri": _uri(d.path or "<string>")},
                    "replacements": [{
                        "deletedRegion": _region(e.line, e.char_col, e.end_line,
                                                 e.end_char_col),
                        "insertedContent": {"text": e.replacement},
                    } for e in d.fix.edits],
                }],
            }]
        if d.declined_reason:
            result["properties"] = {"declinedReason": d.declined_reason}
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "graphmend",
                "version": version,
                "informationUri": "https://github.com/graphmend/graphmend",
                "rules": driver_rules,
            }},
            "columnKind": "unicodeCodePoints",
            "invocations": [{
                "executionSuccessful": not errors,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": e}} for e in errors],
            }],
            "results": results,
        }],
    }
    return _dumps(log) + "\n"


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github(diags: Sequence[Diagnostic]) -> str:
    out = []
    for d in diags:
        props = (f"file={_escape_property(d.path or '')},line={d.line},col={d.char_col},"
                 f"endLine={d.end_line},endColumn={d.end_char_col},"
                 f"title={_escape_property(d.code)}")
        level = "error" if d.code == SYNTAX_CODE else "warning"
        out.append(f"::{level} {props}::{_escape_data(d.message)}")
    return "".join(line + "\n" for line in out)
