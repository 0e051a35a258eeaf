"""Structural helpers over ast.dump text (CPython's or graphmend's):
where two dumps first diverge, which node and field that is, the node's
source positions, and the f-string-position normal form.

A dump is a Python-expression-like text:
    Kind(field=value, ..., lineno=1, col_offset=0, end_lineno=1, end_col_offset=5)
with values being nodes, lists `[a, b]`, reprs of str/bytes/numbers, None.
"""

from __future__ import annotations

import re
import dataclasses
from dataclasses import dataclass

POSITION_FIELDS = ("lineno", "col_offset", "end_lineno", "end_col_offset")

_TOKEN = re.compile(
    r"""
    (?P<str>b?'(?:[^'\\]|\\.)*'|b?"(?:[^"\\]|\\.)*")
  | (?P<open>[A-Za-z_][A-Za-z_0-9]*)\(
  | (?P<kw>[A-Za-z_][A-Za-z_0-9]*)=
  | (?P<close>\))
  | (?P<lopen>\[)
  | (?P<lclose>\])
  | (?P<comma>,\ ?)
  | (?P<atom>[^,()\[\]'"]+)
    """,
    re.X | re.S,
)


@dataclass
class Frame:
    kind: str                   # node class name, or "[" for a list
    field: str | None = None    # current field (node frames)
    index: int = 0              # current item (list frames)
    positions: dict = dataclasses.field(default_factory=dict)
    start: int = 0              # offset of the frame's opening token

    def copy(self) -> "Frame":
        return Frame(self.kind, self.field, self.index, dict(self.positions), self.start)


def _apply(stack: list[Frame], m: re.Match) -> None:
    kind = m.lastgroup
    if kind == "open":
        stack.append(Frame(m.group("open"), start=m.start()))
    elif kind == "kw":
        if stack and stack[-1].kind != "[":
            stack[-1].field = m.group("kw")
    elif kind == "lopen":
        stack.append(Frame("[", start=m.start()))
    elif kind == "comma":
        if stack and stack[-1].kind == "[":
            stack[-1].index += 1
    elif kind in ("close", "lclose"):
        if stack:
            stack.pop()
    elif kind == "atom":
        if stack and stack[-1].kind != "[" and stack[-1].field in POSITION_FIELDS:
            try:
                stack[-1].positions[stack[-1].field] = int(m.group("atom"))
            except ValueError:
                pass


def stack_at(text: str, offset: int) -> list[Frame]:
    """The open nodes and lists at `offset` (tokens starting before it)."""
    stack: list[Frame] = []
    for m in _TOKEN.finditer(text, 0, offset):
        if m.start() >= offset:
            break
        _apply(stack, m)
    return stack


def finish_positions(text: str, offset: int, stack: list[Frame]) -> list[Frame]:
    """Continue scanning from `offset` until every frame of `stack` closes,
    collecting each node's position attributes. Returns the frames (copies)
    with `positions` filled in as far as the text allows."""
    frames = [f.copy() for f in stack]
    live = list(frames)
    for m in _TOKEN.finditer(text, offset):
        if not live:
            break
        kind = m.lastgroup
        if kind in ("close", "lclose"):
            live.pop()
            continue
        if kind in ("open", "lopen"):
            live.append(Frame(m.group("open") or "[", start=m.start()))
            continue
        _apply(live, m)
    return frames


def path_of(stack: list[Frame]) -> str:
    """Module > body[3] FunctionDef > body[0] Return > value Call"""
    parts: list[str] = []
    pending = ""
    for f in stack:
        if f.kind == "[":
            pending += "[%d]" % f.index
            continue
        parts.append((pending + " " if pending else "") + f.kind)
        pending = f.field or ""
    if pending:
        parts.append(pending)
    return " > ".join(parts)


def stack_with_field(stack: list[Frame], fld: str | None) -> list[Frame]:
    if not stack or stack[-1].kind == "[" or not fld:
        return stack
    top = stack[-1].copy()
    top.field = fld
    return stack[:-1] + [top]


def signature(d: dict) -> str:
    """A short key grouping differences that are likely the same bug:
    `Node.field` where the dumps first diverge."""
    if d.get("equal"):
        return "(equal)"
    node = d.get("node") or "?"
    fld = d.get("field") or "?"
    if fld in POSITION_FIELDS:
        return "%s.%s" % (node, fld)
    return "%s.%s: %s vs %s" % (node, fld, _head(d.get("cpython_token", "")), _head(d.get("graphmend_token", "")))


def _head(tok: str) -> str:
    tok = tok.split("=", 1)[-1] if "=" in tok.split("(", 1)[0] else tok
    return tok.split("(", 1)[0][:40] if "(" in tok else tok[:40]


def first_difference(a: str, b: str) -> int:
    """Index of the first differing character (len of the shorter if one is a
    prefix of the other); -1 if equal. Binary search over slices (memcmp)."""
    if a == b:
        return -1
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


_DELIMS = "([=, "


def token_start(text: str, i: int) -> int:
    """Back up from i to the start of the token that contains it."""
    j = i
    while j > 0 and text[j - 1] not in _DELIMS:
        j -= 1
    # include the field name for `name=value`
    if j > 0 and text[j - 1] == "=":
        k = j - 1
        while k > 0 and (text[k - 1].isalnum() or text[k - 1] == "_"):
            k -= 1
        j = k
    return j


def token_text(text: str, start: int, limit: int = 100) -> str:
    depth = 0
    j = start
    while j < len(text) and j - start < limit:
        c = text[j]
        if c in "([":
            depth += 1
        elif c in ")]":
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            break
        j += 1
    s = text[start:j]
    return s + ("…" if j - start >= limit else "")


def strip_fstring_inner_positions(text: str) -> str:
    """Remove the position attributes of every node nested strictly inside a
    JoinedStr (the JoinedStr's own positions stay)."""
    out: list[str] = []
    stack: list[Frame] = []
    joined_depth = 0  # number of JoinedStr frames on the stack
    last = 0
    skip_from = -1
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "kw" and m.group("kw") in POSITION_FIELDS and stack and stack[-1].kind != "[":
            inner = joined_depth - (1 if stack[-1].kind == "JoinedStr" else 0)
            if inner > 0:
                # drop ", name=value": from the preceding ", " to the value's end
                k = m.start()
                if text[k - 2:k] == ", ":
                    k -= 2
                out.append(text[last:k])
                skip_from = k
        elif kind == "atom" and skip_from >= 0:
            last = m.end()
            skip_from = -1
            _apply(stack, m)
            continue
        if kind == "open" and m.group("open") == "JoinedStr":
            joined_depth += 1
        if kind == "close" and stack and stack[-1].kind == "JoinedStr":
            joined_depth -= 1
        _apply(stack, m)
    out.append(text[last:])
    return "".join(out)


def source_line(source: bytes, lineno: int) -> str | None:
    lines = source.splitlines()
    if 1 <= lineno <= len(lines):
        return lines[lineno - 1].decode("utf-8", "replace")
    return None


def caret_line(source: bytes, lineno: int, col: int, end_lineno: int | None, end_col: int | None) -> list[str]:
    """Source line `lineno` with ^ under [col, end) (UTF-8 byte columns)."""
    lines = source.splitlines()
    if not (1 <= lineno <= len(lines)):
        return []
    raw = lines[lineno - 1]
    text = raw.decode("utf-8", "replace")
    c0 = len(raw[:max(col, 0)].decode("utf-8", "replace"))
    if end_lineno == lineno and end_col is not None and end_col > col:
        c1 = len(raw[:end_col].decode("utf-8", "replace"))
    else:
        c1 = len(text)
    c1 = max(c1, c0 + 1)
    gutter = "%6d | " % lineno
    shown = text.expandtabs(1)
    return [gutter + shown, " " * (len(gutter) - 2) + "| " + " " * c0 + "^" * (c1 - c0)]


def fmt_pos(p: dict) -> str:
    if not p:
        return "(none)"
    return "%s:%s-%s:%s" % (p.get("lineno", "?"), p.get("col_offset", "?"),
                            p.get("end_lineno", "?"), p.get("end_col_offset", "?"))


def describe(cpython: str, graphmend: str, source: bytes | None = None, context: int = 200) -> dict:
    """A description of the first divergence of two dumps, for humans."""
    i = first_difference(cpython, graphmend)
    if i < 0:
        return {"equal": True}
    t = token_start(cpython, i)
    stack = stack_at(cpython, t)
    cp_frames = finish_positions(cpython, t, stack)
    gm_frames = finish_positions(graphmend, t, stack)
    # innermost node frame with positions (in CPython's dump)
    node_idx = None
    for k in range(len(cp_frames) - 1, -1, -1):
        if cp_frames[k].kind != "[" and cp_frames[k].positions.get("lineno"):
            node_idx = k
            break
    innermost = None
    for k in range(len(stack) - 1, -1, -1):
        if stack[k].kind != "[":
            innermost = stack[k]
            break
    cp_tok = token_text(cpython, t)
    gm_tok = token_text(graphmend, t)
    fld = innermost.field if innermost else None
    if innermost is not None and stack and stack[-1].kind != "[":
        name = cp_tok.split("=", 1)[0] if "=" in cp_tok.split("(", 1)[0] else None
        if name and name.isidentifier():
            fld = name
    d = {
        "equal": False,
        "offset": i,
        "path": path_of(stack_with_field(stack, fld)),
        "node": innermost.kind if innermost else None,
        "field": fld,
        "cpython_token": cp_tok,
        "graphmend_token": gm_tok,
        "prefix": cpython[max(0, i - context):i],
        "cpython_rest": cpython[i:i + context],
        "graphmend_rest": graphmend[i:i + context],
    }
    if node_idx is not None:
        cp = cp_frames[node_idx].positions
        gp = gm_frames[node_idx].positions if node_idx < len(gm_frames) else {}
        d["located_node"] = cp_frames[node_idx].kind
        d["cpython_positions"] = cp
        d["graphmend_positions"] = gp
        if source is not None:
            d["source"] = caret_line(source, cp.get("lineno", 0), cp.get("col_offset", 0),
                                     cp.get("end_lineno"), cp.get("end_col_offset"))
            if gp and gp != cp and gp.get("lineno"):
                d["graphmend_source"] = caret_line(source, gp.get("lineno", 0), gp.get("col_offset", 0),
                                                   gp.get("end_lineno"), gp.get("end_col_offset"))
    return d


def format_description(d: dict, indent: str = "  ") -> str:
    if d.get("equal"):
        return indent + "(dumps are equal)"
    lines = []
    lines.append(f"{indent}at:        {d['path']}")
    if d.get("field"):
        lines.append(f"{indent}field:     {d['node']}.{d['field']}")
    lines.append(f"{indent}CPython:   {d['cpython_token']}")
    lines.append(f"{indent}graphmend: {d['graphmend_token']}")
    if "located_node" in d:
        lines.append(f"{indent}{d['located_node']} positions: CPython {fmt_pos(d['cpython_positions'])}"
                     f"   graphmend {fmt_pos(d['graphmend_positions'])}")
        for s in d.get("source", []):
            lines.append(f"{indent}  {s}")
        if d.get("graphmend_source"):
            lines.append(f"{indent}graphmend's span:")
            for s in d["graphmend_source"]:
                lines.append(f"{indent}  {s}")
    lines.append(f"{indent}context:   …{d['prefix']}")
    lines.append(f"{indent}CPython   ⟶ {d['cpython_rest']}…")
    lines.append(f"{indent}graphmend ⟶ {d['graphmend_rest']}…")
    return "\n".join(lines)
